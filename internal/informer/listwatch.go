package informer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
	"github.com/kubeevents/kubeevents/internal/informer/decode"
	"github.com/kubeevents/kubeevents/internal/resource"
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
	// example is an object of the type the reflector expects (for the bookmarks of an
	// in-place re-list); vanished marks what such a re-list found deleted.
	example  runtime.Object
	vanished vanishedSet
	// recovery says which of the recovery pieces are off (all on by default).
	recovery Recovery
	// crdDeleted, when set, tells whether the watched type's CustomResourceDefinition is
	// gone (rather than the type no longer served for another reason).
	crdDeleted func(ctx context.Context) bool

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
			w.noteLostLocked()
			w.warn("watch of %s lost; re-listing…", w.resource)
			w.lost, w.lostCause = true, ""
		}
		w.stopResumeTimerLocked()
		w.relist = &relistCount{seen: map[string]bool{}}
	}
	w.mu.Unlock()

	options = mostRecentPages(options)
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

// listPageSize is the page size of the informer's lists: 20 requests for 100,000 pods,
// each a message of tens of MB rather than one of about 1 GB. (client-go's pager asks
// for 500: 200 requests, and 53 s rather than 34 s for that list on loopback.)
const listPageSize = 5000

// mostRecentPages has a paged list (its limit set by client-go's pager) come in pages of
// listPageSize, from the first page, which asks for the most recent state
// (resourceVersion ""), as kubectl's lists do. The reflector asks for its first list at
// resourceVersion "0" (anything cached), for which the watch cache ignores the limit and
// sends every object in one response: with 100,000 pods a message of about 1 GB, read,
// copied and decoded at once, whose copies the collector waits out (bench/README.md, "make
// bench-mem" at 100,000 pods: 37% less CPU and an 18% lower peak in pages). The most
// recent state is at least as new as any version the reflector asks for, so the list
// means the same to it. A list without a limit stays as it is: the reflector's re-list
// from the cache at a version it knows (client-go pages those only once a list came in
// pages), and the pager's fallback to a whole list when a continue token expired, which
// must return everything in one response.
func mostRecentPages(options metav1.ListOptions) metav1.ListOptions {
	if options.Limit > 0 {
		options.Limit = max(options.Limit, listPageSize)
		if options.Continue == "" {
			options.ResourceVersion, options.ResourceVersionMatch = "", ""
		}
	}
	return options
}

