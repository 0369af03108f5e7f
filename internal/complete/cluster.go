// Package complete makes the shell completions of kubeevents' arguments and flag values:
// resource types, object names and namespaces from the cluster (within Timeout, never
// an error in the shell), or from the recordings replay and history read (recording.go),
// contexts, clusters and users from the kubeconfig, and the
// values of -o, --on-full, --color, --event-types and --sink step by step. The command
// registers them with cobra; the candidates are made here.
package complete

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Timeout bounds every completion that talks to the cluster: on an unreachable
// or slow server the shell gets no candidates after this long, rather than hanging.
const Timeout = 2 * time.Second

// NoFiles is the directive of every dynamic completion: candidates or nothing, never
// the shell's file names.
const NoFiles = cobra.ShellCompDirectiveNoFileComp

// Cluster runs fn with a deadline and a short request timeout on the REST
// config. It returns nothing if fn takes longer, fails or panics: a completion never
// prints errors into the shell.
func Cluster(cmd *cobra.Command, configFlags *genericclioptions.ConfigFlags, fn func(ctx context.Context) []cobra.Completion) []cobra.Completion {
	LimitRequestTimeout(configFlags)
	firstContext(configFlags)
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, Timeout)
	defer cancel()
	done := make(chan []cobra.Completion, 1)
	go func() {
		defer func() {
			if recover() != nil {
				done <- nil
			}
		}()
		done <- fn(ctx)
	}()
	select {
	case comps := <-done:
		return comps
	case <-ctx.Done():
		// Stop fn (its requests take ctx) and give it a moment to return: nothing a
		// completion started should outlive it (client-go still logs the cancelled
		// request, which raced with the next command's klog set-up in tests).
		cancel()
		select {
		case <-done:
		case <-time.After(completionGrace):
		}
		return nil
	}
}

// completionGrace is how long a completion past its deadline waits for its requests to
// end once cancelled.
const completionGrace = 500 * time.Millisecond

// firstContext makes a --context of several contexts (a list, a glob) the first one it
// picks, for completions that ask a cluster: types and names are completed from it.
func firstContext(configFlags *genericclioptions.ConfigFlags) {
	if configFlags.Context != nil {
		*configFlags.Context = plan.FirstContext(configFlags, *configFlags.Context)
	}
}

// LimitRequestTimeout caps the timeout of every request made through configFlags at
// Timeout (a shorter --request-timeout stays).
func LimitRequestTimeout(configFlags *genericclioptions.ConfigFlags) {
	wrap := configFlags.WrapConfigFn
	configFlags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if wrap != nil {
			c = wrap(c)
		}
		if c.Timeout <= 0 || c.Timeout > Timeout {
			c.Timeout = Timeout
		}
		c.WarningHandler = rest.NoWarnings{}
		return c
	}
}

// Kubeconfig lists the kubeconfig's contexts, clusters or users (what is
// "context", "cluster" or "user"), without asking the server.
func Kubeconfig(configFlags *genericclioptions.ConfigFlags, what, toComplete string) []cobra.Completion {
	raw, err := configFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil
	}
	var comps []cobra.Completion
	add := func(name, desc string) {
		if strings.HasPrefix(name, toComplete) {
			comps = append(comps, cobra.CompletionWithDesc(name, desc))
		}
	}
	switch what {
	case "context":
		for name, c := range raw.Contexts {
			desc := "cluster " + c.Cluster + ", user " + c.AuthInfo
			if c.Namespace != "" {
				desc += ", namespace " + c.Namespace
			}
			if name == raw.CurrentContext {
				desc = "(current) " + desc
			}
			add(name, desc)
		}
	case "cluster":
		for name, c := range raw.Clusters {
			add(name, c.Server)
		}
	case "user":
		for name := range raw.AuthInfos {
			add(name, "")
		}
	}
	sort.Strings(comps)
	return comps
}

// WatchArgs completes `watch`'s arguments: the first is a comma-separated list
// of resource types, the rest are object names of those types.
func WatchArgs(configFlags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if typ, name, ok := strings.Cut(toComplete, "/"); ok && len(args) == 0 {
			// TYPE/NAME, as kubectl users type it (watch deployment/web --owned).
			return Cluster(cmd, configFlags, func(ctx context.Context) []cobra.Completion {
				return prefixed(typ+"/", ObjectNames(ctx, cmd, configFlags, []string{typ}, name))
			}), NoFiles
		}
		if len(args) == 0 {
			return Cluster(cmd, configFlags, func(context.Context) []cobra.Completion {
				return Types(configFlags, toComplete)
			}), NoFiles
		}
		return Cluster(cmd, configFlags, func(ctx context.Context) []cobra.Completion {
			return ObjectNames(ctx, cmd, configFlags, args, toComplete)
		}), NoFiles
	}
}

// prefixed puts prefix before every completion.
func prefixed(prefix string, comps []cobra.Completion) []cobra.Completion {
	for i, c := range comps {
		comps[i] = prefix + c
	}
	return comps
}

// Types completes the last element of a comma-separated list of resource types
// from the (disk-cached) discovery information: every type that can be listed and
// watched, by plural name and by short name. Plural names found in more than one API
// group, and any name once a '.' is typed, are offered as plural.group.
func Types(configFlags *genericclioptions.ConfigFlags, toComplete string) []cobra.Completion {
	prefix, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	typed := map[string]bool{}
	for _, t := range strings.Split(prefix, ",") {
		typed[strings.TrimSpace(t)] = true
	}
	disco, err := configFlags.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	comps := typeCandidates(preferredResources(disco), prefix, last, typed)
	if len(comps) == 0 && last != "" {
		// Perhaps a type created since the cache was written: look again, as kubectl's
		// RESTMapper does for a type it does not know.
		disco.Invalidate()
		comps = typeCandidates(preferredResources(disco), prefix, last, typed)
	}
	return comps
}

