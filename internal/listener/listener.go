// Package listener connects the informers to the output sinks: one Listener per sink,
// each with its own bounded buffer and delivery goroutine, so a slow or stalled sink
// holds up nothing but itself.
//
// It plays the part of client-go's processorListener (whose add/pop/run goroutines pass
// notifications through an unbounded RingGrowing), with two differences: the buffer is
// bounded, with a policy for when it is full that the user picks and is told about, and
// a sink that fails or panics is contained rather than retried.
package listener

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
)

// ErrFiltered is returned by a Sink's Write for an event it leaves out on purpose (a jq
// filter that yields nothing, --changes-only): counted as Filtered, not Delivered.
var ErrFiltered = errors.New("event filtered out")

// ErrOutputClosed is returned (wrapped) by a Sink's Write when nobody reads its output any
// more: the sink stops like on any error, but quietly.
var ErrOutputClosed = errors.New("output closed")

// ErrFenced is what an event held back by the fence (Config.Fence) is settled with: not
// delivered, because this process may no longer act as the leader. It counts as Fenced,
// not Failed, and is not checkpointed: the replica that leads now delivers it.
var ErrFenced = errors.New("held back: this replica may no longer lead")

// DefaultBuffer is the buffer size, in events, when Config.Buffer is not set.
const DefaultBuffer = 1024

// NoticeEvery is the least time between two repeats of one diagnostic of a sink (its
// drops, its panics, a jq sink's run-time errors): said once, then with counts.
const NoticeEvery = 5 * time.Second

// Sink receives events from exactly one goroutine (the listener's delivery goroutine).
type Sink interface {
	// Write outputs one event. An error stops this sink (reported once), not the others;
	// ErrFiltered means the sink chose not to output the event, and ErrOutputClosed that
	// its reader went away (stdout piped into `head`), which stops it without a word.
	Write(ev *event.Event) error
	// Close flushes and releases the sink; it is called once, after the last Write.
	Close() error
}

// Holder is a Sink that keeps events after Write returns nil: a batch not yet sent, a
// command still running. Such a Write only accepts the event; the listener counts it as
// held until the sink settles it, as delivered or failed, through the function given to
// Hold (from any goroutine). Close must settle all it holds before it returns; an event
// still held when Abort runs counts as Dropped, and a later settle of it is ignored.
type Holder interface {
	Sink
	// Hold is called once, before the first Write, with the function that settles one
	// held event: err nil for delivered, else failed.
	Hold(settle func(ev *event.Event, err error))
}

// Fenced is a Holder that sends what it holds later (a batch, a retry): it is given the
// listener's fence (Config.Fence), to ask before each attempt to send, and settles what
// it holds back with an error that wraps ErrFenced.
type Fenced interface {
	Holder
	Fence(fence func() error)
}

// Stopper is a Sink that can fail outside Write (a commit made while events pause): it
// is given, before the first Write, the function that takes it out of service at once,
// as a Write that returned err would, saying err once.
type Stopper interface {
	Sink
	StopWith(stop func(err error))
}

// Aborter is a Sink that can give up on what it holds and on the work in flight (a
// request, a child process) when the shutdown grace time runs out, so that its Close
// returns soon after Abort.
type Aborter interface {
	Abort()
}

// Config is one sink's delivery settings.
type Config struct {
	Name   string        // the sink's name in diagnostics and the exit summary
	Buffer int           // events queued at most; DefaultBuffer if zero
	OnFull Policy        // what Add does when the buffer is full; Block if zero
	Resync time.Duration // resync period the informer registers this listener with; the listener only carries it
	// Delivered, when not nil, is told of every delivered event (for the delivery lag
	// metric), from the delivery goroutine or, for a Holder, from where it settles.
	Delivered func(ev *event.Event)
	// Fence, when not nil, is asked before every Write (and by a Fenced sink before
	// every send): an error says this process may no longer deliver (it may no longer
	// lead). Delivery then waits until the fence opens again; once the listener is
	// closed or aborted instead, the event and those queued are held back: counted as
	// Fenced, never written. It is called from the delivery goroutine (and a Fenced
	// sink's), often: it must be cheap and safe for concurrent use.
	Fence func() error
}

