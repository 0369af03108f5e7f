package complete

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubeevents/kubeevents/internal/replay"
)

// Recorded completes from the recordings a command line names (replay's FILE
// arguments, history's --file): the types, names, namespaces and clusters they hold,
// read within Timeout (what was read by then).
type Recorded struct {
	// Files are the recordings the command line gives so far; nil when none is given.
	Files func(cmd *cobra.Command, args []string) []string
}

// inventory reads what the recordings hold; nil when there are none, or none can be read.
func (r Recorded) inventory(cmd *cobra.Command, args []string) *replay.Inventory {
	files := r.Files(cmd, args)
	if len(files) == 0 {
		return nil
	}
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, Timeout)
	defer cancel()
	inv, err := replay.ReadInventory(ctx, files)
	if inv == nil || err != nil && ctx.Err() == nil {
		return nil
	}
	return inv
}

// where is the selection of the command line's -n and --cluster.
func where(cmd *cobra.Command) replay.Selection {
	var sel replay.Selection
	if ns, _ := cmd.Flags().GetString("namespace"); ns != "" {
		sel.Namespaces = strings.Split(ns, ",")
	}
	if clusters, _ := cmd.Flags().GetString("cluster"); clusters != "" {
		sel.Clusters = strings.Split(clusters, ",")
	}
	return sel
}

// ReplayArgs completes replay's arguments: files (the shell's) until one is given, then
// the types the recordings hold (a comma list), TYPE/NAME, and the names of the objects
// of the types given; the shell's files again where nothing recorded matches (another
// recording).
func (r Recorded) ReplayArgs(isFile func(arg string) bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var selectors []string
		for _, arg := range args {
			if !isFile(arg) {
				selectors = append(selectors, arg)
			}
		}
		inv := r.inventory(cmd, args)
		if inv == nil {
			return nil, cobra.ShellCompDirectiveDefault
		}
		var comps []cobra.Completion
		directive := NoFiles
		switch typ, name, slash := strings.Cut(toComplete, "/"); {
		case len(selectors) == 0 && slash:
			comps = prefixed(typ+"/", recordedNames(inv, cmd, typ, name, nil))
		case len(selectors) == 0:
			comps = recordedTypes(inv, toComplete, "")
		default:
			comps = recordedNames(inv, cmd, selectors[0], toComplete, selectors[1:])
		}
		if len(comps) == 0 {
			directive = cobra.ShellCompDirectiveDefault // perhaps another recording
		}
		return comps, directive
	}
}

// HistoryArgs completes history's TYPE/NAME from the recordings of --file: the types
// held, each followed by "/", then the names of that type's objects.
func (r Recorded) HistoryArgs() cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, NoFiles
		}
		inv := r.inventory(cmd, args)
		if inv == nil {
			return nil, NoFiles
		}
		if typ, name, ok := strings.Cut(toComplete, "/"); ok {
			return prefixed(typ+"/", recordedNames(inv, cmd, typ, name, nil)), NoFiles
		}
		if strings.Contains(toComplete, ",") {
			return nil, NoFiles // one type
		}
		return recordedTypes(inv, toComplete, "/"), NoFiles | cobra.ShellCompDirectiveNoSpace
	}
}

// Namespaces completes -n's comma list with the namespaces recorded (in the clusters of
// --cluster).
func (r Recorded) Namespaces(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	inv := r.inventory(cmd, args)
	if inv == nil {
		return nil, NoFiles
	}
	sel := where(cmd)
	sel.Namespaces = nil
	return listed(replay.Namespaces(inv.Select(sel)), toComplete), NoFiles
}

// Clusters completes --cluster's comma list with the clusters recorded.
func (r Recorded) Clusters(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	inv := r.inventory(cmd, args)
	if inv == nil {
		return nil, NoFiles
	}
	return listed(replay.Clusters(inv.Held), toComplete), NoFiles
}

// listed offers the values for the last element of a comma list, after those given.
func listed(values []string, toComplete string) []cobra.Completion {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	given := map[string]bool{}
	for _, v := range strings.Split(done, ",") {
		given[strings.TrimSpace(v)] = true
	}
	var comps []cobra.Completion
	for _, v := range values {
		if strings.HasPrefix(v, last) && !given[v] {
			comps = append(comps, done+v)
		}
	}
	return comps
}

// recordedTypes offers the types held for the last element of a comma list, each with
// suffix after it.
func recordedTypes(inv *replay.Inventory, toComplete, suffix string) []cobra.Completion {
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	given := map[string]bool{}
	for _, t := range strings.Split(done, ",") {
		given[strings.TrimSpace(t)] = true
	}
	var comps []cobra.Completion
	for _, t := range inv.Types() {
		if !strings.HasPrefix(t.Name, last) || given[t.Name] {
			continue
		}
		comps = append(comps, cobra.CompletionWithDesc(done+t.Name+suffix, t.Kind+" ("+t.Resource.GroupVersion().String()+"), recorded"))
	}
	return comps
}

// recordedNames offers the names of the objects of types (a comma list) recorded in the
// namespaces and clusters of -n and --cluster, but those given.
func recordedNames(inv *replay.Inventory, cmd *cobra.Command, types, toComplete string, given []string) []cobra.Completion {
	sel := where(cmd)
	sel.Types = strings.Split(types, ",")
	seen := map[string]bool{}
	for _, name := range given {
		seen[name] = true
	}
	var comps []cobra.Completion
	for _, h := range inv.Select(sel) {
		if !seen[h.Name] && strings.HasPrefix(h.Name, toComplete) {
			seen[h.Name] = true
			comps = append(comps, h.Name)
		}
	}
	slices.Sort(comps)
	return comps
}
