package listener

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

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

func (panickyCloser) Close() error { panic("close") }

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
