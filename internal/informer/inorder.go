package informer

import (
	"context"
	"sync"

	"github.com/kubeevents/kubeevents/internal/event"
)

// inOrder hands an informer's events on in the order client-go gave their changes, when
// selectors are set: each DELETED must first be asked about (selectorcheck.go says why).
// While no check is unanswered, events go straight through, on the informer's
// goroutine; from a DELETED that must be asked about until the queue has drained, they
// queue, and a goroutine of inOrder's own hands each on once the answers before it are
// known. Events are made before they queue, so a SYNC holds the objects as they were
// when client-go handed over its resync, in order with the changes around it.
type inOrder struct {
	take func(ev *event.Event)
	ctx  context.Context // ends with the informer: unanswered checks are then deletions
	// limit is how many events may queue (maxWaiting; tests set less).
	limit int

	mu       sync.Mutex
	queue    []queued
	draining bool           // the drain goroutine runs: events queue, in order
	room     sync.Cond      // signalled when the queue shrinks
	drains   sync.WaitGroup // the drain goroutine, while it runs
}

// queued is one event waiting for its turn, with, for a DELETED that was asked about,
// its answer.
type queued struct {
	ev     *event.Event
	answer *selectorAnswer
}

func newInOrder(ctx context.Context, take func(*event.Event)) *inOrder {
	o := &inOrder{take: take, ctx: ctx, limit: maxWaiting}
	o.room.L = &o.mu
	return o
}

// put hands ev on at once when nothing waits, else queues it behind what waits. answer,
// for a DELETED, is the check asked about it (nil: a deletion, no question asked). Only
// the informer's goroutine calls it.
func (o *inOrder) put(ev *event.Event, answer *selectorAnswer) {
	o.mu.Lock()
	if !o.draining && answer == nil {
		o.mu.Unlock()
		o.take(ev)
		return
	}
	for len(o.queue) >= o.limit {
		o.room.Wait()
	}
	o.queue = append(o.queue, queued{ev: ev, answer: answer})
	if !o.draining {
		o.draining = true
		o.drains.Add(1)
		go o.drain()
	}
	o.mu.Unlock()
}

// drain hands the queue on in order, each DELETED once its answer is known, and ends
// when the queue is empty (the next event then goes straight through).
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
		q := o.queue[0]
		o.queue[0] = queued{}
		o.queue = o.queue[1:]
		o.room.Signal()
		o.mu.Unlock()
		if q.answer != nil && q.answer.wait(o.ctx) {
			q.ev.Reason = event.ReasonSelector // it still exists: it only left the selection
		}
		o.take(q.ev)
	}
}

// wait returns once the drain goroutine has handed on everything queued.
func (o *inOrder) wait() { o.drains.Wait() }