// fenceRetry is how often a closed fence is asked again.
const fenceRetry = 50 * time.Millisecond

// state is where a listener is in its life; it only moves forward.
type state int

const (
	open    state = iota
	closing       // Close was called: Run delivers what is queued, then returns
	aborted       // Abort was called: queued events were dropped; Run returns after the Write in flight
	failed        // sink.Write returned an error: queued and later events count as Failed
)

// Listener buffers events for one sink and delivers them from its own goroutine (Run).
type Listener struct {
	cfg  Config
	sink Sink
	warn func(format string, args ...any)

	mu    sync.Mutex
	queue *ring // guarded by mu
	state state // guarded by mu
	// writing is set while Run's sink.Write is in flight. Abort counts that event as
	// Dropped and clears it, so an event is counted once however late its Write returns.
	writing bool // guarded by mu
	// held counts the events a Holder sink accepted and has not settled yet.
	held  int        // guarded by mu
	err   error      // guarded by mu
	ready *sync.Cond // on mu; Run waits on it for an event or a change of state
	room  *sync.Cond // on mu; Adds under a waiting policy wait on it for a free slot or a change of state

	dropNotice  Throttle // guarded by mu
	panicNotice Throttle // Run's goroutine only

	received, delivered, filtered, dropped, coalesced, failed atomic.Uint64
	lastSeq                                                   atomic.Uint64 // highest Seq given to Add
	numbered                                                  atomic.Uint64 // events with a Seq given to Add
	fenced                                                    atomic.Uint64 // held back by Config.Fence

	done chan struct{}
}

// New creates the listener for sink; start its delivery with go l.Run(). warn prints one
// diagnostic line (the caller adds the "kubeevents: " prefix); it is called from the
// goroutines calling Add as well as from Run, so it must be safe for concurrent use.
// A nil warn discards diagnostics.
func New(cfg Config, sink Sink, warn func(format string, args ...any)) *Listener {
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.OnFull.IsZero() {
		cfg.OnFull = Block
	}
	if warn == nil {
		warn = func(string, ...any) {}
	}
	l := &Listener{
		cfg:         cfg,
		sink:        sink,
		warn:        warn,
		queue:       newRing(cfg.Buffer, cfg.OnFull),
		dropNotice:  Throttle{Period: NoticeEvery},
		panicNotice: Throttle{Period: NoticeEvery},
		done:        make(chan struct{}),
	}
	l.ready = sync.NewCond(&l.mu)
	l.room = sync.NewCond(&l.mu)
	if h, ok := sink.(Holder); ok {
		h.Hold(l.settleHeld)
	}
	if f, ok := sink.(Fenced); ok && cfg.Fence != nil {
		f.Fence(cfg.Fence)
	}
	if st, ok := sink.(Stopper); ok {
		st.StopWith(l.stop)
	}
	return l
}

// settleHeld counts a held event's outcome, unless Abort already counted it as Dropped.
func (l *Listener) settleHeld(ev *event.Event, err error) {
	l.mu.Lock()
	switch {
	case l.held > 0:
		l.held--
	case l.writing:
		// Nothing is held yet, so this is the event whose Write is still in flight,
		// settled (by another goroutine) before that Write returned: counted now, and
		// not held when it returns.
		l.writing = false
	default: // Abort counted it
		l.mu.Unlock()
		return
	}
	switch {
	case errors.Is(err, ErrFenced):
		l.fenced.Add(1)
	case err != nil:
		l.failed.Add(1)
	default:
		l.delivered.Add(1)
	}
	l.mu.Unlock()
	if err != nil {
		return
	}
	if l.cfg.Delivered != nil {
		l.cfg.Delivered(ev)
	}
	// Only now is the event written: the checkpoint must not count one the receiver
	// refused, or that a crash caught in a batch.
	if ev.Written != nil {
		ev.Written()
	}
}

