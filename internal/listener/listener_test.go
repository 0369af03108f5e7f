package listener

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

var errBoom = errors.New("boom")

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

// TestDropPoliciesWithStalledSink: with the sink stuck in Write, Adds under drop-* never
// wait, drop exactly the events beyond the buffer, and keep the newest (drop-oldest) or
// the first (drop-newest) events.
func TestDropPoliciesWithStalledSink(t *testing.T) {
	const buffer, total = 8, 10000
	for _, tt := range []struct {
		policy Policy
		want   []uint64 // delivered once the sink is released
	}{
		{DropOldest, append([]uint64{1}, seqRange(total-buffer+1, total)...)},
		{DropNewest, seqRange(1, buffer+1)},
	} {
		t.Run(tt.policy.String(), func(t *testing.T) {
			sink := &testSink{entered: make(chan *event.Event, total), gate: make(chan struct{})}
			w := &warnings{}
			l := New(Config{Name: "s", Buffer: buffer, OnFull: tt.policy}, sink, w.warn)
			go l.Run()
			stopOnCleanup(t, l, sink)
			evs := distinctEvents(total)
			l.Add(evs[0])
			if ev := waitEntered(t, sink); ev != evs[0] {
				t.Fatalf("sink got seq %d first", ev.Seq)
			}
			// evs[0] is in Write, which will not return until the gate opens.
			done := make(chan struct{})
			go func() {
				defer close(done)
				for _, ev := range evs[1:] {
					l.Add(ev)
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("Add blocked behind a stalled sink under %s; stats %+v", tt.policy, l.Stats())
			}
			st := l.Stats()
			if want := (Stats{Received: total, Dropped: total - 1 - buffer}); st != want {
				t.Fatalf("stats while stalled %+v, want %+v", st, want)
			}
			if n := len(w.containing("dropping events")); n != 1 {
				t.Errorf("%d drop notices, want 1 (rate-limited): %q", n, w.all())
			}
			sink.open()
			l.Close()
			waitDone(t, l)
			if got := seqs(sink.written()); !slices.Equal(got, tt.want) {
				t.Fatalf("delivered %v, want %v", got, tt.want)
			}
			st = l.Stats()
			if want := (Stats{Received: total, Delivered: buffer + 1, Dropped: total - 1 - buffer}); st != want {
				t.Fatalf("final stats %+v, want %+v", st, want)
			}
			checkBalance(t, st)
		})
	}
}

func TestPoliciesDeliverInOrder(t *testing.T) {
	for _, p := range policies {
		t.Run(p.String(), func(t *testing.T) {
			sink := &testSink{}
			l := New(Config{Name: "s", Buffer: 4096, OnFull: p}, sink, nil)
			go l.Run()
			stopOnCleanup(t, l, sink)
			evs := distinctEvents(3000)
			for _, ev := range evs {
				l.Add(ev)
			}
			l.Close()
			waitDone(t, l)
			got := sink.written()
			if len(got) != len(evs) {
				t.Fatalf("delivered %d of %d", len(got), len(evs))
			}
			for i := range got {
				if got[i] != evs[i] {
					t.Fatalf("event %d: got seq %d, want the very event with seq %d", i, got[i].Seq, evs[i].Seq)
				}
			}
			if st := l.Stats(); st != (Stats{Received: 3000, Delivered: 3000}) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestBlockLosesNothing: a producer adding 10,000 events through a buffer of 8 to a
// slow sink is held back, and the sink sees every event in order.
func TestBlockLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const buffer, total = 8, 10000
		var l *Listener
		maxQueued := 0
		sink := &testSink{onWrite: func(*event.Event) error {
			l.mu.Lock()
			maxQueued = max(maxQueued, l.queue.len())
			l.mu.Unlock()
			time.Sleep(time.Millisecond) // slow: 10 s of fake time in all
			return nil
		}}
		l = New(Config{Name: "s", Buffer: buffer, OnFull: Block}, sink, nil)
		go l.Run()
		stopOnCleanup(t, l, sink)
		evs := distinctEvents(total)
		start := time.Now()
		producerDone := make(chan time.Duration)
		go func() {
			for _, ev := range evs {
				l.Add(ev)
			}
			producerDone <- time.Since(start)
		}()
		took := <-producerDone
		// The producer could only finish once all but the last buffer+1 events were
		// written, at 1 ms each: it really was held back by the sink.
		if least := time.Duration(total-buffer-1) * time.Millisecond; took < least {
			t.Errorf("producer finished after %v; with a 1 ms sink it cannot before %v", took, least)
		}
		l.Close()
		<-l.Done()
		got := sink.written()
		if !slices.Equal(seqs(got), seqRange(1, total)) {
			t.Fatalf("sink saw %d events, not 1..%d in order", len(got), total)
		}
		if maxQueued > buffer {
			t.Errorf("queue reached %d events, buffer is %d", maxQueued, buffer)
		}
		st := l.Stats()
		if st.Received != total || st.Delivered != total || st.Dropped+st.Coalesced+st.Failed != 0 {
			t.Fatalf("stats %+v, want %d received and delivered, nothing else", st, total)
		}
	})
}

// TestBlockConcurrentProducers: several producers through a tiny buffer lose nothing,
// and each producer's events stay in its order.
func TestBlockConcurrentProducers(t *testing.T) {
	const producers, each = 4, 2500
	sink := &testSink{onWrite: func(ev *event.Event) error {
		if ev.Seq%64 == 0 {
			runtime.Gosched()
		}
		return nil
	}}
	l := New(Config{Name: "s", Buffer: 2, OnFull: Block}, sink, nil)
	go l.Run()
	stopOnCleanup(t, l, sink)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				l.Add(newEv(event.Modified, fmt.Sprintf("p%d-%d", p, i), uint64(p*1_000_000+i+1)))
			}
		})
	}
	wg.Wait()
	l.Close()
	waitDone(t, l)
	checkProducerOrder(t, sink.written(), producers, each, true)
	if st := l.Stats(); st != (Stats{Received: producers * each, Delivered: producers * each}) {
		t.Fatalf("stats %+v", st)
	}
}

