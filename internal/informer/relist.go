package informer

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/diag"
)

// relistPageSize is the page size of a re-list, as client-go's pager's default.
const relistPageSize = 500

// Why the informer re-lists inside the watch: when a watch ends with 410 Gone (the
// server restarted, or etcd was compacted past the watch's resourceVersion), client-go's
// reflector waits its backoff before it lists again (reflector.go: behaviours 4 and 6),
// which the informer cannot shorten, so a server restarting twice in a minute would leave
// the stream blind for seconds after it is back. Instead, the watch's error hook re-lists
// at once and hands the reflector, in place of the ERROR event, what changed while the
// watch was down: ADDED for new objects, MODIFIED for changed ones, DELETED for those
// that vanished (marked final-state-unknown, as client-go's own re-list would), then the
// events that have it continue at the list's resourceVersion (rules.ContinueAt). The
// watch ends after them and the reflector opens the next one from there, at once.
// KUBEEVENTS_RELIST_IN_PLACE=off leaves the 410 to the reflector.

// relistInPlace lists the watched objects and returns, for the reflector, the events that
// bring its store up to date, or nil when the list fails (the reflector then gets the
// ERROR event and re-lists as it always did).
func (w *watchReporter) relistInPlace(ctx context.Context) []watch.Event {
	w.mu.Lock()
	if !w.lost {
		w.noteLostLocked()
		w.warn("watch of %s lost; re-listing…", w.resource)
		w.lost, w.lostCause = true, ""
	}
	w.stopResumeTimerLocked()
	w.mu.Unlock()

	store := w.store()
	seen := map[string]bool{}
	var events []watch.Event
	var created, changed int
	rv, err := w.eachListed(ctx, func(obj runtime.Object) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		key := cache.MetaObjectToName(m).String() // the store's key
		seen[key] = true
		switch cached, exists, _ := store.GetByKey(key); {
		case !exists:
			created++
			events = append(events, watch.Event{Type: watch.Added, Object: obj})
		case resourceVersion(cached) != m.GetResourceVersion():
			changed++
			events = append(events, watch.Event{Type: watch.Modified, Object: obj})
		}
	})
	if err != nil {
		return nil
	}
	continueAt, err := rules.ContinueAt(w.example, rv)
	if err != nil {
		return nil
	}
	w.vanished.next()
	deleted := 0
	for _, key := range store.ListKeys() {
		if seen[key] {
			continue
		}
		obj, exists, _ := store.GetByKey(key)
		gone, ok := obj.(runtime.Object)
		if !exists || !ok {
			continue
		}
		if m, err := meta.Accessor(gone); err == nil {
			w.vanished.add(m.GetUID())
		}
		deleted++
		events = append(events, watch.Event{Type: watch.Deleted, Object: gone})
	}
	events = append(events, continueAt...)

	w.mu.Lock()
	w.noteBackLocked(true)
	w.warn("re-synced %s %s (%d changed, %d created, %d deleted while disconnected)",
		diag.Count(len(seen)), w.resource, changed, created, deleted)
	w.lost = false
	w.mu.Unlock()
	return events
}

// eachListed lists the watched objects page by page, waiting for an unreachable server
// as the informer's own lists do, calls fn for each, and returns the list's
// resourceVersion.
func (w *watchReporter) eachListed(ctx context.Context, fn func(runtime.Object)) (string, error) {
	opts := metav1.ListOptions{Limit: relistPageSize}
	var rv string
	for {
		list, err := untilReachable(ctx, w, func() (runtime.Object, error) { return w.inner.ListWithContext(ctx, opts) })
		if apierrors.IsResourceExpired(err) && opts.Continue != "" {
			// The pages outlived the server's continue token: list whole instead.
			opts.Continue, opts.Limit = "", 0
			continue
		}
		if err != nil {
			return "", err
		}
		lm, err := meta.ListAccessor(list)
		if err != nil {
			return "", err
		}
		if rv == "" {
			rv = lm.GetResourceVersion()
		}
		if err := meta.EachListItem(list, func(obj runtime.Object) error { fn(obj); return nil }); err != nil {
			return "", err
		}
		if lm.GetContinue() == "" {
			return rv, nil
		}
		opts.Continue = lm.GetContinue()
	}
}

// isGone tells the ERROR event of a watch whose resourceVersion the server no longer
// has (410: Expired or Gone).
func isGone(status runtime.Object) bool {
	s, ok := status.(*metav1.Status)
	if !ok {
		return false
	}
	err := apierrors.FromObject(s)
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// vanishedSet holds the UIDs of the objects that an in-place re-list found gone: their
// DELETED events are final-state-unknown. It keeps the marks of the last two re-lists
// (the handlers may still be taking in one re-list's events when the next one begins);
// a UID is never reused, so a mark marks nothing else while it is kept.
type vanishedSet struct {
	mu        sync.Mutex
	last, old map[types.UID]struct{}
}

// next begins the marks of a new re-list, forgetting those of the one before the last.
func (s *vanishedSet) next() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.old, s.last = s.last, nil
}

func (s *vanishedSet) add(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[types.UID]struct{}{}
	}
	s.last[uid] = struct{}{}
}

// has tells whether obj vanished while the watch was down.
func (s *vanishedSet) has(obj any) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, inLast := s.last[m.GetUID()]
	_, inOld := s.old[m.GetUID()]
	return inLast || inOld
}
