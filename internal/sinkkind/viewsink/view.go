// Package viewsink is the full-screen view (--ui, package ui) as the terminal sink: under
// --ui the run makes the terminal sink one of this kind, built into the view. No --sink
// names it, so it is not registered.
package viewsink

import (
	"slices"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/terminalsink"
)

// Kind is the view's sink kind: its settings are the view.
var Kind = &sinkkind.Kind{
	Name: "view", Description: "the full-screen view (--ui)", NameDoc: "screen",
	New: func() sinkkind.Settings { return &Settings{} },
	Build: func(spec sinkkind.Spec, _ sinkkind.Env) (listener.Sink, error) {
		return spec.Settings.(*Settings).View, nil
	},
}

// Settings are the view's sink's.
type Settings struct{ View listener.Sink }

// Replaces reports whether the view takes the place of the sink under --ui: the terminal
// sink.
func Replaces(s sinkkind.Spec) bool { return s.Kind == terminalsink.Kind }

// Wide reports whether the sink the view replaces shows kubectl's wide columns.
func Wide(s sinkkind.Spec) bool { return Replaces(s) && s.Format() == "wide" }

// Take returns specs with the sinks the view replaces made the view's. When its buffer is
// full the view merges an object's events (coalesce) rather than hold up the others: it
// shows each object's newest state, and its Write never waits for the terminal anyway.
func Take(specs []sinkkind.Spec, view listener.Sink) []sinkkind.Spec {
	specs = slices.Clone(specs)
	for i, s := range specs {
		if Replaces(s) {
			specs[i].Kind, specs[i].Settings, specs[i].OnFull = Kind, &Settings{View: view}, listener.Coalesce
		}
	}
	return specs
}
