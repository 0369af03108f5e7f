package decode

import (
	"context"
	"io"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// endingDecoder hands on its events, then ends the stream (io.EOF) after wait.
type endingDecoder struct {
	events []watch.Event
	wait   time.Duration
}

func (d *endingDecoder) Decode() (watch.EventType, runtime.Object, error) {
	if len(d.events) > 0 {
		ev := d.events[0]
		d.events = d.events[1:]
		return ev.Type, ev.Object, nil
	}
	time.Sleep(d.wait)
	return "", nil, io.EOF
}

func (d *endingDecoder) Close() {}

// TestEndedEarlyHook: a watch the server closes before any event calls the hook with how
// long it ran, and hands on what the hook returns (the informer's BOOKMARK) before it
// ends; a watch whose hook returns nothing, or that had an event, ends as it always did.
func TestEndedEarlyHook(t *testing.T) {
	bookmark := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "42"}}
	added := watch.Event{Type: watch.Added, Object: &corev1.ConfigMap{}}
	cases := []struct {
		name   string
		dec    *endingDecoder
		want   []watch.EventType
		called bool
	}{
		{"closed at once", &endingDecoder{}, []watch.EventType{watch.Bookmark}, true},
		{"closed after 0.9 s", &endingDecoder{wait: 900 * time.Millisecond}, []watch.EventType{watch.Bookmark}, true},
		{"closed after a second, the hook handing on nothing", &endingDecoder{wait: time.Second}, nil, true},
		{"closed after an event", &endingDecoder{events: []watch.Event{added}}, []watch.EventType{watch.Added}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				called := false
				ctx := WithErrorHook(context.Background(), func(runtime.Object) ([]watch.Event, bool) { return nil, false })
				ctx = WithEndedEarlyHook(ctx, func(ranFor time.Duration) []watch.Event {
					called = true
					if ranFor != c.dec.wait {
						t.Errorf("the hook was told the watch ran for %s, want %s", ranFor, c.dec.wait)
					}
					if ranFor >= time.Second {
						return nil
					}
					return []watch.Event{{Type: watch.Bookmark, Object: bookmark}}
				})
				dec, hooked := withErrorHook(ctx, c.dec)
				if !hooked {
					t.Fatal("not hooked")
				}
				var got []watch.EventType
				for {
					typ, obj, err := dec.Decode()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if typ == watch.Bookmark && obj != bookmark {
						t.Errorf("bookmark object %v, want the hook's", obj)
					}
					got = append(got, typ)
				}
				if called != c.called || len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
					t.Errorf("events %v (hook called: %v), want %v (hook called: %v)", got, called, c.want, c.called)
				}
			})
		})
	}
}
