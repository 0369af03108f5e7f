// Package compile is the compile step of a run (kubectl's Complete): every jq program,
// ignored path, transition, receiver format and sink the flags and the config file name
// is compiled once, here (each sink's by its kind), so that its errors come before
// anything connects and the engine is handed only what runs. Every error is bad usage
// (diag.UsageError).
package compile

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/episode"
	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// Differ compiles --ignore-path into the run's Differ; nil with --no-diff.
func Differ(noDiff bool, ignorePaths []string, noFastPaths bool) (*diff.Differ, error) {
	if noDiff {
		return nil, nil
	}
	var ignores []diff.IgnorePath
	for _, p := range ignorePaths {
		ip, err := diff.ParseIgnorePath(p)
		if err != nil {
			return nil, diag.Usagef("--ignore-path %q: %v", p, err)
		}
		ignores = append(ignores, ip)
	}
	d := diff.NewDiffer(ignores)
	if noFastPaths {
		d = d.WithoutFastPaths()
	}
	return d, nil
}

// Output compiles --until, and every sink's settings as its kind says (a jq
// expression; an http sink's format, with the config file's formats, c.Formats, which are
// checked whether a sink uses them or not, as its transitions are).
func Output(cfg *engine.Config, until string, c sinkkind.Compiling) error {
	if until != "" {
		q, err := jq.Compile(until)
		if err != nil {
			return diag.Usagef("--until: %v", err)
		}
		cfg.End.Until = q
	}
	if _, err := notify.NewCatalog(c.Formats); err != nil {
		return diag.Usagef("formats: %v", err)
	}
	for _, s := range cfg.Output.Sinks {
		err := s.Compile(c)
		switch {
		case err != nil && s.Origin == "--jq":
			return diag.Usagef("--jq: %v", err)
		case err != nil:
			return diag.Usagef("sink %q: %v", s.Name, err)
		}
	}
	return nil
}

// Signal compiles every transition the run names (--on and the sinks' on=),
// from the shipped ones and the config file's, and the episodes of the sinks with on=:
// their settings, and the opposites that resolve them, which the run evaluates too.
//
// sinks are the run's listeners' sinks, in order (cfg.Output.Sinks, or top's own).
func Signal(cfg *engine.Config, on []string, sinks []sinkkind.Spec, fileTransitions map[string]string, warn func(string, ...any)) error {
	catalog, err := transition.NewCatalog(fileTransitions)
	if err != nil {
		return diag.Usagef("transitions: %v", err)
	}
	var names []string
	add := func(where string, list []string) error {
		for _, name := range list {
			if _, err := catalog.Lookup(name); err != nil {
				return diag.Usagef("%s: %v", where, err)
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return nil
	}
	if err := add("--on", on); err != nil {
		return err
	}
	cfg.Events.Episodes, cfg.Events.Opposites = nil, nil
	for i, s := range sinks {
		if s.On == "" {
			if key := episodeKey(s); key != "" {
				return diag.Usagef("sink %q: %s groups what the sink's on= keeps into episodes; add on=TRANSITIONS, or drop %s", s.Name, key, key)
			}
			continue
		}
		list := strings.Split(s.On, "|")
		where := fmt.Sprintf("sink %q: on", s.Name)
		if err := add(where, list); err != nil {
			return err
		}
		set, err := episodeSettings(s, list)
		if err != nil || set == nil {
			return err
		}
		if cfg.Events.Episodes == nil {
			cfg.Events.Episodes = make([]*episode.Settings, len(sinks))
			cfg.Events.Opposites = map[string]episode.Opposite{}
		}
		cfg.Events.Episodes[i] = set
		for _, name := range list {
			t, _ := catalog.Lookup(name)
			if t.ResolvedBy == "" {
				continue
			}
			if err := add(fmt.Sprintf("transition %q: %s", name, transition.ResolvedByKey), []string{t.ResolvedBy}); err != nil {
				return err
			}
			cfg.Events.Opposites[name] = episode.Opposite{Name: t.ResolvedBy, Holds: t.Holds}
			if len(on) > 0 && !slices.Contains(on, t.ResolvedBy) {
				warn("sink %q: its episodes of %s are resolved by %s, which --on leaves out of the stream: they end only when nothing is heard of them for its resolve-after; add %s to --on, or drop --on (the sinks' on= are enough)",
					s.Name, name, t.ResolvedBy, t.ResolvedBy)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	set, err := catalog.Compile(names, warn)
	if err != nil {
		return diag.Usage(err)
	}
	cfg.Events.Transitions = set
	return nil
}

// episodeSettings are the episodes of sink s, whose on= names transitions.
func episodeSettings(s sinkkind.Spec, on []string) (*episode.Settings, error) {
	set := &episode.Settings{Name: s.Name, On: on, Cooldown: cmp.Or(s.Cooldown, episode.DefaultCooldown),
		ResolveAfter: cmp.Or(s.ResolveAfter, episode.DefaultResolveAfter), Digest: s.Digest}
	if s.Group != "" {
		q, err := jq.Compile(s.Group)
		if err != nil {
			return nil, diag.Usagef("sink %q: group: %v", s.Name, err)
		}
		set.Group = q
	}
	return set, nil
}

// Health gives the run its health step, with the health rules (the shipped ones and
// the config file's) compiled, when something reads an object's health: --health,
// --stalled-after, --until-ready, --owned (the followed object's rollout line), -o wide
// (its HEALTH column), --ui, a transition or a jq expression that reads .health. Without
// it no health is computed, and JSON has no "health" (docs/health.md says why).
func Health(cfg *engine.Config, asked bool, stalledAfter time.Duration, fileRules map[string]health.Rule) error {
	reads := func(q *jq.Query) bool { return q != nil && q.Reads("health") }
	needed := asked || stalledAfter > 0 || cfg.Watch.UntilReady || cfg.Watch.Owned || cfg.UI ||
		cfg.Events.Transitions.Reads("health") || reads(cfg.End.Until)
	for _, s := range cfg.Output.Sinks {
		needed = needed || s.Format() == string(render.FormatWide) || slices.ContainsFunc(s.Queries(), reads)
	}
	if !needed {
		return nil
	}
	catalog, err := health.NewCatalog(fileRules)
	if err != nil {
		return diag.Usagef("health: %v", err)
	}
	rules, err := catalog.Compile()
	if err != nil {
		return diag.Usagef("%v", err)
	}
	cfg.Health = &health.Config{Rules: rules, StallAfter: stalledAfter}
	cfg.Watch.Health, cfg.Watch.HealthOwns = true, rules.Owns
	return nil
}

// episodeKey is the first episodes' setting s has ("" for none).
func episodeKey(s sinkkind.Spec) string {
	switch {
	case s.Group != "":
		return "group"
	case s.Cooldown != 0:
		return "cooldown"
	case s.ResolveAfter != 0:
		return "resolve-after"
	case s.Digest != 0:
		return "digest"
	}
	return ""
}
