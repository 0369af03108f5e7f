package listener

import (
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// snapshot is an Event's exported fields, to check that coalesce leaves its inputs alone
// (Event holds sync.Once values, so it cannot be copied whole).
type snapshot struct {
	typ                        event.EventType
	seq                        uint64
	object, old                runtime.Object
	initial, finalStateUnknown bool
	time                       time.Time
}

func snap(ev *event.Event) snapshot {
	return snapshot{ev.Type, ev.Seq, ev.Object, ev.Old, ev.InInitialList, ev.FinalStateUnknown, ev.Time}
}

func TestCoalesceMergeTable(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mk := func(typ event.EventType, seq uint64, withOld bool) *event.Event {
		ev := newEv(typ, "a", seq)
		ev.Time = t0.Add(time.Duration(seq) * time.Second)
		if withOld {
			ev.Old = podObj("a", "old")
		}
		return ev
	}
	type want struct {
		typ               event.EventType
		seq               uint64
		old               string // "queued.Old", "queued.Object" or "" for nil
		initial           bool
		finalStateUnknown bool
	}
	tests := []struct {
		name          string
		queued, next  *event.Event
		existedBefore bool
		want          want
	}{
		{
			name:          "ADDED+MODIFIED=ADDED",
			queued:        func() *event.Event { e := mk(event.Added, 1, false); e.InInitialList = true; return e }(),
			next:          mk(event.Modified, 2, true),
			existedBefore: false,
			want:          want{typ: event.Added, seq: 2, initial: true},
		},
		{
			name:          "ADDED+DELETED=DELETED",
			queued:        mk(event.Added, 1, false),
			next:          mk(event.Deleted, 2, false),
			existedBefore: false,
			want:          want{typ: event.Deleted, seq: 2},
		},
		{
			name:          "ADDED+DELETED(final state unknown)=DELETED(final state unknown)",
			queued:        mk(event.Added, 1, false),
			next:          func() *event.Event { e := mk(event.Deleted, 2, false); e.FinalStateUnknown = true; return e }(),
			existedBefore: false,
			want:          want{typ: event.Deleted, seq: 2, finalStateUnknown: true},
		},
		{
			name:          "MODIFIED+DELETED=DELETED",
			queued:        mk(event.Modified, 1, true),
			next:          mk(event.Deleted, 2, false),
			existedBefore: true,
			want:          want{typ: event.Deleted, seq: 2},
		},
		{
			name:          "MODIFIED+DELETED(final state unknown)=DELETED(final state unknown)",
			queued:        mk(event.Modified, 1, true),
			next:          func() *event.Event { e := mk(event.Deleted, 2, false); e.FinalStateUnknown = true; return e }(),
			existedBefore: true,
			want:          want{typ: event.Deleted, seq: 2, finalStateUnknown: true},
		},
		{
			name:          "DELETED+ADDED=MODIFIED from the deleted object",
			queued:        mk(event.Deleted, 1, false),
			next:          mk(event.Added, 2, false),
			existedBefore: true,
			want:          want{typ: event.Modified, seq: 2, old: "queued.Object"},
		},
		{
			name:          "DELETED(final state unknown)+ADDED=MODIFIED",
			queued:        func() *event.Event { e := mk(event.Deleted, 1, false); e.FinalStateUnknown = true; return e }(),
			next:          mk(event.Added, 2, false),
			existedBefore: true,
			want:          want{typ: event.Modified, seq: 2, old: "queued.Object"},
		},
		{
			name:          "MODIFIED+MODIFIED=MODIFIED",
			queued:        mk(event.Modified, 1, true),
			next:          mk(event.Modified, 2, true),
			existedBefore: true,
			want:          want{typ: event.Modified, seq: 2, old: "queued.Old"},
		},
		{
			name:          "SYNC+SYNC=SYNC",
			queued:        mk(event.Sync, 0, true),
			next:          mk(event.Sync, 0, true),
			existedBefore: true,
			want:          want{typ: event.Sync, seq: 0, old: "queued.Old"},
		},
		{
			name:          "SYNC+MODIFIED=MODIFIED",
			queued:        mk(event.Sync, 0, true),
			next:          mk(event.Modified, 7, true),
			existedBefore: true,
			want:          want{typ: event.Modified, seq: 7, old: "queued.Old"},
		},
		{
			name:          "MODIFIED+SYNC=MODIFIED keeping the real change's Seq",
			queued:        mk(event.Modified, 3, true),
			next:          mk(event.Sync, 0, true),
			existedBefore: true,
			want:          want{typ: event.Modified, seq: 3, old: "queued.Old"},
		},
		{
			name:          "ADDED+SYNC=ADDED keeping Seq",
			queued:        func() *event.Event { e := mk(event.Added, 4, false); e.InInitialList = true; return e }(),
			next:          mk(event.Sync, 0, true),
			existedBefore: false,
			want:          want{typ: event.Added, seq: 4, initial: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, n := snap(tt.queued), snap(tt.next)
			got := coalesce(tt.queued, tt.next, tt.existedBefore)
			if snap(tt.queued) != q || snap(tt.next) != n {
				t.Fatal("coalesce modified an input event")
			}
			if got == tt.queued || got == tt.next {
				t.Fatal("coalesce returned one of its inputs; events are shared and must not be reused as merged")
			}
			if got.Type != tt.want.typ {
				t.Errorf("Type = %s, want %s", got.Type, tt.want.typ)
			}
			if got.Seq != tt.want.seq {
				t.Errorf("Seq = %d, want %d", got.Seq, tt.want.seq)
			}
			if got.Object != tt.next.Object {
				t.Errorf("Object is not next's (the latest state)")
			}
			var wantOld runtime.Object
			switch tt.want.old {
			case "queued.Old":
				wantOld = tt.queued.Old
			case "queued.Object":
				wantOld = tt.queued.Object
			}
			if got.Old != wantOld {
				t.Errorf("Old = %v, want %s", got.Old, tt.want.old)
			}
			if got.InInitialList != tt.want.initial {
				t.Errorf("InInitialList = %v, want %v", got.InInitialList, tt.want.initial)
			}
			if got.FinalStateUnknown != tt.want.finalStateUnknown {
				t.Errorf("FinalStateUnknown = %v, want %v", got.FinalStateUnknown, tt.want.finalStateUnknown)
			}
			if !got.Time.Equal(tt.next.Time) || got.Kind != tt.next.Kind || got.Resource != tt.next.Resource {
				t.Errorf("Time/Kind/Resource not taken from next: %v %s %v", got.Time, got.Kind, got.Resource)
			}
		})
	}
}

// TestCoalesceChains merges whole sequences through the ring, as the listener does: the
// merged event must leave a reader where reading every event would have.
func TestCoalesceChains(t *testing.T) {
	tests := []struct {
		name    string
		types   []event.EventType
		want    event.EventType
		wantOld int // index of the event whose Object is the merged Old; -1 for the first event's Old; -2 for nil
	}{
		{"MODIFIED x3", []event.EventType{event.Modified, event.Modified, event.Modified}, event.Modified, -1},
		{"ADDED MODIFIED MODIFIED", []event.EventType{event.Added, event.Modified, event.Modified}, event.Added, -2},
		{"ADDED MODIFIED DELETED", []event.EventType{event.Added, event.Modified, event.Deleted}, event.Deleted, -2},
		{"MODIFIED DELETED ADDED", []event.EventType{event.Modified, event.Deleted, event.Added}, event.Modified, 1},
		{"MODIFIED DELETED ADDED MODIFIED", []event.EventType{event.Modified, event.Deleted, event.Added, event.Modified}, event.Modified, 1},
		// The object was new to the reader when the first event was queued and exists at
		// the end: ADDED, not a MODIFIED of an object the reader never saw.
		{"ADDED DELETED ADDED", []event.EventType{event.Added, event.Deleted, event.Added}, event.Added, -2},
		{"ADDED DELETED ADDED MODIFIED", []event.EventType{event.Added, event.Deleted, event.Added, event.Modified}, event.Added, -2},
		{"ADDED DELETED ADDED DELETED", []event.EventType{event.Added, event.Deleted, event.Added, event.Deleted}, event.Deleted, -2},
		{"SYNC SYNC SYNC", []event.EventType{event.Sync, event.Sync, event.Sync}, event.Sync, -1},
		{"SYNC MODIFIED SYNC", []event.EventType{event.Sync, event.Modified, event.Sync}, event.Modified, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(4, Coalesce)
			var evs []*event.Event
			var lastSeq uint64
			for i, typ := range tt.types {
				seq := uint64(0)
				if typ != event.Sync {
					seq = uint64(i + 1)
					lastSeq = seq
				}
				ev := newEv(typ, "a", seq)
				if typ == event.Modified || typ == event.Sync {
					ev.Old = podObj("a", "old-"+string(rune('0'+i)))
				}
				evs = append(evs, ev)
				want := coalesced
				if i == 0 {
					want = queued
				}
				if res := r.put(ev); res != want {
					t.Fatalf("put %d: %v, want %v", i, res, want)
				}
			}
			got := drain(r)
			if len(got) != 1 {
				t.Fatalf("%d events queued, want 1", len(got))
			}
			m := got[0]
			if m.Type != tt.want {
				t.Errorf("merged type %s, want %s", m.Type, tt.want)
			}
			if m.Object != evs[len(evs)-1].Object {
				t.Error("merged Object is not the last event's")
			}
			if m.Seq != lastSeq {
				t.Errorf("merged Seq %d, want %d (the last real change)", m.Seq, lastSeq)
			}
			var wantOld runtime.Object
			switch tt.wantOld {
			case -2:
			case -1:
				wantOld = evs[0].Old
			default:
				wantOld = evs[tt.wantOld].Object
			}
			if m.Old != wantOld {
				t.Errorf("merged Old = %v, want %v", m.Old, wantOld)
			}
		})
	}
}

