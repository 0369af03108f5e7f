package listener

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

// gate is a fence a test opens and closes.
type gate struct{ closed atomic.Bool }

var errNotLeading = errors.New("not leading")

func (g *gate) fence() error {
	if g.closed.Load() {
		return errNotLeading
	}
	return nil
}

// written counts the events whose Written was called (what the checkpoint settles).
func withWritten(evs []*event.Event, n *atomic.Int32) []*event.Event {
	for _, ev := range evs {
		ev.Written = func() { n.Add(1) }
	}
	return evs
}

// While the fence is closed nothing is written; once it opens again delivery goes on
// where it stopped, in order, losing nothing.
func TestFenceHoldsDeliveryUntilItOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g gate
		s := &testSink{}
		l := New(Config{Name: "archive", Fence: g.fence}, s, nil)
		go l.Run()
		var settled atomic.Int32
		evs := withWritten(distinctEvents(6), &settled)
		for _, ev := range evs[:2] {
			l.Add(ev)
		}
		synctest.Wait()
		g.closed.Store(true)
		for _, ev := range evs[2:] {
			l.Add(ev)
		}
		time.Sleep(10 * time.Second)
		if got := seqs(s.written()); !slices.Equal(got, []uint64{1, 2}) || settled.Load() != 2 {
			t.Fatalf("written %v (%d settled) while the fence was closed; want [1 2]", got, settled.Load())
		}
		g.closed.Store(false)
		time.Sleep(fenceRetry)
		synctest.Wait()
		if got := seqs(s.written()); !slices.Equal(got, seqRange(1, 6)) || settled.Load() != 6 {
			t.Fatalf("written %v (%d settled) once the fence opened; want 1..6", got, settled.Load())
		}
		l.Close()
		<-l.Done()
		if st := l.Stats(); st.Delivered != 6 || st.Fenced != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// Closed while the fence is closed (the run ends: the lease was lost), the listener
// writes nothing more: the event in hand and the queued ones are held back, counted as
// such, and never settled (the checkpoint keeps the states before them).
func TestFenceHoldsBackAtClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g gate
		s := &testSink{}
		l := New(Config{Name: "archive", Fence: g.fence}, s, nil)
		go l.Run()
		var settled atomic.Int32
		evs := withWritten(distinctEvents(5), &settled)
		l.Add(evs[0])
		synctest.Wait()
		g.closed.Store(true)
		for _, ev := range evs[1:] {
			l.Add(ev)
		}
		synctest.Wait()
		start := time.Now()
		l.Close()
		<-l.Done()
		if took := time.Since(start); took > fenceRetry {
			t.Errorf("Run took %s to end after Close", took)
		}
		st := l.Stats()
		if got := seqs(s.written()); !slices.Equal(got, []uint64{1}) || settled.Load() != 1 {
			t.Errorf("written %v, %d settled; want only [1]", got, settled.Load())
		}
		if st.Delivered != 1 || st.Fenced != 4 || st.Received != 5 || s.closes != 1 {
			t.Errorf("stats %+v, %d closes; want 1 delivered, 4 held back, the sink closed", st, s.closes)
		}
		if got := st.Summary("archive"); got != "archive 1 delivered, 4 held back for the leader" {
			t.Errorf("summary %q", got)
		}
	})
}

// A Write already in flight when the fence closes finishes (it was let through while the
// fence was open); the next one waits.
func TestFenceAskedBeforeEveryWrite(t *testing.T) {
	var g gate
	s := &testSink{entered: make(chan *event.Event, 10), gate: make(chan struct{})}
	l := New(Config{Name: "archive", Fence: g.fence}, s, nil)
	go l.Run()
	evs := distinctEvents(3)
	for _, ev := range evs {
		l.Add(ev)
	}
	<-s.entered // the first Write is in flight
	g.closed.Store(true)
	s.open()
	time.Sleep(5 * fenceRetry)
	if got := seqs(s.written()); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("written %v; want the one in flight only", got)
	}
	l.Close()
	<-l.Done()
	if st := l.Stats(); st.Delivered != 1 || st.Fenced != 2 {
		t.Errorf("stats %+v", st)
	}
}

// holdingSink is a Fenced sink: it holds what Write takes, and sends it (settles it)
// on flush, asking the fence first, as the exec and http sinks' batches do.
type holdingSink struct {
	mu     sync.Mutex
	held   []*event.Event
	settle func(*event.Event, error)
	fence  func() error
	sent   []*event.Event
}

func (h *holdingSink) Hold(settle func(*event.Event, error)) { h.settle = settle }
func (h *holdingSink) Fence(fence func() error)              { h.fence = fence }
func (h *holdingSink) Write(ev *event.Event) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = append(h.held, ev)
	return nil
}
func (h *holdingSink) flush() {
	h.mu.Lock()
	batch := h.held
	h.held = nil
	h.mu.Unlock()
	var err error
	if h.fence != nil {
		if ferr := h.fence(); ferr != nil {
			err = errors.Join(ErrFenced, ferr)
		}
	}
	for _, ev := range batch {
		if err == nil {
			h.sent = append(h.sent, ev)
		}
		h.settle(ev, err)
	}
}
func (h *holdingSink) Close() error { h.flush(); return nil }

// A Fenced sink is given the fence; what it holds back counts as held back, not failed,
// and is not settled into the checkpoint.
func TestFencedHolderSettlesHeldBack(t *testing.T) {
	var g gate
	h := &holdingSink{}
	l := New(Config{Name: "hook", Fence: g.fence}, h, nil)
	if h.fence == nil {
		t.Fatal("the sink was not given the fence")
	}
	go l.Run()
	var settled atomic.Int32
	for _, ev := range withWritten(distinctEvents(3), &settled) {
		l.Add(ev)
	}
	for l.Stats().Received != 3 || func() bool { q, held := l.Queue(); return q > 0 || held < 3 }() {
		time.Sleep(time.Millisecond)
	}
	g.closed.Store(true) // the batch is built; the fence closes before it is sent
	l.Close()
	<-l.Done()
	if st := l.Stats(); st.Fenced != 3 || st.Failed != 0 || st.Delivered != 0 || settled.Load() != 0 || len(h.sent) != 0 {
		t.Errorf("stats %+v, %d settled, %d sent; want 3 held back, none sent or settled", st, settled.Load(), len(h.sent))
	}
}