// checkProducerOrder checks that events from each producer (Seq p*1e6+i+1) arrive in
// increasing order, and, if complete, that all of them arrive.
func checkProducerOrder(t *testing.T, got []*event.Event, producers, each int, complete bool) {
	t.Helper()
	last := make([]uint64, producers)
	count := make([]int, producers)
	for _, ev := range got {
		p := int(ev.Seq / 1_000_000)
		if ev.Seq <= last[p] {
			t.Fatalf("producer %d: seq %d delivered after %d", p, ev.Seq, last[p])
		}
		last[p] = ev.Seq
		count[p]++
	}
	if complete {
		for p, n := range count {
			if n != each {
				t.Errorf("producer %d: %d of %d events delivered", p, n, each)
			}
		}
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

func TestBlockWaitsForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &testSink{gate: make(chan struct{})}
		l := New(Config{Name: "s", Buffer: 2, OnFull: Block}, sink, nil)
		evs, a := waitingAdd(t, l, sink, 5)
		sink.gate <- struct{}{}
		synctest.Wait()
		if !returned(a) {
			t.Fatal("Add did not proceed when a slot was freed")
		}
		sink.open()
		l.Add(evs[4])
		l.Close()
		<-l.Done()
		if got := seqs(sink.written()); !slices.Equal(got, seqRange(1, 5)) {
			t.Fatalf("delivered %v", got)
		}
	})
}

