// Package partjson is the render edge's part cache: an event.Encoder that writes an
// object's JSON as encoding/json does, copying the JSON of each top-level part that did
// not change since the object's previous version. It is one of the three fast paths
// whose invariant package decode states (nothing changes a decoded object outside its
// metadata); KUBEEVENTS_FAST_PATHS=off leaves every event without it.
package partjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jsonfield"
)

// partEncoderBudget bounds the JSON one informer keeps to copy unchanged parts from.
const partEncoderBudget = 64 << 20

// Encoder writes an object's JSON as json.Marshal does, copying each top-level part
// (spec, status, ...) that has not changed since the previous version it encoded.
//
// A part has not changed when its memory is the previous version's, byte for byte: the
// same scalars and the same pointers, slices, maps and strings, which is what the protobuf
// watch hands over for the parts an event brings unchanged (package decode). Nothing changes
// such parts (the package's invariant), and the previous version is held here, so none
// of the memory it points to can be reused for something else: the same bytes mean the
// same JSON.
// Anything else (a part decoded afresh, objects from a list) is encoded as usual.
type Encoder struct {
	mu     sync.Mutex
	last   map[types.UID]*encodedVersion // guarded by mu
	held   int                           // guarded by mu: bytes of JSON in last
	budget int
}

// encodedVersion is the last version of one object encoded, and its parts' JSON.
type encodedVersion struct {
	obj    reflect.Value // pointer to the struct: keeps what its parts point to alive
	parts  [][]byte      // per objectLayout.fields; nil for parts not kept
	size   int           // bytes in parts
	length int           // of the whole encoding
}

// NewEncoder returns an encoder that keeps at most partEncoderBudget bytes of JSON.
func NewEncoder() *Encoder {
	return &Encoder{last: map[types.UID]*encodedVersion{}, budget: partEncoderBudget}
}