// Name is the sink's name.
func (l *Listener) Name() string { return l.cfg.Name }

// Config is the listener's configuration, with defaults filled in.
func (l *Listener) Config() Config { return l.cfg }

// Add queues ev for the sink and returns; it never does sink work. When the buffer is full
// it applies the policy, which under block (and coalesce, when the buffer is full of other
// objects) means waiting for room, or until Close, Abort or a sink failure. Add is safe
// for concurrent use. An Add after Close or Abort counts the event as Dropped: an informer
// handler may still be finishing when shutdown starts.
func (l *Listener) Add(ev *event.Event) {
	l.countReceived(ev)
	l.mu.Lock()
	notice, _ := l.enqueueLocked(ev, true)
	l.mu.Unlock()
	if notice != "" {
		l.warn("%s", notice)
	}
}

// TryAdd is Add that, where Add would wait for room (a full buffer under block, or under
// coalesce full of other objects), does nothing and returns false. For a caller that
// feeds several listeners from one goroutine and keeps what one of them cannot take yet
// (the informer's fan-out), so that one sink waiting does not hold up the others.
func (l *Listener) TryAdd(ev *event.Event) bool {
	l.mu.Lock()
	notice, taken := l.enqueueLocked(ev, false)
	if taken {
		// Under the lock: the delivery goroutine cannot settle the event before it is
		// counted as received.
		l.countReceived(ev)
	}
	l.mu.Unlock()
	if notice != "" {
		l.warn("%s", notice)
	}
	return taken
}

func (l *Listener) countReceived(ev *event.Event) {
	if ev.Seq != 0 {
		l.numbered.Add(1)
	}
	l.received.Add(1)
	for seen := l.lastSeq.Load(); ev.Seq > seen && !l.lastSeq.CompareAndSwap(seen, ev.Seq); {
		seen = l.lastSeq.Load() // several informers (one per watched type) may add at once
	}
}

// enqueueLocked applies the policy to ev and returns a diagnostic to print, if any. When
// the buffer is full and the policy waits for room, it waits if wait is set; if not, it
// returns taken=false, having done nothing.
func (l *Listener) enqueueLocked(ev *event.Event, wait bool) (notice string, taken bool) {
	for {
		switch l.state {
		case failed:
			l.failed.Add(1)
			return "", true
		case closing, aborted:
			l.dropped.Add(1)
			return "", true
		}
		switch l.queue.put(ev) {
		case queued:
			l.ready.Signal()
			return "", true
		case coalesced:
			l.coalesced.Add(1)
			return "", true
		case droppedOldest, droppedNewest:
			l.dropped.Add(1)
			return l.dropNoticeLocked(), true
		case full:
			if !wait {
				return "", false
			}
			l.room.Wait()
		}
	}
}

// dropNoticeLocked rate-limits the drop diagnostic: one line when drops begin, then at
// most one per NoticeEvery with the count so far, however fast events are dropped.
func (l *Listener) dropNoticeLocked() string {
	first := l.dropNotice.last.IsZero()
	if !l.dropNotice.Allow(time.Now()) {
		return ""
	}
	if first {
		return fmt.Sprintf("sink %q is full (buffer %d, on-full=%s); dropping events",
			l.cfg.Name, l.cfg.Buffer, l.cfg.OnFull)
	}
	return fmt.Sprintf("sink %q is still full; %s dropped so far", l.cfg.Name, diag.Events(l.dropped.Load()))
}

// Run is the delivery goroutine: it writes queued events to the sink in order until the
// listener is closed and drained, aborted, or the sink fails, then closes the sink.
func (l *Listener) Run() {
	defer close(l.done)
	for {
		ev, ok := l.next()
		if !ok || !l.passFence() {
			break
		}
		if err := l.deliver(ev); err != nil {
			l.stop(err)
			break
		}
	}
	l.closeSink()
}

