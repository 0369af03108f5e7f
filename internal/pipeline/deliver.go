package pipeline

import (
	"slices"
	"sync"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Receiver is a listener as Deliver feeds it (listener.Listener is one): Add waits for
// room as the listener's policy says; TryAdd does nothing and reports false where Add
// would wait.
type Receiver interface {
	Add(ev *event.Event)
	TryAdd(ev *event.Event) bool
}

// Deliver is the pipeline's last step: it hands each event to every receiver (a SYNC
// only to those in its SyncTo), in the order events reach it from each source.
//
// Why from the source's own goroutine: client-go's shared informer gives every handler
// two goroutines of its own, so that one slow handler holds up no other, which costs two
// hand-offs per receiver for every change, before the receiver's own (its listener's
// delivery goroutine). Receivers here are listeners with bounded buffers that never do
// sink work in Add, so the source's goroutine hands each event to all of them in turn.
// Only a receiver that would wait for room (a full buffer under on-full=block) must not
// make the others wait: its lane keeps what it cannot take yet and feeds it from a
// goroutine of its own until it has caught up, as client-go's processorListener would
// (unbounded, like it: the known limit of block).
type Deliver struct {
	lanes []*lane
	// resync are the receivers' resync periods (0: none), raised to MinimumResync.
	resync []time.Duration
}

// Backlog says what a lane does with an event its receiver cannot take yet.
type Backlog int

const (
	// KeepBacklog: the lane keeps it, with those after it, and feeds them on from a
	// goroutine of its own, so that the source goes on: a live source (a watch's
	// informers), which one full receiver must not hold up.
	KeepBacklog Backlog = iota
	// WaitForRoom: the source waits until the receiver takes it: a source that can wait
	// (a recording read back, a store), whose reading ahead would only fill memory with
	// events no receiver has room for.
	WaitForRoom
)

// MinimumResync is the least resync period: client-go's least for an informer's resync,
// which drives the receivers' (see Resync).
const MinimumResync = time.Second

// NewDeliver feeds receivers; resync are their resync periods, in the same order (nil or
// 0: none); backlog says what each lane does with what its receiver cannot take yet.
func NewDeliver(receivers []Receiver, resync []time.Duration, backlog Backlog) *Deliver {
	d := &Deliver{resync: make([]time.Duration, len(receivers))}
	for i, r := range receivers {
		d.lanes = append(d.lanes, &lane{to: r, wait: backlog == WaitForRoom})
		if i < len(resync) && resync[i] > 0 {
			d.resync[i] = max(resync[i], MinimumResync)
		}
	}
	return d
}

// Process hands ev to the receivers it is for.
func (d *Deliver) Process(ev *event.Event) {
	if ev.Type == event.Sync {
		for _, i := range ev.SyncTo {
			d.lanes[i].Add(ev)
		}
		return
	}
	for _, l := range d.lanes {
		l.Add(ev)
	}
}

// To hands ev to some receivers only, by index, in order with what Process hands them:
// a ROLLOUT line and the events a failed rollout unfolds go to the folding sinks alone.
func (d *Deliver) To(ev *event.Event, receivers []int) {
	for _, i := range receivers {
		d.lanes[i].Add(ev)
	}
}

// Drained waits until every lane has handed its backlog on. Once no source hands Deliver
// any more events, each receiver has then been given every event (and counted it:
// delivered, or dropped by one that was closed).
func (d *Deliver) Drained() {
	for _, l := range d.lanes {
		l.drains.Wait()
	}
}

// NewResync is one source's schedule of the receivers' resyncs, starting now: a source
// makes one before it starts (nil when no receiver resyncs).
func (d *Deliver) NewResync() *Resync {
	period := time.Duration(0)
	for _, p := range d.resync {
		if p > 0 && (period == 0 || p < period) {
			period = p
		}
	}
	if period == 0 {
		return nil
	}
	r := &Resync{period: period, periods: d.resync, next: make([]time.Time, len(d.resync))}
	now := time.Now()
	for i, p := range d.resync {
		if p > 0 {
			r.next[i] = now.Add(p)
		}
	}
	return r
}

// Resync is one source's schedule of its receivers' resyncs (SYNC events: every
// unchanged object re-delivered, each receiver on its own period). The source resyncs on
// the shortest period (client-go's informer resync, whose notifications come in order
// with the changes); at each of those moments Due says which receivers' periods have
// come, and the source hands every object it holds to those, as SYNC events. A receiver
// is due at the first moment at or after its period, as client-go's shared informer
// decides for each handler.
type Resync struct {
	period  time.Duration
	periods []time.Duration

	mu   sync.Mutex
	next []time.Time
}

// Period is how often the source must look: the shortest of the receivers' periods.
func (r *Resync) Period() time.Duration { return r.period }

// Due are the receivers whose resync has come at now (nil: none); each is then due again
// a period later.
func (r *Resync) Due(now time.Time) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var due []int
	for i, p := range r.periods {
		if p > 0 && !now.Before(r.next[i]) {
			due = append(due, i)
			r.next[i] = now.Add(p)
		}
	}
	return slices.Clip(due)
}

// lane feeds one receiver in order: directly while it takes events, through its backlog
// (and a goroutine that waits for room) from the first event it refused until the backlog
// is empty again; under WaitForRoom, always directly, the source waiting for room.
type lane struct {
	to   Receiver
	wait bool // WaitForRoom: no backlog; Add waits as the receiver's policy says

	mu       sync.Mutex
	backlog  []*event.Event
	draining bool           // a drain goroutine runs: events go to the backlog, in order
	drains   sync.WaitGroup // the drain goroutine, while it runs
}

func (l *lane) Add(ev *event.Event) {
	if l.wait {
		l.to.Add(ev)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.draining && l.to.TryAdd(ev) {
		return
	}
	l.backlog = append(l.backlog, ev)
	if !l.draining {
		l.draining = true
		l.drains.Add(1)
		go l.drain()
	}
}

// drain hands the backlog on, waiting for room for each event as the receiver's policy
// says, and ends when the backlog is empty (the next event is then offered directly).
func (l *lane) drain() {
	defer l.drains.Done()
	for {
		l.mu.Lock()
		if len(l.backlog) == 0 {
			l.draining = false
			l.backlog = nil
			l.mu.Unlock()
			return
		}
		ev := l.backlog[0]
		l.backlog[0] = nil
		l.backlog = l.backlog[1:]
		l.mu.Unlock()
		l.to.Add(ev)
	}
}