// Marshal is json.Marshal of obj, copying the JSON of the parts that are the previous
// version's memory. A nil Encoder encodes every object whole.
func (e *Encoder) Marshal(obj runtime.Object, update event.Update) ([]byte, error) {
	if e == nil {
		return json.Marshal(obj)
	}
	v := reflect.ValueOf(obj)
	layout := objectLayoutOf(v.Type())
	if layout == nil || v.IsNil() {
		return json.Marshal(obj)
	}
	m, err := meta.Accessor(obj)
	if err != nil || m.GetUID() == "" {
		return json.Marshal(obj)
	}
	uid := m.GetUID()
	e.mu.Lock()
	prev := e.last[uid]
	e.mu.Unlock()
	if prev != nil && prev.obj.Type() != v.Type() {
		prev = nil
	}

	next := &encodedVersion{obj: v, parts: make([][]byte, len(layout.fields))}
	size := min(int(layout.lastLength.Load()), 32<<10) + 64 // objects of a type are about as long
	if prev != nil {
		size = prev.length + 64 // the next version is about as long: labels come and go
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	for i, f := range layout.fields {
		fv := v.Elem().Field(f.index)
		if f.inline {
			// Written in place, then its braces taken out: the fields move down by one
			// or two bytes (copy handles the overlap).
			start := len(out)
			if out, err = appendJSON(out, fv.Addr()); err != nil {
				return nil, err
			}
			inner := out[start+1 : len(out)-1]
			if out = out[:start]; len(inner) > 0 {
				out = appendSeparator(out)
				out = append(out, inner...)
			}
			continue
		}
		if f.json.Omitted(fv) {
			continue
		}
		out = appendSeparator(out)
		out = append(out, f.key...)
		var enc []byte
		if prev != nil && prev.parts[i] != nil && sameMemory(fv, prev.obj.Elem().Field(f.index)) {
			enc = prev.parts[i]
			out = append(out, enc...)
		} else {
			start := len(out)
			if out, err = appendJSON(out, fv.Addr()); err != nil {
				return nil, err
			}
			if update == event.RecordVersion && f.kept {
				// A copy of its own, so that what is kept is the part alone, not
				// the whole object's JSON it was written in.
				enc = bytes.Clone(out[start:])
			}
		}
		if f.kept && enc != nil {
			next.parts[i] = enc
			next.size += len(enc)
		}
	}
	out = append(out, '}')
	next.length = len(out)
	layout.lastLength.Store(int64(len(out)))

	if update != event.KeepVersions {
		e.mu.Lock()
		if old := e.last[uid]; old != nil {
			e.held -= old.size
			delete(e.last, uid)
		}
		if update == event.RecordVersion && next.size > 0 && e.held+next.size <= e.budget {
			e.last[uid] = next
			e.held += next.size
		}
		e.mu.Unlock()
	}
	return out, nil
}

// appendJSON appends json.Marshal of what v holds (a pointer to a part of an object).
// (Encoders compiled per type once wrote the same bytes in about half encoding/json's
// time, but saved under 10% of kubeevents' CPU per event: removed, see the ledger in
// bench/README.md.)
func appendJSON(dst []byte, v reflect.Value) ([]byte, error) {
	encoded, err := json.Marshal(v.Interface())
	return append(dst, encoded...), err
}

func appendSeparator(out []byte) []byte {
	if out[len(out)-1] != '{' {
		out = append(out, ',')
	}
	return out
}

// sameMemory reports whether two addressable values of one type are the same bytes.
func sameMemory(a, b reflect.Value) bool {
	size := a.Type().Size()
	return bytes.Equal(unsafe.Slice((*byte)(a.Addr().UnsafePointer()), size), unsafe.Slice((*byte)(b.Addr().UnsafePointer()), size))
}

// objectLayout is how encoding/json writes a type's top-level fields, in order.
type objectLayout struct {
	fields     []layoutField
	lastLength atomic.Int64 // of the last object of this type encoded: the next one's first guess
}

type layoutField struct {
	index  int
	json   jsonfield.Field
	key    []byte // `"name":`
	inline bool   // TypeMeta: its fields are written in place
	kept   bool   // worth keeping for the next version: not metadata, which always changes
}

var objectLayouts sync.Map // reflect.Type → *objectLayout (nil: encode whole)

// objectLayoutOf is t's layout, nil where putting its JSON together from its fields
// could differ from json.Marshal: types with their own encoding, embedded structs other
// than plain inlined ones, names written twice.
func objectLayoutOf(t reflect.Type) *objectLayout {
	if l, ok := objectLayouts.Load(t); ok {
		return l.(*objectLayout)
	}
	layout := buildObjectLayout(t)
	objectLayouts.Store(t, layout)
	return layout
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

func buildObjectLayout(t reflect.Type) *objectLayout {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || t.Implements(jsonMarshaler) {
		return nil
	}
	st := t.Elem()
	layout := &objectLayout{}
	names := map[string]bool{}
	parts := 0
	for i := range st.NumField() {
		f := st.Field(i)
		opts := jsonfield.Of(f)
		if opts.Skip {
			continue
		}
		field := layoutField{index: i, json: opts}
		if opts.Inline {
			it := f.Type
			if !f.IsExported() || it.Kind() != reflect.Struct || reflect.PointerTo(it).Implements(jsonMarshaler) {
				return nil
			}
			for j := range it.NumField() {
				inner := jsonfield.Of(it.Field(j))
				if inner.Inline || (!inner.Skip && names[inner.Name]) {
					return nil
				}
				names[inner.Name] = true
			}
			field.inline = true
		} else {
			if names[opts.Name] {
				return nil
			}
			names[opts.Name] = true
			key, err := json.Marshal(opts.Name)
			if err != nil {
				return nil
			}
			field.key = append(key, ':')
			field.kept = f.Type != reflect.TypeFor[metav1.ObjectMeta]()
			if field.kept {
				parts++
			}
		}
		layout.fields = append(layout.fields, field)
	}
	if parts == 0 {
		return nil // metadata alone (PartialObjectMetadata): nothing worth keeping
	}
	return layout
}
