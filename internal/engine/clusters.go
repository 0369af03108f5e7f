package engine

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Cluster is one of several clusters watched at once (--context a,b): its name (the
// kubeconfig context), its clients, and what it watches there, resolved against its own
// discovery (a custom resource may be served by only some of the clusters).
type Cluster struct {
	Name      string
	Clients   informer.Clients
	Resources []resource.Resource
	Namespace string // "" for all namespaces; the context's own unless -n was given
	// NamespaceMissing says the command found Namespace missing in this cluster (and
	// said so); see Config.NamespaceMissing.
	NamespaceMissing bool
}

// ClusterResult is what one of several clusters gave: Made its events (in Result.Made
// too); Left, when not nil, why it was left out at start (its rights were missing) or
// later (its first list failed): said when it happened.
type ClusterResult struct {
	Name string
	Made uint64
	Left error
}

// NoClusterError says that none of several clusters could be watched: Reasons says
// why, per cluster ("cluster b: unauthorized: ..."); Err is the first one's error.
type NoClusterError struct {
	Err     error
	Reasons []string
}

func (e *NoClusterError) Error() string {
	return "no cluster can be watched: " + strings.Join(e.Reasons, "; ")
}
func (e *NoClusterError) Unwrap() error { return e.Err }

// clusterRun is one cluster's part of a run: its Config (Config with the cluster's
// resources and namespace, and a Warn that names it), its informers and what it made.
type clusterRun struct {
	Cluster
	cfg       Config
	informers []*informer.Informer // all of them, in start order
	watched   []*informer.Informer // the watched types' (not the children's or Events')
	events    *informer.Informer   // the core Events' (WithEvents), nil without
	made      atomic.Uint64

	// resume and checkpoint are its part of the checkpoint (Config.Resume); zero and nil
	// without one.
	resume     ClusterResume
	checkpoint *checkpoint.Section

	leaveOnce sync.Once
	left      error         // why it was left out (nil: watched to the end)
	gone      chan struct{} // closed once it is left out after the start
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

// isGone reports whether c was left out after the start.
func (c *clusterRun) isGone() bool {
	select {
	case <-c.gone:
		return true
	default:
		return false
	}
}

// clusterRuns makes the run's clusters: Config.Clusters, each with a Warn that starts
// with "cluster NAME: ", or the one cluster of clients with Config as it is.
func (r *run) clusterRuns(clients informer.Clients) []*clusterRun {
	cfg := r.cfg
	if len(cfg.Clusters) == 0 {
		return []*clusterRun{{Cluster: Cluster{Clients: clients, Resources: cfg.Resources, Namespace: cfg.Namespace,
			NamespaceMissing: cfg.NamespaceMissing}, cfg: cfg, gone: make(chan struct{})}}
	}
	runs := make([]*clusterRun, 0, len(cfg.Clusters))
	for _, cl := range cfg.Clusters {
		c := &clusterRun{Cluster: cl, cfg: cfg, gone: make(chan struct{})}
		c.cfg.Resources, c.cfg.Namespace, c.cfg.NamespaceMissing = cl.Resources, cl.Namespace, cl.NamespaceMissing
		c.cfg.Clusters = nil
		name, warn := cl.Name, cfg.Warn
		c.cfg.Warn = func(format string, args ...any) {
			warn(ClusterNotice+format, append([]any{name}, args...)...)
		}
		runs = append(runs, c)
	}
	return runs
}

// ClusterNotice starts every diagnostic line about one of several clusters (its
// argument is the cluster's name), as in "cluster prod: watch of pods lost (...)".
const ClusterNotice = "cluster %s: "

// checkAccess checks every informer's rights; the core Events' error says so.
func (c *clusterRun) checkAccess(ctx context.Context) error {
	for _, inf := range c.informers {
		if err := inf.CheckAccess(ctx); err != nil {
			if inf == c.events {
				return &withEventsError{err}
			}
			return err
		}
	}
	return nil
}

type withEventsError struct{ err error }

func (e *withEventsError) Error() string { return "--with-events: " + e.err.Error() }
func (e *withEventsError) Unwrap() error { return e.err }

// fatal is the Fatal of c's informers when several clusters are watched: an error the
// informers cannot retry past (a first list that failed after the rights were checked)
// leaves this cluster out, said in one line, and ends the run only when no cluster is
// left.
func (c *clusterRun) fatal(r *run) func(error) {
	return func(err error) {
		c.leaveOnce.Do(func() {
			c.left = err
			close(c.gone)
			if r.live.Add(-1) <= 0 {
				r.reportFatal(err)
				return
			}
			c.cfg.Warn("%v; watching the other clusters without it", err)
			// Not from this goroutine: an informer stops once its goroutines return,
			// this one among them.
			go func() {
				for _, inf := range c.informers {
					inf.Stop()
				}
			}()
		})
	}
}

// clusterResults says what each of several clusters gave; nil with one.
func (r *run) clusterResults(all []*clusterRun) []ClusterResult {
	if len(r.cfg.Clusters) == 0 {
		return nil
	}
	out := make([]ClusterResult, 0, len(all))
	for _, c := range all {
		out = append(out, ClusterResult{Name: c.Name, Made: c.made.Load(), Left: c.left})
	}
	return out
}
