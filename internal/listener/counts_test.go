package listener

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

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
				wg := produce(l, producers, each, objects)
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

func TestFilteredEventsAreCountedNotDelivered(t *testing.T) {
	sink := &testSink{onWrite: func(ev *event.Event) error {
		if ev.Seq%2 == 0 {
			return fmt.Errorf("jq: %w", ErrFiltered) // wrapped still counts
		}
		return nil
	}}
	l, w := runQueued(t, "s", sink, 10)
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
