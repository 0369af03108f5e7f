package engine

import (
	"context"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/jq"
)

// exitConditions decides the exit conditions Until and UntilDeleted (MaxEvents is counted
// where events are numbered, in the informer). The informers ask it about each event as
// they number it (event.Until), before any sink has it: no event is made after the one
// that met a condition, even in the middle of the initial list.
type exitConditions struct {
	cfg       runConfig
	informers []*informer.Informer // the watched types' informers, not the Events'
	until     *event.Until
	met       chan struct{} // closed once a condition is met
	isSynced  atomic.Bool
	// failedRollout is the rollout whose failure met --until-rollout.
	failedRollout atomic.Pointer[event.Rollout]
}

func newConditions(cfg runConfig) *exitConditions {
	c := &exitConditions{cfg: cfg, met: make(chan struct{})}
	c.until = &event.Until{Met: c.metBy, Done: func() { close(c.met) }}
	return c
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

// metBy runs on an informer's goroutine, once per event, in the order they are numbered.
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

// synced is called once every informer has its initial list: named objects that do not
// exist then count as deleted already, as with `kubectl wait --for=delete`.
func (c *exitConditions) synced() {
	c.isSynced.Store(true)
	if c.allDeleted() {
		c.until.Meet()
	}
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