func TestWritePanicIsContained(t *testing.T) {
	panicsOn := map[uint64]bool{2: true, 3: true, 4: true}
	sink := &testSink{onWrite: func(ev *event.Event) error {
		if panicsOn[ev.Seq] {
			panic(fmt.Sprintf("bad event %d", ev.Seq))
		}
		return nil
	}}
	w := &warnings{}
	l := New(Config{Name: "s", Buffer: 16}, sink, w.warn)
	for _, ev := range distinctEvents(6) {
		l.Add(ev)
	}
	go l.Run()
	stopOnCleanup(t, l, sink)
	l.Close()
	waitDone(t, l)
	if got := seqs(sink.written()); !slices.Equal(got, []uint64{1, 5, 6}) {
		t.Fatalf("delivered %v, want [1 5 6]: delivery goes on after a panic", got)
	}
	st := l.Stats()
	if st != (Stats{Received: 6, Delivered: 3, Failed: 3}) {
		t.Fatalf("stats %+v", st)
	}
	notes := w.containing("panicked")
	if len(notes) != 1 {
		t.Fatalf("%d panic notices, want 1 (rate-limited): %q", len(notes), w.all())
	}
	if !strings.Contains(notes[0], `sink "s" panicked`) || !strings.Contains(notes[0], "bad event 2") {
		t.Errorf("notice %q should name the sink and the first panic", notes[0])
	}
	if l.Err() != nil {
		t.Errorf("Err() = %v: a panic does not stop the sink", l.Err())
	}
	if sink.closeCount() != 1 {
		t.Errorf("sink closed %d times", sink.closeCount())
	}
}

func TestWriteErrorStopsSink(t *testing.T) {
	sink := &testSink{onWrite: func(ev *event.Event) error {
		if ev.Seq == 3 {
			return errBoom
		}
		return nil
	}}
	w := &warnings{}
	l := New(Config{Name: "s", Buffer: 16}, sink, w.warn)
	for _, ev := range distinctEvents(5) {
		l.Add(ev)
	}
	go l.Run()
	stopOnCleanup(t, l, sink)
	waitDone(t, l) // Run returns by itself when the sink fails, without Close
	if got := seqs(sink.written()); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("delivered %v", got)
	}
	if st := l.Stats(); st != (Stats{Received: 5, Delivered: 2, Failed: 3}) {
		t.Fatalf("stats %+v: the failed event and the queued ones count as Failed", st)
	}
	if !errors.Is(l.Err(), errBoom) {
		t.Fatalf("Err() = %v", l.Err())
	}
	for _, ev := range distinctEvents(100) {
		l.Add(ev)
	}
	st := l.Stats()
	if st != (Stats{Received: 105, Delivered: 2, Failed: 103}) {
		t.Fatalf("stats after later Adds %+v", st)
	}
	if c := sink.writeCalls(); c != 3 {
		t.Errorf("%d Write calls, want 3: a stopped sink gets no more", c)
	}
	if notes := w.containing("stopped"); len(notes) != 1 || !strings.Contains(notes[0], "boom") {
		t.Errorf("stop notices %q, want one naming the error; all: %q", notes, w.all())
	}
	if len(w.all()) != 1 {
		t.Errorf("diagnostics %q, want just the stop notice", w.all())
	}
	if sink.closeCount() != 1 {
		t.Errorf("sink closed %d times, want 1", sink.closeCount())
	}
	l.Close() // harmless after a failure
	l.Abort()
	if st := l.Stats(); st.Failed != 103 || st.Dropped != 0 {
		t.Errorf("Close/Abort after a failure changed the counts: %+v", st)
	}
	checkBalance(t, l.Stats())
}

// TestWriteErrorReleasesBlockedAdds: Adds waiting for room under block give up when the
// sink fails, counting their events as Failed.
func TestWriteErrorReleasesBlockedAdds(t *testing.T) {
	for _, p := range []Policy{Block, Coalesce} {
		t.Run(p.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sink := &testSink{gate: make(chan struct{}), onWrite: func(*event.Event) error { return errBoom }}
				w := &warnings{}
				l := New(Config{Name: "s", Buffer: 2, OnFull: p}, sink, w.warn)
				_, a := waitingAdd(t, l, sink, 4)
				sink.gate <- struct{}{} // Write fails
				synctest.Wait()
				if !returned(a) {
					t.Fatal("blocked Add not released by the sink's failure")
				}
				<-l.Done()
				if st := l.Stats(); st != (Stats{Received: 4, Failed: 4}) {
					t.Fatalf("stats %+v", st)
				}
				if n := len(w.containing("stopped")); n != 1 {
					t.Fatalf("%d stop notices", n)
				}
			})
		})
	}
}

