// Package owners follows an object and everything it owns, transitively through
// metadata.ownerReferences (watch TYPE/NAME --owned): which types to watch for children
// of each kind and how the server can filter them (children.go), the live tree of owned
// objects that the informers' filters share (Tree), and where an owner's rollout stands
// (rollout.go).
package owners

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Lookup gets an object's metadata from the server (kind is what an ownerReference
// names); Tree uses it for an owner that no informer has delivered yet.
type Lookup func(ctx context.Context, kind schema.GroupKind, namespace, name string) (metav1.Object, error)

// lookupTimeout bounds one Lookup: past it, the child is left out as if its owner were
// not in the tree.
const lookupTimeout = 5 * time.Second

// Tree is the set of objects owned, transitively, by the followed object (the root),
// shared by the informers of every type followed. Each informer asks it about every
// object it delivers (Accept); an object joins once one of its ownerReferences leads to
// the root.
//
// The informers run on goroutines of their own, so a child may be delivered before its
// owner (a Pod before its ReplicaSet): then the owner is looked up on the server, and it
// and its own chain join the tree, and the owner's event, when its informer delivers it,
// finds it there. Nothing that belongs to the tree is lost for arriving early.
type Tree struct {
	lookup Lookup
	// owning are the kinds that can be links of a chain: the root's and the watched
	// children's. Only those are looked up.
	owning map[schema.GroupKind]bool
	warn   func(format string, args ...any)

	mu      sync.Mutex
	nodes   map[types.UID]*node
	outside map[types.UID]bool // owners found not to lead to the root, never looked up again
	// unsure is set while a chain is followed when a lookup failed for another reason
	// than NotFound: what the chain led to is then not cached as outside.
	unsure bool
	cycles map[types.UID]bool // owners whose cycle was reported
}

// node is one object of the tree and its owner in it (nil for the root).
type node struct {
	owner  event.Owner
	parent *node
}

// NewTree makes the tree of the root object, whose metadata the caller read; owning
// are the kinds of the root and of the children watched.
func NewTree(root metav1.Object, rootKind string, owning []schema.GroupKind, lookup Lookup, warn func(string, ...any)) *Tree {
	t := &Tree{lookup: lookup, owning: map[schema.GroupKind]bool{}, warn: warn,
		nodes: map[types.UID]*node{}, outside: map[types.UID]bool{}, cycles: map[types.UID]bool{}}
	for _, k := range owning {
		t.owning[k] = true
	}
	if warn == nil {
		t.warn = func(string, ...any) {}
	}
	t.nodes[root.GetUID()] = &node{owner: event.Owner{Kind: rootKind, Name: root.GetName()}}
	return t
}

// AcceptRoot is the Accept of the root's informer (which the server filters by the
// root's name): the root is always shown, and if it was deleted and created again, the
// new one is the root of the tree too.
func (t *Tree) AcceptRoot(kind, name string) func(obj any) bool {
	return func(obj any) bool {
		m, err := meta.Accessor(obj)
		if err != nil || m.GetName() != name {
			return false
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if _, ok := t.nodes[m.GetUID()]; !ok {
			t.nodes[m.GetUID()] = &node{owner: event.Owner{Kind: kind, Name: m.GetName()}}
		}
		return true
	}
}

// Accept is the Accept of a child type's informer: whether obj is in the tree, or joins
// it now because one of its owners is. The root is left to its own informer (a child
// type may be the root's type too).
func (t *Tree) Accept(kind string) func(obj any) bool {
	return func(obj any) bool {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		t.unsure = false
		n := t.joinLocked(kind, m, map[types.UID]bool{})
		return n != nil && n.parent != nil
	}
}

// AcceptEvent is the Accept of the core Events' informer (--with-events): Events about
// an object of the tree. An Event may come before the object it is about (a pod's
// Scheduled before the pod's informer delivered the pod): an object of a followed kind
// that the tree does not know yet is looked up, as an owner would be, and joins the tree
// if it belongs to it.
func (t *Tree) AcceptEvent(obj any) bool {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return false
	}
	ref := ev.InvolvedObject
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, in := t.nodes[ref.UID]; in {
		return true
	}
	t.unsure = false
	return t.ownerLocked(metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID},
		ref.Namespace, map[types.UID]bool{}) != nil
}

