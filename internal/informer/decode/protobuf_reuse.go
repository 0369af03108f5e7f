package decode

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// partReuseBudget bounds the protobuf bytes one watch keeps to recognise unchanged parts.
const partReuseBudget = 64 << 20

// partReuse decodes the objects of one protobuf watch, reusing what has not changed.
//
// Most changes touch one part of an object: a label patch changes metadata, a kubelet's
// report changes status, and the spec stays as it was. The generated decoders still
// decode every part again, and then the diff compares every part of the previous state
// with the new one, far from the CPU's caches. So for every object seen on this watch
// (by UID) it keeps the bytes each top-level part (spec, status, data, ...) was decoded
// from, and when an event brings the same bytes for a part, the new object takes that
// part from the previous one instead of decoding it: the same slices, maps and pointers,
// which is also what makes the diff's comparison of that part immediate. Equal bytes decode
// to equal values, so nothing is guessed: a part that differs by one byte is decoded.
//
// Two versions sharing a part is safe because of the package's invariant (see the
// package comment): nothing changes a decoded object outside its metadata, which is
// never shared.
type partReuse struct {
	seen    map[string]*decodedParts // by UID
	held    int                      // bytes held by seen's parts
	budget  int
	spans   []fieldSpan // scratch
	trimmed []byte      // scratch: the message without the reused parts
	// dropManagedFields leaves metadata.managedFields out of the decoded objects: for
	// an informer whose transform drops them anyway, decoding them is wasted work.
	dropManagedFields bool
	// managedFields is TypedDecoding.ManagedFields: the stripped managedFields go there.
	managedFields func(obj runtime.Object, managed []byte)
	// off decodes every object whole, keeping nothing (TypedDecoding.NoPartReuse).
	off bool
	// The last object type's layout: a watch's objects are of one type.
	layoutType reflect.Type
	layout     *protoLayout
}

// decodedParts is the last object decoded for one UID and the bytes of its parts.
type decodedParts struct {
	obj   reflect.Value // pointer to the struct
	parts [][]byte      // per protoLayout.parts; nil where the part was absent
	size  int
}

func newPartReuse(decoding TypedDecoding) *partReuse {
	return &partReuse{seen: map[string]*decodedParts{}, budget: partReuseBudget,
		dropManagedFields: decoding.DropManagedFields || decoding.ManagedFields != nil,
		managedFields:     decoding.ManagedFields, off: decoding.NoPartReuse}
}

// unmarshal decodes raw (the object's protobuf message) into obj, a new object of the
// scheme, and remembers its parts for the next event about the same object.
func (r *partReuse) unmarshal(typ watch.EventType, obj protoUnmarshaler, raw []byte) error {
	v := reflect.ValueOf(obj)
	if v.Type() != r.layoutType {
		r.layoutType, r.layout = v.Type(), protoLayoutOf(v.Type())
	}
	layout := r.layout
	var meta objectMetadata
	if layout != nil {
		var ok bool
		if r.spans, ok = splitMessage(raw, r.spans[:0]); ok {
			meta = layout.metadataOf(raw, r.spans)
		}
	}
	uid := meta.uid
	if len(uid) == 0 {
		return obj.Unmarshal(raw)
	}
	strip := r.dropManagedFields && meta.managedFields.end > meta.managedFields.start
	var managed []byte // handed to r.managedFields: none, or the stripped ones
	if strip {
		managed = meta.value[meta.managedFields.start:meta.managedFields.end]
	}
	prev := r.seen[string(uid)] // always nil when off: nothing is remembered
	if prev != nil && prev.obj.Type() != v.Type() {
		prev = nil
	}
	var reused uint64 // bit i: part i comes from prev
	msg := raw
	if prev != nil {
		for _, s := range r.spans {
			if i := layout.partOf(s.num); i >= 0 && prev.parts[i] != nil && bytes.Equal(raw[s.start:s.end], prev.parts[i]) {
				reused |= 1 << i
			}
		}
	}
	if reused != 0 || strip {
		msg = r.trimmed[:0]
		for _, s := range r.spans {
			switch i := layout.partOf(s.num); {
			case i >= 0 && reused&(1<<i) != 0:
			case s.num == layout.metadata && strip:
				// The metadata again, less its managedFields.
				mf := meta.managedFields
				msg = protowire.AppendTag(msg, layout.metadata, protowire.BytesType)
				msg = protowire.AppendVarint(msg, uint64(len(meta.value)-(mf.end-mf.start)))
				msg = append(msg, meta.value[:mf.start]...)
				msg = append(msg, meta.value[mf.end:]...)
			default:
				msg = append(msg, raw[s.start:s.end]...)
			}
		}
		r.trimmed = msg
	}
	if err := obj.Unmarshal(msg); err != nil {
		return err
	}
	if r.managedFields != nil && !meta.scattered {
		if ro, ok := obj.(runtime.Object); ok {
			r.managedFields(ro, managed)
		}
	}
	for i, part := range layout.parts {
		if reused&(1<<i) != 0 {
			v.Elem().Field(part.field).Set(prev.obj.Elem().Field(part.field))
		}
	}
	if !r.off {
		r.remember(typ, string(uid), prev, v, layout, raw, reused)
	}
	return nil
}