// next waits for the next event to deliver; false means Run is done.
func (l *Listener) next() (*event.Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.state == aborted || l.state == failed {
			return nil, false
		}
		if ev, ok := l.queue.pop(); ok {
			l.room.Broadcast()
			l.writing = true
			return ev, true
		}
		if l.state == closing {
			return nil, false
		}
		l.ready.Wait()
	}
}

// passFence asks the fence (Config.Fence) before the event next returned is written,
// and while it is closed waits for it to open again. It returns false if the listener
// was closed, aborted or stopped meanwhile: then that event and the queued ones are
// held back (Fenced; under Abort, Dropped as Abort counts them) and Run ends.
func (l *Listener) passFence() bool {
	if l.cfg.Fence == nil {
		return true
	}
	for {
		if l.cfg.Fence() == nil {
			return true
		}
		l.mu.Lock()
		switch l.state {
		case closing, aborted, failed: // failed: the sink stopped itself (Stopper), its events counted
			if l.writing {
				l.fenced.Add(1)
				l.writing = false
			}
			l.fenced.Add(uint64(l.queue.discard()))
			l.room.Broadcast()
			l.mu.Unlock()
			return false
		}
		l.mu.Unlock()
		time.Sleep(fenceRetry)
	}
}

// deliver writes one event. A panic in the sink costs that event only: it is reported,
// counted as Failed, and delivery goes on.
func (l *Listener) deliver(ev *event.Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			l.settle(&l.failed)
			if l.panicNotice.Allow(time.Now()) {
				l.warn("sink %q panicked on an event: %v; skipping it", l.cfg.Name, p)
			}
		}
	}()
	_, holds := l.sink.(Holder)
	switch err := l.sink.Write(ev); {
	case err == nil && holds:
		l.mu.Lock()
		if l.writing {
			l.held++
			l.writing = false
		}
		l.mu.Unlock()
		return nil // written (ev.Written) when settleHeld says so
	case err == nil:
		if l.settle(&l.delivered) && l.cfg.Delivered != nil {
			l.cfg.Delivered(ev)
		}
	case errors.Is(err, ErrFiltered):
		l.settle(&l.filtered)
	default:
		return err
	}
	if ev.Written != nil {
		ev.Written()
	}
	return nil
}

// settle counts the event whose Write just returned, unless Abort already counted it,
// and reports whether it did.
func (l *Listener) settle(counter *atomic.Uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writing {
		counter.Add(1)
		l.writing = false
		return true
	}
	return false
}

// stop takes a sink whose Write failed (or that failed on its own: Stopper) out of
// service: the failed event, the queued ones and any later ones count as Failed, and
// blocked Adds are released. A sink stopped already is not said again.
func (l *Listener) stop(err error) {
	l.mu.Lock()
	if l.state == failed {
		if l.writing { // a Write in flight when the sink stopped itself
			l.failed.Add(1)
			l.writing = false
		}
		l.mu.Unlock()
		return
	}
	l.state = failed
	l.err = err
	if l.writing {
		l.failed.Add(1)
		l.writing = false
	}
	l.failed.Add(uint64(l.queue.discard()))
	l.room.Broadcast()
	l.ready.Broadcast() // Run, waiting for an event, ends
	l.mu.Unlock()
	if !errors.Is(err, ErrOutputClosed) {
		l.warn("sink %q stopped: %v", l.cfg.Name, err)
	}
}

func (l *Listener) closeSink() {
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return l.sink.Close()
	}()
	if err == nil {
		return
	}
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
	l.warn("sink %q failed to close: %v", l.cfg.Name, err)
}

// Close says no more events are coming: Run delivers what is queued, closes the sink and
// returns. Adds waiting for room give up, counting their events as Dropped.
func (l *Listener) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == open {
		l.state = closing
	}
	l.ready.Broadcast()
	l.room.Broadcast()
}

