package managedfields

import (
	"cmp"
	"slices"
)

// Merge is the Record of two changes of one object made one (a sink that coalesces:
// queued, then next, delivered as one change from the state before queued to the state
// after next). It is what Resolve needs to attribute every change of the two to the
// writer that made it: the entries that moved from the version before queued to next's
// (the "several moved" rule, as when versions are missed), each changed path the newest
// write's that owns it. The candidates' field sets are those their Records kept: a
// Tracker that keeps them all (KeepFields) lets every change be told. Neither input is
// modified; nil stands for a change without a Record (a SYNC).
func Merge(queued, next *Record) *Record {
	switch {
	case queued == nil:
		return next
	case next == nil:
		return queued
	case !next.previous:
		// The object is new since queued (deleted and made again): nothing of queued's
		// writers is in it.
		return next
	}
	m := &Record{previous: queued.previous, span: queued.span, creators: queued.creators, tracker: next.tracker, version: next.version}
	if queued.previous {
		m.prev = queued.prev
	}
	comparable := m.previous && m.prev != nil && m.version != nil && queued.tracker == next.tracker
	newer := next.layers() + 1
	m.candidates = make([]candidate, 0, len(next.candidates)+len(queued.candidates))
	add := func(c candidate, layer int32) {
		for _, have := range m.candidates {
			if have.same(c, comparable) {
				return // a newer write's, with its newer fields
			}
		}
		c.layer = layer
		if sec, ok := stampOf(c.id, m.version); comparable && ok {
			c.moved = movedSince(c.id, sec, m.prev) // across both
		}
		m.candidates = append(m.candidates, c)
	}
	for _, c := range next.candidates {
		add(c, c.layer)
	}
	for _, c := range queued.candidates {
		add(c, c.layer+newer)
	}
	for _, c := range m.candidates {
		if c.moved {
			m.moved++
		}
	}
	if m.version != nil {
		// By names them in managedFields' order, as for one change.
		slices.SortStableFunc(m.candidates, func(a, b candidate) int {
			return cmp.Compare(m.position(a), m.position(b))
		})
	}
	return m
}

// same reports whether c and o are the same entry: the same identity's number when
// numbered, else the same manager, operation and subresource.
func (c candidate) same(o candidate, numbered bool) bool {
	if numbered {
		return c.id == o.id
	}
	return c.Manager == o.Manager && c.Operation == o.Operation && c.Subresource == o.Subresource
}

// stampOf is the second of the entry numbered id in version; false if it is not there
// (removed since).
func stampOf(id uint32, version []stamp) (uint32, bool) {
	for _, s := range version {
		if s.id == id {
			return s.sec, true
		}
	}
	return 0, false
}

// layers is the highest layer of r's candidates: 0 but for a merged Record.
func (r *Record) layers() int32 {
	n := int32(0)
	for _, c := range r.candidates {
		n = max(n, c.layer)
	}
	return n
}

// position is c's index in r's version (after them all if it is not there).
func (r *Record) position(c candidate) int {
	for i, s := range r.version {
		if s.id == c.id {
			return i
		}
	}
	return len(r.version)
}