func TestCloseDrainsThenClosesSink(t *testing.T) {
	for _, p := range policies {
		t.Run(p.String(), func(t *testing.T) {
			sink := &testSink{}
			l := New(Config{Name: "s", Buffer: 64, OnFull: p}, sink, nil)
			evs := distinctEvents(55)
			for _, ev := range evs[:50] {
				l.Add(ev)
			}
			l.Close()
			for _, ev := range evs[50:] {
				l.Add(ev) // after Close: Dropped
			}
			if sink.writeCalls() != 0 {
				t.Fatal("Close wrote to the sink itself")
			}
			go l.Run()
			stopOnCleanup(t, l, sink)
			waitDone(t, l)
			l.Close()
			if got := seqs(sink.written()); !slices.Equal(got, seqRange(1, 50)) {
				t.Fatalf("delivered %v, want 1..50", got)
			}
			if sink.closeCount() != 1 || sink.writesAfterClose != 0 {
				t.Fatalf("sink closed %d times, %d writes after Close; want once, after the last write", sink.closeCount(), sink.writesAfterClose)
			}
			if st := l.Stats(); st != (Stats{Received: 55, Delivered: 50, Dropped: 5}) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestCloseReleasesBlockedAdds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &testSink{gate: make(chan struct{})}
		l := New(Config{Name: "s", Buffer: 2, OnFull: Block}, sink, nil)
		_, a := waitingAdd(t, l, sink, 4)
		l.Close()
		synctest.Wait()
		if !returned(a) {
			t.Fatal("Close did not release the waiting Add")
		}
		sink.open()
		<-l.Done()
		if got := seqs(sink.written()); !slices.Equal(got, []uint64{1, 2, 3}) {
			t.Fatalf("delivered %v, want the queued events", got)
		}
		if st := l.Stats(); st != (Stats{Received: 4, Delivered: 3, Dropped: 1}) {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestSinkCloseErrors(t *testing.T) {
	t.Run("error", func(t *testing.T) {
		sink := &testSink{closeErr: errBoom}
		w := &warnings{}
		l := New(Config{Name: "s"}, sink, w.warn)
		go l.Run()
		stopOnCleanup(t, l, sink)
		l.Close()
		waitDone(t, l)
		if !errors.Is(l.Err(), errBoom) {
			t.Fatalf("Err() = %v", l.Err())
		}
		if n := len(w.containing("failed to close")); n != 1 {
			t.Fatalf("diagnostics %q", w.all())
		}
	})
	t.Run("panic", func(t *testing.T) {
		w := &warnings{}
		l := New(Config{Name: "s"}, panickyCloser{}, w.warn)
		go l.Run()
		stopOnCleanup(t, l, nil)
		l.Close()
		waitDone(t, l)
		if err := l.Err(); err == nil || !strings.Contains(err.Error(), "panic") {
			t.Fatalf("Err() = %v", err)
		}
	})
	t.Run("write error wins", func(t *testing.T) {
		sink := &testSink{closeErr: errors.New("close failed"), onWrite: func(*event.Event) error { return errBoom }}
		l := New(Config{Name: "s"}, sink, nil)
		l.Add(newEv(event.Added, "a", 1))
		go l.Run()
		stopOnCleanup(t, l, sink)
		waitDone(t, l)
		if !errors.Is(l.Err(), errBoom) {
			t.Fatalf("Err() = %v, want the Write error", l.Err())
		}
	})
}

type panickyCloser struct{}

func (panickyCloser) Write(*event.Event) error { return nil }
func (panickyCloser) Close() error             { panic("close") }

func TestDrainAbortsStalledSink(t *testing.T) {
	stalledSink := &testSink{entered: make(chan *event.Event, 8), gate: make(chan struct{})}
	stalled := New(Config{Name: "stalled", Buffer: 8}, stalledSink, nil)
	fastSink := &testSink{}
	fast := New(Config{Name: "fast", Buffer: 8}, fastSink, nil)
	go stalled.Run()
	stopOnCleanup(t, stalled, stalledSink)
	go fast.Run()
	stopOnCleanup(t, fast, fastSink)
	for _, ev := range distinctEvents(5) {
		stalled.Add(ev)
		fast.Add(ev)
	}
	waitEntered(t, stalledSink) // event 1 is in Write; 2..5 are queued

	start := time.Now()
	late := Drain([]*Listener{stalled, fast}, time.Second) // ample for the fast one, loaded or not
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("Drain returned after %v, before the grace time", elapsed)
	}
	if len(late) != 1 || late[0] != stalled {
		t.Fatalf("Drain returned %v, want just the stalled listener", late)
	}
	select {
	case <-fast.Done():
	default:
		t.Fatal("the fast listener had not finished")
	}
	if st := fast.Stats(); st != (Stats{Received: 5, Delivered: 5}) {
		t.Errorf("fast stats %+v", st)
	}
	if st := stalled.Stats(); st != (Stats{Received: 5, Dropped: 5}) {
		t.Fatalf("stalled stats after Drain %+v: its queued events and the one in flight count as Dropped", st)
	}
	stalled.Add(newEv(event.Added, "late", 99))
	if stalledSink.closeCount() != 0 {
		t.Fatal("the aborted sink was closed while its Write was in flight")
	}
	stalledSink.open()
	waitDone(t, stalled)
	if got := seqs(stalledSink.written()); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("aborted sink got %v, want only the event in flight", got)
	}
	if stalledSink.closeCount() != 1 {
		t.Fatalf("aborted sink closed %d times, want 1", stalledSink.closeCount())
	}
	st := stalled.Stats()
	if st != (Stats{Received: 6, Dropped: 6}) {
		t.Fatalf("stalled final stats %+v (the late Write must not be counted twice)", st)
	}
	checkBalance(t, st)
}

func TestDrainAllDone(t *testing.T) {
	var ls []*Listener
	var sinks []*testSink
	for i := range 3 {
		s := &testSink{}
		l := New(Config{Name: "s" + strconv.Itoa(i), Buffer: 4}, s, nil)
		go l.Run()
		stopOnCleanup(t, l, s)
		for _, ev := range distinctEvents(4) {
			l.Add(ev)
		}
		ls, sinks = append(ls, l), append(sinks, s)
	}
	start := time.Now()
	if late := Drain(ls, time.Minute); len(late) != 0 {
		t.Fatalf("Drain returned %d late listeners", len(late))
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Fatalf("Drain took %v: it must return as soon as all are done", elapsed)
	}
	for i, l := range ls {
		if st := l.Stats(); st != (Stats{Received: 4, Delivered: 4}) {
			t.Errorf("%s stats %+v", l.Name(), st)
		}
		if sinks[i].closeCount() != 1 {
			t.Errorf("%s closed %d times", l.Name(), sinks[i].closeCount())
		}
	}
}

func TestDropNoticeFirstOnly(t *testing.T) {
	for _, p := range []Policy{DropOldest, DropNewest} {
		w := &warnings{}
		l := New(Config{Name: "archive", Buffer: 3, OnFull: p}, &testSink{}, w.warn)
		for _, ev := range distinctEvents(3) {
			l.Add(ev)
		}
		if len(w.all()) != 0 {
			t.Fatalf("%s: notices before any drop: %q", p, w.all())
		}
		for _, ev := range distinctEvents(1000) {
			l.Add(ev)
		}
		want := fmt.Sprintf(`sink "archive" is full (buffer 3, on-full=%s); dropping events`, p)
		if got := w.all(); len(got) != 1 || got[0] != want {
			t.Errorf("%s: notices %q, want exactly [%q]", p, got, want)
		}
	}
	// Block and coalesce never drop, so never say so.
	for _, p := range []Policy{Block, Coalesce} {
		w := &warnings{}
		sink := &testSink{}
		l := New(Config{Name: "s", Buffer: 1, OnFull: p}, sink, w.warn)
		go l.Run()
		stopOnCleanup(t, l, sink)
		for _, ev := range distinctEvents(200) {
			l.Add(ev)
		}
		l.Close()
		waitDone(t, l)
		if len(w.all()) != 0 {
			t.Errorf("%s: notices %q", p, w.all())
		}
	}
}

// TestStatsBalance: after Run returns, Received == Delivered + Dropped + Coalesced +
// Failed, for every policy, with concurrent producers, whether the listener is closed,
// aborted, its sink fails, or its sink panics.
func TestStatsBalance(t *testing.T) {
	const producers, each, objects = 4, 2000, 50
	for _, p := range policies {
		for _, scenario := range []string{"close", "abort", "write error", "panics"} {
			t.Run(p.String()+"/"+scenario, func(t *testing.T) {
				// Under drop-* only the events in the buffer are sure to be written
				// (at least 16), so the stall and the failure come early there.
				trouble := int64(200)
				if p == DropOldest || p == DropNewest {
					trouble = 10
				}
				var writes, panics atomic.Int64
				stall := make(chan struct{})
				stalled := make(chan struct{})
				sink := &testSink{onWrite: func(ev *event.Event) error {
					n := writes.Add(1)
					switch scenario {
					case "close":
						if n%16 == 0 {
							runtime.Gosched()
						}
					case "abort":
						if n == trouble {
							close(stalled)
							<-stall
						}
					case "write error":
						if n == trouble {
							return errBoom
						}
					case "panics":
						if n%7 == 0 {
							panics.Add(1)
							panic("boom")
						}
					}
					return nil
				}}
				l := New(Config{Name: "s", Buffer: 16, OnFull: p}, sink, nil)
				go l.Run()
				stopOnCleanup(t, l, sink)
				var wg sync.WaitGroup
				for pr := range producers {
					wg.Go(func() {
						for i := range each {
							l.Add(newEv(event.Modified, fmt.Sprintf("p%d-%d", pr, i%objects), uint64(pr*1_000_000+i+1)))
						}
					})
				}
				var late []*Listener
				if scenario == "abort" {
					select {
					case <-stalled:
					case <-time.After(30 * time.Second):
						t.Fatal("sink never reached its stall")
					}
					late = Drain([]*Listener{l}, 20*time.Millisecond)
				}
				wg.Wait()
				if scenario != "abort" {
					l.Close()
				}
				for _, ev := range distinctEvents(10) {
					l.Add(ev) // after Close, Abort or failure
				}
				close(stall)
				waitDone(t, l)
				st := l.Stats()
				if st.Received != producers*each+10 {
					t.Fatalf("received %d", st.Received)
				}
				checkBalance(t, st)
				if sink.writesAfterClose != 0 || sink.closeCount() != 1 {
					t.Errorf("sink closed %d times, %d writes after Close", sink.closeCount(), sink.writesAfterClose)
				}
				switch scenario {
				case "close":
					if st.Failed != 0 || st.Dropped < 10 {
						t.Errorf("stats %+v", st)
					}
					if p == Block && st.Dropped != 10 {
						t.Errorf("block dropped %d, want only the 10 Adds after Close", st.Dropped)
					}
				case "abort":
					if len(late) != 1 {
						t.Errorf("Drain did not abort the stalled listener")
					}
				case "write error":
					if !errors.Is(l.Err(), errBoom) || st.Failed < 1 || st.Delivered != uint64(trouble-1) {
						t.Errorf("stats %+v, err %v", st, l.Err())
					}
				case "panics":
					if st.Failed != uint64(panics.Load()) || panics.Load() == 0 {
						t.Errorf("failed %d, panics %d", st.Failed, panics.Load())
					}
				}
				if p != Coalesce {
					checkProducerOrder(t, sink.written(), producers, each, p == Block && scenario == "close")
				}
			})
		}
	}
}

func TestStatsSnapshotIsSafeDuringDelivery(t *testing.T) {
	sink := &testSink{}
	l := New(Config{Name: "s", Buffer: 4, OnFull: DropOldest}, sink, nil)
	go l.Run()
	stopOnCleanup(t, l, sink)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				st := l.Stats()
				if st.Delivered+st.Filtered+st.Dropped+st.Coalesced+st.Failed > st.Received {
					t.Errorf("snapshot counts more outcomes than events: %+v", st)
					return
				}
			}
		}
	})
	for _, ev := range distinctEvents(5000) {
		l.Add(ev)
	}
	l.Close()
	waitDone(t, l)
	close(stop)
	wg.Wait()
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

