package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kubeevents/kubeevents/internal/diag"
)

var usage = diag.Usage

// connectSeveral connects to every context at once (a cluster that does not answer
// holds up no other), each as connect does for one. A cluster that cannot be reached or
// refuses the credentials is said in one line and left out; a type that one cluster
// does not serve is said once for that cluster, which goes on without it. Only when no
// cluster is left is it an error: a type no cluster serves is bad usage (exit 2), no
// cluster answering an error (exit 1).
func connectSeveral(_ context.Context, kc Kubeconfig, req Request, contexts []string, warn func(string, ...any)) (*Plan, error) {
	type connected struct {
		name       string
		cluster    *Cluster
		unresolved []unresolvedType
		err        error
	}
	results := make([]connected, len(contexts))
	var wg sync.WaitGroup
	for i, name := range contexts {
		wg.Go(func() {
			c, unresolved, err := connect(req, kc.Context(name), true)
			if c != nil {
				c.Name = name
			}
			results[i] = connected{name: name, cluster: c, unresolved: unresolved, err: err}
		})
	}
	wg.Wait()

	// Bad usage in any cluster (a context's namespace that cannot exist) ends the run.
	for _, r := range results {
		var bad *diag.UsageError
		if errors.As(r.err, &bad) {
			return nil, usagef("context %s: %v", r.name, r.err)
		}
	}
	var firstErr error
	reachable := 0
	for _, r := range results {
		if r.err != nil {
			firstErr = cmp.Or(firstErr, r.err)
			continue
		}
		reachable++
	}
	if reachable == 0 {
		reasons := make([]string, len(results))
		for i, r := range results {
			reasons[i] = fmt.Sprintf(ClusterNotice+"%v", r.name, r.err)
		}
		return nil, &NoClusterError{Err: firstErr, Reasons: reasons}
	}
	// A type that no reachable cluster serves is bad usage, as with one cluster.
	served := func(arg string) bool {
		for _, r := range results {
			if r.err == nil && !slices.ContainsFunc(r.unresolved, func(u unresolvedType) bool { return u.arg == arg }) {
				return true
			}
		}
		return false
	}
	for _, r := range results {
		for _, u := range r.unresolved {
			if !served(u.arg) {
				return nil, usage(u.err)
			}
		}
	}
	p := &Plan{Several: true}
	for _, r := range results {
		switch {
		case r.err != nil:
			warn(ClusterNotice+"%v; watching the other clusters without it", r.name, r.err)
			continue
		case len(r.cluster.Resources) == 0:
			warn(ClusterNotice+"serves none of the types asked for (%v); watching the other clusters without it", r.name, r.unresolved[0].err)
			continue
		}
		for _, u := range r.unresolved {
			warn(ClusterNotice+"%v; watched in the other clusters only", r.name, u.err)
		}
		p.Clusters = append(p.Clusters, r.cluster)
	}
	if len(p.Clusters) == 0 {
		return nil, fmt.Errorf("no cluster can be watched: none serves what was asked for and can be reached")
	}
	return p, nil
}

// NoClusterError says that none of several clusters can be watched, with each one's
// reason ("cluster b: unauthorized: ..."); Err is the first one's, for its exit code.
type NoClusterError struct {
	Err     error
	Reasons []string
}

func (e *NoClusterError) Error() string {
	return "no cluster can be watched: " + strings.Join(e.Reasons, "; ")
}
func (e *NoClusterError) Unwrap() error { return e.Err }
