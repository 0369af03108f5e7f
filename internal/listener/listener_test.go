package listener

import (
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
)

func TestNewDefaults(t *testing.T) {
	l := New(Config{Name: "out"}, &testSink{}, nil)
	if got := l.Config(); got.Buffer != DefaultBuffer || got.OnFull != Block {
		t.Errorf("defaults: buffer %d on-full %q, want %d %q", got.Buffer, got.OnFull, DefaultBuffer, Block)
	}
	if l.Name() != "out" {
		t.Errorf("Name() = %q", l.Name())
	}
	if l.queue.policy != Block || len(l.queue.slots) != DefaultBuffer {
		t.Errorf("ring: policy %q capacity %d", l.queue.policy, len(l.queue.slots))
	}
	// A nil warn discards diagnostics rather than panicking.
	l = New(Config{Name: "out", Buffer: 1, OnFull: DropNewest}, &testSink{}, nil)
	l.Add(newEv(event.Added, "a", 1))
	l.Add(newEv(event.Added, "b", 2))
	if st := l.Stats(); st.Dropped != 1 {
		t.Errorf("dropped %d, want 1", st.Dropped)
	}
}

// TestAddNeverCallsSink: Add only queues. Without Run, no Write happens at all.
func TestAddNeverCallsSink(t *testing.T) {
	for _, p := range policies {
		t.Run(p.String(), func(t *testing.T) {
			sink := &testSink{}
			l := New(Config{Name: "s", Buffer: 8, OnFull: p}, sink, nil)
			n := 8
			if p == DropOldest || p == DropNewest {
				n = 100 // beyond the buffer: these policies never wait
			}
			for _, ev := range distinctEvents(n) {
				l.Add(ev)
			}
			if c := sink.writeCalls(); c != 0 {
				t.Fatalf("Add called sink.Write %d times", c)
			}
			if c := sink.closeCount(); c != 0 {
				t.Fatalf("Add called sink.Close")
			}
		})
	}
}
