package cmd

import (
	"fmt"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/clusterstore"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/transition"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// validate checks the flags against each other.
func (f *watchFlags) validate(cfg engine.Config) error {
	req := cfg.Watch
	// Flags that would change nothing are refused rather than ignored.
	switch {
	case f.since != 0 && !f.withEvents:
		return usageErrorf("--since shows the core Events that happened before the start; add --with-events")
	case f.since < 0:
		return usageErrorf("--since %s: give a positive duration, e.g. 10m", f.since)
	case req.UntilDeleted && len(req.Names) == 0:
		return usageErrorf("--until-deleted needs the names of the objects to wait for: kubeevents watch TYPE NAME... --until-deleted")
	case f.resumeReset && cfg.Resume == "":
		return usageErrorf("--resume-reset applies to --resume only; add --resume FILE")
	case cfg.Resume != "" && req.Owned:
		return usageErrorf("--resume and --owned do not go together: a checkpoint keeps the objects of the types given, not of an owner's tree; drop one")
	case f.resync > 0 && len(cfg.Events.Types) > 0 && !slices.Contains(cfg.Events.Types, event.Sync):
		return usageErrorf("--resync re-delivers objects as SYNC events, which --event-types leaves out; add SYNC to --event-types, or drop --resync")
	case f.noBy && !cfg.Events.By.Empty():
		return usageErrorf("--by and --not-by filter on the field managers, which --no-by leaves unread; drop one")
	case f.changed("ui-history") && !f.ui:
		return usageErrorf("--ui-history applies to --ui only; add --ui")
	case f.uiHistory < 1:
		return usageErrorf("--ui-history %d: give a number of changes of at least 1", f.uiHistory)
	case cfg.Resume != "" && f.watchOnly:
		return usageErrorf("--resume and --watch-only do not go together: a resumed start emits what changed while kubeevents was down, which --watch-only leaves out; drop one")
	case f.ui && f.foldRollouts:
		return usageErrorf("--ui shows each object as it is now, which folding its events would leave stale; drop --fold-rollouts (a sink's fold folds that sink alone)")
	case len(f.on) > 0 && f.foldRollouts:
		return usageErrorf("--on keeps only events in which a transition happened, which are never folded: --fold-rollouts would change nothing; drop one (a sink's on= goes with folding)")
	}
	for _, name := range f.on {
		if err := transition.CheckName(name); err != nil {
			return usageErrorf("--on: %v", err)
		}
	}
	if req.LabelSelector != "" {
		if _, err := labels.Parse(req.LabelSelector); err != nil {
			return usageErrorf("-l/--selector %q: %v", req.LabelSelector, oneLine(err))
		}
	}
	if req.FieldSelector != "" {
		if _, err := fields.ParseSelector(req.FieldSelector); err != nil {
			return usageErrorf("--field-selector %q: %v", req.FieldSelector, oneLine(err))
		}
	}
	if req.NamespaceGiven && !req.AllNamespaces {
		if err := plan.CheckNamespaceFlag(req.Namespace); err != nil {
			return err
		}
	}
	if _, _, err := clusterstore.ParseRef(cfg.Resume); err != nil {
		return &UsageError{Err: err}
	}
	if err := f.leaderElect.Validate(f.changed); err != nil {
		return &UsageError{Err: err}
	}
	if err := checkExcludeNamespaces(req); err != nil {
		return err
	}
	if err := checkMetricsAddr(cfg.MetricsAddr); err != nil {
		return err
	}
	if err := cfg.Events.By.Check(); err != nil {
		return &UsageError{Err: err}
	}
	if err := checkHealth(cfg, f); err != nil {
		return err
	}
	return checkOwned(req, f.until)
}

// checkHealth checks --until-ready, --stalled-after and --health against the others.
func checkHealth(cfg engine.Config, f *watchFlags) error {
	req := cfg.Watch
	switch {
	case (f.health || f.stalledAfter > 0 || req.UntilReady) && req.MetadataOnly:
		return usageErrorf("%s reads the objects' status, which --metadata-only leaves out: drop one of them", healthFlag(f))
	case !req.UntilReady:
		return nil
	case len(req.Names) == 0:
		return usageErrorf("--until-ready needs the objects to wait for: kubeevents watch TYPE NAME... --until-ready, or TYPE/NAME (with --owned, and what it owns)")
	case f.until != "" || req.UntilDeleted || req.UntilRollout:
		return usageErrorf("--until-ready cannot be combined with --until, --until-deleted or --until-rollout: give one condition")
	case len(f.on) > 0 || len(cfg.Events.Types) > 0 || !cfg.Events.By.Empty():
		return usageErrorf("--until-ready follows every change of the objects it waits for, which --on, --event-types, --by and --not-by would leave out; drop them (a sink's on= and event-types= filter that sink alone)")
	case f.watchOnly || cfg.Resume != "":
		return usageErrorf("--until-ready needs the objects as they are at start-up, which --watch-only and --resume leave out; drop them")
	}
	return nil
}

// healthFlag names the flag that asked for health, for messages.
func healthFlag(f *watchFlags) string {
	switch {
	case f.untilReady:
		return "--until-ready"
	case f.stalledAfter > 0:
		return "--stalled-after"
	}
	return "--health"
}

// checkExcludeNamespaces: --exclude-namespace takes names or globs, and applies to -A.
func checkExcludeNamespaces(req plan.Request) error {
	if len(req.ExcludeNamespaces) == 0 {
		return nil
	}
	if !req.AllNamespaces {
		return usageErrorf("--exclude-namespace leaves namespaces out of -A/--all-namespaces; add -A (or list the namespaces to watch: -n a,b,c)")
	}
	for _, p := range req.ExcludeNamespaces {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return usageErrorf("--exclude-namespace %q: not a namespace name or glob pattern (*, ?, [a-z])", p)
		}
	}
	return nil
}

