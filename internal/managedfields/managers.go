package managedfields

import (
	"hash/maphash"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/jsonw"
)

// Managers is what managedFields said of one version of an object: its entries, each
// with the time of its last write, without their fields (8 bytes an entry). A checkpoint
// (--resume) keeps them with the object it keeps, and a resumed run compares the
// object's version then with it (Tracker.Seed): the entries whose time moved are the
// writers of what changed while kubeevents was stopped, the "several moved" rule.
type Managers struct {
	tracker *Tracker
	stamps  []stamp
}

// Managers are r's version's entries; none when they could not be numbered.
func (r *Record) Managers() Managers {
	if r == nil || r.version == nil {
		return Managers{}
	}
	return Managers{tracker: r.tracker, stamps: r.version}
}

// Len is the number of m's entries.
func (m Managers) Len() int { return len(m.stamps) }

// Empty reports whether m holds nothing: no entries, or none known.
func (m Managers) Empty() bool { return m.tracker == nil || len(m.stamps) == 0 }

// Entries are m's entries as managedFields has them, without their fields: what a
// checkpoint writes into the object it keeps, and Seed reads back.
func (m Managers) Entries() []metav1.ManagedFieldsEntry {
	if m.Empty() {
		return nil
	}
	t := m.tracker
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]metav1.ManagedFieldsEntry, len(m.stamps))
	for i, s := range m.stamps {
		id := t.ids[s.id]
		e := metav1.ManagedFieldsEntry{Manager: id.manager, Operation: metav1.ManagedFieldsOperationType(id.operation),
			APIVersion: id.apiVersion, Subresource: id.subresource}
		if s.sec != 0 {
			ts := metav1.NewTime(time.Unix(int64(s.sec), 0).UTC())
			e.Time = &ts
		}
		out[i] = e
	}
	return out
}

// AppendJSON appends m's entries to dst as the JSON list of managedFields that Entries
// would encode to (manager, operation, apiVersion, time, subresource; no fields), without
// building them.
func (m Managers) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	if !m.Empty() {
		t := m.tracker
		t.mu.Lock()
		defer t.mu.Unlock()
		for i, s := range m.stamps {
			if i > 0 {
				dst = append(dst, ',')
			}
			id := t.ids[s.id]
			dst = jsonw.AppendJSONField(dst, `{"manager":`, id.manager)
			dst = jsonw.AppendJSONField(dst, `,"operation":`, id.operation)
			if id.apiVersion != "" {
				dst = jsonw.AppendJSONField(dst, `,"apiVersion":`, id.apiVersion)
			}
			if s.sec != 0 {
				dst = append(dst, `,"time":"`...)
				dst = time.Unix(int64(s.sec), 0).UTC().AppendFormat(dst, time.RFC3339)
				dst = append(dst, '"')
			}
			if id.subresource != "" {
				dst = jsonw.AppendJSONField(dst, `,"subresource":`, id.subresource)
			}
			dst = append(dst, '}')
		}
	}
	return append(dst, ']')
}

// Seed has t take obj's managedFields (their entries' managers and times; fields are not
// needed) as those of the version of obj that was delivered before: an object a
// checkpoint kept (--resume), before the first list. When that list brings a newer
// version, its Record compares with this one, as with any previous version. Returns the
// entries as Managers (for the checkpoint to keep while the object does not change);
// none, and nothing kept, when obj has no managedFields (a checkpoint written without
// them).
func (t *Tracker) Seed(obj runtime.Object) Managers {
	m, err := meta.Accessor(obj)
	if err != nil || m.GetUID() == "" {
		return Managers{}
	}
	var buf [8]rawEntry
	entries := readEntries(obj, m, buf[:0])
	if len(entries) == 0 {
		return Managers{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ids, numbered := t.number(entries, nil)
	if !numbered {
		return Managers{}
	}
	stamps := make([]stamp, len(ids))
	for i, id := range ids {
		stamps[i] = stamp{id: id, sec: secondOf(entries[i].time)}
	}
	t.objects[t.keyOf(string(m.GetUID()))] = summary{version: maphash.String(t.version, m.GetResourceVersion()), stamps: stamps, seeded: true}
	return Managers{tracker: t, stamps: stamps}
}
