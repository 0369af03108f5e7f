package listener

import (
	"cmp"
	"slices"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// coalesce merges next into queued, two events about the same object, giving one new
// event that takes queued's place in the queue. Events are shared read-only between
// listeners, so neither input is modified.
//
// A reader of the merged event must end up where reading both would have left it. So the
// type follows from whether the object existed for the reader before queued and whether
// it exists after next. existedBefore says the former: it is whether the first event
// merged into queued was not an ADDED, which queued's own type no longer tells once an
// ADDED and a DELETED have been merged into a DELETED.
//
//	before queued         after next         merged
//	no (first ADDED)      yes                ADDED: the object is still new to the reader
//	no (first ADDED)      no (next DELETED)  DELETED: the object's short life stays visible
//	yes                   no (next DELETED)  DELETED
//	yes                   yes                MODIFIED; SYNC if both were SYNC. A deletion
//	                                         followed by a re-creation (DELETED, then ADDED)
//	                                         is a MODIFIED from the deleted object to the new one.
//
// The merged event is the object as next left it: next's Object, Time, Kind, Resource,
// Cluster, owner chain, rollout, health, Reason, Related and Past, and next's Seq, or queued's if next
// is a SYNC (which has none), so Seq names the last real change merged in. Because the
// merged event keeps queued's position, Seq may run backwards in a coalescing sink's
// output. Old is the state before queued (queued.Old, or for a queued DELETED the
// deleted object), set only for MODIFIED and SYNC as Event documents. A merged ADDED
// keeps queued's InInitialList; a merged DELETED keeps next's FinalStateUnknown. What
// the reader would have learnt from both is kept from both: its ManagedFields merge both
// events' (managedfields.Merge), so that it names every writer of the changes it stands
// for; On names the transitions of either; Health says the status before queued as
// Previous; a crash context is next's, else queued's; it is folded only if both were;
// it ends the stream if either did; and once written it counts as both written (their
// Written), so that the checkpoint settles the changes it stands for.
//
// Only changes of an object merge (mergeable): a rollout's step, a STALLED event and an
// event that an episode decided about each stand on their own.
func coalesce(queued, next *event.Event, existedBefore bool) *event.Event {
	merged := &event.Event{
		Time:     next.Time,
		Seq:      next.Seq,
		Cluster:  next.Cluster,
		Resource: next.Resource,
		Kind:     next.Kind,
		Object:   next.Object,
		Related:  next.Related,
		Child:    next.Child,
		Past:     next.Past,
		Reason:   next.Reason,
		Owners:   next.Owners,
		Rollout:  next.Rollout,
		// Who made the changes: both events' writers, each change the newest one's.
		ManagedFields: managedfields.Merge(queued.ManagedFields, next.ManagedFields),
		RecordedBy:    cmp.Or(next.RecordedBy, queued.RecordedBy),
		Health:        mergedHealth(queued.Health, next.Health),
		On:            mergedOn(queued.On, next.On),
		Folded:        queued.Folded && next.Folded,
		UnfoldedSeq:   next.UnfoldedSeq,
		EndsStream:    queued.EndsStream || next.EndsStream,
		SyncTo:        next.SyncTo,
		Context:       cmp.Or(next.Context, queued.Context),
		Written:       bothWritten(queued.Written, next.Written),
	}
	if next.Type == event.Sync {
		merged.Seq = queued.Seq
	}
	existsAfter := next.Type != event.Deleted
	switch {
	case !existsAfter:
		merged.Type = event.Deleted
		merged.FinalStateUnknown = next.FinalStateUnknown
	case !existedBefore:
		merged.Type = event.Added
		merged.InInitialList = queued.InInitialList
	default:
		merged.Type = event.Modified
		if queued.Type == event.Sync && next.Type == event.Sync {
			merged.Type = event.Sync
		}
		merged.Old = queued.Old
		if queued.Type == event.Deleted {
			merged.Old = queued.Object
		}
	}
	return merged
}

// mergeable reports whether ev may be merged with another event of its object: a change
// (or SYNC) of a watched object, or of a core Event (--with-events), that no episode
// decided about. Any other event is news of its own, which merging would lose.
func mergeable(ev *event.Event) bool {
	switch ev.Type {
	case event.Added, event.Modified, event.Deleted, event.Sync:
	default:
		return false
	}
	return ev.Episodes == nil && ev.Episode == nil
}

// mergedHealth is next's health, with the status before queued as its previous one.
func mergedHealth(queued, next *event.Health) *event.Health {
	if next == nil || queued == nil {
		return next
	}
	h := *next
	h.Previous = queued.Previous
	return &h
}

// mergedOn is the transitions of either event, queued's first, each once.
func mergedOn(queued, next []string) []string {
	if len(next) == 0 {
		return queued
	}
	if len(queued) == 0 {
		return next
	}
	on := slices.Clone(queued)
	for _, name := range next {
		if !slices.Contains(on, name) {
			on = append(on, name)
		}
	}
	return on
}

// bothWritten is a Written that tells both events written, queued's first.
func bothWritten(queued, next func()) func() {
	switch {
	case queued == nil:
		return next
	case next == nil:
		return queued
	}
	return func() {
		queued()
		next()
	}
}
