package informer

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/wire"
)

// resumeQuiet is how long a re-opened watch must go without a re-list before the outage
// is reported as over with nothing missed.
const resumeQuiet = 2 * time.Second

// watchReporter wraps the informer's ListerWatcher so that no outage goes unsaid: it is
// the one place that sees every list and watch call, and so knows when a watch was lost,
// when the reflector re-lists, and what the re-list changed. client-go's own
// WatchErrorHandler sees only errors that end a ListAndWatch, not a watch that drops and
// is re-opened, nor a re-list that succeeds.
type watchReporter struct {
	inner    *cache.ListWatch
	resource resource.Resource
	store    func() cache.Store
	warn     func(format string, args ...any)
	// fatal ends the command: used for errors before the first watch is established, when
	// retrying would only hang (bad credentials, missing rights, a server that is down).
	fatal func(err error)
	// probe, shared by the cluster's informers, says when an unreachable server answers
	// again (untilReachable); nil leaves retries to the reflector's backoff.
	probe *serverProbe

	mu          sync.Mutex
	watching    bool   // a watch has been opened once: from now on errors are retried
	lost        bool   // an outage has been reported and not yet declared over
	lostCause   string // what the outage is down to (outageCause's kind); "" while unknown
	relist      *relistCount
	resumeTimer *time.Timer
	observer    Observer  // nil: none (see observe.go)
	lostAt      time.Time // when the outage began
}

// relistCount accumulates one re-list across its pages.
type relistCount struct {
	seen             map[string]bool
	changed, created int
}

// IsWatchListSemanticsUnSupported makes the reflector list and then watch, rather than
// stream the initial state through a watch (WatchListClient): a LIST is a single call
// whose result can be counted and compared with the cache, which is how a re-list after
// an outage is reported ("re-synced 1,204 pods (3 changed, 1 deleted while disconnected)").
func (w *watchReporter) IsWatchListSemanticsUnSupported() bool { return true }

func (w *watchReporter) List(options metav1.ListOptions) (runtime.Object, error) {
	return w.ListWithContext(context.Background(), options)
}

func (w *watchReporter) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return w.WatchWithContext(context.Background(), options)
}

func (w *watchReporter) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	w.mu.Lock()
	relisting := w.watching
	if relisting && options.Continue == "" {
		if !w.lost {
			w.warn("watch of %s lost; re-listing…", w.resource)
			w.lost, w.lostCause = true, ""
			w.noteLostLocked()
		}
		w.stopResumeTimerLocked()
		w.relist = &relistCount{seen: map[string]bool{}}
	}
	w.mu.Unlock()

	list, err := untilReachable(ctx, w, func() (runtime.Object, error) { return w.inner.ListWithContext(ctx, options) })
	if err != nil {
		w.failed(err)
		return nil, err
	}
	if relisting {
		w.countPage(list)
	}
	return list, nil
}

func (w *watchReporter) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	// The watches kubeevents decodes itself call watchError from their decoder, before
	// the event is handed on; others get an errorSpy. Either way the call may come before
	// this function is done with the watch: errored tells it so.
	var errored bool // guarded by w.mu
	onError := func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		errored = true
		w.watchErrorLocked()
	}
	wi, err := untilReachable(ctx, w, func() (watch.Interface, error) {
		return w.inner.WatchWithContext(wire.WithErrorHook(ctx, onError), options)
	})
	if err != nil {
		w.failed(err)
		return nil, err
	}
	w.mu.Lock()
	w.watching = true
	if w.lost && w.resumeTimer == nil && !errored {
		w.resumeTimer = time.AfterFunc(resumeQuiet, w.resumed)
	}
	w.mu.Unlock()
	if hooked, ok := wi.(wire.HookedWatch); ok {
		return hooked.Interface, nil
	}
	return newErrorSpy(wi, onError), nil
}

// watchErrorLocked sees an ERROR event on an open watch, typically 410 Gone ("too old
// resource version") from a server that restarted or compacted past the watch: the
// reflector will re-list, after its backoff, so the outage is not over.
func (w *watchReporter) watchErrorLocked() {
	w.stopResumeTimerLocked()
}

