package sink

import (
	"errors"
	"slices"
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
)

type recordingSink struct{ got []event.EventType }

func (r *recordingSink) Write(ev *event.Event) error { r.got = append(r.got, ev.Type); return nil }
func (r *recordingSink) Close() error                { return nil }

func TestWithEventTypes(t *testing.T) {
	rec := &recordingSink{}
	if WithEventTypes(rec, "") != listener.Sink(rec) {
		t.Error("no event types: the sink itself")
	}
	// SYNC is a type like the others: left out unless listed.
	for types, want := range map[string][]event.EventType{
		"ADDED|DELETED":      {event.Added, event.Deleted},
		"ADDED|DELETED|SYNC": {event.Added, event.Deleted, event.Sync},
	} {
		rec.got = nil
		s := WithEventTypes(rec, types)
		for _, typ := range []event.EventType{event.Added, event.Modified, event.Deleted, event.Sync} {
			err := s.Write(&event.Event{Type: typ})
			if filtered := errors.Is(err, listener.ErrFiltered); filtered != !slices.Contains(want, typ) {
				t.Errorf("%s, %s: Write = %v", types, typ, err)
			}
		}
		if !slices.Equal(rec.got, want) {
			t.Errorf("%s: written %v, want %v", types, rec.got, want)
		}
	}
}

// holdingSink holds events after Write and can abort them, as exec and http sinks do.
type holdingSink struct {
	recordingSink
	held    bool
	aborted bool
}

func (h *holdingSink) Hold(func(*event.Event, error)) { h.held = true }
func (h *holdingSink) Abort()                         { h.aborted = true }

// The filter answers the listener's questions as the sink it wraps: a sink that holds
// events (exec, http) is still one behind its event types, and one that does not is not.
func TestWithEventTypesKeepsHolding(t *testing.T) {
	h := &holdingSink{}
	s := WithEventTypes(h, "ADDED")
	holder, ok := s.(listener.Holder)
	if !ok {
		t.Fatalf("%T around a holding sink is no listener.Holder", s)
	}
	holder.Hold(func(*event.Event, error) {})
	aborter, ok := s.(listener.Aborter)
	if !ok {
		t.Fatalf("%T around an aborting sink is no listener.Aborter", s)
	}
	aborter.Abort()
	if !h.held || !h.aborted {
		t.Errorf("Hold reached the sink: %v, Abort: %v", h.held, h.aborted)
	}
	if _, ok := WithEventTypes(&recordingSink{}, "ADDED").(listener.Holder); ok {
		t.Error("the filter around a sink that holds nothing claims to hold events")
	}
}
