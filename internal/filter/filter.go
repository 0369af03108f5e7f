// Package filter is the pipeline's filter step: it leaves out what is not news, before
// it is numbered, so that no sink, jq filter or --max-events ever sees it and the
// stream's numbers have no gap for it.
package filter

import (
	"path"
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
)

// Config is what the step leaves out.
type Config struct {
	// EventTypes, when set, are the only event types kept (SYNC is made by the
	// listeners' resync, or not).
	EventTypes []event.EventType
	// ExcludeNamespaces are --exclude-namespace's values: the patterns among them are
	// left out here (names are left out by the server).
	ExcludeNamespaces []string
	// By is --by and --not-by: the managers that made the change.
	By attribution.Filter
	// On are --on's transitions: an event in which none happened is left out.
	On []string
	// ChangesOnly leaves out updates whose diff is empty after the ignored paths.
	ChangesOnly bool
	Differ      *diff.Differ
}

// Stage is the filter step.
type Stage struct {
	types     map[event.EventType]bool
	patterns  []string
	byManager func(*event.Event) bool
	on        []string
	changes   bool
	differ    *diff.Differ
}

// New is the filter step of cfg, or nil when it leaves nothing out.
func New(cfg Config) *Stage {
	s := &Stage{on: cfg.On, changes: cfg.ChangesOnly, differ: cfg.Differ, byManager: cfg.By.Skip(cfg.Differ)}
	if len(cfg.EventTypes) > 0 {
		s.types = map[event.EventType]bool{}
		for _, t := range cfg.EventTypes {
			s.types[t] = true
		}
	}
	for _, ns := range cfg.ExcludeNamespaces {
		if IsPattern(ns) {
			s.patterns = append(s.patterns, ns)
		}
	}
	if s.types == nil && s.patterns == nil && s.byManager == nil && len(s.on) == 0 && !s.changes {
		return nil
	}
	return s
}

// Process says why ev is left out, if it is: of another type than --event-types, in a
// namespace matching an excluded pattern, made by none of --by's managers (or by
// --not-by's), with none of --on's transitions, and, last (what it leaves out is counted
// as unchanged, which only updates the others kept are), an update that changed nothing
// beyond the ignored paths.
func (s *Stage) Process(ev *event.Event) {
	switch {
	case s.types != nil && !s.types[ev.Type]:
		ev.LeftOut = event.LeftOutEventType
	case s.patterns != nil && s.excluded(ev):
		ev.LeftOut = event.LeftOutNamespace
	case s.byManager != nil && s.byManager(ev):
		ev.LeftOut = event.LeftOutBy
	case len(s.on) > 0 && !slices.ContainsFunc(ev.On, func(name string) bool { return slices.Contains(s.on, name) }):
		ev.LeftOut = event.LeftOutOn
	case s.changes && ev.Type == event.Modified && s.differ.Unchanged(ev):
		ev.LeftOut = event.LeftOutUnchanged
	}
}

// excluded reports whether ev's object is in a namespace matching one of the patterns
// (path.Match, as checked by the command).
func (s *Stage) excluded(ev *event.Event) bool {
	m := ev.Meta()
	if m == nil || m.GetNamespace() == "" {
		return false
	}
	for _, p := range s.patterns {
		if ok, _ := path.Match(p, m.GetNamespace()); ok {
			return true
		}
	}
	return false
}

// IsPattern reports whether an --exclude-namespace value is a glob rather than a name.
func IsPattern(s string) bool { return strings.ContainsAny(s, `*?[\`) }
