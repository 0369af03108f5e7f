package engine

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/conditions"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/plan"
)

// Health is what the run's health step is given (package health): the run computes each
// object's health only when something reads it (the command decides: docs/health.md).
type Health struct {
	Rules *health.Rules
	// StallAfter makes a STALLED event for an object InProgress that long without
	// progress (--stalled-after; 0: never), and with --until-ready fails the wait.
	StallAfter time.Duration
	// StatusWritten are the custom resources a controller writes the status of (the
	// plan's, every cluster's): one without a status yet is InProgress.
	StatusWritten []schema.GroupResource
}

// newHealthStep is the run's health step, nil when the run does not compute health.
func newHealthStep(cfg *Config, warn func(format string, args ...any)) *health.Step {
	if cfg.Health == nil {
		return nil
	}
	cfg.Health.Rules.WarnTo(warn)
	return health.New(health.Config{Rules: cfg.Health.Rules, StallAfter: cfg.Health.StallAfter, StatusWritten: cfg.Health.StatusWritten})
}

// readyWait is the wait of --until-rollout or --until-ready (conditions.Ready), nil
// without either: the followed object's rollout; or the named objects' health, or the
// followed object's and everything it owns (--owned).
func (rc runConfig) readyWait() *conditions.Ready {
	w := rc.cfg.Watch
	stallsFail := rc.cfg.Health != nil && rc.cfg.Health.StallAfter > 0
	switch {
	case rc.follow != nil && rc.follow.UntilRollout:
		return conditions.UntilRollout(rc.follow.Tree.IsRoot)
	case !w.UntilReady:
		return nil
	case rc.follow != nil:
		return conditions.UntilReady(rc.follow.Tree.IsRoot, 1, true, stallsFail)
	}
	names := w.Names
	return conditions.UntilReady(func(ev *event.Event) bool {
		m := ev.Meta()
		return !ev.Child && m != nil && slices.Contains(names, m.GetName())
	}, 0, false, stallsFail)
}

// foundChildrenConfig is c's config for a run that watches every namespaced type for the
// children of --owned's object (plan.Cluster.ChildrenFound): client-go's default pace of
// 5 requests a second (burst 10) would spread the LIST and WATCH of some 30-70 types over
// many seconds, and hold the owner lookups of the tree behind them past their time limit
// (a child left out). It is kubectl's pace instead, unless the config sets its own.
func foundChildrenConfig(c *plan.Cluster) *rest.Config {
	if !c.ChildrenFound || c.Config.QPS != 0 || c.Config.RateLimiter != nil {
		return c.Config
	}
	config := rest.CopyConfig(c.Config)
	config.QPS, config.Burst = 50, 300
	return config
}
