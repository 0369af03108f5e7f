package listener

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/kubeevents/kubeevents/internal/event"
)

func TestWritePanicIsContained(t *testing.T) {
	panicsOn := map[uint64]bool{2: true, 3: true, 4: true}
	sink := &testSink{onWrite: func(ev *event.Event) error {
		if panicsOn[ev.Seq] {
			panic(fmt.Sprintf("bad event %d", ev.Seq))
		}
		return nil
	}}
	l, w := runQueued(t, "s", sink, 6)
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
	l, w := runQueued(t, "s", sink, 5)
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

func TestOutputClosedStopsQuietly(t *testing.T) {
	closed := fmt.Errorf("write stdout: %w", ErrOutputClosed)
	sink := &testSink{onWrite: func(ev *event.Event) error {
		if ev.Seq == 2 {
			return closed
		}
		return nil
	}}
	l, w := runQueued(t, "stdout", sink, 4)
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

// stoppingSink is a sink that can fail on its own, outside Write (listener.Stopper).
type stoppingSink struct {
	*testSink
	stop func(error)
}

func (s *stoppingSink) StopWith(stop func(error)) { s.stop = stop }

// TestSinkStopsItself: a sink that fails outside Write (a commit made while events
// pause) is taken out of service at once: said once, Run ends without another event or
// Close, and later events count as Failed; a Write in flight that then fails too is not
// said again.
func TestSinkStopsItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &stoppingSink{testSink: &testSink{}}
		w := &warnings{}
		l := New(Config{Name: "s", Buffer: 4}, sink, w.warn)
		go l.Run()
		stopOnCleanup(t, l, sink.testSink)
		evs := distinctEvents(3)
		l.Add(evs[0])
		synctest.Wait() // written; Run waits for the next event
		sink.stop(errBoom)
		synctest.Wait()
		select {
		case <-l.Done():
		default:
			t.Fatal("Run still waits for events after the sink stopped itself")
		}
		l.Add(evs[1])
		l.Add(evs[2])
		if st := l.Stats(); st != (Stats{Received: 3, Delivered: 1, Failed: 2}) {
			t.Errorf("stats %+v", st)
		}
		sink.stop(errBoom) // again, as a Write that failed after it would
		if notes := w.containing("stopped"); len(notes) != 1 || !strings.Contains(notes[0], "boom") {
			t.Errorf("stop notices %q, want one naming the error", notes)
		}
		if !errors.Is(l.Err(), errBoom) {
			t.Errorf("Err() = %v", l.Err())
		}
		checkBalance(t, l.Stats())
	})
}
