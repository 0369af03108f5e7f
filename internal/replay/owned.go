package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/recording"
)

// ownedTree is --owned on a recording: the followed object (Types[0]/Names[0]) and what
// it owns, transitively, through the recorded objects' ownerReferences, with package
// owners' Tree (the one a watch uses) looking owners up in the recording rather than on
// a server.
//
// A watch's informers list their types one after the other, so a recording may hold a
// pod before the ReplicaSet that owns it. Files are therefore read once before the
// replay (prepare) for the metadata of every object of the kinds followed, so that each
// owner is known when its child comes; the standard input can be read once only, and
// there a child that comes before its owner is taken in at its next change.
type ownedTree struct {
	s        *Source
	root     typeArg
	rootName string
	rootKind schema.GroupKind // once known: from the scheme for a built-in type, else from the first record of its type
	children []typeArg        // the types followed for children: owners.ChildTypes of the root's kind
	owning   []schema.GroupKind
	tree     *owners.Tree // nil until the root is known
	warn     func(format string, args ...any)

	// index is the metadata of every object of the kinds followed (the latest version
	// read); complete once prepare read every input: what it lacks is not recorded.
	index    map[indexKey]*metav1.PartialObjectMetadata
	complete bool
	// roots are the root's versions prepare found (it may have been deleted and created
	// again, with another UID).
	roots []*metav1.PartialObjectMetadata
}

type indexKey struct {
	kind            schema.GroupKind
	namespace, name string
}

func newOwnedTree(s *Source, warn func(format string, args ...any)) *ownedTree {
	o := &ownedTree{s: s, root: s.types[0], rootName: s.opts.Select.Names[0], warn: warn,
		index: map[indexKey]*metav1.PartialObjectMetadata{}}
	if gk, ok := builtinKind(o.root); ok {
		o.setRootKind(gk)
	}
	return o
}

// setRootKind learns the root's kind, and with it the types followed for children.
func (o *ownedTree) setRootKind(gk schema.GroupKind) {
	o.rootKind = gk
	o.owning = []schema.GroupKind{gk}
	for _, res := range owners.ChildTypes[gk] {
		t := parseType(res, res)
		o.children = append(o.children, t)
		if k, ok := builtinKind(t); ok {
			o.owning = append(o.owning, k)
		}
	}
}

// builtinKind is the kind of a built-in type as typed (deploy, deployments.apps, pod),
// from client-go's scheme; false for a type it does not know (a custom resource).
func builtinKind(t typeArg) (schema.GroupKind, bool) {
	var found []schema.GroupKind
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || gvk.Group == "extensions" || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		if t.matches(plural, gvk.Kind) && !slices.Contains(found, gvk.GroupKind()) {
			found = append(found, gvk.GroupKind())
		}
	}
	if len(found) != 1 {
		return schema.GroupKind{}, false
	}
	return found[0], true
}

// isChild reports whether records of resource gvr, of kind, may be of what the root owns.
func (o *ownedTree) isChild(gvr schema.GroupVersionResource, kind string) bool {
	return slices.ContainsFunc(o.children, func(t typeArg) bool { return t.matches(gvr, kind) })
}

// prepare reads the inputs once, when they are all files, for the metadata of the
// objects of the kinds followed, and makes the tree of the root.
func (o *ownedTree) prepare(ctx context.Context) error {
	if slices.ContainsFunc(o.s.inputs, func(in recording.Input) bool { return in.Path == "-" }) {
		return nil // read once: the index is made as the replay goes
	}
	opts := o.s.opts.Read
	opts.Follow, opts.SkipBadLines = false, true // what the replay reads; its bad lines are its to report
	r, err := recording.Open(o.s.inputs, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if len(o.s.opts.Select.Clusters) > 0 && !slices.Contains(o.s.opts.Select.Clusters, rec.Cluster) {
			continue
		}
		gvk, err := o.s.decoder.kindOf(rec.Resource, rec.Object)
		if err != nil {
			continue
		}
		if o.rootKind.Empty() && o.root.matches(rec.Resource, gvk.Kind) {
			o.setRootKind(gvk.GroupKind())
		}
		if !slices.Contains(o.owning, gvk.GroupKind()) {
			continue
		}
		var m metav1.PartialObjectMetadata
		if json.Unmarshal(rec.Object, &m) != nil {
			continue
		}
		o.remember(gvk.GroupKind(), &m)
		if gvk.GroupKind() == o.rootKind && m.Name == o.rootName && o.s.namespaceSelected(&m) &&
			!slices.ContainsFunc(o.roots, func(r *metav1.PartialObjectMetadata) bool { return r.UID == m.UID }) {
			o.roots = append(o.roots, &m)
		}
	}
	o.complete = true
	if len(o.roots) == 0 {
		return fmt.Errorf("--owned: %s %q is not in the recording", o.root.given, o.rootName)
	}
	o.newTree(o.roots[0])
	for _, root := range o.roots[1:] {
		o.tree.AcceptRoot(o.rootKind.Kind, o.rootName)(root)
	}
	return nil
}

// remember keeps what the tree needs of an object's metadata.
func (o *ownedTree) remember(kind schema.GroupKind, m metav1.Object) {
	o.index[indexKey{kind: kind, namespace: m.GetNamespace(), name: m.GetName()}] = &metav1.PartialObjectMetadata{
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(), OwnerReferences: m.GetOwnerReferences()}}
}

// errNotYet says an owner is not in the recording so far: the tree asks again at the
// child's next change.
var errNotYet = errors.New("not recorded so far")

func (o *ownedTree) newTree(root metav1.Object) {
	lookup := func(_ context.Context, kind schema.GroupKind, namespace, name string) (metav1.Object, error) {
		if m, ok := o.index[indexKey{kind: kind, namespace: namespace, name: name}]; ok {
			return m, nil
		}
		if o.complete {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: kind.Group, Resource: kind.Kind}, name)
		}
		return nil, errNotYet
	}
	o.tree = owners.NewTree(root, o.rootKind.Kind, o.owning, lookup, o.warn)
}

// accept reports whether an object of the root's type or of a child type (role) belongs
// to the tree, taking it in if it does.
func (o *ownedTree) accept(role role, ev *event.Event, m metav1.Object) bool {
	kind := schema.GroupKind{Group: ev.Resource.Group, Kind: ev.Kind}
	if role == selected && o.rootKind.Empty() {
		o.setRootKind(kind)
	}
	if slices.Contains(o.owning, kind) {
		o.remember(kind, m)
	}
	switch {
	case role == selected && m.GetName() == o.rootName && kind == o.rootKind:
		if o.tree == nil {
			o.newTree(m)
		}
		return o.tree.AcceptRoot(ev.Kind, o.rootName)(ev.Object)
	case role == child && o.tree != nil:
		return o.tree.Accept(ev.Kind)(ev.Object)
	}
	return false
}