func TestFilteredEventsAreCountedNotDelivered(t *testing.T) {
	sink := &testSink{onWrite: func(ev *event.Event) error {
		if ev.Seq%2 == 0 {
			return fmt.Errorf("jq: %w", ErrFiltered) // wrapped still counts
		}
		return nil
	}}
	w := &warnings{}
	l := New(Config{Name: "s", Buffer: 16}, sink, w.warn)
	for _, ev := range distinctEvents(10) {
		l.Add(ev)
	}
	go l.Run()
	stopOnCleanup(t, l, sink)
	l.Close()
	waitDone(t, l)
	if got := seqs(sink.written()); !slices.Equal(got, []uint64{1, 3, 5, 7, 9}) {
		t.Fatalf("written %v", got)
	}
	st := l.Stats()
	if st != (Stats{Received: 10, Delivered: 5, Filtered: 5}) {
		t.Fatalf("stats %+v: filtering is neither delivery nor failure", st)
	}
	if l.Err() != nil || len(w.all()) != 0 {
		t.Fatalf("filtering stopped or warned: err %v, %q", l.Err(), w.all())
	}
	checkBalance(t, st)
}

func TestOutputClosedStopsQuietly(t *testing.T) {
	closed := fmt.Errorf("write stdout: %w", ErrOutputClosed)
	sink := &testSink{onWrite: func(ev *event.Event) error {
		if ev.Seq == 2 {
			return closed
		}
		return nil
	}}
	w := &warnings{}
	l := New(Config{Name: "stdout", Buffer: 16}, sink, w.warn)
	for _, ev := range distinctEvents(4) {
		l.Add(ev)
	}
	go l.Run()
	stopOnCleanup(t, l, sink)
	waitDone(t, l)
	if got := seqs(sink.written()); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("written %v", got)
	}
	if st := l.Stats(); st != (Stats{Received: 4, Delivered: 1, Failed: 3}) {
		t.Fatalf("stats %+v", st)
	}
	if !errors.Is(l.Err(), ErrOutputClosed) {
		t.Fatalf("Err() = %v", l.Err())
	}
	if len(w.all()) != 0 {
		t.Fatalf("a closed output must stop the sink without a word; got %q", w.all())
	}
}

