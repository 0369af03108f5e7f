package engine

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/sinkkind/viewsink"
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
	wide := slices.ContainsFunc(w.cfg.Output.Sinks, viewsink.Wide)
	v, err := ui.New(ui.Options{Out: w.sys.Out, Color: w.colorFor(w.sys.Out), Wide: wide, Timestamps: w.cfg.Output.Timestamps,
		Watched: w.watched(), Clusters: w.plan.Names(), Namespace: w.plan.Namespace(), Kinds: kinds,
		Owned: w.cfg.Watch.Owned, History: w.cfg.UIHistory, Differ: w.cfg.Output.Differ, PrinterColumns: w.plan.Columns(), Quit: quit})
	if err != nil {
		return diag.Usage(err)
	}
	w.view = v
	w.cfg.Output.Sinks = viewsink.Take(w.cfg.Output.Sinks, v) // the terminal's sink is the view
	w.diagnostics = v.Diagnostics(w.sys.ErrOut, w.sys.Terminals.IsTerminal(w.sys.ErrOut))
	return nil
}
