package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/suggest"
)

// clusterConn is one of several clusters watched at once (--context a,b, a glob,
// --all-contexts): its context, and what Connect found there.
type clusterConn struct {
	name       string
	restConfig *rest.Config
	namespace  string
	resources  []resource.Resource
	// options are the command's options as Connect completed them for this cluster
	// alone: what checks the namespace and reads its CRDs' columns.
	options *WatchOptions
}

// severalContexts reports whether --context (or --all-contexts) asks for more than one
// context by its form: a comma list or a glob. One plain name is today's --context,
// left to client-go as it always was.
func severalContexts(spec string, all bool) bool {
	return all || strings.Contains(spec, ",") || isPattern(spec)
}

// isPattern reports whether s is a glob (path.Match) rather than a name.
func isPattern(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// selectContexts picks the kubeconfig's contexts that spec names: a comma list of names
// and globs (path.Match), in the order given, each once; all takes every context, in
// name order. A name that is not a context, or a glob that matches none, is a usage error
// naming the contexts there are.
func selectContexts(spec string, all bool, contexts []string) ([]string, error) {
	names := slices.Sorted(slices.Values(contexts))
	known := strings.Join(names, ", ")
	if len(names) == 0 {
		known = "none"
	}
	if all {
		if spec != "" {
			return nil, usageErrorf("--all-contexts and --context %q do not go together; drop one", spec)
		}
		if len(names) == 0 {
			return nil, usageErrorf("--all-contexts: the kubeconfig has no contexts (check --kubeconfig and $KUBECONFIG)")
		}
		return names, nil
	}
	var picked []string
	add := func(name string) {
		if !slices.Contains(picked, name) {
			picked = append(picked, name)
		}
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case isPattern(item):
			if _, err := path.Match(item, ""); err != nil {
				return nil, usageErrorf("--context %q: %q is not a valid glob (%v)", spec, item, err)
			}
			matched := false
			for _, name := range names {
				if ok, _ := path.Match(item, name); ok {
					add(name)
					matched = true
				}
			}
			if !matched {
				return nil, usageErrorf("--context %q: %q matches none of the kubeconfig's contexts (%s)", spec, item, known)
			}
		case slices.Contains(names, item):
			add(item)
		default:
			return nil, usageErrorf("--context %q: no context %q in the kubeconfig%s; the contexts are: %s", spec, item, suggest.DidYouMean(item, names), known)
		}
	}
	if len(picked) == 0 {
		return nil, usageErrorf("--context %q names no context; give NAME[,NAME...] or a glob such as 'prod-*' (contexts: %s)", spec, known)
	}
	return picked, nil
}

// contextFlags is a copy of the command's kubectl flags for one context: the same
// kubeconfig, overrides and client wrapping, with its own cached discovery and REST
// mapper (every cluster has its own).
func contextFlags(f *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	c := genericclioptions.NewConfigFlags(true)
	c.CacheDir, c.KubeConfig = f.CacheDir, f.KubeConfig
	c.ClusterName, c.AuthInfoName, c.Namespace, c.APIServer, c.TLSServerName = f.ClusterName, f.AuthInfoName, f.Namespace, f.APIServer, f.TLSServerName
	c.Insecure, c.CertFile, c.KeyFile, c.CAFile, c.BearerToken = f.Insecure, f.CertFile, f.KeyFile, f.CAFile, f.BearerToken
	c.Impersonate, c.ImpersonateUID, c.ImpersonateGroup, c.ImpersonateUserExtra = f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup, f.ImpersonateUserExtra
	c.Username, c.Password, c.Timeout, c.DisableCompression, c.ProxyURL = f.Username, f.Password, f.Timeout, f.DisableCompression, f.ProxyURL
	c.Context = &name
	c.WrapConfigFn = f.WrapConfigFn
	return c
}

// selectClusters reads --context/--all-contexts. It returns the contexts of a watch of
// several clusters, or nil for one cluster: with a single context (a plain name, or a
// list or glob that picks one, which then becomes --context) nothing changes.
func (o *WatchOptions) selectClusters() ([]string, error) {
	spec := ""
	if o.ConfigFlags != nil && o.ConfigFlags.Context != nil {
		spec = *o.ConfigFlags.Context
	}
	if !severalContexts(spec, o.AllContexts) {
		return nil, nil
	}
	raw, err := o.clientGetter.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, kubeconfigError(err)
	}
	var contexts []string
	for name := range raw.Contexts {
		contexts = append(contexts, name)
	}
	picked, err := selectContexts(spec, o.AllContexts, contexts)
	if err != nil {
		return nil, err
	}
	if len(picked) == 1 {
		if o.ConfigFlags != nil {
			*o.ConfigFlags.Context = picked[0]
		}
		if o.contextGetter != nil {
			o.clientGetter = o.contextGetter(picked[0])
		}
		return nil, nil
	}
	return picked, o.checkSeveralClusters()
}

// checkSeveralClusters refuses what a watch of several clusters does not do: each is a
// usage error naming what to drop.
func (o *WatchOptions) checkSeveralClusters() error {
	flagSet := func(name string) bool { return o.flagsSet != nil && o.flagsSet(name) }
	for _, flag := range []string{"server", "cluster"} {
		if flagSet(flag) {
			return usageErrorf("--%s applies to one cluster, but several contexts are watched; drop it, or give one --context", flag)
		}
	}
	switch {
	case o.Owned.Owned:
		return usageErrorf("--owned follows one object in one cluster, but several contexts are watched; give one --context")
	case o.UntilDeleted:
		return usageErrorf("--until-deleted waits for objects of one cluster, but several contexts are watched; give one --context")
	}
	return nil
}

