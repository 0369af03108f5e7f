package engine

import "github.com/kubeevents/kubeevents/internal/event"

// skip is the informers' Skip: ChangesOnly's (see changesOnly), then EventTypes', which
// leaves out the events of other types before they are numbered, so that no sink, jq
// filter or --max-events ever sees them and seq has no gap for them. Nil when neither
// is set.
func (r *run) skip() func(*event.Event) bool {
	changesOnly := r.changesOnly()
	if len(r.cfg.EventTypes) == 0 {
		return changesOnly
	}
	wanted := map[event.EventType]bool{}
	for _, t := range r.cfg.EventTypes {
		wanted[t] = true
	}
	return func(ev *event.Event) bool {
		if !wanted[ev.Type] {
			return true
		}
		return changesOnly != nil && changesOnly(ev)
	}
}
