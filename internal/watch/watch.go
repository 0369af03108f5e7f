// Package watch is the live sources of a run: in every cluster watched, one informer per
// type and namespace (and --owned's children's, --fold-rollouts' workloads',
// --with-events' core Events'), each a source of the run's pipeline. Their rights are
// checked before anything is printed; with several clusters, one whose rights are
// missing, or whose first list fails later, is left out, said in one line, and the
// others go on; the watched namespaces' deletion and creation are said.
package watch

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/filter"
	"github.com/kubeevents/kubeevents/internal/fold"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/related"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Cluster is one cluster of a run: its name (the kubeconfig context, "" for the one
// cluster of a plain watch), its clients, and what it watches there (plan.Cluster).
type Cluster struct {
	Name      string
	Clients   informer.Clients
	Resources []resource.Resource
	// Namespaces are watched with one informer each per namespaced type; nil for all.
	Namespaces []string
	// Missing are the Namespaces found missing before the run (and said so): their
	// creation is then said even if it comes before the run looks.
	Missing []string
}

// Result is what one of several clusters gave: Made its events; Left, when not nil, why
// it was left out at start (its rights were missing) or later (its first list failed):
// said when it happened.
type Result struct {
	Name string
	Made uint64
	Left error
}

// Options say what every cluster watches, besides its types and namespaces.
type Options struct {
	// Several says there are several clusters: each one's diagnostics start with
	// plan.ClusterNotice, and one can be left out while the others go on.
	Several bool
	// Informer is what every informer of the watched types is built with (selectors,
	// names, --watch-only, ...); ExcludeNamespaces the names the server leaves out.
	Informer          informer.Options
	ExcludeNamespaces []string
	// Children are --owned's child types; Fold builds --fold-rollouts' workload
	// informers; WithEvents the core Events' (past ones listed from PastSince's time).
	Children   []owners.ChildType
	Fold       bool
	WithEvents bool
	PastSince  func(cluster string) time.Time
	// Resync makes each informer of the stream its listeners' resync schedule
	// (pipeline.Deliver.NewResync).
	Resync func() *pipeline.Resync
	// Seed, when set, puts the checkpoint's objects into each watched type's informer
	// before it starts (package resume); Leave says a cluster was left out at start.
	// RedactionKey, when set, is each cluster's key of redacted Secret values (the
	// checkpoint's), else the informers draw one.
	Seed         func(cluster string, inf *informer.Informer, warn func(string, ...any), gone func() bool) error
	Leave        func(cluster string)
	RedactionKey func(cluster string) []byte
	Warn         func(format string, args ...any)
	// Discover follows each cluster's CustomResourceDefinitions and watches the custom
	// resources defined after the start too (--all-types).
	Discover bool
	// Fatal ends the run: an error the informers cannot retry past, of the last cluster
	// left.
	Fatal func(error)
}

// Set is the run's clusters and their informers.
type Set struct {
	opts    Options
	all     []*clusterWatch // those asked for
	watched []*clusterWatch // those not left out at start
	live    atomic.Int32
	cancels []context.CancelFunc
	running sync.WaitGroup
	// mu guards the types Discover adds while the run goes on, and stopped, which ends
	// that.
	mu      sync.Mutex
	stopped bool
}

// clusterWatch is one cluster's part: its informers, what it made, and a warn that
// names it when there are several.
type clusterWatch struct {
	Cluster
	warn      func(format string, args ...any)
	informers []*informer.Informer // all of them, in start order
	watched   []*informer.Informer // the watched types' (not the children's or Events')
	events    []*informer.Informer // the core Events' (WithEvents)
	folding   []*informer.Informer // the workloads' of --fold-rollouts (package fold)
	added     []resource.Resource  // the types Discover added, under Set.mu
	// found are --owned's child types found by discovery (every namespaced type): one
	// that cannot be listed or watched is left out, not the run.
	found     []*informer.Informer
	made      atomic.Uint64
	base      informer.Options // what its watched types' informers are built with
	leaveOnce sync.Once
	left      error         // why it was left out (nil: watched to the end)
	gone      chan struct{} // closed once it is left out after the start
	stop      context.CancelFunc
}

