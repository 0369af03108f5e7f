// Package managedfields reads what metadata.managedFields says about a change: which
// field manager wrote it. The API server records, per manager (and operation, and
// subresource), the time of its last write and the set of fields it owns; the informer
// drops managedFields as objects enter its cache, so this package keeps, per object,
// only what attribution needs: which managers there are and when each last wrote (a
// Tracker's Summary, a few bytes an entry), and, per change, the field sets of only the
// entries that may have made it (a Record), which Resolve matches against the changed
// paths when their times alone cannot tell.
//
// How a change is attributed (Resolve):
//
//   - A write updates its manager's time (to the second) whenever it changed a field, and
//     no other entry's, so between two versions of an object the entry whose time moved
//     (or that is new) is the writer. One such entry: it is the writer, nothing parsed.
//   - None moved: a manager wrote again within the second of its previous write, or
//     one whose entry has no time wrote again (the scale subresource records none), or
//     the change is none of a manager's (a deletion's deletionTimestamp, a pod's
//     binding). The entries written in the latest second, and those without a time, are
//     the candidates; a candidate is a
//     writer if it owns a changed path in the new version (a writer owns what it set:
//     an Update or an Apply takes the fields it changes). A path no candidate owns is
//     nobody's, and a change nobody owns is attributed to nobody: nothing is said
//     rather than something wrong.
//   - Several moved (versions were missed: a re-list after an outage, a resumed
//     checkpoint, whose object keeps its entries' managers and times: Tracker.Seed): all
//     of them wrote since the version before; each changed path is attributed to the
//     ones that own it. After a checkpoint's version, one moved entry is told so too:
//     others may have written since within the second of their earlier write.
//   - Changes made one (a sink that coalesces: Merge): the entries that moved in any of
//     them, as several moved; each changed path is attributed to the newest write's
//     entries that own it (a Tracker that keeps every candidate's fields, KeepFields,
//     lets each be told).
//   - A path owned by several candidates is ambiguous: they are all named, and
//     Attribution.Ambiguous says so.
//   - ADDED: the entries of the main resource written in the second the object was
//     created. DELETED: nothing (a deletion is not recorded in managedFields).
//
// A pod's binding (pods/binding) records no entry either; package attribution, which
// sees the objects, says who bound a pod (NoneMoved: no write is recorded for it).
package managedfields

import "time"

// Entry is one field manager's write, as managedFields records it: the manager's name,
// the operation (Update or Apply), the subresource ("" for the main resource; status,
// scale, ...) and the time of its last write (to the second; zero when the entry has
// none).
type Entry struct {
	Manager     string    `json:"manager"`
	Operation   string    `json:"operation,omitempty"`
	Subresource string    `json:"subresource,omitempty"`
	Time        time.Time `json:"time,omitzero"`
}

// Attribution says who made a change.
type Attribution struct {
	// By are the managers that made it, in managedFields' order; empty when it cannot be
	// told (nothing is said rather than something wrong).
	By []Entry
	// Ambiguous says that By are candidates the fields could not tell apart: one or
	// more of them made the change (several wrote within the same second and own the
	// changed fields alike).
	Ambiguous bool
	// Changes, when the changes were not all made by all of By, has per change (in the
	// order Resolve was given them) the indexes in By of the managers that made it, nil
	// for a change attributed to nobody. Nil when every change is by all of By.
	Changes [][]int
}

// ChangeBy are the managers of change i (all of By when Changes is nil).
func (a *Attribution) ChangeBy(i int) []Entry {
	if a == nil {
		return nil
	}
	if a.Changes == nil {
		return a.By
	}
	if i < 0 || i >= len(a.Changes) {
		return nil
	}
	out := make([]Entry, len(a.Changes[i]))
	for j, k := range a.Changes[i] {
		out[j] = a.By[k]
	}
	return out
}

// Differs reports whether the changes are not all by the same managers: per-change
// managers are then worth showing.
func (a *Attribution) Differs() bool {
	if a == nil || a.Changes == nil {
		return false
	}
	for _, c := range a.Changes {
		if len(c) != len(a.Changes[0]) {
			return true
		}
		for j := range c {
			if c[j] != a.Changes[0][j] {
				return true
			}
		}
	}
	return false
}
