package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// unresolvedType is a type argument that one cluster does not serve (or cannot watch).
type unresolvedType struct {
	arg string
	err error
}

// connect reads one cluster's REST config and namespaces from getter and resolves the
// types against its discovery. With perCluster, a type the cluster does not serve is
// returned in unresolved (one of several clusters may lack a CRD) rather than an error.
func connect(req Request, getter genericclioptions.RESTClientGetter, perCluster bool) (_ *Cluster, unresolved []unresolvedType, _ error) {
	config, err := getter.ToRESTConfig()
	if err != nil {
		return nil, nil, KubeconfigError(err)
	}
	config.WarningHandler = rest.NoWarnings{}
	c := &Cluster{Config: config}
	if !req.AllNamespaces {
		ns, _, err := getter.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, nil, KubeconfigError(err)
		}
		if c.Namespaces, err = namespaces(ns, req.NamespaceGiven); err != nil {
			return nil, nil, err
		}
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return nil, nil, KubeconfigError(err)
	}
	disco, err := getter.ToDiscoveryClient()
	if err != nil {
		return nil, nil, KubeconfigError(err)
	}
	// Discovery once, before the REST mapper: after a failure the mapper tries again, so a
	// server that never answers would be waited for twice the request's time limit. What
	// this fetches is what the mapper needs, and is then cached.
	if _, _, err := disco.ServerGroupsAndResources(); err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, nil, informer.APIError(err, "discover", resource.Resource{})
	}
	seen := map[schema.GroupVersionResource]bool{}
	if req.AllTypes {
		if c.Resources, err = ServedTypes(disco); err != nil {
			return nil, nil, informer.APIError(err, "discover", resource.Resource{})
		}
	}
	for _, arg := range expandCategories(req.Types, disco) {
		res, err := resource.Resolve(arg, mapper, disco)
		if err != nil {
			var unknown *resource.UnknownTypeError
			var notWatchable *resource.NotWatchableError
			if errors.As(err, &unknown) || errors.As(err, &notWatchable) {
				if perCluster {
					unresolved = append(unresolved, unresolvedType{arg: arg, err: err})
					continue
				}
				return nil, nil, usage(err)
			}
			return nil, nil, informer.APIError(err, "discover", resource.Resource{})
		}
		if !seen[res.GVR] {
			seen[res.GVR] = true
			c.Resources = append(c.Resources, res)
		}
	}
	if err := checkNames(req, c.Resources); err != nil {
		return nil, nil, err
	}
	if req.Owned && len(c.Resources) > 0 {
		if c.Children, err = ownedChildren(req, c.Resources[0], mapper, disco); err != nil {
			return nil, nil, err
		}
		if len(c.Children) == 0 {
			// Nothing says what the kind's controller creates: every namespaced type may
			// hold its children, watched for their metadata alone.
			if c.Children, err = everyNamespacedType(disco); err != nil {
				return nil, nil, err
			}
			c.ChildrenFound = true
		}
	}
	if req.Health {
		c.StatusWritten = statusWritten(disco, append(slices.Clip(c.Resources), c.Children...))
	}
	return c, unresolved, nil
}

// statusWritten are the custom resources of resources whose definition has a status
// subresource, as discovery lists them ("myapps/status"): the API server keeps their
// status out of what users write, so until their controller writes one they have none.
func statusWritten(disco discovery.DiscoveryInterface, resources []resource.Resource) []schema.GroupResource {
	var out []schema.GroupResource
	lists := map[schema.GroupVersion]*metav1.APIResourceList{}
	for _, res := range resources {
		gv := res.GVR.GroupVersion()
		if scheme.Scheme.IsGroupRegistered(gv.Group) {
			continue // a built-in type: kstatus knows it
		}
		list, ok := lists[gv]
		if !ok {
			list, _ = disco.ServerResourcesForGroupVersion(gv.String())
			lists[gv] = list
		}
		if list != nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == res.GVR.Resource+"/status" }) {
			out = append(out, res.GVR.GroupResource())
		}
	}
	return out
}

// namespaces reads the namespace the kubeconfig's loader gives (-n, or the context's):
// -n takes a comma list, in order, without repeats. A namespace that cannot exist is
// refused, as the API server would refuse it (a DNS-1123 label), rather than watched
// forever for objects that never come.
func namespaces(ns string, given bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.Split(ns, ",") {
		if n = strings.TrimSpace(n); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = []string{ns} // "" or only commas: refused below
	}
	for _, n := range out {
		if len(validation.IsDNS1123Label(n)) == 0 {
			continue
		}
		const rule = "use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"
		if given {
			return nil, usagef("-n/--namespace %q is not a valid namespace name: %s", n, rule)
		}
		return nil, usagef("namespace %q of the kubeconfig's context is not a valid namespace name: %s; fix the context or give -n", n, rule)
	}
	return out, nil
}

// CheckNamespaceFlag applies namespaces' rule to -n before anything connects.
func CheckNamespaceFlag(ns string) error {
	_, err := namespaces(ns, true)
	return err
}

// expandCategories replaces a category the server's discovery lists ("all", as
// `kubectl get all` reads it, or a CRD's own) by the types in it, as kubectl's resource
// builder does (before it looks the argument up as a type).
func expandCategories(types []string, disco discovery.DiscoveryInterface) []string {
	expander := restmapper.NewDiscoveryCategoryExpander(disco)
	var out []string
	for _, arg := range types {
		grs, ok := expander.Expand(strings.ToLower(arg))
		if !ok || len(grs) == 0 {
			out = append(out, arg)
			continue
		}
		for _, gr := range grs {
			out = append(out, gr.String())
		}
	}
	return out
}