// New builds every cluster's informers (not started).
func New(clusters []Cluster, o Options) (*Set, error) {
	s := &Set{opts: o}
	for _, cl := range clusters {
		c := &clusterWatch{Cluster: cl, warn: o.Warn, gone: make(chan struct{})}
		if o.Several {
			name, warn := cl.Name, o.Warn
			c.warn = func(format string, args ...any) { warn(plan.ClusterNotice+format, append([]any{name}, args...)...) }
		}
		if err := s.build(c); err != nil {
			return nil, err
		}
		s.all = append(s.all, c)
	}
	s.watched = s.all
	return s, nil
}

// build builds c's informers: one per watched type (and namespace), the owned object's
// children's, the workloads' of --fold-rollouts and the core Events' (WithEvents).
func (s *Set) build(c *clusterWatch) error {
	o := s.opts
	base := s.base(c)
	add := func(res resource.Resource, opts informer.Options) (*informer.Informer, error) {
		inf, err := newInformer(res, c.Clients, opts)
		if err == nil {
			c.informers = append(c.informers, inf)
		}
		return inf, err
	}
	for _, sp := range c.specs(base.FieldSelector, o.ExcludeNamespaces) {
		opts := base
		opts.Namespace, opts.FieldSelector, opts.Resync = sp.namespace, sp.fieldSelector, o.Resync()
		inf, err := add(sp.res, opts)
		if err != nil {
			return err
		}
		if base.RedactionKey == nil {
			base.RedactionKey = inf.RedactionKey() // one key for all its Secret informers
		}
		if o.Seed != nil {
			if err := o.Seed(c.Name, inf, c.warn, c.isGone); err != nil {
				return err
			}
		}
	}
	c.watched = slices.Clip(c.informers)
	c.base = base
	for _, child := range o.Children {
		opts := base
		opts.Names, opts.LabelSelector, opts.FieldSelector, opts.Child, opts.Resync = nil, child.LabelSelector, "", true, o.Resync()
		opts.MetadataOnly = opts.MetadataOnly || child.MetadataOnly
		inf, err := add(child.Resource, opts)
		if err != nil {
			return err
		}
		if child.MetadataOnly {
			c.found = append(c.found, inf) // every namespaced type: one may be left out
		}
	}
	plain := informer.Options{Cluster: c.Name, NoFastPaths: base.NoFastPaths, NoWireDecoders: base.NoWireDecoders, Warn: c.warn, Fatal: base.Fatal}
	for _, res := range fold.Workloads {
		for _, ns := range c.namespaces() {
			if o.Fold {
				opts := plain
				opts.Namespace = ns
				inf, err := add(res, opts)
				if err != nil {
					return err
				}
				c.folding = append(c.folding, inf)
			}
		}
	}
	if !o.WithEvents {
		return nil
	}
	for _, ns := range c.namespaces() {
		// Only what happens from now on, like the changes they explain; past ones
		// (--since, --resume) are listed, and kept by the pipeline's related step.
		opts := plain
		opts.Namespace, opts.Related, opts.Observer = ns, true, base.Observer
		opts.WatchOnly = o.PastSince(c.Name).IsZero()
		inf, err := add(related.Resource, opts)
		if err != nil {
			return err
		}
		c.events = append(c.events, inf)
	}
	return nil
}

// newInformer builds an informer (informer.New; tests replace it).
var newInformer = informer.New

// base is what the informers of c's watched types are built with (build keeps it, with
// the redaction key they share, as c.base).
func (s *Set) base(c *clusterWatch) informer.Options {
	base := s.opts.Informer
	base.Cluster, base.Warn, base.Fatal = c.Name, c.warn, s.fatalOf(c)
	if s.opts.RedactionKey != nil {
		base.RedactionKey = s.opts.RedactionKey(c.Name)
	}
	return base
}

// spec is one informer of a watched type: its type, its namespace ("" for all, or a
// cluster-scoped type) and its field selector.
type spec struct {
	res           resource.Resource
	namespace     string
	fieldSelector string
}

