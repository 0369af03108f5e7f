package engine

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/plan"
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

// ClusterResult is what one of several clusters gave: Made its events (in Result.Made
// too); Left, when not nil, why it was left out at start (its rights were missing) or
// later (its first list failed): said when it happened.
type ClusterResult struct {
	Name string
	Made uint64
	Left error
}

// clusterRun is one cluster's part of a run: its informers, what it made, and a warn
// that names it when there are several.
type clusterRun struct {
	Cluster
	warn      func(format string, args ...any)
	informers []*informer.Informer // all of them, in start order
	watched   []*informer.Informer // the watched types' (not the children's or Events')
	events    []*informer.Informer // the core Events' (WithEvents)
	folding   []*informer.Informer // the workloads' of --fold-rollouts (package fold)
	// found are --owned's child types found by discovery (every namespaced type): one
	// that cannot be listed or watched is left out, not the run.
	found []*informer.Informer
	made  atomic.Uint64

	leaveOnce sync.Once
	left      error         // why it was left out (nil: watched to the end)
	gone      chan struct{} // closed once it is left out after the start
	// stop stops its sources (they run in a context of their own).
	stop context.CancelFunc
}

// waitForSync waits for the initial list of every informer of c, and reports false
// only if ctx ended first: a cluster left out meanwhile is not waited for.
func (c *clusterRun) waitForSync(ctx context.Context) bool {
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

// watchedAndOwned are the informers of the stream's objects: the watched types' and the
// owned children's, not the core Events' or --fold-rollouts' own.
func (c *clusterRun) watchedAndOwned() []*informer.Informer {
	var out []*informer.Informer
	for _, inf := range c.informers {
		if !slices.Contains(c.events, inf) && !slices.Contains(c.folding, inf) {
			out = append(out, inf)
		}
	}
	return out
}

// isGone reports whether c was left out after the start.
func (c *clusterRun) isGone() bool {
	select {
	case <-c.gone:
		return true
	default:
		return false
	}
}

// clusterRuns makes the run's clusters, each with a warn that starts with
// "cluster NAME: " when there are several.
func (r *run) clusterRuns() []*clusterRun {
	runs := make([]*clusterRun, 0, len(r.runConfig.clusters))
	for _, cl := range r.runConfig.clusters {
		c := &clusterRun{Cluster: cl, warn: r.hooks.warn, gone: make(chan struct{})}
		if r.several {
			name, warn := cl.Name, r.hooks.warn
			c.warn = func(format string, args ...any) {
				warn(plan.ClusterNotice+format, append([]any{name}, args...)...)
			}
		}
		runs = append(runs, c)
	}
	return runs
}

// checkAccess checks every informer's rights; the core Events' error says so.
func (c *clusterRun) checkAccess(ctx context.Context) error {
	for _, inf := range slices.Clone(c.informers) {
		if err := inf.CheckAccess(ctx); err != nil {
			if slices.Contains(c.found, inf) && ctx.Err() == nil {
				// A type that may hold none of the children (a definition deleted since
				// discovery, a type this user may not list): watched without it.
				c.informers = slices.DeleteFunc(c.informers, func(i *informer.Informer) bool { return i == inf })
				continue
			}
			if slices.Contains(c.events, inf) {
				return &withEventsError{err}
			}
			if slices.Contains(c.folding, inf) {
				return &foldError{err}
			}
			return err
		}
	}
	return nil
}

type withEventsError struct{ err error }

func (e *withEventsError) Error() string { return "--with-events: " + e.err.Error() }
func (e *withEventsError) Unwrap() error { return e.err }

// fatalOf is the Fatal of c's informers: an error they cannot retry past (a first list
// that failed after the rights were checked) ends the run, or, when several clusters are
// watched, leaves this cluster out, said in one line, and ends the run only when no
// cluster is left.
func (c *clusterRun) fatalOf(r *run) func(error) {
	if !r.several {
		return r.reportFatal
	}
	return func(err error) {
		c.leaveOnce.Do(func() {
			c.left = err
			close(c.gone)
			if r.live.Add(-1) <= 0 {
				r.reportFatal(err)
				return
			}
			c.warn("%v; watching the other clusters without it", err)
			if c.stop != nil {
				c.stop()
			}
		})
	}
}

// clusterResults says what each of several clusters gave; nil with one.
func (r *run) clusterResults(all []*clusterRun) []ClusterResult {
	if !r.several {
		return nil
	}
	out := make([]ClusterResult, 0, len(all))
	for _, c := range all {
		out = append(out, ClusterResult{Name: c.Name, Made: c.made.Load(), Left: c.left})
	}
	return out
}

// foldError says that an informer of --fold-rollouts' own could not watch.
type foldError struct{ err error }

func (e *foldError) Error() string { return "--fold-rollouts: " + e.err.Error() }
func (e *foldError) Unwrap() error { return e.err }

// namespaces are the namespaces c watches, one informer each: "" for all.
func (c *clusterRun) namespaces() []string {
	if len(c.Namespaces) == 0 {
		return []string{""}
	}
	return c.Namespaces
}
