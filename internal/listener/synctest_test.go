package listener

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

// These tests run in a synctest bubble: time is fake and advances only when every
// goroutine in the bubble is blocked, so periods are checked exactly.

// TestDropNoticeThrottle: the first drop is reported at once; more drops within the 5 s
// period are not; the first drop after it is, with the count so far.
func TestDropNoticeThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &warnings{}
		l := New(Config{Name: "archive", Buffer: 1, OnFull: DropNewest}, &testSink{}, w.warn)
		l.Add(newEv(event.Added, "a", 1)) // fills the buffer; no Run, so it stays full
		start := time.Now()
		for i := range 100 { // 100 drops over one second
			l.Add(newEv(event.Added, "b", uint64(2+i)))
			time.Sleep(10 * time.Millisecond)
		}
		if got := w.all(); !slices.Equal(got, []string{`sink "archive" is full (buffer 1, on-full=drop-newest); dropping events`}) {
			t.Fatalf("after 100 drops in 1s: %q", got)
		}
		time.Sleep(NoticeEvery - time.Since(start) - time.Nanosecond)
		l.Add(newEv(event.Added, "c", 200)) // 1 ns short of the period
		if n := len(w.all()); n != 1 {
			t.Fatalf("%d notices before the period was over: %q", n, w.all())
		}
		time.Sleep(time.Nanosecond)
		l.Add(newEv(event.Added, "d", 201)) // exactly one period after the first notice
		want := `sink "archive" is still full; 102 events dropped so far`
		if got := w.all(); len(got) != 2 || got[1] != want {
			t.Fatalf("notices %q, want a second one %q", got, want)
		}
		for i := range 49 { // another 4.9 s of drops: quiet again
			time.Sleep(100 * time.Millisecond)
			l.Add(newEv(event.Added, "e", uint64(300+i)))
		}
		if n := len(w.all()); n != 2 {
			t.Fatalf("%d notices within the second period", n)
		}
		time.Sleep(100 * time.Millisecond)
		l.Add(newEv(event.Added, "f", 400))
		if got := w.all(); len(got) != 3 || got[2] != `sink "archive" is still full; 152 events dropped so far` {
			t.Fatalf("third notice: %q", got)
		}
		if st := l.Stats(); st.Dropped != 152 {
			t.Fatalf("dropped %d", st.Dropped)
		}
	})
}