// checkNames refuses NAME arguments that no object of the watched types can have, and
// names with -A for namespaced types (a name is looked up in one namespace, as kubectl
// does); cluster-scoped types take names with or without -A.
func checkNames(req Request, resources []resource.Resource) error {
	for _, res := range resources {
		if req.AllNamespaces && len(req.Names) > 0 && res.Namespaced {
			return usagef("NAME arguments cannot be used with -A/--all-namespaces: %s are namespaced, and names are looked up in one namespace (use -n NAMESPACE)", res)
		}
		for _, name := range req.Names {
			if err := CheckObjectName(res, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckObjectName applies the API server's rule for the names of res's objects: a
// DNS-1123 subdomain for nearly every type (custom resources too); RBAC objects may be
// named with any path segment ("system:node-proxier").
func CheckObjectName(res resource.Resource, name string) error {
	if res.GVR.Group == rbacv1.GroupName {
		if msgs := content.IsPathSegmentName(name); len(msgs) > 0 {
			return usagef("NAME %q is not a valid name for %s: %s", name, res, strings.Join(msgs, "; "))
		}
		return nil
	}
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return usagef("NAME %q is not a valid name for %s: use at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", name, res)
	}
	return nil
}

// ownedChildren resolves the types watched for the children of root (--owned): the
// defaults of its kind (or what its health rule says its controller creates: a type the
// cluster does not serve is left out), then --owned-types. None when nothing says.
func ownedChildren(req Request, root resource.Resource, mapper meta.RESTMapper, disco discovery.DiscoveryInterface) ([]resource.Resource, error) {
	kind := root.GVK.GroupKind()
	if req.UntilRollout && !owners.HasRollout(kind) {
		return nil, usagef("--until-rollout applies to deployments, statefulsets, daemonsets and jobs; %s have no rollout to wait for (use --until-ready, which waits for any kind's health)", root)
	}
	defaults, fromRule := owners.ChildTypes[kind], false
	if len(defaults) == 0 && req.HealthOwns != nil {
		defaults, fromRule = req.HealthOwns(kind), true
	}
	var children []resource.Resource
	seen := map[schema.GroupVersionResource]bool{}
	for i, arg := range append(append([]string{}, defaults...), req.OwnedTypes...) {
		res, err := resource.Resolve(strings.TrimSpace(arg), mapper, disco)
		if err != nil {
			var unknown *resource.UnknownTypeError
			var notWatchable *resource.NotWatchableError
			switch {
			case (errors.As(err, &unknown) || errors.As(err, &notWatchable)) && fromRule && i < len(defaults):
				continue // a rule's type whose definition this cluster lacks
			case errors.As(err, &unknown) || errors.As(err, &notWatchable):
				return nil, usagef("--owned-types: %v", err)
			}
			return nil, informer.APIError(err, "discover", resource.Resource{})
		}
		if !seen[res.GVR] {
			seen[res.GVR] = true
			children = append(children, res)
		}
	}
	return children, nil
}

// everyNamespacedType is every namespaced type the server serves that can be listed and
// watched, but the core Events (of --with-events): what --owned watches, metadata only,
// for the children of a kind that nothing says the children of. A group whose discovery
// failed is left out.
func everyNamespacedType(disco discovery.DiscoveryInterface) ([]resource.Resource, error) {
	lists, err := disco.ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, informer.APIError(err, "discover", resource.Resource{})
	}
	var out []resource.Resource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") ||
				r.Name == "events" && (gv.Group == "" || gv.Group == "events.k8s.io") {
				continue
			}
			out = append(out, resource.Resource{GVR: gv.WithResource(r.Name), GVK: gv.WithKind(r.Kind), Namespaced: true})
		}
	}
	return out, nil
}

// KubeconfigError makes a kubeconfig problem one line with a hint.
func KubeconfigError(err error) error {
	msg := oneLine(err)
	switch {
	case strings.Contains(msg, "no such file or directory"):
		return fmt.Errorf("cannot load kubeconfig: %s (check --kubeconfig and $KUBECONFIG)", msg)
	case strings.Contains(msg, "invalid configuration"), strings.Contains(msg, "yaml"), strings.Contains(msg, "json"):
		return fmt.Errorf("cannot use kubeconfig: %s (fix the file, or pick another with --kubeconfig)", msg)
	}
	return informer.APIError(err, "discover", resource.Resource{})
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// ServedTypes are the types the server serves that can be listed and watched, each in
// its preferred version, for --all-types: built-in and custom, ConfigMaps and Secrets
// too (not kubectl's category "all"). The core Events are watched once, as v1 events
// (events.k8s.io serves the same objects again).
func ServedTypes(disco discovery.DiscoveryInterface) ([]resource.Resource, error) {
	lists, err := discovery.ServerPreferredResources(disco)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	var out []resource.Resource
	for _, list := range lists {
		gv, perr := schema.ParseGroupVersion(list.GroupVersion)
		if perr != nil || gv.Group == "events.k8s.io" {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") {
				continue // a subresource, or what cannot be watched
			}
			out = append(out, resource.Resource{GVR: gv.WithResource(r.Name), GVK: gv.WithKind(r.Kind), Namespaced: r.Namespaced})
		}
	}
	return out, nil
}
