// Package plan resolves what a watch asks for against the clusters it names. A Request
// is what the user typed (type arguments, names, namespaces, contexts, selectors);
// Resolve reads the kubeconfig, picks the contexts, and in each cluster resolves the
// types through discovery (categories such as "all" expanded, short names, CRDs), the
// namespaces, the types watched for an owner's children, the columns of custom
// resources and what identifies the watch for a checkpoint. The result is a Plan: a list
// of clusters, one for a plain watch. Everything after it walks Plan.Clusters; nothing
// after it looks at the flags again.
package plan

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Request is what the user asked to watch, as given: nothing in it is resolved yet.
type Request struct {
	Types []string // type arguments: "pods", "po", "deployments.apps", "all"
	Names []string // NAME arguments: only these objects
	// AllTypes watches every type the cluster serves that can be listed and watched,
	// instead of Types; the run adds the custom resources defined later (watch.Options).
	AllTypes bool

	// Namespace is -n as given, possibly a comma list ("a,b"); "" when -n was not given
	// (the context's namespace). NamespaceGiven says -n was given, for messages.
	Namespace         string
	NamespaceGiven    bool
	AllNamespaces     bool
	ExcludeNamespaces []string // with AllNamespaces: names and globs left out

	// Context is --context as given: one name, a comma list, globs; AllContexts is
	// --all-contexts. ClusterFlags names the flags that only make sense for one cluster
	// (--server, --cluster) that were given.
	Context      string
	AllContexts  bool
	ClusterFlags []string

	LabelSelector string
	FieldSelector string
	MetadataOnly  bool
	ShowSecrets   bool

	// Owned follows the one named object and what it owns; OwnedTypes are more types
	// watched for its children; UntilRollout waits for its rollout. UntilReady waits for
	// the named objects' health (and with Owned, for what it owns) to be Current.
	Owned        bool
	OwnedTypes   []string
	UntilRollout bool
	UntilDeleted bool
	UntilReady   bool
	// Health says the run computes each object's health: Resolve then reads which
	// custom resources have a status subresource (Cluster.StatusWritten). HealthOwns
	// says what a kind's controller creates, by its health rule (package health), for the
	// children of an object of a kind that has no defaults; nil: none.
	Health     bool
	HealthOwns func(kind schema.GroupKind) []string

	// Columns reads the CustomResourceDefinitions' printer columns (a sink prints pretty
	// or wide lines); Resume reads what identifies each cluster for a checkpoint.
	Columns bool
	Resume  bool
	// Features are what the command checked against each other (Check): checked again
	// once the clusters said how many contexts are watched and whether Secrets are.
	Features Features
}

// Plan is a Request resolved: the clusters to watch, each with what to watch there.
type Plan struct {
	Clusters []*Cluster
	// Several says that several contexts were asked for (a list, a glob that matched
	// more than one, --all-contexts): every event and notice names its cluster. A list
	// or glob that picks one context is a plain watch of that context.
	Several bool
}

// Cluster is one cluster of a Plan.
type Cluster struct {
	// Name is the kubeconfig context when Several, "" otherwise.
	Name   string
	Config *rest.Config
	// Namespaces are the namespaces watched (one informer each per namespaced type); nil
	// for all namespaces.
	Namespaces []string
	// Missing are the Namespaces that did not exist when Resolve looked (and said so).
	Missing   []string
	Resources []resource.Resource
	// Children are the types watched for the children of an owned object (Request.Owned):
	// the defaults of its kind (or its health rule's), then Request.OwnedTypes; when
	// nothing names any, every namespaced type (ChildrenFound: watched for their
	// metadata alone).
	Children      []resource.Resource
	ChildrenFound bool
	// StatusWritten are the custom resources watched (children too) whose definition has
	// a status subresource: a controller writes their status (Request.Health).
	StatusWritten []schema.GroupResource
	// Columns are the watched custom resources' printer columns (Request.Columns).
	Columns kubectl.PrinterColumns
	// Checkpoint is what a checkpoint of this cluster's watch belongs to (Request.Resume).
	Checkpoint checkpoint.Watch
}

// Namespace is the one namespace c watches, or "" for all of them or several.
func (c *Cluster) Namespace() string {
	if len(c.Namespaces) == 1 {
		return c.Namespaces[0]
	}
	return ""
}

// Kubeconfig gives the REST config, REST mapper and discovery of the kubeconfig's
// current context (as kubectl's flags override it) and of any other context by name.
type Kubeconfig struct {
	Default genericclioptions.RESTClientGetter
	Context func(name string) genericclioptions.RESTClientGetter
}