// TestPanicNoticeThrottle: panics are reported at most once per period.
func TestPanicNoticeThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &testSink{onWrite: func(ev *event.Event) error {
			if ev.Seq >= 100 {
				panic(fmt.Sprintf("panic %d", ev.Seq))
			}
			return nil
		}}
		w := &warnings{}
		l := New(Config{Name: "s", Buffer: 64}, sink, w.warn)
		go l.Run()
		stopOnCleanup(t, l, sink)
		for i := range 10 {
			l.Add(newEv(event.Added, "a", uint64(100+i)))
		}
		synctest.Wait()
		if got := w.all(); len(got) != 1 || got[0] != `sink "s" panicked on an event: panic 100; skipping it` {
			t.Fatalf("notices after 10 panics at once: %q", got)
		}
		time.Sleep(NoticeEvery - time.Nanosecond)
		l.Add(newEv(event.Added, "b", 200))
		synctest.Wait()
		if n := len(w.all()); n != 1 {
			t.Fatalf("%d notices within the period", n)
		}
		time.Sleep(time.Nanosecond)
		l.Add(newEv(event.Added, "c", 201))
		synctest.Wait()
		if got := w.all(); len(got) != 2 || got[1] != `sink "s" panicked on an event: panic 201; skipping it` {
			t.Fatalf("notices %q, want a second after the period", got)
		}
		l.Add(newEv(event.Added, "ok", 1))
		l.Close()
		<-l.Done()
		if got := seqs(sink.written()); !slices.Equal(got, []uint64{1}) {
			t.Fatalf("written %v", got)
		}
		if st := l.Stats(); st != (Stats{Received: 13, Delivered: 1, Failed: 12}) {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestDrainGraceTime: with a stalled sink, Drain gives up after exactly the grace time.
func TestDrainGraceTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stalledSink := &testSink{gate: make(chan struct{})}
		stalled := New(Config{Name: "stalled", Buffer: 8}, stalledSink, nil)
		go stalled.Run()
		stopOnCleanup(t, stalled, stalledSink)
		slowSink := &testSink{onWrite: func(*event.Event) error { time.Sleep(time.Second); return nil }}
		slow := New(Config{Name: "slow", Buffer: 8}, slowSink, nil)
		go slow.Run()
		stopOnCleanup(t, slow, slowSink)
		for _, ev := range distinctEvents(5) {
			stalled.Add(ev)
			if ev.Seq <= 4 {
				slow.Add(ev) // 4 s of work: done before the grace time is up
			}
		}
		synctest.Wait()

		start := time.Now()
		late := Drain([]*Listener{stalled, slow}, 5*time.Second)
		if elapsed := time.Since(start); elapsed != 5*time.Second {
			t.Errorf("Drain returned after %v, want exactly the 5s grace time", elapsed)
		}
		if len(late) != 1 || late[0] != stalled {
			t.Fatalf("late = %v, want the stalled listener only", late)
		}
		select {
		case <-slow.Done():
		default:
			t.Fatal("slow listener not done")
		}
		if st := slow.Stats(); st != (Stats{Received: 4, Delivered: 4}) {
			t.Errorf("slow stats %+v", st)
		}
		// 4 queued and the one stuck in Write: all dropped, so the summary adds up.
		if st := stalled.Stats(); st != (Stats{Received: 5, Dropped: 5}) {
			t.Errorf("stalled stats %+v", st)
		}
		stalledSink.open()
		<-stalled.Done()
		if time.Since(start) != 5*time.Second {
			t.Errorf("aborted listener took until %v", time.Since(start))
		}
		checkBalance(t, stalled.Stats())
		if stalledSink.closeCount() != 1 {
			t.Errorf("stalled sink closed %d times", stalledSink.closeCount())
		}
	})
}

// TestDrainReturnsWhenDone: Drain waits only as long as the sinks need.
func TestDrainReturnsWhenDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ls []*Listener
		for i := range 3 {
			sink := &testSink{onWrite: func(*event.Event) error { time.Sleep(time.Second); return nil }}
			l := New(Config{Name: fmt.Sprint(i), Buffer: 8}, sink, nil)
			go l.Run()
			stopOnCleanup(t, l, sink)
			for _, ev := range distinctEvents(i + 1) { // 1, 2 and 3 events
				l.Add(ev)
			}
			ls = append(ls, l)
		}
		start := time.Now()
		if late := Drain(ls, 5*time.Second); late != nil {
			t.Fatalf("late = %v", late)
		}
		if elapsed := time.Since(start); elapsed != 3*time.Second {
			t.Fatalf("Drain returned after %v, want 3s (the slowest listener's work)", elapsed)
		}
	})
}

// TestDrainZeroGrace aborts whatever has not finished at once.
func TestDrainZeroGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &testSink{onWrite: func(*event.Event) error { time.Sleep(time.Second); return nil }}
		l := New(Config{Name: "s", Buffer: 8}, sink, nil)
		go l.Run()
		stopOnCleanup(t, l, sink)
		for _, ev := range distinctEvents(4) {
			l.Add(ev)
		}
		synctest.Wait()
		start := time.Now()
		if late := Drain([]*Listener{l}, 0); len(late) != 1 {
			t.Fatalf("late = %v", late)
		}
		if time.Since(start) != 0 {
			t.Fatalf("Drain(0) took %v", time.Since(start))
		}
		// The event whose Write was in flight at the abort is counted as dropped right
		// away, so the exit summary (printed without waiting for it) adds up.
		if st := l.Stats(); st != (Stats{Received: 4, Dropped: 4}) {
			t.Fatalf("stats right after Drain %+v", st)
		}
		<-l.Done()
		if st := l.Stats(); st != (Stats{Received: 4, Dropped: 4}) {
			t.Fatalf("stats after the late Write returned %+v; it must not be counted twice", st)
		}
	})
}
