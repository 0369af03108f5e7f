package informer

import (
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Observer is told what the informers do, for metrics. Its methods are called from
// client-go's goroutines, several informers at once, and must be quick.
type Observer interface {
	// Made is told of every numbered event, once, before it reaches the receivers.
	Made(ev *event.Event)
	// WatchLost is told when a watch is lost (an outage begins).
	WatchLost(res resource.Resource)
	// WatchBack is told when the outage is over: after is how long it lasted, relisted
	// whether it took a re-list (rather than the watch resuming where it was).
	WatchBack(res resource.Resource, after time.Duration, relisted bool)
}

// noteLost tells the observer an outage began; w.mu is held.
func (w *watchReporter) noteLostLocked() {
	w.lostAt = time.Now()
	if w.observer != nil {
		w.observer.WatchLost(w.resource)
	}
}

// noteBackLocked tells the observer the outage is over; w.mu is held.
func (w *watchReporter) noteBackLocked(relisted bool) {
	if w.observer != nil && !w.lostAt.IsZero() {
		w.observer.WatchBack(w.resource, time.Since(w.lostAt), relisted)
	}
	w.lostAt = time.Time{}
}
