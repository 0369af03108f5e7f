package managedfields

import (
	"bytes"
	"hash/maphash"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Tracker follows the managedFields of one informer's objects as they enter its cache.
// Observe, called by the informer's transform before it drops managedFields, compares an
// object's entries with those of its previous version and leaves a Record of what may
// have made the change, which the informer's handler takes (Take) when it makes the
// event. Per object it keeps a summary (its version and, per entry, a manager number and
// the write's second: 8 bytes an entry), dropped by Forget when the object is deleted.
// Safe for concurrent use: Observe runs on client-go's reflector goroutine, Take and
// Forget on the handlers'.
type Tracker struct {
	mu sync.Mutex
	// identities numbers the (manager, operation, apiVersion, subresource) seen, so that
	// a summary holds numbers rather than strings; ids is the reverse.
	identities map[identity]uint32
	ids        []identity
	strings    map[string]string // ObserveProtobuf's names, interned
	objects    map[objectKey]summary
	// pending are the Records of objects observed and not yet taken, by the object: the
	// same pointer the handlers are given.
	pending map[any]*Record
	seeds   [2]maphash.Seed // the object keys' hashes
	version maphash.Seed    // the resourceVersions' hashes
	// keep keeps the field set of every candidate, also of one decided by time alone
	// (KeepFields).
	keep bool
}

// maxIdentities bounds the managers a Tracker numbers. Clusters have a few dozen; past
// the bound (managers named per object by some controller), objects with unnumbered
// managers are followed without a summary: their changes are attributed from the
// latest second's entries and their fields.
const maxIdentities = 1 << 16

// identity is what the API server tells entries apart by: the manager, the operation,
// the subresource and, for an Update, the apiVersion it wrote through.
type identity struct {
	manager, operation, apiVersion, subresource string
}

// stamp is one entry of a summary: its identity's number and the second of its write
// (0: none, or before 1970; the API server writes times after).
type stamp struct {
	id  uint32
	sec uint32
}

// summary is what a Tracker keeps of an object's last version.
type summary struct {
	version uint64 // a hash of its resourceVersion
	stamps  []stamp
	seeded  bool // a checkpoint's version (Seed)
}

// objectKey is an object's UID hashed to 128 bits: 16 bytes where the UID's string would
// take 48.
type objectKey [16]byte

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker {
	return &Tracker{identities: map[identity]uint32{}, strings: map[string]string{}, objects: map[objectKey]summary{}, pending: map[any]*Record{},
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, version: maphash.MakeSeed()}
}

// KeepFields has t's Records keep the field set of every candidate, also of an entry that
// its time alone says made the change: what Merge needs to tell, of two changes made one,
// which made each part (a sink that coalesces). It costs a copy of that entry's fields
// per change read from protobuf. Call it before t observes anything.
func (t *Tracker) KeepFields() { t.keep = true }

// rawEntry is one managedFields entry as read from an object, with its field set still
// in the object's form (*metav1.FieldsV1, or the map of an unstructured object).
type rawEntry struct {
	identity
	time   time.Time
	fields any
	// raw is the field set as FieldsV1's JSON, in place of fields, when read from
	// protobuf (ObserveProtobuf): valid only during the call, copied when kept.
	raw []byte
}

// keptFields is the entry's field set as a Record keeps it.
func (e *rawEntry) keptFields() any {
	if e.raw != nil {
		return bytes.Clone(e.raw)
	}
	return e.fields
}

// Observe reads obj's managedFields (before the informer drops them) and leaves a
// Record for its handler to Take. An object seen at the same resourceVersion as before
// (a re-list that found it unchanged) leaves none: no event is made of it. An object
// ObserveProtobuf saw as it was decoded is not read again.
func (t *Tracker) Observe(obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil || m.GetUID() == "" {
		return
	}
	var buf [8]rawEntry
	entries := readEntries(obj, m, buf[:0])
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, observed := t.pending[obj]; observed {
		return
	}
	t.observe(obj, m, entries)
}

// ObserveProtobuf is Observe for a typed object decoded without its managedFields (the
// protobuf watch's decoder leaves them out), which are given as protobuf instead: the
// occurrences of ObjectMeta's repeated managedFields field, tags included, read only
// during the call. Reading them here rather than decoding them into the object spares a
// string per name and a copy of every field set per event: names are interned, and a
// field set is copied only when its Record keeps it (when times alone cannot decide).
func (t *Tracker) ObserveProtobuf(obj runtime.Object, managed []byte) {
	m, err := meta.Accessor(obj)
	if err != nil || m.GetUID() == "" {
		return
	}
	var buf [8]rawEntry
	t.mu.Lock()
	defer t.mu.Unlock()
	entries, ok := t.protobufEntries(managed, buf[:0])
	if !ok {
		entries = nil // broken, which the API server never writes: as if there were none
	}
	t.observe(obj, m, entries)
}

// observe is Observe's work on entries, with t.mu held.
func (t *Tracker) observe(obj runtime.Object, m metav1.Object, entries []rawEntry) {
	key := t.keyOf(string(m.GetUID()))
	version := maphash.String(t.version, m.GetResourceVersion())
	prev, known := t.objects[key]
	if known && prev.version == version {
		if prev.seeded {
			// A checkpoint's version, unchanged: what comes next is its next version.
			prev.seeded = false
			t.objects[key] = prev
		}
		return
	}
	created := m.GetCreationTimestamp().Unix()
	var buf [8]uint32
	ids, numbered := t.number(entries, buf[:0])
	if !numbered {
		delete(t.objects, key)
		t.pending[obj] = newRecord(entries, nil, nil, nil, false, false, t.keep, created)
		return
	}
	// A new slice each version: the Record shares it (Merge, Managers), so the previous
	// version's is not reused.
	stamps := make([]stamp, len(ids))
	for i, id := range ids {
		stamps[i] = stamp{id: id, sec: secondOf(entries[i].time)}
	}
	r := newRecord(entries, ids, prev.stamps, stamps, known, prev.seeded, t.keep, created)
	r.tracker = t
	t.pending[obj] = r
	t.objects[key] = summary{version: version, stamps: stamps}
}

// number appends the number of each entry's identity to ids; false if one could not be
// numbered.
func (t *Tracker) number(entries []rawEntry, ids []uint32) ([]uint32, bool) {
	for _, e := range entries {
		id, ok := t.identities[e.identity]
		if !ok {
			if len(t.ids) >= maxIdentities {
				return nil, false
			}
			id = uint32(len(t.ids))
			t.ids = append(t.ids, e.identity)
			t.identities[e.identity] = id
		}
		ids = append(ids, id)
	}
	return ids, true
}

func secondOf(t time.Time) uint32 {
	s := t.Unix()
	if t.IsZero() || s <= 0 {
		return 0
	}
	return uint32(min(s, 1<<32-1))
}

// Take returns the Record Observe left for obj, once; nil if there is none.
func (t *Tracker) Take(obj any) *Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.pending[obj]
	if r != nil {
		delete(t.pending, obj)
	}
	return r
}

