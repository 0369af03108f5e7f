package owners

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Follow follows one object and everything it owns (watch TYPE/NAME --owned): the
// object's own informer (its type and name) and one informer per child type feed the
// pipeline's owners step (Process), which keeps what is in the tree and says each one's
// owner chain and rollout.
type Follow struct {
	Tree     *Tree
	Root     resource.Resource
	RootName string
	Children []ChildType
	// UntilRollout ends the run when the followed object's rollout completes or fails.
	UntilRollout bool

	root     func(obj any) bool
	children map[string]func(any) bool
}

// ChildType is one type watched for children, with the label selector the server
// filters it by ("" for none); MetadataOnly watches its objects' metadata alone.
type ChildType struct {
	Resource      resource.Resource
	LabelSelector string
	MetadataOnly  bool
}

// FollowOptions say what to follow and how to reach it.
type FollowOptions struct {
	Root      resource.Resource
	Name      string
	Namespace string // the namespace watched (children are looked for there)
	// Children are the types watched for children: first those the root's kind's
	// controller creates (ChildTypes, filtered by the root's selector), then those of
	// --owned-types (watched whole in the namespace). MetadataChildren watches them all
	// for their metadata alone (every namespaced type, when nothing names the kind's).
	Children         []resource.Resource
	MetadataChildren bool
	UntilRollout     bool
	// Given, for messages: the type as the user gave it ("deploy").
	Given    string
	Dynamic  dynamic.Interface
	Metadata metadata.Interface
	Warn     func(format string, args ...any)
}

// NotFoundError says the object to follow does not exist.
type NotFoundError struct{ Err error }

func (e *NotFoundError) Error() string { return e.Err.Error() }

// NewFollow reads the followed object and makes its tree and child types. An object
// that does not exist is a NotFoundError: its children cannot be found without its UID
// and selector (`watch TYPE NAME` without --owned waits for it); another failure to get
// it is returned as it is, for the caller to say.
func NewFollow(ctx context.Context, o FollowOptions) (*Follow, error) {
	namespace := o.Namespace
	if !o.Root.Namespaced {
		namespace = "" // its children are still looked for in the namespace
	}
	obj, err := o.Dynamic.Resource(o.Root.GVR).Namespace(namespace).Get(ctx, o.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		where := ""
		if o.Root.Namespaced {
			where = fmt.Sprintf(" in namespace %q", o.Namespace)
		}
		return nil, &NotFoundError{fmt.Errorf("%s %q not found%s: --owned follows an object that exists; create it first, or watch %s %s without --owned to wait for it",
			o.Root, o.Name, where, o.Given, o.Name)}
	}
	if err != nil {
		return nil, err
	}
	kind := o.Root.GVK.GroupKind()
	selector, err := Selector(kind, obj)
	if err != nil {
		return nil, err
	}
	byKind := map[schema.GroupKind]resource.Resource{kind: o.Root}
	owning := []schema.GroupKind{kind}
	f := &Follow{Root: o.Root, RootName: o.Name, UntilRollout: o.UntilRollout}
	for i, child := range o.Children {
		ct := ChildType{Resource: child, MetadataOnly: o.MetadataChildren}
		// The owner's selector applies to the types its controller creates; types added
		// with --owned-types are watched whole in the namespace.
		if i < len(ChildTypes[kind]) {
			ct.LabelSelector = selector
		}
		f.Children = append(f.Children, ct)
		byKind[child.GVK.GroupKind()] = child
		owning = append(owning, child.GVK.GroupKind())
	}
	lookup := func(ctx context.Context, k schema.GroupKind, namespace, name string) (metav1.Object, error) {
		res, ok := byKind[k]
		if !ok {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: k.Group, Resource: k.Kind}, name)
		}
		return o.Metadata.Resource(res.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	f.Tree = NewTree(obj, o.Root.GVK.Kind, owning, lookup, o.Warn)
	f.init()
	return f, nil
}

func (f *Follow) init() {
	f.root = f.Tree.AcceptRoot(f.Root.GVK.Kind, f.RootName)
	f.children = map[string]func(any) bool{}
	for _, c := range f.Children {
		f.children[c.Resource.GVK.Kind] = f.Tree.Accept(c.Resource.GVK.Kind)
	}
}

// Process is the pipeline's owners step: it keeps the objects of the tree (the root from
// its own informer, the others from their child types' informers, event.Event.Child),
// with each one's owner chain and rollout. Core Events are the related step's.
func (f *Follow) Process(ev *event.Event) {
	if ev.Related {
		return
	}
	accept := f.root
	if ev.Child {
		accept = f.children[ev.Kind]
	}
	if accept == nil || !accept(ev.Object) {
		ev.LeftOut = event.LeftOutUnfollowed
		return
	}
	f.Tree.Annotate(ev)
}

// FollowTree is the Follow of a tree made already (tests).
func FollowTree(tree *Tree, root resource.Resource, name string, children []ChildType) *Follow {
	f := &Follow{Tree: tree, Root: root, RootName: name, Children: children}
	f.init()
	return f
}
