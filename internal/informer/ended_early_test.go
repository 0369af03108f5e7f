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

// A watch that is not decoded by package wire (metadata-only, client-go's fallback) and
// that the server closes at once, before any event, hands the reflector a BOOKMARK at the
// resourceVersion it was opened at, after emptyWatchPause, so that the reflector opens the
// next watch from there instead of re-listing after its backoff. One that had an event
// ends as it always did.
func TestErrorSpyEndedEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &watchReporter{example: &corev1.ConfigMap{}}
		noError := func(runtime.Object) ([]watch.Event, bool) { return nil, false }
		endedEarly := func() []watch.Event { return w.endedEarly(context.Background(), "42") }

		closed := watch.NewFake()
		spy := newErrorSpy(closed, noError, endedEarly)
		start := time.Now()
		closed.Stop()
		ev, ok := <-spy.ResultChan()
		if !ok || ev.Type != watch.Bookmark {
			t.Fatalf("a watch closed at once handed on %v (open: %v), want a BOOKMARK", ev.Type, ok)
		}
		if rv := resourceVersion(ev.Object); rv != "42" {
			t.Errorf("the BOOKMARK is at resourceVersion %q, want 42", rv)
		}
		if waited := time.Since(start); waited != emptyWatchPause {
			t.Errorf("the BOOKMARK came after %s, want %s", waited, emptyWatchPause)
		}
		if _, open := <-spy.ResultChan(); open {
			t.Error("the watch did not end after the BOOKMARK")
		}

		withEvent := watch.NewFake()
		spy = newErrorSpy(withEvent, noError, endedEarly)
		go func() {
			withEvent.Add(&corev1.ConfigMap{})
			withEvent.Stop()
		}()
		var got []watch.EventType
		for ev := range spy.ResultChan() {
			got = append(got, ev.Type)
		}
		if len(got) != 1 || got[0] != watch.Added {
			t.Errorf("a watch with an event handed on %v, want only its ADDED", got)
		}
	})
}
