package sink

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
)

// Batching says when a batch is sent: once it holds Size events or Bytes bytes, or
// Interval after its first event, whichever comes first. Interval 0 sends a batch as
// soon as no more events are waiting.
type Batching struct {
	Size     int           // events at most; at least 1
	Bytes    int           // bytes at most, 0 for no limit (a larger event goes alone)
	Interval time.Duration // longest wait for a batch to fill
}

// item is one accepted event and what is sent for it.
type item struct {
	ev   *event.Event
	data []byte
}

// sendFunc sends one batch, retrying as its sink does; nil means every event in it was
// delivered, an error that all failed. It returns early, with ctx's error, once ctx ends.
type sendFunc func(ctx context.Context, batch []item) error

// partsFunc sends one batch in parts that may fare differently (an http sink splits a
// batch its receiver cannot take whole): it calls done once for each part, with nil when
// the part's events were delivered, an error when they failed, so that every event of
// the batch is settled once. It returns early, with ctx's error for what is left, once
// ctx ends.
type partsFunc func(ctx context.Context, batch []item, done func(part []item, err error))

// whole is send as a partsFunc: the batch is one part.
func whole(send sendFunc) partsFunc {
	return func(ctx context.Context, batch []item, done func([]item, error)) { done(batch, send(ctx, batch)) }
}

// pool is the part the exec and http sinks share: it takes events from the listener's
// delivery goroutine (Write) and hands them, batched, to workers that send them and
// settle each with the listener. Events of one object always go to the same worker, so
// they are sent in order however many workers run. Each worker takes at most Size more
// events while it sends; beyond that Write waits, so the listener's buffer and its
// on-full policy see a slow receiver.
type pool struct {
	batching Batching
	send     partsFunc
	encode   func(ev *event.Event) ([]byte, error)
	settle   func(ev *event.Event, err error)
	fence    func() error  // nil: none (listener.Fenced)
	closing  chan struct{} // closed by Close
	seed     maphash.Seed
	workers  []chan item
	ctx      context.Context // ended by Abort
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	started  sync.Once
}

func newPool(workers int, b Batching, encode func(*event.Event) ([]byte, error), send partsFunc) *pool {
	if b.Size < 1 {
		b.Size = 1
	}
	p := &pool{batching: b, send: send, encode: encode, seed: maphash.MakeSeed(),
		settle: func(*event.Event, error) {}, closing: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.workers = make([]chan item, max(workers, 1))
	for i := range p.workers {
		p.workers[i] = make(chan item, b.Size)
	}
	return p
}

// Hold implements listener.Holder.
func (p *pool) Hold(settle func(ev *event.Event, err error)) { p.settle = settle }

// Fence implements listener.Fenced: every attempt to send (fenced) asks fence first.
func (p *pool) Fence(fence func() error) { p.fence = fence }

// fenced wraps one attempt to send a batch: it is made only while the fence is open.
// While it is closed the attempt waits; once the sink is closing instead, or aborted, it
// is not made, and fails with an error that wraps listener.ErrFenced (not retried).
func (p *pool) fenced(attempt func(ctx context.Context) error) func(ctx context.Context) error {
	if p.fence == nil {
		return attempt
	}
	return func(ctx context.Context) error {
		for {
			err := p.fence()
			if err == nil {
				return attempt(ctx)
			}
			select {
			case <-p.closing:
			case <-ctx.Done():
			case <-time.After(fenceRetry):
				continue
			}
			return &attemptError{err: fmt.Errorf("%w: %v", listener.ErrFenced, err)}
		}
	}
}

// fenceRetry is how often a closed fence is asked again.
const fenceRetry = 50 * time.Millisecond

// Write encodes ev and hands it to its object's worker.
func (p *pool) Write(ev *event.Event) error {
	p.started.Do(p.start)
	data, err := p.encode(ev)
	if err != nil {
		return err
	}
	w := p.workers[0]
	if len(p.workers) > 1 {
		w = p.workers[maphash.String(p.seed, ev.Kind+"/"+ev.Key())%uint64(len(p.workers))]
	}
	w <- item{ev: ev, data: data}
	return nil
}

func (p *pool) start() {
	for _, w := range p.workers {
		p.wg.Add(1)
		go p.run(w)
	}
}

// Close sends what the workers still hold and waits for them: bounded by the run's
// grace time, after which the listener calls Abort.
func (p *pool) Close() error {
	p.started.Do(p.start)
	close(p.closing)
	for _, w := range p.workers {
		close(w)
	}
	p.wg.Wait()
	p.cancel()
	return nil
}

// Abort ends the sends in flight and their retries: what is held then counts as dropped.
func (p *pool) Abort() { p.cancel() }

// run is one worker: it gathers a batch from in and sends it, until in is closed.
func (p *pool) run(in <-chan item) {
	defer p.wg.Done()
	var batch []item
	size := 0
	var timer *time.Timer
	var expired <-chan time.Time
	flush := func() {
		if timer != nil {
			timer.Stop()
			timer, expired = nil, nil
		}
		if len(batch) == 0 {
			return
		}
		p.send(p.ctx, batch, func(part []item, err error) {
			for _, it := range part {
				p.settle(it.ev, err)
			}
		})
		batch, size = nil, 0
	}
	for {
		select {
		case it, ok := <-in:
			if !ok {
				flush()
				return
			}
			if b := p.batching.Bytes; b > 0 && len(batch) > 0 && size+len(it.data) > b {
				flush()
			}
			batch = append(batch, it)
			size += len(it.data)
			switch {
			case len(batch) >= p.batching.Size, p.batching.Bytes > 0 && size >= p.batching.Bytes:
				flush()
			case p.batching.Interval == 0:
				if len(in) == 0 {
					flush()
				}
			case timer == nil:
				timer = time.NewTimer(p.batching.Interval)
				expired = timer.C
			}
		case <-expired:
			timer, expired = nil, nil
			flush()
		}
	}
}

// NewBackoff is the exec and http sinks' wait between attempts: 0.5 s, doubled after
// each failure up to 30 s, with up to half of it added at random (jitter), so that
// senders that failed together do not come back together.
func NewBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: math.MaxInt32, Cap: 30 * time.Second}
}

