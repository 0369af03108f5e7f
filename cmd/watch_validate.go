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
	"github.com/kubeevents/kubeevents/internal/sinkkind/viewsink"
	"github.com/kubeevents/kubeevents/internal/transition"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// validate checks each flag's value, and the flags against each other (plan.Check:
// what Resolve checks again once the clusters are known).
func (f *watchFlags) validate(cfg *engine.Config, streams genericiooptions.IOStreams) error {
	req := cfg.Watch
	switch {
	case f.since < 0:
		return usageErrorf("--since %s: give a positive duration, e.g. 10m", f.since)
	case f.uiHistory < 1:
		return usageErrorf("--ui-history %d: give a number of changes of at least 1", f.uiHistory)
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
	cfg.Watch.Features = f.features(*cfg, streams)
	return plan.Check(plan.FeaturesOf(cfg.Watch))
}

// features are what this watch asks for that may conflict: the flags and the config
// file's, beyond what the request says itself (plan.FeaturesOf).
func (f *watchFlags) features(cfg engine.Config, streams genericiooptions.IOStreams) plan.Features {
	ft := plan.Features{Until: f.until != "", Resume: cfg.Resume, ResumeReset: f.resumeReset, LeaderElect: f.leaderElect.Enabled,
		WatchOnly: f.watchOnly, WithEvents: f.withEvents, Since: f.since != 0, Resync: f.resync > 0,
		SyncLeftOut: len(cfg.Events.Types) > 0 && !slices.Contains(cfg.Events.Types, event.Sync),
		NoBy:        f.noBy, By: !cfg.Events.By.Empty(), On: len(f.on) > 0, FoldRollouts: f.foldRollouts,
		UI: f.ui, UIHistory: f.changed("ui-history"), StdoutTerminal: terminals.IsTerminal(streams.Out),
		Health: f.health, StalledAfter: f.stalledAfter > 0, EventTypes: len(cfg.Events.Types) > 0}
	for _, s := range cfg.Output.Sinks {
		switch {
		case !s.WritesStdout():
		case viewsink.Replaces(s):
			ft.Screen = s.Format()
		default:
			ft.OtherStdout = s.Name
		}
	}
	return ft
}

// checkExcludeNamespaces: --exclude-namespace takes names or globs, and applies to -A.
func checkExcludeNamespaces(req plan.Request) error {
	if len(req.ExcludeNamespaces) == 0 {
		return nil
	}
	for _, p := range req.ExcludeNamespaces {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return usageErrorf("--exclude-namespace %q: not a namespace name or glob pattern (*, ?, [a-z])", p)
		}
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
