package sink

import (
	"errors"
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
	s := WithEventTypes(rec, "ADDED|DELETED")
	for _, typ := range []event.EventType{event.Added, event.Modified, event.Deleted, event.Sync} {
		err := s.Write(&event.Event{Type: typ})
		if filtered := errors.Is(err, listener.ErrFiltered); filtered != (typ == event.Modified) {
			t.Errorf("%s: Write = %v", typ, err)
		}
	}
	if want := []event.EventType{event.Added, event.Deleted, event.Sync}; len(rec.got) != 3 || rec.got[0] != want[0] || rec.got[1] != want[1] || rec.got[2] != want[2] {
		t.Errorf("written %v, want %v", rec.got, want)
	}
}