func TestSeen(t *testing.T) {
	l := New(Config{Name: "s", Buffer: 8, OnFull: DropNewest}, &testSink{}, nil)
	if l.Seen(1) {
		t.Fatal("Seen(1) before any Add")
	}
	l.Add(newEv(event.Modified, "a", 5))
	l.Add(newEv(event.Modified, "b", 3)) // out of order: does not lower the mark
	l.Add(newEv(event.Sync, "c", 0))
	if !l.Seen(5) || !l.Seen(3) || l.Seen(6) {
		t.Fatalf("Seen(3,5,6) = %v %v %v, want true true false", l.Seen(3), l.Seen(5), l.Seen(6))
	}
	for range 20 {
		l.Add(newEv(event.Modified, "d", 9)) // dropped events were still given to Add
	}
	if !l.Seen(9) {
		t.Fatal("Seen(9) after dropped Adds of seq 9")
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				l.Add(newEv(event.Modified, "e", uint64(10+g*1000+i)))
			}
		})
	}
	wg.Wait()
	if !l.Seen(4009) || l.Seen(4010) {
		t.Fatalf("after concurrent Adds up to 4009: Seen(4009)=%v Seen(4010)=%v", l.Seen(4009), l.Seen(4010))
	}
}

// Missed counts the numbered events that never reached Add as received and dropped; SYNC
// events (no number) do not hide a missing one, and a listener that saw them all is left as it is.
func TestMissedCountsEventsNeverAdded(t *testing.T) {
	sink := &testSink{}
	l := New(Config{Name: "s"}, sink, nil)
	go l.Run()
	for seq := uint64(1); seq <= 3; seq++ {
		l.Add(newEv(event.Modified, "p", seq))
	}
	l.Add(newEv(event.Sync, "p", 0))
	l.Missed(5) // events 4 and 5 were made, and never handed over
	l.Close()
	<-l.Done()
	if s := l.Stats(); s.Received != 6 || s.Delivered != 4 || s.Dropped != 2 {
		t.Errorf("stats %+v, want 6 received: 4 delivered (3 numbered, 1 SYNC), 2 dropped", s)
	}

	all := New(Config{Name: "all"}, &testSink{}, nil)
	go all.Run()
	all.Add(newEv(event.Modified, "p", 1))
	all.Missed(1)
	all.Close()
	<-all.Done()
	if s := all.Stats(); s.Received != 1 || s.Dropped != 0 {
		t.Errorf("stats %+v, want 1 received, nothing dropped", s)
	}
}

