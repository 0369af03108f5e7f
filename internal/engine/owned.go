package engine

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Owned follows one object and everything it owns (watch TYPE/NAME --owned): the
// object's own informer (its type and name) and one informer per child
// type, all filtered by the same tree of owned objects.
type Owned struct {
	Tree     *owners.Tree
	RootKind string
	Children []ChildType
	// UntilRollout ends the run when the followed object's rollout completes (no error)
	// or fails (RolloutFailedError).
	UntilRollout bool
}

// ChildType is one type watched for children, with the label selector the server
// filters it by ("" for none).
type ChildType struct {
	Resource      resource.Resource
	LabelSelector string
}

// RolloutFailedError says the followed object's rollout failed (a Deployment past its
// progress deadline, a failed Job) and --until-rollout ended the run on it.
type RolloutFailedError struct{ Message string }

func (e *RolloutFailedError) Error() string { return "rollout failed: " + e.Message }

// rolloutEnded is the condition of --until-rollout: an event of the followed object
// whose rollout completed or failed.
func (o *Owned) rolloutEnded(ev *event.Event) bool {
	return o.UntilRollout && ev.Rollout.Done() && o.Tree.IsRoot(ev)
}

// ownedConfig reads the followed object and makes the run's Owned: its tree and the
// child types with their selectors. An object that does not exist is an error (exit 1):
// its children cannot be found without its UID and selector; `watch TYPE NAME`
// without --owned waits for it.
func (w *session) ownedConfig(ctx context.Context, clients informer.Clients) (*Owned, error) {
	c := w.plan.Clusters[0]
	root, name := c.Resources[0], w.cfg.Watch.Names[0]
	namespace := c.Namespace()
	if !root.Namespaced {
		namespace = "" // its children are still looked for in the namespace
	}
	obj, err := clients.Dynamic.Resource(root.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		where := ""
		if root.Namespaced {
			where = fmt.Sprintf(" in namespace %q", c.Namespace())
		}
		return nil, fmt.Errorf("%s %q not found%s: --owned follows an object that exists; create it first, or watch %s %s without --owned to wait for it",
			root, name, where, w.cfg.Watch.Types[0], name)
	}
	if err != nil {
		return nil, informer.APIError(err, "get", root)
	}
	kind := root.GVK.GroupKind()
	selector, err := owners.Selector(kind, obj)
	if err != nil {
		return nil, err
	}
	byKind := map[schema.GroupKind]resource.Resource{kind: root}
	owning := []schema.GroupKind{kind}
	cfg := &Owned{RootKind: root.GVK.Kind, UntilRollout: w.cfg.Watch.UntilRollout}
	for i, child := range c.Children {
		ct := ChildType{Resource: child}
		// The owner's selector applies to the types its controller creates; types added
		// with --owned-types are watched whole in the namespace.
		if i < len(owners.ChildTypes[kind]) {
			ct.LabelSelector = selector
		}
		cfg.Children = append(cfg.Children, ct)
		byKind[child.GVK.GroupKind()] = child
		owning = append(owning, child.GVK.GroupKind())
	}
	lookup := func(ctx context.Context, k schema.GroupKind, namespace, name string) (metav1.Object, error) {
		res, ok := byKind[k]
		if !ok {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: k.Group, Resource: k.Kind}, name)
		}
		return clients.Metadata.Resource(res.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	cfg.Tree = owners.NewTree(obj, root.GVK.Kind, owning, lookup, w.warnf)
	return cfg, nil
}

// followed says what --owned follows, for the line at start-up ("deployments.apps web
// in shop and what it owns: replicasets.apps, pods").
func (w *session) followed() string {
	c := w.plan.Clusters[0]
	children := make([]string, len(c.Children))
	for i, child := range c.Children {
		children[i] = child.String()
	}
	where := " in " + c.Namespace()
	if !c.Resources[0].Namespaced {
		where = ""
	}
	return fmt.Sprintf("%s %s%s and what it owns: %s", c.Resources[0], w.cfg.Watch.Names[0], where, strings.Join(children, ", "))
}
