// Package conditions decides when a run has what it waited for: --until (a jq
// expression an event makes true), --until-deleted (every named object gone) and
// --until-rollout (the followed object's rollout completed or failed). The pipeline's
// conditions step asks it about each event as it is numbered, one at a time, before
// any sink has it (pipeline.Sequence), so no event is made after the one that met the
// condition, even in the middle of the initial list.
package conditions

import (
	"context"
	"fmt"
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
	// Rollout, for --until-rollout, says whether an event ends the followed object's
	// rollout (nil: not waited for).
	Rollout func(ev *event.Event) bool
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
	// failedRollout is the rollout whose failure met --until-rollout.
	failedRollout atomic.Pointer[event.Rollout]
}

// New returns the run's condition, or nil when cfg sets none.
func New(cfg Config) *Conditions {
	if cfg.Until == nil && !cfg.UntilDeleted && cfg.Rollout == nil {
		return nil
	}
	return &Conditions{cfg: cfg}
}

// Watch gives the informers of the watched types (not the core Events' or --owned's
// children's), before they start: --until-deleted looks the names up in them.
func (c *Conditions) Watch(w ...Watched) { c.watched = append(c.watched, w...) }

// Awaited names the condition for messages, as the user wrote it.
func (c *Conditions) Awaited() string {
	switch {
	case c.cfg.UntilDeleted:
		return "--until-deleted"
	case c.cfg.Rollout != nil:
		return "--until-rollout"
	}
	return "--until"
}

// NotMet says that the run ended (why: "interrupted", "timed out after 5m", ...) before
// the condition was met.
func (c *Conditions) NotMet(why string) error {
	return fmt.Errorf("%s before %s was met", why, c.Awaited())
}

// MetBy reports whether ev meets the condition: asked once per event, in the order they
// are numbered. For UntilDeleted the informer's cache no longer holds a deleted object
// when it is asked.
func (c *Conditions) MetBy(ev *event.Event) bool {
	if c.cfg.Rollout != nil && c.cfg.Rollout(ev) {
		if ev.Rollout.State != event.RolloutComplete {
			c.failedRollout.Store(ev.Rollout)
		}
		return true
	}
	return c.cfg.Until != nil && c.untilTrue(ev) ||
		c.cfg.UntilDeleted && ev.Type == event.Deleted && c.isSynced.Load() && c.allDeleted()
}

// RolloutFailed is the failed rollout that met --until-rollout, nil if none did; safe on
// a nil receiver (a run without conditions).
func (c *Conditions) RolloutFailed() *event.Rollout {
	if c == nil {
		return nil
	}
	return c.failedRollout.Load()
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
	return c.cfg.UntilDeleted && c.allDeleted()
}

// allDeleted reports whether no informer's cache holds any of the named objects. Each
// informer of a namespaced type watches one namespace (or all, where names are not
// taken), so a name is looked up in the namespace of each: with -n a,b, the objects
// named in every namespace given must be gone.
func (c *Conditions) allDeleted() bool {
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
