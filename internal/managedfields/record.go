package managedfields

import (
	"time"
)

// Record is what managedFields say about one version of an object: the entries that may
// have written it, with the field sets of those that only their fields can decide
// between. The informer's handler hangs it on the event; Resolve decides.
type Record struct {
	// previous says the entries of the previous version were known: moved counts the
	// entries whose time moved since, or that are new.
	previous bool
	moved    int
	// span says the previous version is one delivered long before (a checkpoint's,
	// Tracker.Seed): others may have written since within their second, so even one
	// moved entry is told by its fields, not by its time alone.
	span bool
	// candidates are the moved entries, or, with none moved or the previous version
	// unknown, those written in the latest second and those without a time. Each keeps
	// its field set only when fields must decide (several moved, or none), or when the
	// Tracker keeps them all (KeepFields). A Record merged from several (Merge) has the
	// newest write's first: layer 0, then the earlier ones'.
	candidates []candidate
	// creators are the entries of the main resource written in the second the object
	// was created (or the one before) (only when the previous version is unknown: an object new to the
	// informer), for an ADDED event.
	creators []Entry
	// one holds the candidates when there is one (the commonest case): no allocation.
	one [1]candidate
	// version are this version's entries (their identities' numbers and seconds) and
	// prev the previous version's, when known; nil when the entries could not be
	// numbered. Shared with the Tracker's summaries, never modified: what Merge compares
	// and a checkpoint keeps (Managers).
	tracker       *Tracker
	version, prev []stamp
}

// candidate is an entry and its field set: *metav1.FieldsV1, or an unstructured object's
// map; nil when not kept.
type candidate struct {
	Entry
	fields any
	id     uint32 // its identity's number (when the Record has a version)
	// layer is 0 but in a merged Record, where it counts the writes merged after the
	// one it is from; moved says its time moved since the previous version (or it is
	// new).
	layer int32
	moved bool
}

// newRecord compares entries (numbered ids, nil when they could not be) with the stamps
// of the previous version (known: there was one; span: a checkpoint's); version are
// entries' stamps. keep keeps the field set of every candidate.
func newRecord(entries []rawEntry, ids []uint32, prev, version []stamp, known, span, keep bool, created int64) *Record {
	r := &Record{previous: known, span: known && span, version: version}
	if known {
		r.prev = prev
		for i, e := range entries {
			if movedSince(ids[i], secondOf(e.time), prev) {
				r.moved++
			}
		}
		if r.moved > 0 {
			r.candidates = r.one[:0]
			for i := range entries {
				e := &entries[i]
				if !movedSince(ids[i], secondOf(e.time), prev) {
					continue
				}
				c := candidate{Entry: e.entry(), id: ids[i], moved: true}
				if r.moved > 1 || r.span || keep {
					c.fields = e.keptFields() // one moved is decided by time alone
				}
				r.candidates = append(r.candidates, c)
			}
			return r
		}
	} else {
		for _, e := range entries {
			// The API server stamps the create's entry, then sets creationTimestamp, each
			// from its own reading of the clock: the entry's second may be the one before.
			if s := e.time.Unix(); e.subresource == "" && !e.time.IsZero() && (s == created || s == created-1) {
				r.creators = append(r.creators, e.entry())
			}
		}
	}
	// None moved, or the previous version is unknown: the latest second's entries, and
	// those without a time (the scale subresource writes none), which no time rules out.
	var latest time.Time
	for _, e := range entries {
		if e.time.After(latest) {
			latest = e.time
		}
	}
	for i := range entries {
		if e := &entries[i]; e.time.IsZero() || e.time.Unix() == latest.Unix() {
			c := candidate{Entry: e.entry(), fields: e.keptFields()}
			if ids != nil {
				c.id = ids[i]
			}
			r.candidates = append(r.candidates, c)
		}
	}
	return r
}

// movedSince reports whether the entry numbered id, written at sec, is new since prev or
// was written at another second.
func movedSince(id, sec uint32, prev []stamp) bool {
	for _, p := range prev {
		if p.id == id {
			return p.sec != sec
		}
	}
	return true
}

func (e rawEntry) entry() Entry {
	entry := Entry{Manager: e.manager, Operation: e.operation, Subresource: e.subresource}
	if !e.time.IsZero() {
		entry.Time = e.time.UTC()
	}
	return entry
}

// Decided returns the attribution when it needs no changed paths (one entry moved, an
// ADDED event), and false otherwise.
func (r *Record) Decided(added bool) (Attribution, bool) {
	switch {
	case r == nil:
		return Attribution{}, true
	case added:
		by := r.creators
		if r.previous {
			by = entriesOf(r.candidates)
		}
		return Attribution{By: by, Ambiguous: len(by) > 1}, true
	case r.previous && r.moved == 1 && len(r.candidates) == 1 && !r.span:
		return Attribution{By: []Entry{r.candidates[0].Entry}}, true
	case len(r.candidates) == 0:
		return Attribution{}, true
	}
	return Attribution{}, false
}

