package engine

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/ui"
)

// UINoScreen refuses --ui with --no-screen. Whichever sinks there are, dropping
// --no-screen gives a view (the sinks write beside it); dropping --ui would not do
// without a sink.
const UINoScreen = "--ui shows the standard output stream, which --no-screen turns off; drop --no-screen (the sinks go on writing beside the view)"

// checkView refuses --ui where the view cannot be, before anything connects: it takes
// the terminal, so the standard output must be one and no other sink may write there.
func (w *session) checkView() error {
	if !w.cfg.UI {
		return nil
	}
	if w.cfg.LeaderElect.Enabled {
		return diag.Usagef("--ui is a view for a person at a terminal, --leader-elect is for replicas in a cluster; drop one")
	}
	var screen *config.Sink
	for i, s := range w.cfg.Sinks {
		if !s.WritesStdout() {
			continue
		}
		if s.Type != config.KindTerminal {
			return diag.Usagef("--ui takes the standard output, which sink %q writes to as well; send that sink to a file, or drop --ui", s.Name)
		}
		screen = &w.cfg.Sinks[i]
	}
	switch {
	case screen == nil:
		return diag.Usagef("%s", UINoScreen)
	case screen.Format != string(render.FormatPretty) && screen.Format != string(render.FormatWide):
		return diag.Usagef("--ui shows kubectl's columns, as -o pretty or -o wide do, not -o %s; drop -o %s or --ui", screen.Format, screen.Format)
	case !w.sys.Terminals.IsTerminal(w.sys.Out):
		return diag.Usagef("--ui needs a terminal, and the standard output is not one; drop --ui to stream lines (-o json for scripts)")
	}
	return nil
}

// newView makes the view (--ui) for the resolved plan; quit stops the run. From here on
// the run's diagnostics go through the view, which shows the latest and holds them back
// while it has the screen, if stderr is that terminal.
func (w *session) newView(quit func()) error {
	if !w.cfg.UI {
		return nil
	}
	var kinds []schema.GroupKind
	for _, r := range w.plan.Resources() {
		kinds = append(kinds, r.GVK.GroupKind())
	}
	wide := false
	for _, s := range w.cfg.Sinks {
		wide = wide || (s.Type == config.KindTerminal && s.Format == string(render.FormatWide))
	}
	v, err := ui.New(ui.Options{Out: w.sys.Out, Color: w.colorFor(w.sys.Out), Wide: wide, Timestamps: w.cfg.Timestamps,
		Watched: w.watched(), Clusters: w.plan.Names(), Namespace: w.plan.Namespace(), Kinds: kinds,
		Owned: w.cfg.Watch.Owned, History: w.cfg.UIHistory, Differ: w.differ, PrinterColumns: w.plan.Columns(), Quit: quit})
	if err != nil {
		return diag.Usage(err)
	}
	w.view = v
	w.diagnostics = v.Diagnostics(w.sys.ErrOut, w.sys.Terminals.IsTerminal(w.sys.ErrOut))
	return nil
}

// viewSink is the sink the terminal's Sink becomes: the view, or nil without --ui.
func (w *session) viewSink() listener.Sink {
	if w.view == nil {
		return nil
	}
	return w.view
}

// viewListener is the view's listener's config: the view shows each object's newest
// state, so when its buffer is full it merges an object's events (coalesce) rather than
// hold up the informers; its Write never waits for the terminal anyway.
func (w *session) viewListener(s config.Sink, lc *listener.Config) {
	if w.view != nil && s.Type == config.KindTerminal {
		lc.OnFull = listener.Coalesce
	}
}

// stopView leaves the screen once the stream ended, before the summary is printed;
// err is the stream's, or else the terminal's if it failed.
func (w *session) stopView(err error) error {
	if w.view == nil {
		return err
	}
	w.view.Stop()
	if err == nil {
		err = w.view.Err()
	}
	return err
}
