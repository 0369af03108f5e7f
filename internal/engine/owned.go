package engine

import (
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Owned follows one object and everything it owns (watch TYPE/NAME --owned): the
// object's own informer (Config.Resources, Config.Names) and one informer per child
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

// ownedRoot sets the root informer's options (its one name is the root's): every
// version of the root is shown, and joins the tree.
func (o *Owned) ownedRoot(opts *informer.Options) {
	opts.Accept = o.Tree.AcceptRoot(o.RootKind, opts.Names[0])
	opts.Annotate = o.Tree.Annotate
}

// childOptions are the options of a child type's informer, from those of the root's:
// the namespace and the run's shared numbering, limits and conditions; the selector is
// the owner's, and no names.
func (o *Owned) childOptions(root informer.Options, child ChildType) informer.Options {
	opts := root
	opts.Names = nil
	opts.FieldSelector = ""
	opts.LabelSelector = child.LabelSelector
	opts.Accept = o.Tree.Accept(child.Resource.GVK.Kind)
	opts.Annotate = o.Tree.Annotate
	return opts
}

// rolloutEnded is the condition of --until-rollout: an event of the followed object
// whose rollout completed or failed.
func (o *Owned) rolloutEnded(ev *event.Event) bool {
	return o.UntilRollout && ev.Rollout.Done() && o.Tree.IsRoot(ev)
}
