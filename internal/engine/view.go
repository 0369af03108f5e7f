package engine

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/ui"
)

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
	for _, s := range w.cfg.Output.Sinks {
		wide = wide || (s.Type == config.KindTerminal && s.Format == string(render.FormatWide))
	}
	v, err := ui.New(ui.Options{Out: w.sys.Out, Color: w.colorFor(w.sys.Out), Wide: wide, Timestamps: w.cfg.Output.Timestamps,
		Watched: w.watched(), Clusters: w.plan.Names(), Namespace: w.plan.Namespace(), Kinds: kinds,
		Owned: w.cfg.Watch.Owned, History: w.cfg.UIHistory, Differ: w.cfg.Output.Differ, PrinterColumns: w.plan.Columns(), Quit: quit})
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