// RetryForever, as an exec or http sink's Retries, retries a failed attempt until it
// succeeds, fails for good (a 4xx) or the sink is aborted: an outage of any length then
// loses nothing, and the sink's buffer and on-full policy see it.
const RetryForever = -1

// attemptError is a failed attempt: retry says whether another may succeed, after says
// how long the receiver asked to be left alone (Retry-After), 0 when it did not say.
type attemptError struct {
	err   error
	retry bool
	after time.Duration
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// withRetries runs attempt until it succeeds, fails for good, retries (RetryForever: no
// limit) are used up or ctx ends. Between attempts it waits as backoff says, or as long
// as the receiver asked if that is longer. retrying is told of each retry before its
// wait.
func withRetries(ctx context.Context, retries int, backoff wait.Backoff, attempt func(ctx context.Context) error,
	retrying func(err error, n int, wait time.Duration)) error {
	delay := backoff.DelayFunc()
	var err error
	var next time.Duration // the wait before the next attempt, once the last one failed
	n := 0
	waitErr := wait.DelayFunc(func() time.Duration { return next }).Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		if err = attempt(ctx); err == nil || ctx.Err() != nil {
			return true, nil
		}
		var ae *attemptError
		if errors.As(err, &ae) && !ae.retry || retries != RetryForever && n >= retries {
			return true, nil
		}
		n++
		next = delay()
		if ae != nil && ae.after > next {
			next = ae.after
		}
		if retrying != nil {
			retrying(err, n, next)
		}
		return false, nil
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if waitErr != nil {
		return waitErr
	}
	return err
}

// Encoder turns an event into what an exec or http sink sends for it: its JSON line as
// a file sink writes it, or, with a jq expression, the lines the expression yields
// (listener.ErrFiltered when it yields nothing).
type Encoder struct {
	Printer *render.Printer // JSON lines; used without Query
	Query   *jq.Query
	Differ  *diff.Differ
	ShowOld bool
	// JQError is told of a jq run-time error on an event, which is then filtered out.
	JQError func(ev *event.Event, err error)
}

// Encode returns ev's bytes, newline-terminated, in a new slice.
func (e *Encoder) Encode(ev *event.Event) ([]byte, error) {
	if e.Query == nil {
		return e.Printer.Append(nil, ev)
	}
	if !e.Query.Selects(string(ev.Type)) {
		return nil, listener.ErrFiltered // it would give nothing (jq/types.go)
	}
	input, err := e.Query.Input(ev, e.Differ, e.ShowOld)
	if err != nil {
		return nil, err
	}
	outputs, err := e.Query.Run(context.Background(), input)
	var buf []byte
	if err == nil {
		for _, v := range outputs {
			if !jq.Truthy(v) {
				continue
			}
			if buf, err = jq.AppendOutput(buf, v, false); err != nil {
				break
			}
		}
	}
	if err != nil {
		if e.JQError != nil {
			e.JQError(ev, err)
		}
		return nil, listener.ErrFiltered
	}
	if len(buf) == 0 {
		return nil, listener.ErrFiltered
	}
	return buf, nil
}