// Forget drops what t keeps of a deleted object (and the Record of its last state, if
// not taken).
func (t *Tracker) Forget(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	key := t.keyOf(string(m.GetUID()))
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.objects, key)
	delete(t.pending, obj)
}

// Objects is how many objects t keeps a summary of.
func (t *Tracker) Objects() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.objects)
}

func (t *Tracker) keyOf(uid string) objectKey {
	var k objectKey
	h1, h2 := maphash.String(t.seeds[0], uid), maphash.String(t.seeds[1], uid)
	for i := range 8 {
		k[i], k[8+i] = byte(h1>>(8*i)), byte(h2>>(8*i))
	}
	return k
}

// readEntries reads obj's managedFields: a typed object's (or PartialObjectMetadata's)
// as they are, an unstructured one's from its maps, without converting the field sets.
func readEntries(obj runtime.Object, m metav1.Object, entries []rawEntry) []rawEntry {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return unstructuredEntries(u)
	}
	managed := m.GetManagedFields()
	for i := range managed {
		e := &managed[i]
		entry := rawEntry{identity: identityOf(e.Manager, string(e.Operation), e.APIVersion, e.Subresource)}
		if e.Time != nil {
			entry.time = e.Time.Time
		}
		if e.FieldsV1 != nil {
			entry.fields = e.FieldsV1 // the pointer only: not the whole managedFields
		}
		entries = append(entries, entry)
	}
	return entries
}

// The protobuf numbers of ManagedFieldsEntry's fields, of FieldsV1's raw bytes and of
// Time's seconds and nanoseconds (k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto;
// TestObserveProtobufAsDecoded checks them against the generated decoder).
const (
	pbManager, pbOperation, pbAPIVersion, pbTime, pbFieldsV1, pbSubresource = 1, 2, 3, 4, 7, 8
	pbFieldsV1Raw                                                           = 1
	pbSeconds, pbNanos                                                      = 1, 2
)