// specs are the informers of c's watched types: one per type, or, with namespaces named
// (-n a,b,c), one per namespace for each namespaced type. The server filters each
// informer's namespace, so a namespace not asked for costs nothing, whatever the size of
// the cluster; each informer costs a list and a watch connection. Excluded namespaces
// given by name are left out by the server too (a field selector metadata.namespace!=NAME,
// which every namespaced type supports); patterns by the pipeline's filter step.
func (c *clusterWatch) specs(fieldSelector string, excluded []string) []spec {
	var out []spec
	for _, res := range c.Resources {
		if !res.Namespaced {
			out = append(out, spec{res: res, fieldSelector: fieldSelector})
			continue
		}
		selector := withExcludedNamespaces(fieldSelector, excluded)
		for _, ns := range c.namespaces() {
			out = append(out, spec{res: res, namespace: ns, fieldSelector: selector})
		}
	}
	return out
}

func (c *clusterWatch) namespaces() []string {
	if len(c.Namespaces) == 0 {
		return []string{""}
	}
	return c.Namespaces
}

// withExcludedNamespaces adds metadata.namespace!=NAME for every excluded name.
func withExcludedNamespaces(selector string, excluded []string) string {
	for _, ns := range excluded {
		if filter.IsPattern(ns) {
			continue
		}
		term := fields.OneTermNotEqualSelector("metadata.namespace", ns).String()
		if selector == "" {
			selector = term
		} else {
			selector += "," + term
		}
	}
	return selector
}

// CheckAccess checks every cluster's rights before anything is printed: an informer's
// own first list says that its rights are missing, but only after the other informers
// printed what they listed, and a missing right to watch only after it printed its own
// list. With several clusters, one whose rights are missing is said in one line and
// left out; only when none is left is it an error. An interruption returns nil with
// ctx's error set.
func (s *Set) CheckAccess(ctx context.Context) error {
	var watched []*clusterWatch
	var firstErr error
	for _, c := range s.all {
		err := c.checkAccess(ctx, s.opts.Discover)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			watched = append(watched, c)
			continue
		}
		if !s.opts.Several {
			return err // one cluster: its error, as it is
		}
		firstErr = cmp.Or(firstErr, err)
		c.left = err
		if s.opts.Leave != nil {
			s.opts.Leave(c.Name)
		}
	}
	if len(watched) == 0 {
		noCluster := &plan.NoClusterError{Err: firstErr}
		for _, c := range s.all {
			noCluster.Reasons = append(noCluster.Reasons, fmt.Sprintf(plan.ClusterNotice+"%v", c.Name, c.left))
		}
		return noCluster
	}
	for _, c := range s.all {
		if c.left != nil {
			s.opts.Warn("cluster %s: %v; watching the other clusters without it", c.Name, c.left)
		}
	}
	s.watched = watched
	s.live.Store(int32(len(watched)))
	return nil
}

// checkAccess checks every informer's rights; the core Events' error says so. Under
// Discover (every type the cluster serves), a watched type that cannot be watched (no
// rights, or a custom resource whose definition went since discovery) is said and left
// out rather than ending the run.
func (c *clusterWatch) checkAccess(ctx context.Context, discover bool) error {
	for _, inf := range slices.Clone(c.informers) {
		if err := inf.CheckAccess(ctx); err != nil {
			isInf := func(i *informer.Informer) bool { return i == inf }
			switch {
			case discover && slices.Contains(c.watched, inf) && ctx.Err() == nil:
				c.warn("%v; watching the other types without it", err)
				// Copies: watched shares informers' array.
				c.informers = slices.DeleteFunc(slices.Clone(c.informers), isInf)
				c.watched = slices.DeleteFunc(slices.Clone(c.watched), isInf)
				continue
			case slices.Contains(c.found, inf) && ctx.Err() == nil:
				// A type that may hold none of the children (a definition deleted since
				// discovery, a type this user may not list): watched without it.
				c.informers = slices.DeleteFunc(slices.Clone(c.informers), isInf)
				continue
			case slices.Contains(c.events, inf):
				return fmt.Errorf("--with-events: %w", err)
			case slices.Contains(c.folding, inf):
				return fmt.Errorf("--fold-rollouts: %w", err)
			}
			return err
		}
	}
	return nil
}