// checkOwned checks the flags of --owned against the others.
func checkOwned(req plan.Request, until string) error {
	if !req.Owned {
		switch {
		case len(req.OwnedTypes) > 0:
			return usageErrorf("--owned-types applies to --owned only; add --owned")
		case req.UntilRollout:
			return usageErrorf("--until-rollout follows a rollout through what the object owns; add --owned (kubeevents watch deployment/web --owned --until-rollout), or wait for the objects' health with --until-ready")
		}
		return nil
	}
	switch {
	case len(req.Types) != 1 || len(req.Names) != 1:
		return usageErrorf("--owned follows one object: give it as TYPE/NAME, e.g. kubeevents watch deployment/web --owned")
	case req.AllNamespaces:
		return usageErrorf("--owned follows one object in one namespace: drop -A/--all-namespaces (use -n NAMESPACE)")
	case req.LabelSelector != "" || req.FieldSelector != "":
		return usageErrorf("--owned selects the objects by their owner (and the server filters them by the owner's selector): drop -l/--selector and --field-selector")
	case req.UntilRollout && (until != "" || req.UntilDeleted):
		return usageErrorf("--until-rollout cannot be combined with --until or --until-deleted: give one condition")
	case req.UntilRollout && req.MetadataOnly:
		return usageErrorf("--until-rollout reads the object's status, which --metadata-only leaves out: drop one of them")
	}
	return nil
}

// parseEventTypes reads --event-types: ADDED, MODIFIED, DELETED and SYNC (a --resync
// re-delivery), in any case; nil keeps every type.
func parseEventTypes(values []string) ([]event.EventType, error) {
	var types []event.EventType
	for _, v := range values {
		t := event.EventType(strings.ToUpper(strings.TrimSpace(v)))
		switch t {
		case event.Added, event.Modified, event.Deleted, event.Sync, event.Stalled:
			types = append(types, t)
		default:
			return nil, usageErrorf("--event-types %q: not an event type; use ADDED, MODIFIED, DELETED, SYNC or STALLED, comma-separated", v)
		}
	}
	return types, nil
}

// checkMetricsAddr checks --metrics-addr's form (HOST:PORT); "" is off.
func checkMetricsAddr(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 0 || n > 65535) {
			err = fmt.Errorf("port %d out of range", n)
		}
	}
	if err != nil {
		return usageErrorf("--metrics-addr %q: want HOST:PORT, e.g. 127.0.0.1:9090 (:9090 listens on every interface)", addr)
	}
	return nil
}

// checkRequestTimeout refuses a --request-timeout that client-go would refuse later
// (and report as a connection error, exit 1): a number of seconds or a duration with a
// unit, as kubectl takes it, and not negative.
func checkRequestTimeout(configFlags *genericclioptions.ConfigFlags) error {
	if configFlags.Timeout == nil || *configFlags.Timeout == "" {
		return nil
	}
	value := *configFlags.Timeout
	if seconds, err := strconv.ParseInt(value, 10, 64); err == nil && seconds >= 0 {
		return nil
	}
	if d, err := time.ParseDuration(value); err == nil && d >= 0 {
		return nil
	}
	return usageErrorf("--request-timeout %q: give a duration with a unit, e.g. 30s or 2m, or a number of seconds (0: no timeout)", value)
}
