package engine

import (
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
)

// --event-types without SYNC turns the listeners' resync off: SYNC is a type of its own.
func TestEventTypesWithoutSyncNoResync(t *testing.T) {
	for _, c := range []struct {
		types []event.EventType
		want  bool
	}{{nil, true}, {[]event.EventType{event.Added}, false}, {[]event.EventType{event.Added, event.Sync}, true}} {
		if got := (&Config{Events: Events{Types: c.types}}).resyncs(); got != c.want {
			t.Errorf("--event-types %v: resyncs %v, want %v", c.types, got, c.want)
		}
	}
}