// TestCoalesceBoundedByObjects: a million events about 10 objects into a buffer of 16
// with a stalled sink never wait, and never queue more than one event per object.
func TestCoalesceBoundedByObjects(t *testing.T) {
	const objects, total = 10, 1_000_000
	sink := &testSink{entered: make(chan *event.Event, 16), gate: make(chan struct{})}
	l := New(Config{Name: "s", Buffer: 16, OnFull: Coalesce}, sink, nil)
	go l.Run()
	stopOnCleanup(t, l, sink)
	name := func(k int) string { return "obj-" + strconv.Itoa(k) }

	first := newEv(event.Added, name(0), 1)
	l.Add(first)
	waitEntered(t, sink) // stalled in Write from now on

	firstOld := make([]*event.Event, objects)
	lastEv := make([]*event.Event, objects)
	bulk := make([]*event.Event, objects) // reused: coalesce never keeps or changes its inputs
	for k := range objects {
		firstOld[k] = newEv(event.Modified, name(k), uint64(10+k))
		firstOld[k].Old = podObj(name(k), "first-old")
		bulk[k] = newEv(event.Modified, name(k), uint64(100+k))
		bulk[k].Old = podObj(name(k), "bulk-old")
		lastEv[k] = newEv(event.Modified, name(k), uint64(2_000_000+k))
		lastEv[k].Old = podObj(name(k), "last-old")
	}
	maxQueued := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i < total; i++ {
			k := i % objects
			switch {
			case i <= objects:
				l.Add(firstOld[k])
			case i >= total-objects:
				l.Add(lastEv[k])
			default:
				l.Add(bulk[k])
			}
			if i%1000 == 0 {
				l.mu.Lock()
				maxQueued = max(maxQueued, l.queue.len())
				l.mu.Unlock()
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("coalescing Adds blocked behind a stalled sink; stats %+v", l.Stats())
	}
	l.mu.Lock()
	queued, mapSize := l.queue.len(), len(l.queue.slotOf)
	l.mu.Unlock()
	if maxQueued > objects || queued != objects || mapSize != objects {
		t.Fatalf("queue length max %d, now %d (index %d); want at most and now %d", maxQueued, queued, mapSize, objects)
	}
	st := l.Stats()
	if want := (Stats{Received: total, Coalesced: total - 1 - objects}); st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}

	sink.open()
	l.Close()
	waitDone(t, l)
	got := sink.written()
	if len(got) != 1+objects || got[0] != first {
		t.Fatalf("delivered %d events, want the in-flight one and then one per object", len(got))
	}
	for i, ev := range got[1:] {
		k := (i + 1) % objects // queued in the order obj-1 .. obj-9, obj-0
		if ev.Key() != "default/"+name(k) {
			t.Fatalf("event %d is about %s, want %s", i+1, ev.Key(), name(k))
		}
		if ev.Type != event.Modified || ev.Old != firstOld[k].Old || ev.Object != lastEv[k].Object || ev.Seq != lastEv[k].Seq {
			t.Errorf("%s: merged %s seq %d; want MODIFIED seq %d from the first Old to the last Object", name(k), ev.Type, ev.Seq, lastEv[k].Seq)
		}
	}
	st = l.Stats()
	if want := (Stats{Received: total, Delivered: 1 + objects, Coalesced: total - 1 - objects}); st != want {
		t.Fatalf("final stats %+v, want %+v", st, want)
	}
	checkBalance(t, st)
}

