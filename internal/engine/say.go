package engine

import (
	"fmt"
	"strings"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/watch"
)

// summary prints the exit line: how many events were made, what became of them per sink,
// and how many updates --changes-only left out before they became events.
func (w *session) summary(listeners []*listener.Listener, res Result) {
	parts := make([]string, 0, len(listeners))
	for _, l := range listeners {
		parts = append(parts, l.Stats().Summary(l.Name()))
	}
	leftOut := ""
	if res.Unchanged > 0 {
		leftOut = fmt.Sprintf(" (%s unchanged update%s left out by --changes-only)", diag.Count(res.Unchanged), diag.Plural(res.Unchanged))
	}
	w.infof("stopped after %s%s%s — %s", diag.Events(res.Made), clustersSummary(res.Clusters), leftOut, strings.Join(parts, "; "))
	// Losses are worth saying even when nobody asked for the summary.
	for _, l := range listeners {
		if st := l.Stats(); st.Dropped > 0 && !w.summaryShown() {
			w.warnf("sink %q dropped %s (buffer %d, on-full=%s)", l.Name(), diag.Events(st.Dropped), l.Config().Buffer, l.Config().OnFull)
		}
	}
}

// clustersSummary is the per-cluster part of the exit line: " (a: 10, b: 12)".
func clustersSummary(results []watch.Result) string {
	if len(results) == 0 {
		return ""
	}
	parts := make([]string, 0, len(results))
	for _, r := range results {
		part := fmt.Sprintf("%s: %s", r.Name, diag.Count(r.Made))
		if r.Left != nil {
			part += " (left out)"
		}
		parts = append(parts, part)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// watched says what is watched where (plan.Describe).
func (w *session) watched() string { return w.plan.Describe(w.cfg.Watch) }