// remember records the parts of the object just decoded, or forgets a deleted object.
func (r *partReuse) remember(typ watch.EventType, uid string, prev *decodedParts, v reflect.Value, layout *protoLayout, raw []byte, reused uint64) {
	if stale := r.seen[uid]; stale != nil {
		r.held -= stale.size // prev, unless that was of another type
	}
	if typ == watch.Deleted {
		delete(r.seen, uid)
		return
	}
	entry := prev
	if entry == nil {
		entry = &decodedParts{parts: make([][]byte, len(layout.parts))}
	}
	entry.obj, entry.size = v, 0
	for i := range entry.parts {
		if reused&(1<<i) == 0 {
			entry.parts[i] = nil // absent now, unless a span below says otherwise
		}
	}
	for _, s := range r.spans {
		if i := layout.partOf(s.num); i >= 0 && reused&(1<<i) == 0 {
			entry.parts[i] = bytes.Clone(raw[s.start:s.end])
		}
	}
	for _, part := range entry.parts {
		entry.size += len(part)
	}
	if r.held+entry.size > r.budget {
		delete(r.seen, uid) // a huge watch: objects beyond the budget are decoded whole each time
		return
	}
	r.held += entry.size
	r.seen[uid] = entry
}

// fieldSpan is one top-level field of a protobuf message: its number and the bytes from
// its first key to the end of its last value (a repeated field's occurrences are adjacent).
type fieldSpan struct {
	num        protowire.Number
	start, end int
}

// splitMessage splits a message into its top-level fields; false if it does not parse,
// or a field's occurrences are not adjacent (which the API server never writes).
func splitMessage(b []byte, spans []fieldSpan) ([]fieldSpan, bool) {
	for off := 0; off < len(b); {
		num, wt, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return spans, false
		}
		m := protowire.ConsumeFieldValue(num, wt, b[off+n:])
		if m < 0 {
			return spans, false
		}
		end := off + n + m
		if last := len(spans) - 1; last >= 0 && spans[last].num == num {
			spans[last].end = end
		} else {
			for _, s := range spans {
				if s.num == num {
					return spans, false
				}
			}
			spans = append(spans, fieldSpan{num: num, start: off, end: end})
		}
		off = end
	}
	return spans, true
}

// protoLayout is where a type's protobuf fields are in its Go struct.
type protoLayout struct {
	metadata protowire.Number // the ObjectMeta field
	parts    []protoPart      // the other message, bytes and repeated fields: the reusable parts
}

type protoPart struct {
	num   protowire.Number
	field int
}

// objectMetaUID and objectMetaManagedFields are the protobuf numbers of ObjectMeta's uid
// and managedFields.
var objectMetaUID, objectMetaManagedFields = objectMetaNumber("UID"), objectMetaNumber("ManagedFields")