// ClusterNotice starts every diagnostic line about one of several clusters (its
// argument is the cluster's name), as in "cluster prod: watch of pods lost (...)".
const ClusterNotice = "cluster %s: "

// Notices are where Resolve says what it found: Warn always (a namespace that does not
// exist, a cluster left out), Info to a person at a terminal or with -v=1 (which
// contexts a glob selected), Debug with -v=2 (a CRD whose columns cannot be read).
type Notices struct {
	Warn  func(format string, args ...any)
	Info  func(format string, args ...any)
	Debug func(format string, args ...any)
}

// Resolve resolves req against the clusters of kc. Bad usage (a context that does not
// exist, a type no cluster serves, a name that cannot be) is a *diag.UsageError; a
// cluster that cannot be reached is an error of its own (exit 1), unless other clusters
// can be watched.
func Resolve(ctx context.Context, kc Kubeconfig, req Request, say Notices) (*Plan, error) {
	contexts, err := selectContexts(kc, req)
	if err != nil {
		return nil, err
	}
	features := FeaturesOf(req)
	features.Contexts = max(1, len(contexts))
	if err := Check(features); err != nil {
		return nil, err
	}
	switch {
	case req.AllContexts:
		say.Info("--all-contexts selected %s", strings.Join(contexts, ", "))
	case isPattern(req.Context):
		say.Info("--context %s selected %s", req.Context, strings.Join(contexts, ", "))
	}
	warn := say.Warn
	var p *Plan
	if contexts == nil {
		c, _, err := connect(req, kc.Default, false)
		if err != nil {
			return nil, err
		}
		p = &Plan{Clusters: []*Cluster{c}}
	} else if len(contexts) == 1 {
		c, _, err := connect(req, kc.Context(contexts[0]), false)
		if err != nil {
			return nil, err
		}
		p = &Plan{Clusters: []*Cluster{c}}
	} else if p, err = connectSeveral(ctx, kc, req, contexts, warn); err != nil {
		return nil, err
	}
	p.complete(ctx, req, say)
	features.Secrets = p.watchesSecrets()
	if err := Check(features); err != nil {
		return nil, err
	}
	return p, nil
}

// watchesSecrets reports whether Secrets are among the types watched in any cluster,
// the followed children's too.
func (p *Plan) watchesSecrets() bool {
	for _, c := range p.Clusters {
		if slices.ContainsFunc(c.Resources, informer.IsSecret) || slices.ContainsFunc(c.Children, informer.IsSecret) {
			return true
		}
	}
	return false
}

// Resources are the types watched in any cluster, each once, in the order of the
// clusters.
func (p *Plan) Resources() []resource.Resource {
	var out []resource.Resource
	seen := map[string]bool{}
	for _, c := range p.Clusters {
		for _, r := range c.Resources {
			if !seen[r.GVR.String()] {
				seen[r.GVR.String()] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// Names are the clusters' names when Several, nil otherwise.
func (p *Plan) Names() []string {
	if !p.Several {
		return nil
	}
	names := make([]string, len(p.Clusters))
	for i, c := range p.Clusters {
		names[i] = c.Name
	}
	return names
}

// Namespace is the one namespace every cluster watches, or "" (all, several, or they
// differ): what the terminal leaves out of object names.
func (p *Plan) Namespace() string {
	ns := p.Clusters[0].Namespace()
	for _, c := range p.Clusters[1:] {
		if c.Namespace() != ns {
			return ""
		}
	}
	return ns
}

// Columns are every cluster's printer columns: one may serve a CRD the others lack.
func (p *Plan) Columns() kubectl.PrinterColumns {
	var out kubectl.PrinterColumns
	for _, c := range p.Clusters {
		for gk, cols := range c.Columns {
			if out == nil {
				out = kubectl.PrinterColumns{}
			}
			out[gk] = cols
		}
	}
	return out
}

// WatchConfig is c's config for its watch. One that watches every namespaced type for
// the children of --owned's object (ChildrenFound) goes at kubectl's pace: client-go's
// default of 5 requests a second (burst 10) would spread the LIST and WATCH of some
// 30-70 types over many seconds, and hold the owner lookups of the tree behind them past
// their time limit (a child left out). The config's own pace, when it sets one, stays.
func (c *Cluster) WatchConfig() *rest.Config {
	if !c.ChildrenFound || c.Config.QPS != 0 || c.Config.RateLimiter != nil {
		return c.Config
	}
	config := rest.CopyConfig(c.Config)
	config.QPS, config.Burst = 50, 300
	return config
}
