package informer

import (
	"sync"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Why receivers are fed from the informer's own goroutine: client-go's shared informer
// gives every handler two goroutines of its own (processorListener's pop and run), so
// that one slow handler does not hold up the others; each change then costs two
// goroutine hand-offs per receiver, before the receiver's own (its listener's delivery
// goroutine). The receivers here are listeners with bounded buffers that never do sink
// work in Add, so the informer's goroutine can hand each change to all of them in turn.
// Only a listener that would wait for room (a full buffer under on-full=block) must not
// make the others wait: its lane keeps what it cannot take yet and feeds it from a
// goroutine of its own until it has caught up, as client-go's processorListener would
// (unbounded, like it: the known limit of block).

// TryReceiver is a Receiver that can refuse an event rather than wait for room
// (listener.Listener.TryAdd).
type TryReceiver interface {
	Receiver
	TryAdd(ev *event.Event) bool
}

// lane feeds one receiver in order: directly while it takes events, through its backlog
// (and a goroutine that waits for room) from the first event it refused until the backlog
// is empty again.
type lane struct {
	to TryReceiver

	mu       sync.Mutex
	backlog  []*event.Event
	draining bool           // a drain goroutine runs: events go to the backlog, in order
	drains   sync.WaitGroup // the drain goroutine, while it runs
}

func (l *lane) Add(ev *event.Event) {
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

// fanOut is one informer handler that hands each change to several handlers in turn.
type fanOut []*handler

func (f fanOut) OnAdd(obj any, isInInitialList bool) {
	for _, h := range f {
		h.OnAdd(obj, isInInitialList)
	}
}

func (f fanOut) OnUpdate(oldObj, newObj any) {
	for _, h := range f {
		h.OnUpdate(oldObj, newObj)
	}
}

func (f fanOut) OnDelete(obj any) { f.OnDeleteChecked(obj, false) }

func (f fanOut) OnDeleteChecked(obj any, left bool) {
	for _, h := range f {
		h.OnDeleteChecked(obj, left)
	}
}

// fanOutOf is the one handler that feeds every receiver from the informer's goroutine,
// or ok=false where client-go's shared informer is still needed: receivers that asked
// for different resync periods (client-go decides per handler when one is due), or one
// that cannot refuse an event. Once the informer no longer calls the handler, drained
// waits until every lane has handed its backlog on: an informer stops only once its
// receivers have been given every event it made (each is then counted by its receiver:
// delivered, or dropped by one that was closed), as with a single receiver, which the
// informer's goroutine feeds directly.
func fanOutOf(handlers []*handler, regs []Registration) (_ checkedHandler, drained func(), ok bool) {
	if len(handlers) == 1 {
		return handlers[0], func() {}, true
	}
	for _, reg := range regs {
		if reg.Resync != regs[0].Resync {
			return nil, nil, false
		}
		if _, ok := reg.Receiver.(TryReceiver); !ok {
			return nil, nil, false
		}
	}
	fanned := make(fanOut, len(handlers))
	lanes := make([]*lane, len(handlers))
	for i, h := range handlers {
		lanes[i] = &lane{to: regs[i].Receiver.(TryReceiver)}
		laned := *h
		laned.receiver = lanes[i]
		fanned[i] = &laned
	}
	drained = func() {
		for _, l := range lanes {
			l.drains.Wait()
		}
	}
	return fanned, drained, true
}
