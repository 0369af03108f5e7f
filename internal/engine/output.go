package engine

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/viewsink"
)

// colorFor decides colour for one output stream (diag.Color).
func (w *session) colorFor(out io.Writer) bool {
	return diag.Color(w.cfg.Output.Color, w.sys.Terminals.IsTerminal(out), w.sys.LookupEnv)
}

// watchOutput ends the run once the standard output's reader is gone (`| head -1`),
// whatever the other sinks (listener.OutputGone). It returns what stops its watching.
func (w *session) watchOutput(ctx context.Context, rc *runConfig) (stop func()) {
	var stdoutSinks []*listener.Listener
	for i, s := range w.cfg.Output.Sinks {
		if s.WritesStdout() {
			stdoutSinks = append(stdoutSinks, rc.listeners[i])
		}
	}
	gone, stop := listener.OutputGone(ctx, w.sys.Out, stdoutSinks, func() {
		if len(stdoutSinks) < len(rc.listeners) {
			w.warnf("the standard output was closed (its reader is gone); stopping, the other sinks write what they hold")
		}
	})
	rc.hooks.outputGone = gone
	return stop
}

// started is said once every informer's rights were checked.
func (w *session) started(listeners []*listener.Listener, informers int) {
	w.infof("watching %s — %d informer%s, %d sink%s (%s); Ctrl-C to stop",
		w.watched(), informers, diag.Plural(informers), len(listeners), diag.Plural(len(listeners)), sinkNames(listeners))
}

// sinkNames lists the listeners' sinks: "screen, events.jsonl".
func sinkNames(listeners []*listener.Listener) string {
	names := make([]string, len(listeners))
	for i, l := range listeners {
		names[i] = l.Name()
	}
	return strings.Join(names, ", ")
}

// synced is called once every informer has its initial list.
func (w *session) synced() (undo func()) {
	if flag := w.initialListHidden(); flag != "" {
		// "watching" is said before the initial list; without this a script that waits
		// for it and then makes a change cannot know whether the change falls in the
		// list (not shown) or after it.
		w.infof("%s listed (not shown: %s); changes from here on are shown", w.watched(), flag)
	}
	if w.sys.Synced == nil {
		return func() {}
	}
	return w.sys.Synced(w.cfg.Speed.Runtime)
}

// initialListHidden names the flag that keeps the initial list (ADDED events of the
// objects that exist at start-up) from every sink: --watch-only, or --event-types without
// ADDED; "" when the list is shown.
func (w *session) initialListHidden() string {
	if w.cfg.Events.WatchOnly {
		return "--watch-only"
	}
	types := w.cfg.Events.Types
	if len(types) == 0 || slices.Contains(types, event.Added) {
		return ""
	}
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return "--event-types " + strings.Join(names, ",")
}

// warnf prints one diagnostic line on stderr; safe from any goroutine.
func (w *session) warnf(format string, args ...any) {
	out := w.sys.ErrOut
	if w.diagnostics != nil {
		out = w.diagnostics
	}
	fmt.Fprintf(out, "kubeevents: "+format+"\n", args...)
}

// warn is warnf for the stream: a re-sync notice also has the terminal's header lines
// printed again (the notice scrolled the last one away).
func (w *session) warn(format string, args ...any) {
	w.warnf(format, args...)
	w.headers.Warned(strings.TrimPrefix(format, plan.ClusterNotice)) // one of several clusters' notices
}

// infof prints a diagnostic that only a person at a terminal (or -v) wants.
func (w *session) infof(format string, args ...any) {
	if w.summaryShown() {
		w.warnf(format, args...)
	}
}

// debugf prints a diagnostic only with -v=2 and up.
func (w *session) debugf(format string, args ...any) {
	if w.sys.Verbosity >= 2 {
		w.warnf(format, args...)
	}
}

func (w *session) summaryShown() bool {
	return w.sys.Verbosity >= 1 || w.sys.Terminals.IsTerminal(w.sys.ErrOut)
}

// filter is what sink s writes of the stream, and whether it folds rollouts.
func (w *session) filter(s sinkkind.Spec) sink.Filter {
	folds := w.cfg.Events.FoldRollouts
	if s.Fold != nil {
		folds = *s.Fold
	}
	var on []string
	if s.On != "" {
		on = strings.Split(s.On, "|")
	}
	f := sink.Filter{EventTypes: s.EventTypes, On: on, Fold: folds, Episodes: w.cfg.Events.Episodes != nil,
		Index:       slices.IndexFunc(w.cfg.Output.Sinks, func(o sinkkind.Spec) bool { return o.Name == s.Name }),
		AllEpisodes: s.Kind == viewsink.Kind}
	if w.cfg.Events.Transitions != nil {
		// The run evaluates the transitions every sink names, once per event; each sink
		// names in its events only those it asked for, or --on's.
		// Not nil even when empty: nil would name every transition.
		f.Shows = append([]string{}, f.On...)
		if len(f.Shows) == 0 {
			f.Shows = append(f.Shows, w.cfg.Events.On...)
		}
	}
	return f
}
