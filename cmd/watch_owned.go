package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"

	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// ownedFlags are the flags of `watch TYPE/NAME --owned`, and what Connect resolves them
// to.
type ownedFlags struct {
	Owned        bool
	Types        []string // --owned-types: types watched for children besides the defaults
	UntilRollout bool

	children []resource.Resource // set by connectOwned: the default types, then --owned-types
}

func (f *ownedFlags) addFlags(c *cobra.Command, configFlags *genericclioptions.ConfigFlags) {
	fs := c.Flags()
	fs.BoolVar(&f.Owned, "owned", false, "with TYPE/NAME: also follow every object it owns, transitively (a Deployment's ReplicaSets and their pods, a CronJob's Jobs and their pods, ...)")
	fs.StringSliceVar(&f.Types, "owned-types", nil, "with --owned: also watch these types for children (e.g. a custom controller's resources), besides the defaults of the owner's kind")
	fs.BoolVar(&f.UntilRollout, "until-rollout", false, "with --owned: exit 0 once the object's rollout completes, 1 when it fails (as kubectl rollout status; a Job: complete or failed)")
	_ = c.RegisterFlagCompletionFunc("owned-types", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return clusterCompletion(cmd, configFlags, func(context.Context) []cobra.Completion {
			return completeTypes(configFlags, toComplete)
		}), noFiles
	})
}

// parseTypeSlashName reads the one TYPE/NAME argument, as kubectl takes it.
func (o *WatchOptions) parseTypeSlashName(typ, name string, rest []string) error {
	switch {
	case len(rest) > 0:
		return usageErrorf("TYPE/NAME %s/%s is one object: give no other arguments after it (for several, kubeevents watch TYPE NAME...)", typ, name)
	case typ == "" || name == "" || strings.Contains(typ, ",") || strings.Contains(name, "/"):
		return usageErrorf("%q: give one object as TYPE/NAME, e.g. deployment/web", typ+"/"+name)
	}
	return nil
}

// validateOwned checks the flags of --owned against the others, before anything
// connects.
func (o *WatchOptions) validateOwned() error {
	f := o.Owned
	if !f.Owned {
		switch {
		case len(f.Types) > 0:
			return usageErrorf("--owned-types applies to --owned only; add --owned")
		case f.UntilRollout:
			return usageErrorf("--until-rollout follows a rollout through what the object owns; add --owned (kubeevents watch deployment/web --owned --until-rollout)")
		}
		return nil
	}
	switch {
	case len(o.TypeArgs) != 1 || len(o.Names) != 1:
		return usageErrorf("--owned follows one object: give it as TYPE/NAME, e.g. kubeevents watch deployment/web --owned")
	case o.AllNamespaces:
		return usageErrorf("--owned follows one object in one namespace: drop -A/--all-namespaces (use -n NAMESPACE)")
	case o.LabelSelector != "" || o.FieldSelector != "":
		return usageErrorf("--owned selects the objects by their owner (and the server filters them by the owner's selector): drop -l/--selector and --field-selector")
	case f.UntilRollout && (o.Until != "" || o.UntilDeleted):
		return usageErrorf("--until-rollout cannot be combined with --until or --until-deleted: give one condition")
	case f.UntilRollout && o.MetadataOnly:
		return usageErrorf("--until-rollout reads the object's status, which --metadata-only leaves out: drop one of them")
	}
	return nil
}

// connectOwned resolves the types watched for children: the defaults of the owner's
// kind, then --owned-types.
func (o *WatchOptions) connectOwned(mapper meta.RESTMapper, disco discovery.DiscoveryInterface) error {
	if !o.Owned.Owned {
		return nil
	}
	root := o.resources[0]
	kind := root.GVK.GroupKind()
	if o.Owned.UntilRollout && !owners.HasRollout(kind) {
		return usageErrorf("--until-rollout applies to deployments, statefulsets, daemonsets and jobs; %s have no rollout to wait for (use --until with a jq condition)", root)
	}
	seen := map[schema.GroupVersionResource]bool{}
	for _, arg := range append(append([]string{}, owners.ChildTypes[kind]...), o.Owned.Types...) {
		res, err := resource.Resolve(strings.TrimSpace(arg), mapper, disco)
		if err != nil {
			if _, ok := err.(*resource.UnknownTypeError); ok {
				return usageErrorf("--owned-types: %v", err)
			}
			if _, ok := err.(*resource.NotWatchableError); ok {
				return usageErrorf("--owned-types: %v", err)
			}
			return informer.APIError(err, "discover", resource.Resource{})
		}
		if !seen[res.GVR] {
			seen[res.GVR] = true
			o.Owned.children = append(o.Owned.children, res)
		}
	}
	if len(o.Owned.children) == 0 {
		return usageErrorf("%s own nothing by default: name the types of their children with --owned-types TYPE[,TYPE...], or drop --owned", root)
	}
	return nil
}

// ownedConfig reads the followed object and makes the engine's Owned: its tree and the
// child types with their selectors. An object that does not exist is an error (exit 1):
// its children cannot be found without its UID and selector; `watch TYPE NAME`
// without --owned waits for it.
func (o *WatchOptions) ownedConfig(ctx context.Context, clients informer.Clients) (*engine.Owned, error) {
	root, name := o.resources[0], o.Names[0]
	namespace := o.namespace
	if !root.Namespaced {
		namespace = "" // its children are still looked for in the namespace
	}
	obj, err := clients.Dynamic.Resource(root.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		where := ""
		if root.Namespaced {
			where = fmt.Sprintf(" in namespace %q", o.namespace)
		}
		return nil, fmt.Errorf("%s %q not found%s: --owned follows an object that exists; create it first, or watch %s %s without --owned to wait for it",
			root, name, where, o.TypeArgs[0], name)
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
	cfg := &engine.Owned{RootKind: root.GVK.Kind, UntilRollout: o.Owned.UntilRollout}
	for i, child := range o.Owned.children {
		ct := engine.ChildType{Resource: child}
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
	cfg.Tree = owners.NewTree(obj, root.GVK.Kind, owning, lookup, o.warnf)
	return cfg, nil
}

// followed says what --owned follows, for the line at start-up ("deployments.apps web
// in shop and what it owns: replicasets.apps, pods").
func (o *WatchOptions) followed() string {
	children := make([]string, len(o.Owned.children))
	for i, c := range o.Owned.children {
		children[i] = c.String()
	}
	where := " in " + o.namespace
	if !o.resources[0].Namespaced {
		where = ""
	}
	return fmt.Sprintf("%s %s%s and what it owns: %s", o.resources[0], o.Names[0], where, strings.Join(children, ", "))
}
