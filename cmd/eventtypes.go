package cmd

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	"github.com/kubeevents/kubeevents/internal/event"
)

// filterableEventTypes are the event types --event-types may keep. SYNC (a --resync
// re-delivery) is a sink's own and is not filtered.
var filterableEventTypes = []event.EventType{event.Added, event.Modified, event.Deleted}

// checkEventTypes refuses an --event-types value that is no event type.
func (o *WatchOptions) checkEventTypes() error {
	for _, t := range o.EventTypes {
		if !isFilterableEventType(strings.ToUpper(strings.TrimSpace(t))) {
			return usageErrorf("--event-types %q: not an event type; use ADDED, MODIFIED or DELETED, comma-separated", t)
		}
	}
	return nil
}

func isFilterableEventType(t string) bool {
	for _, f := range filterableEventTypes {
		if string(f) == t {
			return true
		}
	}
	return false
}

// eventTypes is --event-types for the engine; nil keeps every type.
func (o *WatchOptions) eventTypes() []event.EventType {
	var types []event.EventType
	for _, t := range o.EventTypes {
		types = append(types, event.EventType(strings.ToUpper(strings.TrimSpace(t))))
	}
	return types
}

// initialListHidden names the flag that keeps the initial list (ADDED events of the
// objects that exist at start-up) from every sink: --watch-only, or --event-types without
// ADDED; "" when the list is shown.
func (o *WatchOptions) initialListHidden() string {
	if o.WatchOnly {
		return "--watch-only"
	}
	types := o.eventTypes()
	if len(types) == 0 || slices.Contains(types, event.Added) {
		return ""
	}
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return "--event-types " + strings.Join(names, ",")
}

func completeEventTypes(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	// A comma-separated list: complete the last element, keeping what is before it.
	done := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done = toComplete[:i+1]
	}
	var out []string
	for _, t := range filterableEventTypes {
		if strings.HasPrefix(done+string(t), strings.ToUpper(toComplete)) && !strings.Contains(strings.ToUpper(done), string(t)+",") {
			out = append(out, done+string(t))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// expandCategories replaces a category the server's discovery lists ("all", as
// `kubectl get all` reads it, or a CRD's own) by the types in it, as kubectl's resource
// builder does (before it looks the argument up as a type).
func (o *WatchOptions) expandCategories(disco discovery.DiscoveryInterface) []string {
	if disco == nil {
		return o.TypeArgs
	}
	expander := restmapper.NewDiscoveryCategoryExpander(disco)
	var out []string
	for _, arg := range o.TypeArgs {
		grs, ok := expander.Expand(strings.ToLower(arg))
		if !ok || len(grs) == 0 {
			out = append(out, arg)
			continue
		}
		for _, gr := range grs {
			out = append(out, gr.String())
		}
	}
	return out
}