func entriesOf(candidates []candidate) []Entry {
	if len(candidates) == 0 {
		return nil
	}
	out := make([]Entry, len(candidates))
	for i, c := range candidates {
		out[i] = c.Entry
	}
	return out
}

// Resolve attributes a MODIFIED event's changes (see the package comment); old is the
// previous object as generic JSON (maps, lists, strings, numbers), which names the list
// elements of the changes' paths. An ADDED event's attribution needs neither (Decided).
// Without changes (no diff), only the times decide: entries that moved all wrote, and
// the latest second's candidates are left unsaid.
func (r *Record) Resolve(changes []Change, old any) Attribution {
	return r.ResolveLazily(changes, func() (any, bool) { return old, true })
}

// ResolveLazily is Resolve with the previous object made by old only when a changed
// path's owners cannot be told without it: a change under fields no candidate owns (a
// deletion's metadata.deletionTimestamp, say) is nobody's whatever the object holds, and
// making the previous object as generic JSON costs more than all the rest. If old fails
// (false), the changes are not used: only the times decide, as Resolve without changes.
func (r *Record) ResolveLazily(changes []Change, old func() (any, bool)) Attribution {
	if a, ok := r.Decided(false); ok {
		return a
	}
	// The field sets are parsed only when a change may be one of theirs: read from
	// their JSON, a deletion's metadata.deletionTimestamp is nobody's at a glance.
	var sets []*fieldSet
	perChange := make([][]int, len(changes))
	owned := make([]bool, len(r.candidates))
	ambiguous := false
	var oldValue any
	oldMade := false
	for i, change := range changes {
		if change.Op == "remove" {
			continue // a removed field is in nobody's set any more
		}
		if !r.anyMayCover(change.Path) {
			continue
		}
		if sets == nil {
			sets = make([]*fieldSet, len(r.candidates))
			for i, c := range r.candidates {
				sets[i] = parseFields(c.fields) // nil when it has none or does not parse: owns nothing
			}
		}
		if !anyMayCover(sets, change.Path) {
			continue
		}
		if !oldMade {
			var ok bool
			if oldValue, ok = old(); !ok {
				return r.Resolve(nil, nil)
			}
			oldMade = true
		}
		path, ok := walk(change, oldValue)
		if !ok {
			continue
		}
		// The newest write that owns the path made it (a merged Record's layers, newest
		// first; one layer otherwise).
		for layer := int32(0); len(perChange[i]) == 0 && layer <= r.layers(); layer++ {
			for j, set := range sets {
				if r.candidates[j].layer == layer && set.covers(path) {
					perChange[i] = append(perChange[i], j)
					owned[j] = true
				}
			}
		}
		ambiguous = ambiguous || len(perChange[i]) > 1
	}
	if r.previous && (r.moved > 1 || r.span) {
		// Every moved entry wrote since the version before, whatever it owns now.
		for j, c := range r.candidates {
			owned[j] = owned[j] || c.moved
		}
		ambiguous = false
	}
	// By are the owning candidates; per-change indexes are renumbered into By.
	index := make([]int, len(r.candidates))
	var by []Entry
	for j, c := range r.candidates {
		index[j] = -1
		if owned[j] {
			index[j] = len(by)
			by = append(by, c.Entry)
		}
	}
	if len(by) == 0 {
		return Attribution{}
	}
	a := Attribution{By: by, Ambiguous: ambiguous, Changes: perChange}
	for _, c := range perChange {
		for k, j := range c {
			c[k] = index[j]
		}
	}
	if len(perChange) == 0 || !a.Differs() && len(perChange[0]) == len(by) {
		a.Changes = nil // no changes, or every change by every one of By
	}
	return a
}

// Change is one change of a diff as Resolve needs it: its JSON Patch operation and path
// (a JSON pointer, lists indexed as in the previous object, as package diff writes
// them), and the value it sets or removes.
type Change struct {
	Op    string
	Path  string
	Value any
	Old   any
}

// NoneMoved reports whether the previous version's entries are known and none moved
// since: no manager's write is recorded for this change (a binding, a deletion, or a
// manager that wrote again within its second).
func (r *Record) NoneMoved() bool { return r != nil && r.previous && r.moved == 0 }

// Moved reports whether an entry of subresource moved since the previous version (a
// write through it is recorded).
func (r *Record) Moved(subresource string) bool {
	if r == nil {
		return false
	}
	for _, c := range r.candidates {
		if c.moved && c.Subresource == subresource {
			return true
		}
	}
	return false
}