func (w *watchReporter) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	// The watches kubeevents decodes itself call onError from their decoder, before the
	// event is handed on; others get an errorSpy. Either way the call may come before
	// this function is done with the watch: errored tells it so.
	var errored bool // guarded by w.mu
	onError := func(status runtime.Object) ([]watch.Event, bool) {
		w.mu.Lock()
		errored = true
		w.watchErrorLocked()
		w.mu.Unlock()
		switch {
		case connectionLost(status):
			// The reflector would re-list, after its backoff; the server still has what
			// happened meanwhile: end this watch as if the server had, and the reflector
			// opens the next one where this one was, once the server answers again.
			w.connectionLost()
			return nil, true
		case isGone(status) && w.store != nil && w.example != nil && !w.recovery.NoRelistInPlace:
			events := w.relistInPlace(ctx)
			return events, events != nil
		}
		return nil, false
	}
	onEndedEarly := func(ranFor time.Duration) []watch.Event { return w.endedEarly(ctx, options.ResourceVersion, ranFor) }
	hooks := decode.WithEndedEarlyHook(decode.WithErrorHook(ctx, onError), onEndedEarly)
	wi, err := untilReachable(ctx, w, func() (watch.Interface, error) {
		return w.inner.WatchWithContext(hooks, options)
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
	if hooked, ok := wi.(decode.HookedWatch); ok {
		return hooked.Interface, nil
	}
	return newErrorSpy(wi, onError, onEndedEarly), nil
}

// emptyWatchPause is how long a watch the server closed at once, before any event, is
// held before the reflector opens the next: at most two such watches a second.
const emptyWatchPause = 500 * time.Millisecond

// endedEarly is what a watch opened at resourceVersion rv hands the reflector when the
// server closed it ranFor after it was opened, before any event (a kube-apiserver that is
// shutting down, or just started, may close watches at once). If the reflector would take
// that for a failure (re-list after its backoff, which grows with every failure up to
// 30 s), it is handed a BOOKMARK at rv, after emptyWatchPause, and opens the next watch
// from rv at once: one the server serves, or answers with 410 Gone (re-listed in place).
func (w *watchReporter) endedEarly(ctx context.Context, rv string, ranFor time.Duration) []watch.Event {
	if w.recovery.NoEndedEarlyBookmark || !rules.TakesForFailure(ranFor) || rv == "" || rv == "0" || w.example == nil ||
		!sleepCtx(ctx, emptyWatchPause) {
		return nil
	}
	events, err := rules.ContinueAt(w.example, rv)
	if err != nil {
		return nil
	}
	return events
}

// watchErrorLocked sees an ERROR event on an open watch, typically 410 Gone ("too old
// resource version") from a server that restarted or compacted past the watch: the
// reflector will re-list, after its backoff, so the outage is not over.
func (w *watchReporter) watchErrorLocked() {
	w.stopResumeTimerLocked()
}

// errorSpy passes a watch's events through, calling onError for ERROR events before
// handing them on, and handing on what it returns instead of them (the watch then ends
// after those): what the watches of package decode do in their decoder.
type errorSpy struct {
	inner    watch.Interface
	result   chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func newErrorSpy(inner watch.Interface, onError decode.ErrorHook, onEndedEarly decode.EndedEarlyHook) watch.Interface {
	s := &errorSpy{inner: inner, result: make(chan watch.Event), stop: make(chan struct{})}
	opened := time.Now()
	go func() {
		defer close(s.result)
		handed := false
		defer func() {
			select {
			case <-s.stop:
				return // the reflector stopped it: nothing ended early
			default:
			}
			if handed {
				return
			}
			for _, ev := range onEndedEarly(time.Since(opened)) {
				select {
				case s.result <- ev:
				case <-s.stop:
					return
				}
			}
		}()
		for ev := range inner.ResultChan() {
			handed = true
			events, replaced := []watch.Event{ev}, false
			if ev.Type == watch.Error {
				if replacement, replace := onError(ev.Object); replace {
					inner.Stop()
					events, replaced = replacement, true
				}
			}
			for _, ev := range events {
				select {
				case s.result <- ev:
				case <-s.stop:
					return
				}
			}
			if replaced {
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

// connectionLost tells the ERROR event of a watch whose connection stopped carrying
// anything (HTTP/2's health check got no answer, or TCP gave up): client-go makes it from
// the error reading the stream.
func connectionLost(status runtime.Object) bool {
	s, ok := status.(*metav1.Status)
	if !ok || s.Details == nil || s.Code != http.StatusInternalServerError {
		return false
	}
	for _, cause := range s.Details.Causes {
		if cause.Type == "ClientWatchDecoding" {
			return strings.Contains(cause.Message, "http2: client connection lost") ||
				strings.Contains(cause.Message, "connection timed out")
		}
	}
	return false
}

// connectionLost reports a watch whose connection was lost.
func (w *watchReporter) connectionLost() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.lost {
		w.lost, w.lostCause = true, "unreachable"
		w.noteLostLocked()
		w.warn("watch of %s lost (the connection to the server stopped answering); retrying…", w.resource)
	}
}

// resumed declares an outage over when the watch re-opened without needing a re-list:
// the server replayed what happened meanwhile.
func (w *watchReporter) resumed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lost && w.resumeTimer != nil {
		w.lost = false
		w.resumeTimer = nil
		w.noteBackLocked(false)
		w.warn("watch of %s resumed; no events were missed", w.resource)
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
		w.noteLostLocked()
		w.warn("watch of %s lost (%s); retrying…", w.resource, words)
	case kind != w.lostCause && (w.lostCause != "" || kind != "unreachable"):
		// The same outage, for another reason (the server is back but now refuses these
		// credentials): what the user has to do about it changed, so say it, once. A watch
		// that just dropped ("re-listing…", no cause yet) is what a server going away looks
		// like: that it is unreachable is no news.
		w.warn("watch of %s still lost, now %s; retrying…", w.resource, words)
	}
	w.lostCause = kind
}

// typeGone says, once per outage, that the server no longer serves the watched type.
func (w *watchReporter) typeGone(ctx context.Context) {
	w.mu.Lock()
	said := w.lost && w.lostCause == causeTypeGone
	w.mu.Unlock()
	if said {
		return
	}
	words := fmt.Sprintf("the API server no longer serves %s", w.resource)
	if w.crdDeleted != nil && w.crdDeleted(ctx) {
		words = fmt.Sprintf("customresourcedefinition %s was deleted", crdName(w.resource))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopResumeTimerLocked()
	if w.lost {
		w.warn("watch of %s still lost: %s; waiting for it to come back", w.resource, words)
	} else {
		w.noteLostLocked()
		w.warn("watch of %s lost: %s; waiting for it to come back", w.resource, words)
	}
	w.lost, w.lostCause = true, causeTypeGone
}

// causeTypeGone is the outage cause of a type the server stopped serving.
const causeTypeGone = "gone"

// crdName is the name of the CustomResourceDefinition that defines res.
func crdName(res resource.Resource) string { return res.GVR.Resource + "." + res.GVR.Group }

// outageCause says what a failed list or watch during an outage is down to: kind tells
// causes apart (a server that is down, missing rights, rejected credentials, ...),
// words say it the way a user can act on.
func outageCause(err error, res resource.Resource) (kind, words string) {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden", APIError(err, "list", res).Error()
	case apierrors.IsUnauthorized(err):
		return "unauthorized", APIError(err, "list", res).Error()
	case apierrors.IsTooManyRequests(err):
		// API Priority and Fairness (or a proxy) turned the request away: the server is
		// up but will not serve these requests now.
		return "throttled", "throttled by the API server: 429 Too Many Requests"
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
	w.noteBackLocked(true)
	w.warn("re-synced %s %s (%d changed, %d created, %d deleted while disconnected)",
		diag.Count(len(w.relist.seen)), w.resource, w.relist.changed, w.relist.created, deleted)
	w.relist = nil
	w.lost = false
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