// Run starts every informer of the clusters watched: the stream's hand their events to
// take, --fold-rollouts' own to observe (no part of the stream); and the watches of the
// namespaces watched.
func (s *Set) Run(ctx context.Context, take, observe func(*event.Event) bool) {
	for _, c := range s.watched {
		cctx, stop := context.WithCancel(ctx)
		c.stop = stop
		s.cancels = append(s.cancels, stop)
		for _, inf := range c.informers {
			to := take
			if slices.Contains(c.folding, inf) {
				to = observe
			}
			s.running.Add(1)
			go func() {
				defer s.running.Done()
				_ = inf.Run(cctx, to)
			}()
		}
		if s.opts.Discover && c.Clients.Dynamic != nil {
			go s.discover(cctx, c, take)
		}
		if c.Clients.Dynamic != nil && slices.ContainsFunc(c.Resources, func(r resource.Resource) bool { return r.Namespaced }) {
			for _, ns := range c.Namespaces {
				go informer.WatchNamespace(cctx, c.Clients.Dynamic, ns, slices.Contains(c.Missing, ns), c.warn)
			}
		}
	}
}

// Stop stops every informer and waits until none hands on events any more.
func (s *Set) Stop() {
	s.mu.Lock()
	s.stopped = true // no type added from now on: running is waited for
	s.mu.Unlock()
	for _, cancel := range s.cancels {
		cancel()
	}
	s.running.Wait()
}

// WaitForSync waits for the initial list of every informer of the clusters watched,
// and reports false only if ctx ended first: a cluster left out meanwhile is not waited
// for.
func (s *Set) WaitForSync(ctx context.Context) bool {
	for _, c := range s.watched {
		if !c.waitForSync(ctx) {
			return false
		}
	}
	return true
}

func (c *clusterWatch) waitForSync(ctx context.Context) bool {
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.gone:
			cancel()
		case <-waitCtx.Done():
		}
	}()
	for _, inf := range c.informers {
		if !inf.WaitForSync(waitCtx) {
			return ctx.Err() == nil
		}
	}
	return true
}

// isGone reports whether c was left out after the start.
func (c *clusterWatch) isGone() bool {
	select {
	case <-c.gone:
		return true
	default:
		return false
	}
}

// fatalOf is the Fatal of c's informers: an error they cannot retry past (a first list
// that failed after the rights were checked) ends the run, or, when several clusters are
// watched, leaves this cluster out, said in one line, and ends the run only when no
// cluster is left.
func (s *Set) fatalOf(c *clusterWatch) func(error) {
	if !s.opts.Several {
		return s.opts.Fatal
	}
	return func(err error) {
		c.leaveOnce.Do(func() {
			c.left = err
			close(c.gone)
			if s.live.Add(-1) <= 0 {
				s.opts.Fatal(err)
				return
			}
			c.warn("%v; watching the other clusters without it", err)
			if c.stop != nil {
				c.stop()
			}
		})
	}
}

// Count counts ev as its cluster's (the pipeline's clusters step, when several).
func (s *Set) Count(ev *event.Event) {
	for _, c := range s.all {
		if c.Name == ev.Cluster {
			c.made.Add(1)
		}
	}
}

// Results says what each of several clusters gave; nil with one.
func (s *Set) Results() []Result {
	if !s.opts.Several {
		return nil
	}
	out := make([]Result, 0, len(s.all))
	for _, c := range s.all {
		out = append(out, Result{Name: c.Name, Made: c.made.Load(), Left: c.left})
	}
	return out
}

// Informers is how many informers the clusters watched run.
func (s *Set) Informers() int {
	n := 0
	for _, c := range s.watched {
		n += len(c.informers)
	}
	return n
}

// Watched are the informers of the watched types of every cluster watched (not the core
// Events', --owned's children's or --fold-rollouts'): what --until-deleted looks names
// up in.
func (s *Set) Watched() []*informer.Informer {
	var out []*informer.Informer
	for _, c := range s.all {
		out = append(out, c.watched...)
	}
	return out
}

// Related is, per cluster watched, what the core Events' step looks objects up in: the
// informers of the stream's objects (the watched types' and --owned's children's).
func (s *Set) Related() []related.Cluster {
	var out []related.Cluster
	for _, c := range s.all {
		rc := related.Cluster{Name: c.Name, Since: s.opts.PastSince(c.Name)}
		for _, inf := range c.informers {
			if !slices.Contains(c.events, inf) && !slices.Contains(c.folding, inf) {
				rc.Watched = append(rc.Watched, inf)
			}
		}
		out = append(out, rc)
	}
	return out
}
