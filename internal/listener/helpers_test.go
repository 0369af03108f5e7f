package listener

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

var errBoom = errors.New("boom")

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func podObj(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// newEv is an event of type typ about pod default/name with sequence number seq; its
// object is a fresh pod whose resourceVersion is seq, so every event's object is distinct.
func newEv(typ event.EventType, name string, seq uint64) *event.Event {
	return &event.Event{Type: typ, Seq: seq, Resource: podsGVR, Kind: "Pod", Object: podObj(name, strconv.FormatUint(seq, 10))}
}

// distinctEvents is n ADDED events about n different pods, with Seq 1..n.
func distinctEvents(n int) []*event.Event {
	evs := make([]*event.Event, n)
	for i := range evs {
		evs[i] = newEv(event.Added, "pod-"+strconv.Itoa(i+1), uint64(i+1))
	}
	return evs
}

func seqs(evs []*event.Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// testSink records what the delivery goroutine writes.
type testSink struct {
	// entered, if set, receives every event as Write begins (before the gate).
	entered chan *event.Event
	// gate, if set, must yield one value per Write before it proceeds; close it to let
	// every Write through.
	gate chan struct{}
	// onWrite, if set, runs after the gate: an error fails the Write, and it may panic.
	onWrite func(ev *event.Event) error
	// closeErr is what Close returns.
	closeErr error

	gateOnce sync.Once

	mu               sync.Mutex
	got              []*event.Event // written successfully, in order
	calls            int            // Write calls, whatever their outcome
	closes           int
	writesAfterClose int
}

func (s *testSink) Write(ev *event.Event) error {
	s.mu.Lock()
	s.calls++
	if s.closes > 0 {
		s.writesAfterClose++
	}
	s.mu.Unlock()
	if s.entered != nil {
		s.entered <- ev
	}
	if s.gate != nil {
		<-s.gate
	}
	if s.onWrite != nil {
		if err := s.onWrite(ev); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.got = append(s.got, ev)
	s.mu.Unlock()
	return nil
}

// open lets every Write through from now on; it may be called more than once.
func (s *testSink) open() {
	s.gateOnce.Do(func() { close(s.gate) })
}

func (s *testSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closes++
	return s.closeErr
}

func (s *testSink) written() []*event.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*event.Event(nil), s.got...)
}

func (s *testSink) closeCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closes
}

func (s *testSink) writeCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// warnings records a listener's diagnostics.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) warn(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, fmt.Sprintf(format, args...))
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// containing is the diagnostics that contain substr.
func (w *warnings) containing(substr string) []string {
	var out []string
	for _, m := range w.all() {
		if strings.Contains(m, substr) {
			out = append(out, m)
		}
	}
	return out
}

// waitDone waits for l's Run to return.
func waitDone(t *testing.T, l *Listener) {
	t.Helper()
	select {
	case <-l.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("listener %q: Run did not return; stats %+v", l.Name(), l.Stats())
	}
}

// waitEntered waits until the sink's Write has begun on an event and returns it.
func waitEntered(t *testing.T, s *testSink) *event.Event {
	t.Helper()
	select {
	case ev := <-s.entered:
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("sink.Write was not called")
		return nil
	}
}

// checkBalance asserts the Stats invariant that holds once Run has returned.
func checkBalance(t *testing.T, st Stats) {
	t.Helper()
	if sum := st.Delivered + st.Filtered + st.Dropped + st.Coalesced + st.Failed; st.Received != sum {
		t.Errorf("Received %d != Delivered %d + Filtered %d + Dropped %d + Coalesced %d + Failed %d = %d",
			st.Received, st.Delivered, st.Filtered, st.Dropped, st.Coalesced, st.Failed, sum)
	}
}

// addReturns runs l.Add(ev) on a new goroutine and returns a channel closed when it
// returns.
func addReturns(l *Listener, ev *event.Event) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Add(ev)
	}()
	return done
}

// runQueued makes a listener named name (buffer 16) over sink, queues n distinct events
// and runs it; it returns the listener and what it said.
func runQueued(t *testing.T, name string, sink *testSink, n int) (*Listener, *warnings) {
	t.Helper()
	w := &warnings{}
	l := New(Config{Name: name, Buffer: 16}, sink, w.warn)
	for _, ev := range distinctEvents(n) {
		l.Add(ev)
	}
	go l.Run()
	stopOnCleanup(t, l, sink)
	return l, w
}

// waitingAdd runs l, inside a synctest bubble, until an Add waits for room: the sink's
// gated Write holds the first of n distinct events, the next Buffer ones fill the
// buffer, and the Add of one more waits. It returns the n events and that Add's channel
// (closed once it returns).
func waitingAdd(t *testing.T, l *Listener, sink *testSink, n int) ([]*event.Event, <-chan struct{}) {
	t.Helper()
	go l.Run()
	stopOnCleanup(t, l, sink)
	evs := distinctEvents(n)
	l.Add(evs[0])
	synctest.Wait() // in Write, held at the gate
	full := l.Config().Buffer + 1
	for _, ev := range evs[1:full] {
		l.Add(ev)
	}
	waiting := addReturns(l, evs[full])
	synctest.Wait()
	if returned(waiting) {
		t.Fatalf("Add returned with the buffer full (on-full=%s)", l.Config().OnFull)
	}
	return evs, waiting
}

func returned(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// stopOnCleanup makes sure that when the test ends, even by t.Fatal, l's goroutines and
// any Adds waiting on it finish: a synctest bubble must not end with goroutines blocked,
// and a real-time test should not leak them.
func stopOnCleanup(t *testing.T, l *Listener, s *testSink) {
	t.Cleanup(func() {
		l.Abort()
		if s != nil && s.gate != nil {
			s.open()
		}
		select { // Run was started: let it finish (a sink may be sleeping in fake time)
		case <-l.Done():
		case <-time.After(10 * time.Second):
		}
	})
}

// produce adds each events from each of producers goroutines: Modified events of the
// objects pP-0 ... pP-(objects-1) in turn, with Seq P*1,000,000+I+1, which
// checkProducerOrder reads back. The WaitGroup is done once every Add returned.
func produce(l *Listener, producers, each, objects int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				l.Add(newEv(event.Modified, fmt.Sprintf("p%d-%d", p, i%objects), uint64(p*1_000_000+i+1)))
			}
		})
	}
	return &wg
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
