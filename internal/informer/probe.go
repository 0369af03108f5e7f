package informer

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

const (
	// probeInterval spaces the readiness probes of one cluster: at most two a second,
	// however many informers are waiting for the server.
	probeInterval = 500 * time.Millisecond
	// probeTimeout bounds one probe of a server that accepts connections but does not
	// answer; the next probe follows at once.
	probeTimeout = 2 * time.Second
	// typeGonePoll spaces the calls that find out whether a type the server stopped
	// serving is back (a CustomResourceDefinition deleted and created again).
	typeGonePoll = time.Second
)

// maxRetryAfter caps a server's Retry-After: never wait longer than client-go's own
// backoff would have.
var maxRetryAfter = reflectorBackoff.Cap

// serverProbe finds out, for all the informers of one cluster, when its API server
// answers again after an outage. client-go's reflector waits its backoff after every
// failed call (reflector.go, behaviours 5 and 6: up to 30 s, and more at random), so a
// 10-second blip could cost half a minute of blindness; instead, the informers' list and
// watch calls wait on this probe and are retried as soon as it sees the server answer.
// KUBEEVENTS_READINESS_PROBE=off leaves the failed calls to the reflector.
type serverProbe struct {
	// check asks the server once whether it is ready; retryAfter is how long it asked
	// to be left alone (429, 503).
	check    func(ctx context.Context) (ready bool, retryAfter time.Duration)
	interval time.Duration

	mu       sync.Mutex
	ready    chan struct{} // closed when a probe finds the server ready, then replaced
	waiting  int           // callers of wait that ready will release
	probing  bool          // the probing goroutine runs
	notUntil time.Time     // the earliest start of the next probe
}

// newServerProbe probes GET /readyz, which every user may read (the
// system:public-info-viewer role), through client.
func newServerProbe(client rest.Interface) *serverProbe {
	return &serverProbe{check: readyzCheck(client), interval: probeInterval, ready: make(chan struct{})}
}

// wait returns when a probe finds the server ready, or with ctx's error when ctx ends
// first. Probes run only while someone waits.
func (p *serverProbe) wait(ctx context.Context) error {
	p.mu.Lock()
	ready := p.ready
	p.waiting++
	if !p.probing {
		p.probing = true
		go p.probe()
	}
	p.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		if p.ready == ready {
			p.waiting--
		}
		p.mu.Unlock()
		return ctx.Err()
	}
}

// probe starts a check of the server every interval (or after a Retry-After), until one
// finds it ready or nobody waits any more. A check does not wait for the one before it
// to end: on a path that silently stopped carrying packets a check hangs until its
// timeout, and the path may come back meanwhile; each check ends within probeTimeout,
// so at most probeTimeout/interval of them are under way at once.
func (p *serverProbe) probe() {
	for {
		p.mu.Lock()
		if p.waiting == 0 {
			p.probing = false
			p.mu.Unlock()
			return
		}
		delay, ready := time.Until(p.notUntil), p.ready
		if delay <= 0 {
			start := time.Now()
			p.notUntil = start.Add(p.interval)
			go p.checkOnce(start, ready)
			delay = p.interval
		}
		p.mu.Unlock()
		// Then look again: a check may have found the server ready, or asked for a pause,
		// or the waiters may have gone.
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-ready:
			timer.Stop()
		}
	}
}

// checkOnce checks the server once and releases the waiters of ready if it is ready.
func (p *serverProbe) checkOnce(start time.Time, ready chan struct{}) {
	isReady, retryAfter := p.check(context.Background())
	p.mu.Lock()
	defer p.mu.Unlock()
	if retryAfter > 0 {
		p.notUntil = maxTime(p.notUntil, start.Add(min(retryAfter, maxRetryAfter)))
	}
	if isReady && p.ready == ready {
		close(p.ready)
		p.ready = make(chan struct{})
		p.waiting = 0
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// readyzCheck asks GET /readyz once, without client-go's retries (the probe has its own
// pace). Ready is a 200; a server that answers but will not tell this user (401, 403,
// 404 from a proxy in front of it) counts as ready too, and the real call finds out what
// it thinks of the request.
func readyzCheck(client rest.Interface) func(context.Context) (bool, time.Duration) {
	return func(ctx context.Context) (bool, time.Duration) {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		err := client.Get().AbsPath("/readyz").MaxRetries(0).Do(ctx).Error()
		var status apierrors.APIStatus
		switch {
		case err == nil:
			return true, 0
		case !errors.As(err, &status):
			return false, 0 // no answer
		case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err):
			seconds, _ := apierrors.SuggestsClientDelay(err)
			return false, time.Duration(seconds) * time.Second
		case status.Status().Code >= 500:
			return false, 0 // up, not ready: some of its checks fail
		}
		return true, 0
	}
}

// unreachable tells errors that mean the server could not be reached, or cannot serve
// for now (429, 503, 504), from answers such as 401, 403, 404 or 410, which the
// reflector handles as it always did.
func unreachable(err error) bool {
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return false
	case apierrors.IsServiceUnavailable(err), apierrors.IsTooManyRequests(err),
		apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false // the server answered
	}
	if utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err) {
		return true
	}
	_, _, ok := connectionProblem(err)
	return ok
}

// untilReachable makes call, a list or watch call of w's informer, until it succeeds,
// fails for a reason other than an unreachable server or a type no longer served, or ctx
// ends (the informer stops). Once the first watch was established, an unreachable server
// is reported as a lost watch and waited for on the cluster's probe (after the
// Retry-After the call's answer asked for, if any), rather than handed to the reflector,
// which would back off for up to 30 s; so is a type the server stopped serving (its
// CustomResourceDefinition deleted), asked for again every typeGonePoll. Before the
// first watch, errors end the command (a server that is down at start-up is an error,
// not something to wait for).
func untilReachable[T any](ctx context.Context, w *watchReporter, call func() (T, error)) (T, error) {
	for {
		v, err := call()
		if err == nil || ctx.Err() != nil || !w.isWatching() {
			return v, err
		}
		switch {
		case apierrors.IsNotFound(err):
			w.typeGone(ctx)
			if !sleepCtx(ctx, typeGonePoll) {
				return v, err
			}
		case w.probe != nil && unreachable(err):
			w.failed(err)
			if seconds, ok := apierrors.SuggestsClientDelay(err); ok && !sleepCtx(ctx, min(time.Duration(seconds)*time.Second, maxRetryAfter)) {
				return v, err
			}
			if w.probe.wait(ctx) != nil {
				return v, err
			}
		default:
			return v, err
		}
	}
}

// sleepCtx sleeps for d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *watchReporter) isWatching() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.watching
}