// Abort stops delivery now, for when the shutdown grace time has run out: queued events
// count as Dropped, and Run returns as soon as the Write in flight (if any) does.
func (l *Listener) Abort() {
	l.mu.Lock()
	if l.state != failed { // else nothing is queued, and later Adds should keep counting as Failed
		l.state = aborted
		l.dropped.Add(uint64(l.queue.discard()))
		if l.writing {
			l.dropped.Add(1) // its Write may never return; it is not known to be written
			l.writing = false
		}
	}
	// What a Holder still holds is not known to be written either (a failed one may
	// still be flushing in its Close).
	l.dropped.Add(uint64(l.held))
	l.held = 0 // and settleHeld ignores them from now on
	l.ready.Broadcast()
	l.room.Broadcast()
	l.mu.Unlock()
	if a, ok := l.sink.(Aborter); ok {
		a.Abort()
	}
}

// Queue reports the events waiting in the buffer and those a Holder sink holds (a batch
// being built or sent), for the queue length metric.
func (l *Listener) Queue() (queued, held int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queue.len(), l.held
}

// Done is closed when Run has returned, after closing the sink.
func (l *Listener) Done() <-chan struct{} { return l.done }

// Stats is a snapshot of the counters; safe at any time. While events flow the counters
// are read one after another, not at one instant; Received is read last, so a snapshot
// never shows more outcomes than events (an event is received before its outcome is
// counted) and Received minus the others never underflows.
func (l *Listener) Stats() Stats {
	s := Stats{
		Delivered: l.delivered.Load(),
		Filtered:  l.filtered.Load(),
		Dropped:   l.dropped.Load(),
		Coalesced: l.coalesced.Load(),
		Failed:    l.failed.Load(),
		Fenced:    l.fenced.Load(),
	}
	s.Received = l.received.Load()
	return s
}

// Missed counts the numbered events, of the first total, that never reached Add as
// received and dropped: those an informer still held for this listener when it was
// stopped (client-go discards a stopped handler's pending notifications). Every listener
// is given every numbered event, so the count is exact; call it once the informers have
// stopped.
func (l *Listener) Missed(total uint64) {
	if n := l.numbered.Load(); total > n {
		l.dropped.Add(total - n)
		l.received.Add(total - n)
	}
}

// Seen reports whether an event numbered seq or later has been given to Add: every
// listener receives every numbered event, so once all have seen seq, stopping the
// informers loses nothing up to it.
func (l *Listener) Seen(seq uint64) bool { return l.lastSeq.Load() >= seq }

// Err is the error that stopped the sink (from Write, else from Close), if any.
func (l *Listener) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Drain shuts the listeners down: it closes them all, waits up to grace in total for them
// to deliver what they hold, and aborts the rest, which it returns. An aborted listener's
// Run returns once its sink's Write in flight does; wait on Done to know.
func Drain(ls []*Listener, grace time.Duration) []*Listener {
	for _, l := range ls {
		l.Close()
	}
	expired := time.After(grace)
	for i, l := range ls {
		select {
		case <-l.Done():
		case <-expired:
			var late []*Listener
			for _, l := range ls[i:] {
				select {
				case <-l.Done():
				default:
					l.Abort()
					late = append(late, l)
				}
			}
			return late
		}
	}
	return nil
}

// Throttle lets a repeated diagnostic through at most once per Period; the first one
// always. Not safe for concurrent use: each owner guards its own.
type Throttle struct {
	Period time.Duration
	last   time.Time // zero until the first one
}

// Allow reports whether a diagnostic may be said at now, and if so counts it as said.
func (t *Throttle) Allow(now time.Time) bool {
	if !t.last.IsZero() && now.Sub(t.last) < t.Period {
		return false
	}
	t.last = now
	return true
}

// AwaitSeen waits until every listener has been handed the event numbered seq (each
// source hands its events on from its own goroutine), or is done, for at most grace.
func AwaitSeen(listeners []*Listener, seq uint64, grace time.Duration) {
	if seq == 0 {
		return
	}
	deadline := time.Now().Add(grace)
	for _, l := range listeners {
		for !l.Seen(seq) && !l.isDone() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}
