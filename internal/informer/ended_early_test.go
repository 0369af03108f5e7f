package informer

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// A watch that is not decoded by package decode (metadata-only, client-go's fallback) and
// that the server closes at once, before any event, hands the reflector a BOOKMARK at the
// resourceVersion it was opened at, after emptyWatchPause, so that the reflector opens the
// next watch from there instead of re-listing after its backoff. One that had an event,
// or that ran long enough for the reflector not to take its end for a failure, ends as it
// always did; so does every one with KUBEEVENTS_ENDED_EARLY_BOOKMARK=off.
func TestErrorSpyEndedEarly(t *testing.T) {
	noError := func(runtime.Object) ([]watch.Event, bool) { return nil, false }
	spied := func(w *watchReporter, inner watch.Interface) watch.Interface {
		return newErrorSpy(inner, noError, func(ranFor time.Duration) []watch.Event {
			return w.endedEarly(context.Background(), "42", ranFor)
		})
	}
	handed := func(spy watch.Interface) []watch.Event {
		var got []watch.Event
		for ev := range spy.ResultChan() {
			got = append(got, ev)
		}
		return got
	}
	t.Run("closed at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			closed := watch.NewFake()
			spy := spied(&watchReporter{example: &corev1.ConfigMap{}}, closed)
			start := time.Now()
			closed.Stop()
			got := handed(spy)
			if len(got) != 1 || got[0].Type != watch.Bookmark {
				t.Fatalf("a watch closed at once handed on %v, want one BOOKMARK", got)
			}
			if rv := resourceVersion(got[0].Object); rv != "42" {
				t.Errorf("the BOOKMARK is at resourceVersion %q, want 42", rv)
			}
			if waited := time.Since(start); waited != emptyWatchPause {
				t.Errorf("the watch ended %s after it was closed, want %s", waited, emptyWatchPause)
			}
		})
	})
	t.Run("closed after a second", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			closed := watch.NewFake()
			spy := spied(&watchReporter{example: &corev1.ConfigMap{}}, closed)
			time.Sleep(shortWatch)
			closed.Stop()
			if got := handed(spy); len(got) != 0 {
				t.Errorf("a watch closed after %s handed on %v, want nothing", shortWatch, got)
			}
		})
	})
	t.Run("closed after an event", func(t *testing.T) {
		withEvent := watch.NewFake()
		spy := spied(&watchReporter{example: &corev1.ConfigMap{}}, withEvent)
		go func() {
			withEvent.Add(&corev1.ConfigMap{})
			withEvent.Stop()
		}()
		if got := handed(spy); len(got) != 1 || got[0].Type != watch.Added {
			t.Errorf("a watch with an event handed on %v, want only its ADDED", got)
		}
	})
	t.Run("switched off", func(t *testing.T) {
		closed := watch.NewFake()
		spy := spied(&watchReporter{example: &corev1.ConfigMap{}, recovery: Recovery{NoEndedEarlyBookmark: true}}, closed)
		closed.Stop()
		if got := handed(spy); len(got) != 0 {
			t.Errorf("with NoEndedEarlyBookmark a watch closed at once handed on %v, want nothing", got)
		}
	})
}
