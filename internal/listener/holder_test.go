package listener

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

// holder keeps what it is given until told to settle it; Close settles the rest as
// delivered, unless aborted.
type holder struct {
	mu      sync.Mutex
	held    []*event.Event
	settle  func(*event.Event, error)
	aborted bool
	closed  chan struct{}
}

func (h *holder) Hold(settle func(*event.Event, error)) { h.settle = settle }

func (h *holder) Write(ev *event.Event) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = append(h.held, ev)
	return nil
}

// settleFirst settles the first n held events with err.
func (h *holder) settleFirst(n int, err error) {
	h.mu.Lock()
	evs := h.held[:n]
	h.held = h.held[n:]
	h.mu.Unlock()
	for _, ev := range evs {
		h.settle(ev, err)
	}
}

func (h *holder) Close() error {
	<-h.closed // a flush that takes as long as the test says
	h.settleFirst(len(h.held), nil)
	return nil
}

func (h *holder) Abort() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.aborted = true
}

// Events a sink holds count as neither delivered nor failed until it settles them;
// settled ones count as it says, and those still held when the grace time runs out
// count as dropped, even if the sink settles them later. Only those settled as delivered
// are written for the checkpoint (event.Written): not when held, not when failed.
func TestHolderSettlesLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &holder{closed: make(chan struct{})}
		var lagged int
		var written []uint64 // guarded by mu
		var mu sync.Mutex
		l := New(Config{Name: "hook", Buffer: 10, Delivered: func(*event.Event) { lagged++ }}, h, nil)
		go l.Run()
		for _, ev := range distinctEvents(6) {
			ev.Written = func() {
				mu.Lock()
				defer mu.Unlock()
				written = append(written, ev.Seq)
			}
			l.Add(ev)
		}
		wrote := func() []uint64 {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(written)
		}
		synctest.Wait()
		if st := l.Stats(); st.Delivered != 0 || st.Failed != 0 {
			t.Fatalf("held events counted already: %+v", st)
		}
		if w := wrote(); len(w) != 0 {
			t.Fatalf("held events written for the checkpoint already: %v", w)
		}
		if q, held := l.Queue(); q != 0 || held != 6 {
			t.Fatalf("Queue() = %d queued, %d held; want 0, 6", q, held)
		}
		h.settleFirst(2, nil)
		h.settleFirst(1, errors.New("exit status 1"))
		if st := l.Stats(); st.Delivered != 2 || st.Failed != 1 || lagged != 2 {
			t.Fatalf("after settling 3: %+v, %d lag observations", st, lagged)
		}
		if w := wrote(); !slices.Equal(w, []uint64{1, 2}) {
			t.Fatalf("written for the checkpoint: %v, want the 2 delivered (1, 2), not the failed 3", w)
		}
		if late := Drain([]*Listener{l}, 0); len(late) != 1 || !h.aborted {
			t.Fatalf("Drain(0) left %d late, aborted %v", len(late), h.aborted)
		}
		close(h.closed) // the flush ends after all: too late to count
		<-l.Done()
		st := l.Stats()
		if st.Delivered != 2 || st.Failed != 1 || st.Dropped != 3 || st.Received != 6 {
			t.Errorf("after Abort: %+v, want 2 delivered, 1 failed, 3 dropped of 6", st)
		}
		if w := wrote(); !slices.Equal(w, []uint64{1, 2}) {
			t.Errorf("written for the checkpoint after Abort: %v, want only 1 and 2 (the rest were dropped)", w)
		}
	})
}

// A holder that flushes within the grace time has everything counted as it settled it.
func TestHolderFlushedAtClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &holder{closed: make(chan struct{})}
		close(h.closed)
		l := New(Config{Name: "hook", Buffer: 10}, h, nil)
		go l.Run()
		for _, ev := range distinctEvents(4) {
			l.Add(ev)
		}
		if late := Drain([]*Listener{l}, 1e9); len(late) != 0 {
			t.Fatal("late")
		}
		if st := l.Stats(); st.Delivered != 4 || st.Received != 4 {
			t.Errorf("stats %+v", st)
		}
	})
}

// A holder may settle an event before its Write returns (a worker that sent it at once):
// it counts once, as settled, and is not left held.
func TestHolderSettlesBeforeWriteReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &holder{closed: make(chan struct{})}
		close(h.closed)
		quick := &quickHolder{holder: h}
		var written int
		l := New(Config{Name: "hook", Buffer: 10}, quick, nil)
		go l.Run()
		for i, ev := range distinctEvents(4) {
			ev.Written = func() { written++ }
			quick.fail = i == 3
			l.Add(ev)
			synctest.Wait()
		}
		if q, held := l.Queue(); q != 0 || held != 0 {
			t.Fatalf("Queue() = %d queued, %d held; want nothing left", q, held)
		}
		// A grace of (fake) time lets the delivery goroutine see Close and return; Drain(0)
		// would race it. An event left held would outlast the grace and come back late.
		if late := Drain([]*Listener{l}, time.Second); len(late) != 0 {
			t.Fatalf("Drain found %d late: an event settled early was left held", len(late))
		}
		if st := l.Stats(); st.Delivered != 3 || st.Failed != 1 || st.Dropped != 0 || written != 3 {
			t.Errorf("stats %+v, %d written; want 3 delivered and written, 1 failed, none dropped", st, written)
		}
	})
}

// quickHolder settles every event inside its Write, before Write returns.
type quickHolder struct {
	*holder
	fail bool
}

func (q *quickHolder) Write(ev *event.Event) error {
	var err error
	if q.fail {
		err = errors.New("refused")
	}
	q.settle(ev, err)
	return nil
}
