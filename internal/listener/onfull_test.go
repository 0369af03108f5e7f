package listener

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

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
	produce(l, producers, each, each).Wait()
	l.Close()
	waitDone(t, l)
	checkProducerOrder(t, sink.written(), producers, each, true)
	if st := l.Stats(); st != (Stats{Received: producers * each, Delivered: producers * each}) {
		t.Fatalf("stats %+v", st)
	}
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
