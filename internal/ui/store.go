package ui

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// objectKey names one object of one cluster: what a row of the table is. Kind rather
// than resource, so that a core Event's involvedObject (a kind) finds its row.
type objectKey struct {
	cluster, group, kind, namespace, name string
}

// rowState is what the table shows of one object, copied from the store to the view.
type rowState struct {
	key      objectKey
	resource schema.GroupVersionResource
	obj      runtime.Object // the newest state; shared with the informer's cache, read-only
	owners   []event.Owner  // --owned: the chain from the followed object down to the direct owner
	rollout  *event.Rollout
	health   *event.Health // its health, when the run computes it (a HEALTH column)
	// change is the type of the last change shown highlighted (ADDED, MODIFIED,
	// DELETED), at changed; zero for objects listed at start-up or only re-synced since,
	// which are not highlighted.
	change  event.EventType
	changed time.Time
	deleted time.Time // when its DELETED came; zero while it lives
	reason  string    // why it left when not deleted (event.ReasonSelector)
	version uint64    // bumped at every event, so that the view knows its cells are stale
}

// entry is one change in an object's history, as the stream would print it.
type entry struct {
	at   time.Time
	text string // the pretty lines of the event (its line, then its diff), with colours
	// by is who made the change (a field manager), shown beside it; empty while events
	// do not say.
	by string
}

// object is one row's state and its history, a ring of the last cap entries.
type object struct {
	row     rowState
	history []entry
	next    int // where the ring writes next, once full
	seen    int // entries ever added
}

func (o *object) add(e entry, limit int) {
	o.seen++
	if len(o.history) < limit {
		o.history = append(o.history, e)
		return
	}
	o.history[o.next] = e
	o.next = (o.next + 1) % limit
}

// entries are the history, oldest first.
func (o *object) entries() []entry {
	out := make([]entry, 0, len(o.history))
	out = append(out, o.history[o.next:]...)
	return append(out, o.history[:o.next]...)
}

// store is what the sink (the listener's goroutine) writes and the view (the terminal's
// goroutine) reads: the objects now, each one's recent history, and what changed since
// the view last looked. Every object that was deleted goes once it has been shown struck
// for strikeFor, and every history holds at most historyCap entries, so it holds no more
// than the watched objects and their recent changes.
type store struct {
	historyCap int
	strikeFor  time.Duration

	mu      sync.Mutex
	objects map[objectKey]*object
	// dirty are the objects changed (or gone) since the view last pulled.
	dirty map[objectKey]struct{}
	// gone are the deleted objects in the order of their deletion, to be removed once
	// struck long enough.
	gone   []objectKey
	events uint64 // every event written, core Events included
}

func newStore(historyCap int, strikeFor time.Duration) *store {
	return &store{historyCap: historyCap, strikeFor: strikeFor,
		objects: map[objectKey]*object{}, dirty: map[objectKey]struct{}{}}
}

// keyOf is the row an event is about.
func keyOf(ev *event.Event) (objectKey, bool) {
	m := ev.Meta()
	if m == nil {
		return objectKey{}, false
	}
	return objectKey{cluster: ev.Cluster, group: ev.Resource.Group, kind: ev.Kind, namespace: m.GetNamespace(), name: m.GetName()}, true
}

// involvedKey is the row a core Event (--with-events) is about.
func involvedKey(ev *event.Event) (objectKey, bool) {
	ce, ok := ev.Object.(*corev1.Event)
	if !ok {
		return objectKey{}, false
	}
	ref := ce.InvolvedObject
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return objectKey{}, false
	}
	return objectKey{cluster: ev.Cluster, group: gv.Group, kind: ref.Kind, namespace: ref.Namespace, name: ref.Name}, true
}

// apply records ev; text is how the stream would print it.
func (s *store) apply(ev *event.Event, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events++
	s.prune(ev.Time)
	if ev.Related {
		key, ok := involvedKey(ev)
		if o := s.objects[key]; ok && o != nil {
			o.add(entry{at: ev.Time, text: text}, s.historyCap)
			s.dirty[key] = struct{}{}
		}
		return
	}
	key, ok := keyOf(ev)
	if !ok {
		return
	}
	o := s.objects[key]
	if o == nil || (!o.row.deleted.IsZero() && ev.Type != event.Deleted) {
		// New, or made again under the name of one just deleted (a StatefulSet's pod):
		// a row of its own, with a history of its own.
		o = &object{}
		s.objects[key] = o
	}
	r := &o.row
	r.key, r.resource, r.obj, r.owners = key, ev.Resource, ev.Object, ev.Owners
	if ev.Rollout != nil {
		r.rollout = ev.Rollout
	}
	if ev.Health != nil {
		r.health = ev.Health
	}
	r.version++
	s.dirty[key] = struct{}{}
	switch ev.Type {
	case event.Sync:
		return // a re-delivery: nothing changed, nothing to show
	case event.Added:
		if !ev.InInitialList {
			r.change, r.changed = event.Added, ev.Time
		}
	case event.Modified:
		r.change, r.changed = event.Modified, ev.Time
	case event.Deleted:
		r.change, r.changed, r.deleted, r.reason = event.Deleted, ev.Time, ev.Time, ev.Reason
		s.gone = append(s.gone, key)
	}
	o.add(entry{at: ev.Time, text: text}, s.historyCap)
}

// prune removes the deleted objects struck for strikeFor by now. Called with mu held.
func (s *store) prune(now time.Time) {
	n := 0
	for _, key := range s.gone {
		o := s.objects[key]
		if o == nil || o.row.deleted.IsZero() {
			n++ // made again since: nothing to remove
			continue
		}
		if now.Sub(o.row.deleted) < s.strikeFor {
			break
		}
		delete(s.objects, key)
		s.dirty[key] = struct{}{}
		n++
	}
	s.gone = s.gone[n:]
}

// pull hands the view every object changed since the last pull: its state, or gone
// when it was removed; it reports whether there was any. It also removes the objects
// struck long enough by now.
func (s *store) pull(now time.Time, fn func(key objectKey, r *rowState)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	handed := len(s.dirty) > 0
	for key := range s.dirty {
		if o := s.objects[key]; o != nil {
			r := o.row
			fn(key, &r)
		} else {
			fn(key, nil)
		}
		delete(s.dirty, key)
	}
	return handed
}

// eventCount is the number of events written so far.
func (s *store) eventCount() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events
}

// history is an object's recent history, oldest first, and how many entries it ever
// had; ok is false when the store no longer holds the object.
func (s *store) history(key objectKey) (entries []entry, seen int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects[key]
	if o == nil {
		return nil, 0, false
	}
	return o.entries(), o.seen, true
}

// current is an object's state now.
func (s *store) current(key objectKey) (rowState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects[key]
	if o == nil {
		return rowState{}, false
	}
	return o.row, true
}