// protobufEntries appends the entries of managed (ObserveProtobuf's) to entries, their
// names interned, their field sets in place; false if it does not parse. With t.mu held.
func (t *Tracker) protobufEntries(managed []byte, entries []rawEntry) ([]rawEntry, bool) {
	for len(managed) > 0 {
		_, typ, n := protowire.ConsumeTag(managed)
		if n < 0 || typ != protowire.BytesType {
			return entries, false
		}
		msg, m := protowire.ConsumeBytes(managed[n:])
		if m < 0 {
			return entries, false
		}
		managed = managed[n+m:]
		var e rawEntry
		var manager, operation, apiVersion, subresource []byte
		ok := fields(msg, func(num protowire.Number, v []byte) bool {
			switch num {
			case pbManager:
				manager = v
			case pbOperation:
				operation = v
			case pbAPIVersion:
				apiVersion = v
			case pbSubresource:
				subresource = v
			case pbTime:
				var ok bool
				e.time, ok = protobufTime(v)
				return ok
			case pbFieldsV1:
				e.raw = []byte{} // present, if empty
				return fields(v, func(num protowire.Number, v []byte) bool {
					if num == pbFieldsV1Raw {
						e.raw = v
					}
					return true
				})
			}
			return true
		})
		if !ok {
			return entries, false
		}
		e.identity = identityOf(t.intern(manager), t.intern(operation), t.intern(apiVersion), t.intern(subresource))
		entries = append(entries, e)
	}
	return entries, true
}

// fields calls f with each length-delimited field of msg in turn (the decoder keeps the
// last of a field written twice, as f does by overwriting); false if msg does not parse
// or f says so.
func fields(msg []byte, f func(num protowire.Number, v []byte) bool) bool {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return false
		}
		msg = msg[n:]
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, msg)
			if m < 0 {
				return false
			}
			msg = msg[m:]
			continue
		}
		v, m := protowire.ConsumeBytes(msg)
		if m < 0 || !f(num, v) {
			return false
		}
		msg = msg[m:]
	}
	return true
}

// protobufTime decodes a metav1.Time as its Unmarshal does: empty is the zero time.
func protobufTime(msg []byte) (time.Time, bool) {
	if len(msg) == 0 {
		return time.Time{}, true
	}
	var sec, nsec int64
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return time.Time{}, false
		}
		msg = msg[n:]
		if typ == protowire.VarintType && (num == pbSeconds || num == pbNanos) {
			v, m := protowire.ConsumeVarint(msg)
			if m < 0 {
				return time.Time{}, false
			}
			if num == pbSeconds {
				sec = int64(v)
			} else {
				nsec = int64(int32(v))
			}
			msg = msg[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, msg)
		if m < 0 {
			return time.Time{}, false
		}
		msg = msg[m:]
	}
	return time.Unix(sec, nsec), true
}

// intern is b as a string, the same string each time for the names t has seen (a
// bounded number of them), so that reading an entry allocates none. With t.mu held.
func (t *Tracker) intern(b []byte) string {
	if s, ok := t.strings[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(t.strings) < maxIdentities {
		t.strings[s] = s
	}
	return s
}

func unstructuredEntries(u *unstructured.Unstructured) []rawEntry {
	metadata, _ := u.Object["metadata"].(map[string]any)
	list, _ := metadata["managedFields"].([]any)
	if len(list) == 0 {
		return nil
	}
	entries := make([]rawEntry, 0, len(list))
	for _, item := range list {
		e, ok := item.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := e[k].(string); return s }
		entry := rawEntry{identity: identityOf(str("manager"), str("operation"), str("apiVersion"), str("subresource"))}
		if ts := str("time"); ts != "" {
			entry.time, _ = time.Parse(time.RFC3339, ts)
		}
		if fields, ok := e["fieldsV1"].(map[string]any); ok {
			entry.fields = fields
		}
		entries = append(entries, entry)
	}
	return entries
}

// identityOf is an entry's identity; an Apply's apiVersion is not part of it (as the API
// server has it: an applier is one manager whatever version it applies through).
func identityOf(manager, operation, apiVersion, subresource string) identity {
	if operation == string(metav1.ManagedFieldsOperationApply) {
		apiVersion = ""
	}
	return identity{manager: manager, operation: operation, apiVersion: apiVersion, subresource: subresource}
}

// Pending are the objects whose Records were not taken yet (for tests: a handler that
// lets go of none would leave them here for ever).
func (t *Tracker) Pending() []any {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]any, 0, len(t.pending))
	for obj := range t.pending {
		out = append(out, obj)
	}
	return out
}
