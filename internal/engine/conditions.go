package engine

import (
	"context"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/jq"
)

// exitConditions decides the exit conditions Until, UntilDeleted and UntilRollout: the
// pipeline's conditions step asks it about each event as it is numbered, before any
// sink has it (pipeline.Sequence), so no event is made after the one that met a
// condition, even in the middle of the initial list.
type exitConditions struct {
	cfg       runConfig
	informers []*informer.Informer // the watched types' informers, not the Events'
	isSynced  atomic.Bool
	// failedRollout is the rollout whose failure met --until-rollout.
	failedRollout atomic.Pointer[event.Rollout]
}

func newConditions(cfg runConfig) *exitConditions {
	return &exitConditions{cfg: cfg}
}

// awaited names the condition for messages, as the user wrote it.
func (c *exitConditions) awaited() string {
	if c.cfg.Watch.UntilDeleted {
		return "--until-deleted"
	}
	if c.cfg.Owned != nil && c.cfg.Owned.UntilRollout {
		return "--until-rollout"
	}
	return "--until"
}

// metBy is asked about each event in the order they are numbered (pipeline.Sequence).
// For UntilDeleted the informer's cache no longer holds a deleted object when it is
// asked.
func (c *exitConditions) metBy(ev *event.Event) bool {
	if c.cfg.Owned != nil && c.cfg.Owned.rolloutEnded(ev) {
		if ev.Rollout.State != event.RolloutComplete {
			c.failedRollout.Store(ev.Rollout)
		}
		return true
	}
	return c.cfg.UntilQuery != nil && c.untilTrue(ev) ||
		c.cfg.Watch.UntilDeleted && ev.Type == event.Deleted && c.isSynced.Load() && c.allDeleted()
}

// rolloutFailed is the failed rollout that ended the run (--until-rollout), nil if none
// did; safe on a nil receiver (a run without conditions).
func (c *exitConditions) rolloutFailed() *event.Rollout {
	if c == nil {
		return nil
	}
	return c.failedRollout.Load()
}

func (c *exitConditions) untilTrue(ev *event.Event) bool {
	if !c.cfg.UntilQuery.Selects(string(ev.Type)) {
		return false // it would give nothing (jq/types.go)
	}
	input, err := c.cfg.UntilQuery.Input(ev, c.cfg.Differ, c.cfg.ShowOld)
	if err != nil {
		return false
	}
	outs, err := c.cfg.UntilQuery.Run(context.Background(), input)
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

// synced is called once every informer has its initial list, and reports whether the
// condition is met already: named objects that do not exist then count as deleted, as
// with `kubectl wait --for=delete`.
func (c *exitConditions) synced() bool {
	c.isSynced.Store(true)
	return c.allDeleted()
}

// allDeleted reports whether no informer's cache holds any of the named objects. Each
// informer of a namespaced type watches one namespace (or all, where names are not
// taken), so a name is looked up in the namespace of each: with -n a,b, the objects
// named in every namespace given must be gone.
func (c *exitConditions) allDeleted() bool {
	for _, inf := range c.informers {
		store := inf.Store()
		for _, name := range c.cfg.Watch.Names {
			if _, exists, _ := store.GetByKey(cache.NewObjectName(inf.Namespace(), name).String()); exists {
				return false
			}
		}
	}
	return true
}
