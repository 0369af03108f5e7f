package informer

import (
	"context"
	"sync"

	"k8s.io/client-go/tools/cache"
)

// checkedHandler is a handler that can be told what a selector check found about a
// DELETED notification (handler, and fanOut of handlers).
type checkedHandler interface {
	cache.ResourceEventHandler
	// OnDeleteChecked is OnDelete of an object that, if left, still exists and only
	// stopped matching the selectors.
	OnDeleteChecked(obj any, left bool)
}

// inOrder is the client-go handler of an informer with selectors: it hands every
// notification on to next in the order client-go gave them, asking checks about each
// DELETED one (selectorcheck.go says why). While no check is unanswered, notifications
// go straight through, on the informer's goroutine; from a DELETED that must be asked
// about until the queue has drained, they queue, and a goroutine of inOrder's own hands
// each on once the answers before it are known.
type inOrder struct {
	next   checkedHandler
	checks *selectorChecks
	ctx    context.Context // ends with the informer: unanswered checks are then deletions
	// wanted, if set, says whether a deleted object could become an event at all (the
	// NAME arguments' filter): others are not asked about.
	wanted func(obj any) bool
	// limit is how many notifications may queue (maxWaiting; tests set less).
	limit int

	mu       sync.Mutex
	queue    []notice
	draining bool           // the drain goroutine runs: notifications queue, in order
	room     sync.Cond      // signalled when the queue shrinks
	drains   sync.WaitGroup // the drain goroutine, while it runs
}

type noticeKind uint8

const (
	noticeAdd noticeKind = iota
	noticeUpdate
	noticeDelete
)

// notice is one notification waiting for its turn.
type notice struct {
	kind     noticeKind
	obj, old any
	initial  bool
	answer   *selectorAnswer // for noticeDelete; nil: a deletion, no question asked
}

func newInOrder(ctx context.Context, next checkedHandler, checks *selectorChecks, wanted func(any) bool) *inOrder {
	o := &inOrder{next: next, checks: checks, ctx: ctx, wanted: wanted, limit: maxWaiting}
	o.room.L = &o.mu
	return o
}

func (o *inOrder) OnAdd(obj any, isInInitialList bool) {
	o.put(notice{kind: noticeAdd, obj: obj, initial: isInInitialList})
}

func (o *inOrder) OnUpdate(oldObj, newObj any) {
	o.put(notice{kind: noticeUpdate, obj: newObj, old: oldObj})
}

func (o *inOrder) OnDelete(obj any) {
	n := notice{kind: noticeDelete, obj: obj}
	if o.wanted == nil || o.wanted(obj) {
		n.answer = o.checks.ask(obj)
	}
	o.put(n)
}

// put hands n on at once when nothing waits, else queues it behind what waits. Only
// the informer's goroutine calls it.
func (o *inOrder) put(n notice) {
	o.mu.Lock()
	if !o.draining && n.answer == nil {
		o.mu.Unlock()
		o.deliver(n, false)
		return
	}
	for len(o.queue) >= o.limit {
		o.room.Wait()
	}
	o.queue = append(o.queue, n)
	if !o.draining {
		o.draining = true
		o.drains.Add(1)
		go o.drain()
	}
	o.mu.Unlock()
}

// drain hands the queue on in order, each DELETED once its answer is known, and ends
// when the queue is empty (the next notification then goes straight through).
func (o *inOrder) drain() {
	defer o.drains.Done()
	for {
		o.mu.Lock()
		if len(o.queue) == 0 {
			o.draining = false
			o.queue = nil
			o.mu.Unlock()
			return
		}
		n := o.queue[0]
		o.queue[0] = notice{}
		o.queue = o.queue[1:]
		o.room.Signal()
		o.mu.Unlock()
		left := false
		if n.answer != nil {
			left = n.answer.wait(o.ctx)
		}
		o.deliver(n, left)
	}
}

func (o *inOrder) deliver(n notice, left bool) {
	switch n.kind {
	case noticeAdd:
		o.next.OnAdd(n.obj, n.initial)
	case noticeUpdate:
		o.next.OnUpdate(n.old, n.obj)
	case noticeDelete:
		o.next.OnDeleteChecked(n.obj, left)
	}
}

// wait returns once the drain goroutine has handed on everything queued.
func (o *inOrder) wait() { o.drains.Wait() }
