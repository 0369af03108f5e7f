package informer

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

// gatedReceiver takes events while open; while closed it refuses them in TryAdd and
// waits in Add until it is opened.
type gatedReceiver struct {
	mu     sync.Mutex
	closed bool
	opened chan struct{}
	got    []uint64
	tried  int
}

func newGatedReceiver() *gatedReceiver { return &gatedReceiver{opened: make(chan struct{})} }

func (r *gatedReceiver) TryAdd(ev *event.Event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tried++
	if r.closed {
		return false
	}
	r.got = append(r.got, ev.Seq)
	return true
}

func (r *gatedReceiver) Add(ev *event.Event) {
	r.mu.Lock()
	for r.closed {
		opened := r.opened
		r.mu.Unlock()
		<-opened
		r.mu.Lock()
	}
	r.got = append(r.got, ev.Seq)
	r.mu.Unlock()
}

func (r *gatedReceiver) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed, r.opened = true, make(chan struct{})
}

func (r *gatedReceiver) open() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = false
	close(r.opened)
}

func (r *gatedReceiver) seqs() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// A receiver that waits for room does not hold up the others fed by the same informer
// goroutine: its lane keeps the events it refused and hands them on, in order, once it
// takes them again (until then the lane is not drained, and the informer does not count
// as stopped); then events go to it directly again.
func TestLaneDoesNotHoldUpTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow, fast := newGatedReceiver(), newGatedReceiver()
		lanes := []*lane{{to: slow}, {to: fast}}
		add := func(seq uint64) {
			for _, l := range lanes {
				l.Add(&event.Event{Seq: seq})
			}
		}
		add(1)
		slow.close()
		for seq := uint64(2); seq <= 5; seq++ {
			add(seq) // returns at once: the slow receiver's events wait in its lane
		}
		synctest.Wait()
		if got := fast.seqs(); !slices.Equal(got, []uint64{1, 2, 3, 4, 5}) {
			t.Fatalf("the other receiver got %v while one waited, want 1..5", got)
		}
		if got := slow.seqs(); !slices.Equal(got, []uint64{1}) {
			t.Fatalf("the waiting receiver got %v, want only 1", got)
		}
		// The informer stops only once every lane has handed its backlog on.
		drained := make(chan struct{})
		go func() {
			lanes[0].drains.Wait()
			close(drained)
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-drained:
			t.Fatal("the lane counted as drained while its receiver had not taken its backlog")
		default:
		}
		slow.open()
		synctest.Wait()
		select {
		case <-drained:
		default:
			t.Fatal("the lane did not count as drained once its receiver took its backlog")
		}
		if got := slow.seqs(); !slices.Equal(got, []uint64{1, 2, 3, 4, 5}) {
			t.Fatalf("the waiting receiver got %v once it had room, want 1..5 in order", got)
		}
		tried := slow.tried
		add(6)
		if got := slow.seqs(); !slices.Equal(got, []uint64{1, 2, 3, 4, 5, 6}) || slow.tried != tried+1 {
			t.Fatalf("after catching up the receiver got %v (offered directly: %v), want 6 offered directly", got, slow.tried == tried+1)
		}
	})
}

// The informer feeds its receivers from its own goroutine unless they asked for
// different resync periods, or one cannot refuse an event.
func TestFanOutOf(t *testing.T) {
	plain := Registration{Receiver: receiverFunc(func(*event.Event) {})}
	gated := func(resync time.Duration) Registration {
		return Registration{Receiver: newGatedReceiver(), Resync: resync}
	}
	handlersFor := func(regs []Registration) []*handler {
		hs := make([]*handler, len(regs))
		for i, r := range regs {
			hs[i] = &handler{receiver: r.Receiver}
		}
		return hs
	}
	for _, c := range []struct {
		name string
		regs []Registration
		want bool
	}{
		{"one receiver", []Registration{plain}, true},
		{"three that can refuse, same resync", []Registration{gated(0), gated(0), gated(0)}, true},
		{"same resync period", []Registration{gated(time.Minute), gated(time.Minute)}, true},
		{"different resync periods", []Registration{gated(0), gated(time.Minute)}, false},
		{"one that cannot refuse", []Registration{gated(0), plain}, false},
	} {
		if _, _, ok := fanOutOf(handlersFor(c.regs), c.regs); ok != c.want {
			t.Errorf("%s: fanned out %v, want %v", c.name, ok, c.want)
		}
	}
}

type receiverFunc func(*event.Event)

func (f receiverFunc) Add(ev *event.Event) { f(ev) }
