package informer

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// Telling a deletion from a relabelling, without holding up the stream.
//
// Under -l or --field-selector the server reports an object that stops matching the
// selectors as DELETED, with its last matching state, exactly as it reports a deletion:
// only asking whether the object is still there, with the same UID, tells them apart
// (event.ReasonSelector). An object whose last state carries a deletionTimestamp was
// deleted and is taken at its word; any other must be asked about. Asked one by one in
// the informer's goroutine, a mass deletion under -l (a namespace deleted, a
// DeleteCollection) held the stream up for one GET per object, at client-go's default
// of 5 requests a second.
//
// So the questions are asked off the informer's goroutine (selectorChecks), and
// together: while one round of requests runs, the next questions gather, and a round
// asks by namespace: a GET for a single object, one LIST of the namespace's metadata
// (by pages) for several. Meanwhile the DELETED waits for its answer, and every
// notification after it waits behind it (inOrder), so each receiver still gets the
// informer's changes in the order client-go gave them, and they are numbered in that
// order. What waits is bounded: a DELETED waits at most selectorCheckTimeout for its
// answer (unanswered, it is a deletion, as an unanswered GET was), and at most
// maxWaiting notifications wait; past that, the informer's goroutine waits for room.

// selectorCheckTimeout bounds how long a DELETED notification waits for its answer, and
// each request asked for it: past it, the event is reported as a plain deletion rather
// than held up any longer.
const selectorCheckTimeout = 5 * time.Second

// maxWaiting is how many notifications may wait behind unanswered checks before the
// informer's goroutine waits for room (client-go then keeps the next ones).
const maxWaiting = 4096

// objectLookup reads the UIDs of objects as the server has them now (consistent reads,
// never resourceVersion=0: a cache that lags could still hold a deleted object).
type objectLookup interface {
	// uid is the UID of the object, "" when there is none.
	uid(ctx context.Context, namespace, name string) (types.UID, error)
	// page is one page of the objects in namespace ("" for all, or a cluster-scoped
	// type): their UIDs by name, and the token of the next page ("" after the last).
	page(ctx context.Context, namespace, continueToken string) (map[string]types.UID, string, error)
}

// selectorAnswer is the answer to one check: whether the object only left the selection.
type selectorAnswer struct {
	done     chan struct{} // closed once left is set
	left     bool
	deadline time.Time // when the DELETED stops waiting for it
	// The object asked about.
	namespace, name string
	uid             types.UID
}

// selectorChecks asks the server about DELETED objects, in rounds, on a goroutine of
// its own that runs while there are questions.
type selectorChecks struct {
	ctx    context.Context
	lookup objectLookup

	mu      sync.Mutex
	waiting []*selectorAnswer // not asked yet
	running bool              // a round runs (run's goroutine)
}

func newSelectorChecks(ctx context.Context, lookup objectLookup) *selectorChecks {
	return &selectorChecks{ctx: ctx, lookup: lookup}
}

// ask returns the answer to whether obj, the object of a DELETED notification, still
// exists and only left the selection, or nil when that needs no asking: a deletion
// already under way (deletionTimestamp), or an object without metadata.
func (c *selectorChecks) ask(obj any) *selectorAnswer {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	last, err := meta.Accessor(obj)
	if err != nil || last.GetDeletionTimestamp() != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a := &selectorAnswer{done: make(chan struct{}), deadline: time.Now().Add(selectorCheckTimeout),
		namespace: last.GetNamespace(), name: last.GetName(), uid: last.GetUID()}
	c.waiting = append(c.waiting, a)
	if !c.running {
		c.running = true
		go c.run()
	}
	return a
}

// run asks rounds of questions until none are waiting.
func (c *selectorChecks) run() {
	for {
		c.mu.Lock()
		round := c.waiting
		c.waiting = nil
		if len(round) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.answerRound(round)
	}
}

