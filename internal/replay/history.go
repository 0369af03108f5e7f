package replay

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/recording"
)

// History is the Source of `kubeevents history TYPE/NAME` without --at: every recorded
// version of the one object the selection names (one type, one name). A name recorded
// in several namespaces asks for -n, unless the selection spans several (-A, or -n
// listing them), and one recorded in several clusters for --cluster; a name never
// recorded is a *NotRecordedError. Files are read once first for what they hold (an
// Inventory), so that nothing is streamed before that is known; the standard input,
// read once, has the object's versions held until its end.
type History struct {
	*Source
	allNamespaces bool
}

// NewHistory prepares the history opts select; allNamespaces is -A.
func NewHistory(opts Options, allNamespaces bool) (*History, error) {
	if len(opts.Select.Types) != 1 || len(opts.Select.Names) != 1 {
		return nil, diag.Usagef("history shows one object: give it as TYPE/NAME")
	}
	s, err := New(opts)
	if err != nil {
		return nil, err
	}
	s.quiet = true // what was not found is the error of Run
	return &History{Source: s, allNamespaces: allNamespaces}, nil
}

// Run checks which objects the name selects, then hands over their events.
func (h *History) Run(ctx context.Context, emit func(*event.Event) bool) error {
	if !slices.ContainsFunc(h.inputs, func(in recording.Input) bool { return in.Path == "-" }) {
		inv, err := readInventory(ctx, h.inputs)
		switch {
		case ctx.Err() != nil:
			return ctx.Err() // interrupted: what was read says nothing
		case err != nil:
			return diag.Usage(err)
		}
		if err := h.check(inv.Select(h.opts.Select), inv); err != nil {
			return err
		}
		return h.Source.Run(ctx, emit)
	}
	var events []*event.Event
	var found []Held
	err := h.Source.Run(ctx, func(ev *event.Event) bool {
		events = append(events, ev)
		m := ev.Meta()
		held := Held{Cluster: ev.Cluster, Resource: ev.Resource, Kind: ev.Kind, Namespace: m.GetNamespace(), Name: m.GetName()}
		if !slices.Contains(found, held) {
			found = append(found, held)
		}
		return true
	})
	if err != nil || ctx.Err() != nil {
		return err
	}
	if err := h.check(found, nil); err != nil {
		return err
	}
	for _, ev := range events {
		if !emit(ev) {
			return nil
		}
	}
	return nil
}

// check says what is wrong with the objects found: none, or several the selection does
// not ask for. inv, when known, says where else the object is.
func (h *History) check(found []Held, inv *Inventory) error {
	sel := h.opts.Select
	what := sel.Types[0] + "/" + sel.Names[0]
	if len(found) == 0 {
		where, hint := h.elsewhere(inv)
		return &NotRecordedError{What: what + " was not recorded" + where + " in " + h.What() + hint}
	}
	if len(sel.Namespaces) < 2 && !h.allNamespaces {
		if namespaces := Namespaces(found); len(namespaces) > 1 {
			return severalError(what, "namespaces", namespaces, "choose one with -n, or all of them with -A")
		}
	}
	if len(sel.Clusters) < 2 {
		if clusters := Clusters(found); len(clusters) > 1 {
			return severalError(what, "clusters", clusters, "choose one with --cluster")
		}
	}
	return nil
}

// severalError says that what was recorded in several namespaces or clusters, which
// the command line must choose from.
func severalError(what, where string, names []string, choose string) error {
	return diag.Usagef("%s was recorded in several %s (%s): %s", what, where, strings.Join(names, ", "), choose)
}

// elsewhere says where the selection looked for the object (the namespaces and the
// clusters given) and, from inv when it is known, where else it is: in other
// namespaces or clusters, or nowhere of its type.
func (h *History) elsewhere(inv *Inventory) (where, hint string) {
	sel := h.opts.Select
	if len(sel.Namespaces) > 0 {
		where = " in namespace " + strings.Join(sel.Namespaces, ",")
	}
	if len(sel.Clusters) > 0 {
		where += " in cluster " + strings.Join(sel.Clusters, ",")
	}
	if inv == nil {
		return where, ""
	}
	if ofType := inv.Select(Selection{Types: sel.Types}); len(ofType) == 0 {
		var held []string
		for _, t := range inv.Types() {
			held = append(held, t.Name)
		}
		if len(held) == 0 {
			return where, ", which holds no events"
		}
		return where, fmt.Sprintf(", which holds no %s but %s", sel.Types[0], strings.Join(held, ", "))
	}
	named := inv.Select(Selection{Types: sel.Types, Names: sel.Names})
	if len(named) == 0 || where == "" {
		return where, ""
	}
	var in []string
	if namespaces := Namespaces(named); len(namespaces) > 0 {
		in = append(in, "namespace"+diag.Plural(len(namespaces))+" "+strings.Join(namespaces, ", "))
	}
	if clusters := Clusters(named); len(clusters) > 0 {
		in = append(in, "cluster"+diag.Plural(len(clusters))+" "+strings.Join(clusters, ", "))
	}
	return where, fmt.Sprintf(" (it was recorded in %s)", strings.Join(in, " and "))
}