// preferredResources is discovery's preferred version of every resource; a group whose
// discovery failed is left out, the others are still offered.
func preferredResources(disco discovery.DiscoveryInterface) []*metav1.APIResourceList {
	lists, _ := disco.ServerPreferredResources()
	return lists
}

// typeCandidates makes the completions for the last element of a type list from
// discovery's resource lists.
func typeCandidates(lists []*metav1.APIResourceList, prefix, last string, typed map[string]bool) []cobra.Completion {
	type resource struct {
		gv  schema.GroupVersion
		api metav1.APIResource
	}
	var resources []resource
	groupsOf := map[string]int{} // plural name -> number of groups serving it
	for _, list := range lists {
		if list == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") {
				continue
			}
			resources = append(resources, resource{gv, r})
			groupsOf[r.Name]++
		}
	}
	qualified := strings.Contains(last, ".")
	seen := map[string]bool{}
	var comps []cobra.Completion
	add := func(name, desc string) {
		if seen[name] || typed[name] || !strings.HasPrefix(name, last) {
			return
		}
		seen[name] = true
		comps = append(comps, cobra.CompletionWithDesc(prefix+name, desc))
	}
	for _, r := range resources {
		full := r.api.Name
		if r.gv.Group != "" {
			full += "." + r.gv.Group
		}
		desc := r.api.Kind + " (" + r.gv.String() + ")"
		switch {
		case qualified || (groupsOf[r.api.Name] > 1 && r.gv.Group != ""):
			add(full, desc)
		default:
			add(r.api.Name, desc)
		}
		for _, short := range r.api.ShortNames {
			add(short, desc+", short for "+full)
		}
	}
	// Categories (all, and those of custom resources) expand to their types.
	if !qualified {
		for _, r := range resources {
			for _, category := range r.api.Categories {
				add(category, "category: the types of `kubectl get "+category+"`")
			}
		}
	}
	sort.Strings(comps)
	return comps
}

// ObjectNames lists the names of the objects of the types in args[0], in the
// namespace and with the selectors the command line gives, leaving out names already
// given.
func ObjectNames(ctx context.Context, cmd *cobra.Command, configFlags *genericclioptions.ConfigFlags, args []string, toComplete string) []cobra.Completion {
	mapper, err := configFlags.ToRESTMapper()
	if err != nil {
		return nil
	}
	disco, err := configFlags.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	namespace, _, err := configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil
	}
	opts := metav1.ListOptions{}
	opts.LabelSelector, _ = cmd.Flags().GetString("selector")
	opts.FieldSelector, _ = cmd.Flags().GetString("field-selector")
	given := map[string]bool{}
	for _, name := range args[1:] {
		given[name] = true
	}
	var comps []cobra.Completion
	seen := map[string]bool{}
	for _, t := range strings.Split(args[0], ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		res, err := resource.Resolve(t, mapper, disco)
		if err != nil {
			continue
		}
		ns := namespace
		if !res.Namespaced {
			ns = ""
		} else if all, _ := cmd.Flags().GetBool("all-namespaces"); all {
			continue // names of namespaced types cannot be used with -A
		}
		for _, c := range ListNames(ctx, configFlags, res.GVR, ns, opts, toComplete, given) {
			if !seen[c] {
				seen[c] = true
				comps = append(comps, c)
			}
		}
	}
	sort.Strings(comps)
	return comps
}

// ListNames lists the names of gvr's objects in namespace ("" for all or cluster-scoped)
// that start with toComplete, through the metadata API (no object bodies).
func ListNames(ctx context.Context, configFlags *genericclioptions.ConfigFlags, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, toComplete string, skip map[string]bool) []cobra.Completion {
	restConfig, err := configFlags.ToRESTConfig()
	if err != nil {
		return nil
	}
	client, err := metadata.NewForConfig(restConfig)
	if err != nil {
		return nil
	}
	var list *metav1.PartialObjectMetadataList
	if namespace == "" {
		list, err = client.Resource(gvr).List(ctx, opts)
	} else {
		list, err = client.Resource(gvr).Namespace(namespace).List(ctx, opts)
	}
	if err != nil {
		return nil
	}
	var names []cobra.Completion
	for _, item := range list.Items {
		if strings.HasPrefix(item.Name, toComplete) && !skip[item.Name] {
			names = append(names, item.Name)
		}
	}
	sort.Strings(names)
	return names
}

// NamespaceList completes namespaces from the cluster; with list, -n's comma
// list: the last element, after those given.
func NamespaceList(configFlags *genericclioptions.ConfigFlags, list bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); list && i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		skip := map[string]bool{}
		for _, ns := range strings.Split(done, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				skip[ns] = true
			}
		}
		names := Cluster(cmd, configFlags, func(ctx context.Context) []cobra.Completion {
			return ListNames(ctx, configFlags, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", metav1.ListOptions{}, last, skip)
		})
		for i := range names {
			names[i] = done + names[i]
		}
		return names, NoFiles
	}
}

// Contexts completes --context from the kubeconfig: a comma list of contexts (watch
// several clusters), whose last one is completed; those already given are not offered
// again.
func Contexts(configFlags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		given := map[string]bool{}
		for _, c := range strings.Split(done, ",") {
			given[strings.TrimSpace(c)] = true
		}
		var comps []cobra.Completion
		for _, c := range Kubeconfig(configFlags, "context", last) {
			if name, _, _ := strings.Cut(c, "\t"); !given[name] {
				comps = append(comps, done+c)
			}
		}
		return comps, NoFiles
	}
}