func objectMetaNumber(field string) protowire.Number {
	f, _ := reflect.TypeFor[metav1.ObjectMeta]().FieldByName(field)
	num, _ := protobufNumber(f)
	return num
}

var protoLayouts sync.Map // reflect.Type (pointer to struct) → *protoLayout (nil: no reuse)

// protoLayoutOf is the layout of t, nil if its objects cannot be told apart by UID.
func protoLayoutOf(t reflect.Type) *protoLayout {
	if l, ok := protoLayouts.Load(t); ok {
		return l.(*protoLayout)
	}
	var layout *protoLayout
	if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && objectMetaUID != 0 {
		layout = &protoLayout{}
		st := t.Elem()
		for i := range st.NumField() {
			f := st.Field(i)
			num, lengthDelimited := protobufNumber(f)
			switch {
			case num == 0 || !f.IsExported():
			case f.Type == reflect.TypeFor[metav1.ObjectMeta]():
				layout.metadata = num
			case lengthDelimited:
				layout.parts = append(layout.parts, protoPart{num: num, field: i})
			}
		}
		if layout.metadata == 0 || len(layout.parts) == 0 || len(layout.parts) > 64 {
			layout = nil
		}
	}
	protoLayouts.Store(t, layout)
	return layout
}

// protobufNumber reads a field's `protobuf:"bytes,2,opt,name=spec"` tag: its number, and
// whether it is written length-delimited (messages, strings, bytes, maps, repeated).
func protobufNumber(f reflect.StructField) (protowire.Number, bool) {
	kind, rest, _ := strings.Cut(f.Tag.Get("protobuf"), ",")
	numText, rest, _ := strings.Cut(rest, ",")
	num, err := strconv.Atoi(numText)
	if err != nil || num <= 0 {
		return 0, false
	}
	return protowire.Number(num), kind == "bytes" || strings.HasPrefix(rest, "rep")
}

func (l *protoLayout) partOf(num protowire.Number) int {
	for i, p := range l.parts {
		if p.num == num {
			return i
		}
	}
	return -1
}

// objectMetadata is what partReuse reads of an object's metadata without decoding it.
type objectMetadata struct {
	value []byte // the ObjectMeta message
	uid   []byte
	// managedFields is where its managedFields entries are in value (all adjacent, as
	// the API server writes them); empty if there are none, or they are not adjacent.
	managedFields struct{ start, end int }
	// scattered says its managedFields are not adjacent (and so not left out).
	scattered bool
}

// metadataOf finds the metadata of a message split into spans; its uid is nil if it has
// none, or the metadata is written in an unusual way (twice, or broken).
func (l *protoLayout) metadataOf(raw []byte, spans []fieldSpan) (meta objectMetadata) {
	for _, s := range spans {
		if s.num != l.metadata {
			continue
		}
		field := raw[s.start:s.end]
		_, _, n := protowire.ConsumeTag(field)
		value, m := protowire.ConsumeBytes(field[n:])
		if m < 0 || n+m != len(field) {
			return objectMetadata{} // metadata written twice: merged by the decoder, not worth following
		}
		meta.value = value
		mfDone := false
		for off := 0; off < len(value); {
			num, wt, n := protowire.ConsumeTag(value[off:])
			if n < 0 {
				return objectMetadata{}
			}
			m := protowire.ConsumeFieldValue(num, wt, value[off+n:])
			if m < 0 {
				return objectMetadata{}
			}
			switch {
			case num == objectMetaUID && wt == protowire.BytesType:
				uid, _ := protowire.ConsumeBytes(value[off+n:])
				meta.uid = uid
			case num == objectMetaManagedFields && !mfDone:
				if meta.managedFields.end == 0 {
					meta.managedFields.start = off
				} else if meta.managedFields.end != off {
					meta.managedFields.start, meta.managedFields.end, mfDone = 0, 0, true // scattered: leave them
					meta.scattered = true
					break
				}
				meta.managedFields.end = off + n + m
			}
			off += n + m
		}
		return meta
	}
	return objectMetadata{}
}
