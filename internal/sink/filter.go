package sink

import (
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
)

// Filter says which events a sink writes, by what its spec says (package sinkkind); the
// others are ErrFiltered, so that the sink's summary counts them as filtered.
type Filter struct {
	// EventTypes, when set, are the only event types written, "|"-separated
	// (ADDED|DELETED), as a sinkkind.Spec holds them. SYNC (a resync's re-delivery) is a
	// type like the others: left out unless listed. ROLLOUT lines pass: only sinks that
	// fold get them.
	EventTypes string
	// On, when not empty, names transitions: only events in which one of them happened
	// are written (event.Event.On). SYNC re-deliveries and ROLLOUT lines, in which
	// nothing happened, are not.
	On []string
	// Fold leaves out what a rollout in progress folds (event.Event.Folded).
	Fold bool
	// Shows, when not nil, are the transitions the sink's events may name
	// (event.Event.On): its own on=, else --on's. The others that happened were asked
	// for by other sinks and are left out of what it writes (event.Event.ShowingOn).
	// Empty but not nil: none.
	Shows []string
	// Episodes says some sink of the run has episodes (package episode); Index is this
	// sink's among the run's, whose decisions are the events' Episodes[Index]. An event
	// its episode holds is left out; one its episode opens or updates goes to it with
	// its decision (event.Event.ForSink), whatever on= says; the episodes' own events
	// (EPISODE, DIGEST) go to the sinks they are for alone, and, as they are, to one
	// that follows every sink's episodes (AllEpisodes: the live view).
	Episodes    bool
	Index       int
	AllEpisodes bool
}

// WithFilter wraps s so that it writes only the events f keeps; s itself when f keeps
// every event.
func WithFilter(s listener.Sink, f Filter) listener.Sink {
	if f.EventTypes == "" && len(f.On) == 0 && !f.Fold && f.Shows == nil && !f.Episodes {
		return s
	}
	filtered := &filter{Sink: s, on: f.On, fold: f.Fold, shows: f.Shows, episodes: f.Episodes, index: f.Index, all: f.AllEpisodes}
	if f.EventTypes != "" {
		for _, t := range strings.Split(f.EventTypes, "|") {
			filtered.types = append(filtered.types, event.EventType(t))
		}
	}
	// The listener asks the sink it is given whether it holds events after Write (exec,
	// http) and can abort them: the filter must answer as the sink it wraps does.
	if h, ok := s.(listener.Holder); ok {
		return &holdingFilter{filter: filtered, holder: h}
	}
	return filtered
}

// filter is a sink behind a Filter.
type filter struct {
	listener.Sink
	types []event.EventType
	on    []string
	fold  bool
	shows []string // nil: every transition that happened
	// The sink's episodes (Filter.Episodes, Index, AllEpisodes).
	episodes, all bool
	index         int
}

// holdingFilter is a filter around a sink that holds events after Write.
type holdingFilter struct {
	*filter
	holder listener.Holder
}

func (f *holdingFilter) Hold(settle func(ev *event.Event, err error)) { f.holder.Hold(settle) }

// Fence passes the listener's fence on to a sink that asks it (listener.Fenced).
func (f *holdingFilter) Fence(fence func() error) {
	if fenced, ok := f.holder.(listener.Fenced); ok {
		fenced.Fence(fence)
	}
}

func (f *holdingFilter) Abort() {
	if a, ok := f.holder.(listener.Aborter); ok {
		a.Abort()
	}
}

func (f *filter) Write(ev *event.Event) error {
	action := event.EpisodeNone
	if f.episodes && f.index < len(ev.Episodes) {
		action = ev.Episodes[f.index].Action
	}
	switch {
	case ev.Type == event.EpisodeStep || ev.Type == event.DigestStep:
		if action == event.EpisodeNone {
			if f.all {
				return f.Sink.Write(ev)
			}
			return listener.ErrFiltered
		}
		return f.Sink.Write(ev.ForSink(f.index))
	case action == event.EpisodeHeld:
		return listener.ErrFiltered
	case action == event.EpisodeNone && !f.keeps(ev):
		return listener.ErrFiltered
	}
	if action != event.EpisodeNone {
		ev = ev.ForSink(f.index)
	}
	if f.shows != nil {
		ev = ev.ShowingOn(f.shows)
	}
	return f.Sink.Write(ev)
}

func (f *filter) keeps(ev *event.Event) bool {
	switch {
	case f.types != nil && ev.Type != event.RolloutStep && !slices.Contains(f.types, ev.Type):
		return false
	case f.on != nil && !slices.ContainsFunc(ev.On, func(name string) bool { return slices.Contains(f.on, name) }):
		return false
	}
	return !f.fold || !ev.Folded
}
