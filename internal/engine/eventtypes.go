package engine

import "github.com/kubeevents/kubeevents/internal/event"

// skip is the informers' Skip: EventTypes' (only the events of those types), the
// excluded namespace patterns' (namespaceFilter), the transitions' (which says in each
// event which happened and, with --on, leaves out those in which none did), then
// ChangesOnly's (see changesOnly).
// Each leaves events out before they are numbered, so that no sink, jq filter or
// --max-events ever sees them and seq has no gap for them. Nil when none is set.
func (r *run) skip() func(*event.Event) bool {
	var skips []func(*event.Event) bool
	if len(r.cfg.EventTypes) > 0 { // SYNC is made by the listeners' resync, or not (resyncs)
		wanted := map[event.EventType]bool{}
		for _, t := range r.cfg.EventTypes {
			wanted[t] = true
		}
		skips = append(skips, func(ev *event.Event) bool { return !wanted[ev.Type] })
	}
	if f := namespaceFilter(r.cfg.Watch.ExcludeNamespaces); f != nil {
		skips = append(skips, f)
	}
	if f := transitionsSkip(r.cfg.Transitions, r.cfg.On); f != nil {
		skips = append(skips, f)
	}
	// Last: it counts what it leaves out, which must be updates the others kept.
	if f := r.changesOnly(); f != nil {
		skips = append(skips, f)
	}
	switch len(skips) {
	case 0:
		return nil
	case 1:
		return skips[0]
	}
	return func(ev *event.Event) bool {
		for _, s := range skips {
			if s(ev) {
				return true
			}
		}
		return false
	}
}
