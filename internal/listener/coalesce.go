package listener

import (
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
// The merged event carries next's Object (the latest state), Time, Kind and Resource, and
// next's Seq, or queued's if next is a SYNC (which has none), so Seq names the last real
// change merged in. Because the merged event keeps queued's position, Seq may run
// backwards in a coalescing sink's output. Old is the state before queued (queued.Old, or
// for a queued DELETED the deleted object), set only for MODIFIED and SYNC as Event
// documents. A merged ADDED keeps queued's InInitialList; a merged DELETED keeps next's
// FinalStateUnknown. Its ManagedFields merge both events' (managedfields.Merge), so that
// it names every writer of the changes it stands for.
func coalesce(queued, next *event.Event, existedBefore bool) *event.Event {
	merged := &event.Event{
		Time:     next.Time,
		Seq:      next.Seq,
		Resource: next.Resource,
		Kind:     next.Kind,
		Object:   next.Object,
		// Who made the changes: both events' writers, each change the newest one's.
		ManagedFields: managedfields.Merge(queued.ManagedFields, next.ManagedFields),
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