// joinLocked returns obj's node, adding it if one of its owners leads to the root; nil
// if none does. visited holds the objects of the chain being followed, to tell a cycle.
func (t *Tree) joinLocked(kind string, m metav1.Object, visited map[types.UID]bool) *node {
	uid := m.GetUID()
	if n, ok := t.nodes[uid]; ok {
		return n
	}
	visited[uid] = true
	refs := m.GetOwnerReferences()
	// The controller first: it is the owner that kubectl and the controllers follow.
	for pass := 0; pass < 2; pass++ {
		for _, ref := range refs {
			if isController := ref.Controller != nil && *ref.Controller; isController != (pass == 0) {
				continue
			}
			if parent := t.ownerLocked(ref, m.GetNamespace(), visited); parent != nil {
				n := &node{owner: event.Owner{Kind: kind, Name: m.GetName()}, parent: parent}
				t.nodes[uid] = n
				return n
			}
		}
	}
	return nil
}

// ownerLocked is the node of the owner ref names, looked up on the server if no informer
// delivered it yet; nil if it does not lead to the root.
func (t *Tree) ownerLocked(ref metav1.OwnerReference, namespace string, visited map[types.UID]bool) *node {
	if n, ok := t.nodes[ref.UID]; ok {
		return n
	}
	if t.outside[ref.UID] {
		return nil
	}
	if visited[ref.UID] {
		if !t.cycles[ref.UID] {
			t.cycles[ref.UID] = true
			t.warn("--owned: the ownerReferences of %s %q form a cycle; its chain is not followed", ref.Kind, ref.Name)
		}
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	kind := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	if err != nil || !t.owning[kind] {
		t.outside[ref.UID] = true
		return nil
	}
	// Under the lock, rarely (an owner delivered after its child), and bounded: the
	// other informers wait meanwhile, which keeps the tree's answers in order.
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	owner, err := t.lookup(ctx, kind, namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err), err == nil && owner.GetUID() != ref.UID:
		// A missing middle link: the owner is gone (its child is being garbage
		// collected, or was orphaned). Its child is not part of the tree.
		t.outside[ref.UID] = true
		return nil
	case err != nil:
		t.unsure = true
		return nil // asked again at the child's next change
	}
	n := t.joinLocked(ref.Kind, owner, visited)
	if n == nil && !t.unsure {
		t.outside[ref.UID] = true
	}
	return n
}

// Annotate completes an event of a followed object: its owner chain and, for an owner
// with a rollout, where it stands.
func (t *Tree) Annotate(ev *event.Event) {
	if core, ok := ev.Object.(*corev1.Event); ok && ev.Related {
		t.mu.Lock()
		ev.Owners = chain(t.nodes[core.InvolvedObject.UID])
		t.mu.Unlock()
		return
	}
	m := ev.Meta()
	if m == nil {
		return
	}
	t.mu.Lock()
	n := t.nodes[m.GetUID()]
	t.mu.Unlock()
	if n != nil {
		// The root's chain is empty but not nil: the event is one of --owned's.
		ev.Owners = append([]event.Owner{}, chain(n.parent)...)
	}
	ev.Rollout = Rollout(ev.Object)
	if ev.Rollout != nil && ev.Type == event.Deleted {
		// The last state before the deletion still says how far the rollout got; what
		// matters now is that it is gone.
		ev.Rollout = &event.Rollout{State: event.RolloutDeleted,
			Message: fmt.Sprintf("%s %q was deleted", strings.ToLower(ev.Kind), m.GetName())}
	}
}

// IsRoot reports whether ev is about the followed object itself.
func (t *Tree) IsRoot(ev *event.Event) bool {
	m := ev.Meta()
	if m == nil || ev.Related {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.nodes[m.GetUID()]
	return ok && n.parent == nil
}

// chain is the owners from the root down to n, n included; nil for no node.
func chain(n *node) []event.Owner {
	var owners []event.Owner
	for ; n != nil; n = n.parent {
		owners = append(owners, n.owner)
	}
	for i, j := 0, len(owners)-1; i < j; i, j = i+1, j-1 {
		owners[i], owners[j] = owners[j], owners[i]
	}
	return owners
}