// Written (the --resume checkpoint's hook) is called once the sink's Write returned
// without an error: for written and filtered events, never for a failed, panicked or
// dropped one, and never before Write returns.
func TestWrittenCalledAfterWriteReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		sink := &testSink{onWrite: func(ev *event.Event) error {
			switch ev.Seq {
			case 1:
				<-release
			case 2:
				return ErrFiltered
			case 3:
				panic("bad event")
			case 5:
				return errBoom
			}
			return nil
		}}
		l := New(Config{Name: "s", Buffer: 16}, sink, nil)
		var mu sync.Mutex
		var written []uint64
		evs := distinctEvents(6)
		for _, ev := range evs {
			ev.Written = func() {
				mu.Lock()
				defer mu.Unlock()
				written = append(written, ev.Seq)
			}
			l.Add(ev)
		}
		got := func() []uint64 {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(written)
		}
		go l.Run()
		stopOnCleanup(t, l, sink)
		synctest.Wait() // the first Write holds, and nothing else can happen
		if w := got(); len(w) != 0 {
			t.Fatalf("Written called for %v while the first Write has not returned", w)
		}
		close(release)
		waitDone(t, l) // event 5 fails the sink; 6 is never written
		if w := got(); !slices.Equal(w, []uint64{1, 2, 4}) {
			t.Fatalf("Written for %v, want [1 2 4] (written, filtered, written)", w)
		}
	})
}