// connectClusters connects to every context at once (a cluster that does not answer
// holds up no other), each as Connect does for one. A cluster that cannot be reached or
// refuses the credentials is said in one line and left out; a type that one cluster
// does not serve is said once for that cluster, which goes on without it. Only when no
// cluster is left is it an error: a type no cluster serves is bad usage (exit 2), no
// cluster answering an error (exit 1).
func (o *WatchOptions) connectClusters(contexts []string) error {
	type connected struct {
		conn       clusterConn
		unresolved []unresolvedType
		err        error
	}
	results := make([]connected, len(contexts))
	var wg sync.WaitGroup
	for i, name := range contexts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			one := *o
			one.clientGetter = o.contextGetter(name)
			one.typesPerCluster = true
			one.noticePrefix = fmt.Sprintf(engine.ClusterNotice, name)
			one.resources, one.unresolved = nil, nil
			err := one.Connect()
			results[i] = connected{conn: clusterConn{name: name, restConfig: one.restConfig, namespace: one.namespace,
				resources: one.resources, options: &one}, unresolved: one.unresolved, err: err}
		}()
	}
	wg.Wait()

	// Bad usage in any cluster (a context's namespace that cannot exist) ends the run.
	for _, r := range results {
		var usage *UsageError
		if errors.As(r.err, &usage) {
			return usageErrorf("context %s: %v", r.conn.name, r.err)
		}
	}
	// A type that no reachable cluster serves is bad usage, as with one cluster.
	var firstErr error
	reachable := 0
	for _, r := range results {
		if r.err != nil {
			firstErr = cmp.Or(firstErr, r.err)
			continue
		}
		reachable++
	}
	// served: a type some reachable cluster did not find unknown.
	served := func(arg string) bool {
		for _, r := range results {
			if r.err == nil && !slices.ContainsFunc(r.unresolved, func(u unresolvedType) bool { return u.arg == arg }) {
				return true
			}
		}
		return false
	}
	if reachable == 0 {
		reasons := make([]string, len(results))
		for i, r := range results {
			reasons[i] = r.conn.name + ": " + r.err.Error()
		}
		return &noClusterError{err: firstErr, reasons: reasons}
	}
	for _, r := range results {
		for _, u := range r.unresolved {
			if !served(u.arg) {
				return &UsageError{Err: u.err}
			}
		}
	}
	for _, r := range results {
		switch {
		case r.err != nil:
			o.warnf(engine.ClusterNotice+"%v; watching the other clusters without it", r.conn.name, r.err)
			continue
		case len(r.conn.resources) == 0:
			o.warnf(engine.ClusterNotice+"serves none of the types asked for (%v); watching the other clusters without it", r.conn.name, r.unresolved[0].err)
			continue
		}
		for _, u := range r.unresolved {
			o.warnf(engine.ClusterNotice+"%v; watched in the other clusters only", r.conn.name, u.err)
		}
		o.clusters = append(o.clusters, r.conn)
	}
	if len(o.clusters) == 0 {
		return fmt.Errorf("no cluster can be watched: none serves what was asked for and can be reached")
	}
	// What the command says and how sinks show names: every type of any cluster, and the
	// namespace if all clusters watch the same one.
	seen := map[string]bool{}
	o.namespace = o.clusters[0].namespace
	o.restConfig = o.clusters[0].restConfig
	o.namespaces = o.clusters[0].options.namespaces
	for _, c := range o.clusters {
		if c.namespace != o.namespace {
			o.namespace, o.namespacesDiffer = "", true
		}
		for _, r := range c.resources {
			if !seen[r.GVR.String()] {
				seen[r.GVR.String()] = true
				o.resources = append(o.resources, r)
			}
		}
	}
	return nil
}

// noClusterError says that none of several clusters can be reached, with each one's
// reason; err is the first's, for its exit code.
type noClusterError struct {
	err     error
	reasons []string
}

func (e *noClusterError) Error() string {
	return "no cluster can be watched: " + strings.Join(e.reasons, "; ")
}
func (e *noClusterError) Unwrap() error { return e.err }

// unresolvedType is a type argument that one cluster does not serve (or cannot watch).
type unresolvedType struct {
	arg string
	err error
}

// clusterNames are the names of the clusters watched, when there are several.
func (o *WatchOptions) clusterNames() []string {
	if len(o.clusters) == 0 {
		return nil
	}
	names := make([]string, len(o.clusters))
	for i, c := range o.clusters {
		names[i] = c.name
	}
	return names
}

// engineClusters builds every cluster's clients and checks its namespace, for the engine.
func (o *WatchOptions) engineClusters(ctx context.Context) ([]engine.Cluster, error) {
	out := make([]engine.Cluster, 0, len(o.clusters))
	for _, c := range o.clusters {
		clients, err := o.newClients(o.watchConfig(c.restConfig))
		if err != nil {
			return nil, fmt.Errorf(engine.ClusterNotice+"%w", c.name, err)
		}
		out = append(out, engine.Cluster{Name: c.name, Clients: clients, Resources: c.resources, Namespace: c.namespace,
			NamespaceMissing: c.options.checkNamespace(ctx)})
	}
	return out, nil
}

// clustersSummary is the per-cluster part of the exit line: " (a: 10, b: 12)".
func clustersSummary(results []engine.ClusterResult) string {
	if len(results) == 0 {
		return ""
	}
	parts := make([]string, 0, len(results))
	for _, r := range results {
		part := fmt.Sprintf("%s: %s", r.Name, diag.Count(r.Made))
		if r.Left != nil {
			part += " (left out)"
		}
		parts = append(parts, part)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