// answerRound answers one round, namespace by namespace.
func (c *selectorChecks) answerRound(round []*selectorAnswer) {
	var order []string
	byNamespace := map[string][]*selectorAnswer{}
	for _, a := range round {
		if _, ok := byNamespace[a.namespace]; !ok {
			order = append(order, a.namespace)
		}
		byNamespace[a.namespace] = append(byNamespace[a.namespace], a)
	}
	for _, ns := range order {
		answers := byNamespace[ns]
		if len(answers) > 1 {
			answers = c.answerByList(ns, answers)
		}
		for _, a := range answers {
			c.answerByGet(a)
		}
	}
}

// answerByGet asks for one object.
func (c *selectorChecks) answerByGet(a *selectorAnswer) {
	ctx, cancel := context.WithTimeout(c.ctx, selectorCheckTimeout)
	defer cancel()
	uid, err := c.lookup.uid(ctx, a.namespace, a.name)
	settle(a, err == nil && uid == a.uid)
}

// answerByList answers several checks in one namespace from a LIST of it, and returns
// those it could not answer, for GETs. It reads at most as many pages as there are
// checks, so that it never makes more requests than their GETs would: past that (a
// namespace far larger than what is being deleted), the rest are asked one by one.
func (c *selectorChecks) answerByList(namespace string, answers []*selectorAnswer) (unanswered []*selectorAnswer) {
	found := map[*selectorAnswer]bool{}
	next := ""
	for pages := 0; ; {
		ctx, cancel := context.WithTimeout(c.ctx, selectorCheckTimeout)
		uids, cont, err := c.lookup.page(ctx, namespace, next)
		cancel()
		if err != nil {
			break // the LIST failed: the GETs will say
		}
		pages++
		for _, a := range answers {
			if uid, ok := uids[a.name]; ok && uid == a.uid {
				found[a] = true
			}
		}
		if next = cont; next == "" {
			// The whole namespace was read: what it did not hold is gone.
			for _, a := range answers {
				settle(a, found[a])
			}
			return nil
		}
		if len(found) == len(answers) || pages >= len(answers) {
			break
		}
	}
	for _, a := range answers {
		if found[a] {
			settle(a, true)
		} else {
			unanswered = append(unanswered, a)
		}
	}
	return unanswered
}

func settle(a *selectorAnswer, left bool) {
	a.left = left
	close(a.done)
}

// wait returns the answer once it is known, false (a deletion) if it is not by its
// deadline or when ctx ends.
func (a *selectorAnswer) wait(ctx context.Context) bool {
	timer := time.NewTimer(time.Until(a.deadline))
	defer timer.Stop()
	select {
	case <-a.done:
		return a.left
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

// metadataLookup reads objects' metadata through the metadata client.
type metadataLookup struct {
	clients Clients
	gvr     schema.GroupVersionResource
}

// newObjectLookup reads through the metadata client where there is one (metadata alone
// is all a check needs), else through the dynamic client.
func newObjectLookup(clients Clients, gvr schema.GroupVersionResource) objectLookup {
	return metadataLookup{clients: clients, gvr: gvr}
}

func (l metadataLookup) uid(ctx context.Context, namespace, name string) (types.UID, error) {
	var obj metav1.Object
	var err error
	if l.clients.Metadata != nil {
		obj, err = l.clients.Metadata.Resource(l.gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	} else {
		obj, err = l.clients.Dynamic.Resource(l.gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return obj.GetUID(), nil
}

func (l metadataLookup) page(ctx context.Context, namespace, continueToken string) (map[string]types.UID, string, error) {
	opts := metav1.ListOptions{Limit: listPageSize, Continue: continueToken}
	uids := map[string]types.UID{}
	if l.clients.Metadata != nil {
		list, err := l.clients.Metadata.Resource(l.gvr).Namespace(namespace).List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		for i := range list.Items {
			uids[list.Items[i].Name] = list.Items[i].UID
		}
		return uids, list.Continue, nil
	}
	list, err := l.clients.Dynamic.Resource(l.gvr).Namespace(namespace).List(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	for i := range list.Items {
		uids[list.Items[i].GetName()] = list.Items[i].GetUID()
	}
	return uids, list.GetContinue(), nil
}
