// Package conditions decides when a run has what it waited for: --until (a jq
// expression an event makes true), --until-deleted (every named object gone),
// --until-rollout (the followed object's rollout completed or failed) and --until-ready
// (every named object, or the followed object and what it owns, Current; ready.go). The pipeline's
// conditions step asks it about each event as it is numbered, one at a time, before
// any sink has it (pipeline.Sequence), so no event is made after the one that met the
// condition, even in the middle of the initial list.
package conditions

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
)

// Config is the condition a run waits for: at most one is set.
type Config struct {
	// Until is --until compiled, with what its input is made of (the differ's diff,
	// "old" with ShowOld).
	Until   *jq.Query
	Differ  *diff.Differ
	ShowOld bool
	// UntilDeleted waits until no watched informer (Watch) holds any of Names.
	UntilDeleted bool
	Names        []string
	// Ready is --until-ready's or --until-rollout's wait (nil: neither).
	Ready *Ready
}

// Watched is one informer of the watched types, as --until-deleted looks names up in it.
type Watched interface {
	Namespace() string // "" for all, or a cluster-scoped type
	Store() cache.Store
}

// Conditions decides the run's condition; nil when it has none.
type Conditions struct {
	cfg      Config
	watched  []Watched
	isSynced atomic.Bool
	// failure is why the awaited object failed, when that ended --until-ready's or
	// --until-rollout's wait.
	failure atomic.Pointer[string]
	// live are, for --until-deleted, the named objects whose last event numbered says
	// they exist: an informer lets a deleted object go from its cache before its DELETED
	// reaches the pipeline, and the stream must not end before that event. MetBy and
	// Synced, its users, both run under the pipeline's lock.
	live map[objectKey]bool
}

// New returns the run's condition, or nil when cfg sets none.
func New(cfg Config) *Conditions {
	if cfg.Until == nil && !cfg.UntilDeleted && cfg.Ready == nil {
		return nil
	}
	return &Conditions{cfg: cfg}
}

// Watch gives the informers of the watched types (not the core Events' or --owned's
// children's), before they start: --until-deleted looks the names up in them.
func (c *Conditions) Watch(w ...Watched) {
	c.watched = append(c.watched, w...)
	if r := c.cfg.Ready; r != nil && r.perWatched {
		r.Count = len(c.watched) * len(c.cfg.Names)
	}
}

// Awaited names the condition for messages, as the user wrote it.
func (c *Conditions) Awaited() string {
	switch {
	case c.cfg.UntilDeleted:
		return "--until-deleted"
	case c.cfg.Ready != nil:
		return c.cfg.Ready.Flag
	}
	return "--until"
}

// NotMet says that the run ended (why: "interrupted", "timed out after 5m", ...) before
// the condition was met, and for --until-ready what it still waited for.
func (c *Conditions) NotMet(why string) error {
	waiting := ""
	if c.cfg.Ready != nil && c.cfg.Ready.Flag == "--until-ready" {
		waiting = c.cfg.Ready.waiting()
	}
	return fmt.Errorf("%s before %s was met%s", why, c.Awaited(), waiting)
}

// MetBy reports whether ev meets the condition: asked once per event, in the order they
// are numbered. For UntilDeleted the informer's cache no longer holds a deleted object
// when it is asked.
func (c *Conditions) MetBy(ev *event.Event) bool {
	if c.cfg.Ready != nil {
		decided, failure := c.cfg.Ready.see(ev, c.isSynced.Load())
		if failure != "" {
			c.failure.Store(&failure)
		}
		return decided
	}
	if c.cfg.UntilDeleted {
		c.follow(ev)
		return ev.Type == event.Deleted && c.isSynced.Load() && c.allDeleted()
	}
	return c.cfg.Until != nil && c.untilTrue(ev)
}

// follow keeps live up to date with ev, for --until-deleted.
func (c *Conditions) follow(ev *event.Event) {
	k, ok := objectKeyOf(ev)
	if !ok || !slices.Contains(c.cfg.Names, k.name) {
		return
	}
	switch ev.Type {
	case event.Deleted:
		delete(c.live, k)
	case event.Added, event.Modified, event.Sync:
		if c.live == nil {
			c.live = map[objectKey]bool{}
		}
		c.live[k] = true
	}
}

// Failed says why --until-ready's or --until-rollout's wait ended in a failure (what:
// "not ready", "rollout failed"); ok is false if it did not. Safe on a nil receiver (a
// run without conditions).
func (c *Conditions) Failed() (what, why string, ok bool) {
	if c == nil {
		return "", "", false
	}
	if f := c.failure.Load(); f != nil {
		return c.cfg.Ready.Failure, *f, true
	}
	return "", "", false
}

func (c *Conditions) untilTrue(ev *event.Event) bool {
	q := c.cfg.Until
	if !q.Selects(string(ev.Type)) {
		return false // it would give nothing (jq/types.go)
	}
	input, err := q.Input(ev, c.cfg.Differ, c.cfg.ShowOld)
	if err != nil {
		return false
	}
	outs, err := q.Run(context.Background(), input)
	if err != nil {
		return false // reported by no one: --until errors are the user's expression failing on some events
	}
	for _, v := range outs {
		if jq.Truthy(v) {
			return true
		}
	}
	return false
}

// Synced is told once every informer has its initial list, and reports whether the
// condition is met already: named objects that do not exist then count as deleted, as
// with `kubectl wait --for=delete`.
func (c *Conditions) Synced() bool {
	c.isSynced.Store(true)
	return c.cfg.UntilDeleted && c.allDeleted() || c.cfg.Ready != nil && c.cfg.Ready.met(true)
}

// allDeleted reports whether no named object is left: none whose DELETED is still to
// come (live), and none in an informer's cache. Each
// informer of a namespaced type watches one namespace (or all, where names are not
// taken), so a name is looked up in the namespace of each: with -n a,b, the objects
// named in every namespace given must be gone.
func (c *Conditions) allDeleted() bool {
	if len(c.live) > 0 {
		return false
	}
	for _, w := range c.watched {
		store := w.Store()
		for _, name := range c.cfg.Names {
			if _, exists, _ := store.GetByKey(cache.NewObjectName(w.Namespace(), name).String()); exists {
				return false
			}
		}
	}
	return true
}