// errorSpy passes a watch's events through unchanged, calling onError for ERROR
// events before handing them on.
type errorSpy struct {
	inner    watch.Interface
	result   chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func newErrorSpy(inner watch.Interface, onError func()) watch.Interface {
	s := &errorSpy{inner: inner, result: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(s.result)
		for ev := range inner.ResultChan() {
			if ev.Type == watch.Error {
				onError()
			}
			select {
			case s.result <- ev:
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

func (s *errorSpy) ResultChan() <-chan watch.Event { return s.result }

func (s *errorSpy) Stop() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.inner.Stop()
}

// resumed declares an outage over when the watch re-opened without needing a re-list:
// the server replayed what happened meanwhile.
func (w *watchReporter) resumed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lost && w.resumeTimer != nil {
		w.lost = false
		w.resumeTimer = nil
		w.warn("watch of %s resumed; no events were missed", w.resource)
		w.noteBackLocked(false)
	}
}

func (w *watchReporter) stopResumeTimerLocked() {
	if w.resumeTimer != nil {
		w.resumeTimer.Stop()
		w.resumeTimer = nil
	}
}

// failed reports a list or watch error: fatal before the first watch, once per outage
// after it (the reflector retries with backoff).
func (w *watchReporter) failed(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.watching {
		w.fatal(APIError(err, "list", w.resource))
		return
	}
	w.stopResumeTimerLocked()
	kind, words := outageCause(err, w.resource)
	switch {
	case !w.lost:
		w.lost = true
		w.warn("watch of %s lost (%s); retrying…", w.resource, words)
		w.noteLostLocked()
	case kind != w.lostCause && (w.lostCause != "" || kind != "unreachable"):
		// The same outage, for another reason (the server is back but now refuses these
		// credentials): what the user has to do about it changed, so say it, once. A watch
		// that just dropped ("re-listing…", no cause yet) is what a server going away looks
		// like: that it is unreachable is no news.
		w.warn("watch of %s still lost, now %s; retrying…", w.resource, words)
	}
	w.lostCause = kind
}

// outageCause says what a failed list or watch during an outage is down to: kind tells
// causes apart (a server that is down, missing rights, rejected credentials, ...),
// words say it the way a user can act on.
func outageCause(err error, res resource.Resource) (kind, words string) {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden", APIError(err, "list", res).Error()
	case apierrors.IsUnauthorized(err):
		return "unauthorized", APIError(err, "list", res).Error()
	}
	if _, _, ok := connectionProblem(err); ok {
		return "unreachable", shortReason(err)
	}
	if status, ok := err.(apierrors.APIStatus); ok {
		return string(status.Status().Reason), shortReason(err)
	}
	return "other", shortReason(err)
}

// countPage adds one page of a re-list to the count, and reports the re-list when its
// last page arrives. The cache still holds the state from before the outage, since the
// reflector replaces it only after the whole list.
func (w *watchReporter) countPage(list runtime.Object) {
	store := w.store()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.relist == nil {
		return
	}
	_ = meta.EachListItem(list, func(obj runtime.Object) error {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil
		}
		key := cache.MetaObjectToName(m).String() // the store's key
		w.relist.seen[key] = true
		switch cached, exists, _ := store.GetByKey(key); {
		case !exists:
			w.relist.created++
		case resourceVersion(cached) != m.GetResourceVersion():
			w.relist.changed++
		}
		return nil
	})
	if lm, err := meta.ListAccessor(list); err == nil && lm.GetContinue() != "" {
		return // more pages to come
	}
	deleted := 0
	for _, key := range store.ListKeys() {
		if !w.relist.seen[key] {
			deleted++
		}
	}
	w.warn("re-synced %s %s (%d changed, %d created, %d deleted while disconnected)",
		diag.Count(len(w.relist.seen)), w.resource, w.relist.changed, w.relist.created, deleted)
	w.relist = nil
	w.lost = false
	w.noteBackLocked(true)
}

func resourceVersion(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// shortReason is the gist of a connection error: "connection refused", not the URL.
func shortReason(err error) string {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		msg := opErr.Err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return msg
	}
	if status, ok := err.(apierrors.APIStatus); ok {
		return status.Status().Message
	}
	return err.Error()
}