// TryAdd refuses, and counts nothing, exactly where Add would wait for room: a full
// buffer under block; under the drop policies it takes the event as Add does.
func TestTryAddRefusesOnlyWhereAddWaits(t *testing.T) {
	for _, c := range []struct {
		policy Policy
		taken  bool
	}{{Block, false}, {DropOldest, true}, {DropNewest, true}} {
		synctest.Test(t, func(t *testing.T) {
			sink := &testSink{gate: make(chan struct{})}
			l := New(Config{Name: "s", Buffer: 2, OnFull: c.policy}, sink, nil)
			go l.Run()
			evs := distinctEvents(4)
			for _, ev := range evs[:3] { // one held by the sink's Write, two queued
				if !l.TryAdd(ev) {
					t.Fatalf("%s: TryAdd refused event %d with room", c.policy, ev.Seq)
				}
				synctest.Wait()
			}
			before := l.Stats().Received
			if taken := l.TryAdd(evs[3]); taken != c.taken {
				t.Errorf("%s: TryAdd on a full buffer took the event: %v, want %v", c.policy, taken, c.taken)
			}
			if got, want := l.Stats().Received-before, map[bool]uint64{true: 1, false: 0}[c.taken]; got != want {
				t.Errorf("%s: %d received counted for the full buffer's event, want %d", c.policy, got, want)
			}
			close(sink.gate)
			l.Close()
			<-l.Done()
		})
	}
}
