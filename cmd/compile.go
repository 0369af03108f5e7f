package cmd

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// The compile step of a run (kubectl's Complete): every jq program, ignored path,
// transition and receiver format the flags and the config file name is compiled once,
// here, so that its errors come before anything connects and the engine is handed only
// what runs.

// differ compiles --ignore-path into the run's Differ; nil with --no-diff.
func (f *outputFlags) differ(noFastPaths bool) (*diff.Differ, error) {
	if f.noDiff {
		return nil, nil
	}
	var ignores []diff.IgnorePath
	for _, p := range f.ignorePaths {
		ip, err := diff.ParseIgnorePath(p)
		if err != nil {
			return nil, usageErrorf("--ignore-path %q: %v", p, err)
		}
		ignores = append(ignores, ip)
	}
	d := diff.NewDiffer(ignores)
	if noFastPaths {
		d = d.WithoutFastPaths()
	}
	return d, nil
}

// compileOutput compiles --until, every sink's jq expression and every http sink's
// format (with the config file's formats, by name).
func compileOutput(cfg *engine.Config, until string, fileFormats map[string]string) error {
	if until != "" {
		q, err := jq.Compile(until)
		if err != nil {
			return usageErrorf("--until: %v", err)
		}
		cfg.End.Until = q
	}
	out := &cfg.Output
	out.Queries = map[string]*jq.Query{}
	for _, s := range out.Sinks {
		if s.Type != config.KindJQ && s.Expr == "" { // exec and http sinks may have one
			continue
		}
		q, err := jq.Compile(s.Expr)
		switch {
		case err != nil && s.Origin == "--jq":
			return usageErrorf("--jq: %v", err)
		case err != nil:
			return usageErrorf("sink %q: %v", s.Name, err)
		}
		out.Queries[s.Name] = q
	}
	formats, err := notify.NewCatalog(fileFormats)
	if err != nil {
		return usageErrorf("formats: %v", err)
	}
	out.Formats = map[string]*notify.Compiled{}
	for _, s := range out.Sinks {
		if s.Type != config.KindHTTP {
			continue
		}
		if err := config.CheckHTTP(s); err != nil {
			return usageErrorf("sink %q: %v", s.Name, err)
		}
		if s.Format == "" {
			continue
		}
		f, err := formats.Lookup(s.Format)
		if err != nil {
			return usageErrorf("sink %q: %v", s.Name, err)
		}
		if out.Formats[s.Name], err = f.Compile(); err != nil {
			return usageErrorf("sink %q: %v", s.Name, err)
		}
	}
	return nil
}

// compileTransitions compiles every transition the run names (--on and the sinks' on=),
// from the shipped ones and the config file's; nil when it names none.
func compileTransitions(on []string, sinks []config.Sink, fileTransitions map[string]string, warn func(string, ...any)) (*transition.Set, error) {
	catalog, err := transition.NewCatalog(fileTransitions)
	if err != nil {
		return nil, usageErrorf("transitions: %v", err)
	}
	var names []string
	add := func(where string, list []string) error {
		for _, name := range list {
			if _, err := catalog.Lookup(name); err != nil {
				return usageErrorf("%s: %v", where, err)
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return nil
	}
	if err := add("--on", on); err != nil {
		return nil, err
	}
	for _, s := range sinks {
		if s.On == "" {
			continue
		}
		if err := add(fmt.Sprintf("sink %q: on", s.Name), strings.Split(s.On, "|")); err != nil {
			return nil, err
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	set, err := catalog.Compile(names, warn)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return set, nil
}

// compileHealth gives the run its health step, with the health rules (the shipped ones and
// the config file's) compiled, when something reads an object's health: --health,
// --stalled-after, --until-ready, --owned (the followed object's rollout line), -o wide
// (its HEALTH column), --ui, a transition or a jq expression that reads .health. Without
// it no health is computed, and JSON has no "health" (docs/health.md says why).
func compileHealth(cfg *engine.Config, asked bool, stalledAfter time.Duration, fileRules map[string]health.Rule) error {
	reads := func(q *jq.Query) bool { return q != nil && q.Reads("health") }
	needed := asked || stalledAfter > 0 || cfg.Watch.UntilReady || cfg.Watch.Owned || cfg.UI ||
		cfg.Events.Transitions.Reads("health") || reads(cfg.End.Until)
	for _, s := range cfg.Output.Sinks {
		needed = needed || s.Format == string(render.FormatWide) || reads(cfg.Output.Queries[s.Name])
	}
	if !needed {
		return nil
	}
	catalog, err := health.NewCatalog(fileRules)
	if err != nil {
		return usageErrorf("health: %v", err)
	}
	rules, err := catalog.Compile()
	if err != nil {
		return usageErrorf("%v", err)
	}
	cfg.Health = &engine.Health{Rules: rules, StallAfter: stalledAfter}
	cfg.Watch.Health, cfg.Watch.HealthOwns = true, rules.Owns
	return nil
}