// TestCoalesceFullOfDistinctObjectsWaits: when the buffer holds only other objects, Add
// waits as under Block; an object already queued still merges at once.
func TestCoalesceFullOfDistinctObjectsWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &testSink{gate: make(chan struct{})}
		l := New(Config{Name: "s", Buffer: 4, OnFull: Coalesce}, sink, nil)
		_, blocked := waitingAdd(t, l, sink, 6) // a new object, the buffer full of others
		// An update to a queued object merges without waiting.
		update := newEv(event.Modified, "pod-3", 7)
		l.Add(update)
		if st := l.Stats(); st.Coalesced != 1 {
			t.Fatalf("coalesced %d, want 1", st.Coalesced)
		}

		sink.gate <- struct{}{} // evs[0] written; evs[1] popped, making room
		synctest.Wait()
		if !returned(blocked) {
			t.Fatal("Add still waiting after a slot was freed")
		}
		sink.open()
		l.Close()
		<-l.Done()
		got := sink.written()
		if want := []uint64{1, 2, 7, 4, 5, 6}; !slices.Equal(seqs(got), want) {
			t.Fatalf("delivered %v, want %v", seqs(got), want)
		}
		if got[2].Type != event.Added || got[2].Object != update.Object {
			t.Errorf("pod-3 merged into %s, want ADDED with the update's object", got[2].Type)
		}
		st := l.Stats()
		if st != (Stats{Received: 7, Delivered: 6, Coalesced: 1}) {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestCoalesceObjectKeyUsesResource: a pod and a configmap with the same namespace/name
// are different objects to the coalescing listener.
func TestCoalesceObjectKeyUsesResource(t *testing.T) {
	sink := &testSink{}
	l := New(Config{Name: "s", Buffer: 4, OnFull: Coalesce}, sink, nil)
	pod := newEv(event.Added, "x", 1)
	cm := newEv(event.Added, "x", 2)
	cm.Resource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	l.Add(pod)
	l.Add(cm)
	go l.Run()
	stopOnCleanup(t, l, sink)
	l.Close()
	waitDone(t, l)
	if got := sink.written(); len(got) != 2 || got[0] != pod || got[1] != cm {
		t.Fatalf("got %v", seqs(got))
	}
}
