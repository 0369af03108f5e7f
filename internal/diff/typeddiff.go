package diff

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/wI2L/jsondiff"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// typedPatch is jsondiff's patch between the JSON of a MODIFIED event's previous and new
// typed objects, computed on the objects themselves: the same operations, in the same
// order, with the same paths and values as jsondiff.CompareWithoutMarshal on their whole
// generic JSON with the Differ's ignore paths, but without building generic JSON for
// anything that did not change, and without jsondiff's second walk over the parts that
// did.
//
// Why: on a kubelet's status report, building the differing parts as generic JSON and
// handing them to jsondiff (comparedParts) was a fifth of kubeevents' CPU, most of it
// reflect.Value bookkeeping, maps of parts and jsondiff's pointers, for seven changed
// leaves. Here the structs are walked by field offset in the order jsondiff visits their
// keys (sorted JSON names), the fields equal on both sides are passed over with the
// compiled comparison of generic.EqualOf, and only a changed leaf becomes generic JSON.
//
// It follows encoding/json's rules where generic.PlanOf's plain plans do (names, omitempty,
// omitzero, inlined structs); a value that encodes itself (a timestamp, a quantity) or a
// type it does not walk (maps other than map[string]string, interfaces, floats) is a
// leaf, compared as jsondiff would compare its generic JSON. ok is false, and the caller
// goes on with comparedParts, when the objects are not both pointers to one struct type
// of a plain plan (unstructured objects, types with their own encoding).
//
// TestTypedPatchSameAsWholeDiff holds it to jsondiff on the whole objects, for every type
// of client-go's scheme filled at random and for realistic pod updates, with and without
// ignore paths, wildcards included.
func (d *Differ) typedPatch(ev *event.Event) (patch jsondiff.Patch, ok bool, err error) {
	old, object := reflect.ValueOf(ev.Old), reflect.ValueOf(ev.Object)
	if old.Kind() != reflect.Pointer || old.Type() != object.Type() || old.IsNil() || object.IsNil() {
		return nil, false, nil
	}
	// walkOf has worked out once whether the type is a struct of a plain plan.
	root := walkOf(old.Type().Elem())
	if root.kind != walkStruct {
		return nil, false, nil
	}
	w := typedWalk{ignores: d.ignores, sameMemory: !d.noSameMemory, path: make([]byte, 0, 128), segments: make([]string, 0, 12)}
	w.walkStruct(root, old.UnsafePointer(), object.UnsafePointer())
	if w.err != nil {
		return nil, true, w.err
	}
	return w.patch, true, nil
}

// typedWalk is one typedPatch: where it is in the objects, and the operations so far.
type typedWalk struct {
	ignores    []IgnorePath
	sameMemory bool
	// path is the JSON pointer of the value being compared, as jsondiff writes it;
	// segments are its keys and indices unescaped, which ignore paths are matched on.
	path     []byte
	segments []string
	patch    jsondiff.Patch
	err      error
}

// push makes key (an object's key) the current path's last segment.
func (w *typedWalk) push(key string) {
	w.path = append(w.path, '/')
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '~':
			w.path = append(w.path, "~0"...)
		case '/':
			w.path = append(w.path, "~1"...)
		default:
			w.path = append(w.path, c)
		}
	}
	w.segments = append(w.segments, key)
}

// pushIndex makes a list index the current path's last segment.
func (w *typedWalk) pushIndex(i int) {
	w.path = append(w.path, '/')
	w.path = strconv.AppendInt(w.path, int64(i), 10)
	w.segments = append(w.segments, strconv.Itoa(i))
}

// pop undoes the last push, given the length the path had before it.
func (w *typedWalk) pop(pathLen int) {
	w.path = w.path[:pathLen]
	w.segments = w.segments[:len(w.segments)-1]
}

// ignored reports whether an ignore path names the current path exactly, as jsondiff
// checks its ignored pointers (a path with wildcards stands for every path it matches).
func (w *typedWalk) ignored() bool {
	for _, ignore := range w.ignores {
		if len(ignore.segments) != len(w.segments) {
			continue
		}
		match := true
		for i, segment := range ignore.segments {
			if segment != wildcard && segment != w.segments[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func (w *typedWalk) add(path string, value any) {
	w.patch = append(w.patch, jsondiff.Operation{Type: jsondiff.OperationAdd, Path: path, Value: value})
}

func (w *typedWalk) remove(path string, old any) {
	w.patch = append(w.patch, jsondiff.Operation{Type: jsondiff.OperationRemove, Path: path, OldValue: old})
}

func (w *typedWalk) replace(old, value any) {
	w.patch = append(w.patch, jsondiff.Operation{Type: jsondiff.OperationReplace, Path: string(w.path), Value: value, OldValue: old})
}

// genericAt is the generic JSON of the value of tw's type at p.
func (w *typedWalk) genericAt(tw *typeWalk, p unsafe.Pointer) any {
	v, err := tw.genericFunc()(p)
	if err != nil && w.err == nil {
		w.err = err
	}
	return v
}

// walkStruct compares two structs of a plain plan (tw's) key by key, as jsondiff
// compares objects.
func (w *typedWalk) walkStruct(tw *typeWalk, a, b unsafe.Pointer) {
	fields, walks := tw.fields()
	for i := range fields {
		f := &fields[i]
		fa, fb := unsafe.Add(a, f.Offset), unsafe.Add(b, f.Offset)
		inOld := f.Omitted == nil || !f.Omitted(fa)
		inNew := f.Omitted == nil || !f.Omitted(fb)
		if !inOld && !inNew || inOld && inNew && sameAt(f.Type, f.Equal, fa, fb, w.sameMemory) {
			continue
		}
		pathLen := len(w.path)
		w.push(f.Name)
		if !w.ignored() {
			switch {
			case !inNew:
				w.remove(string(w.path), w.genericAt(walks[i], fa))
			case !inOld:
				w.add(string(w.path), w.genericAt(walks[i], fb))
			default:
				w.walkValue(walks[i], fa, fb)
			}
		}
		w.pop(pathLen)
	}
}

// typeWalk is how walkValue compares values of one type, worked out once per type so
// that the walk looks nothing up by type: what kind of value it is to jsondiff, and for a
// pointer or list its element's typeWalk, made on first use (types can be recursive).
type typeWalk struct {
	t    reflect.Type
	kind walkKind
	plan *generic.StructPlan // walkStruct
	// walkStruct: the typeWalk of each of plan's SortedFields, made on first use.
	fieldsOnce sync.Once
	fieldWalks []*typeWalk
	// walkPointer, walkList: the element's.
	elemOnce  sync.Once
	elem      *typeWalk
	elemSize  uintptr
	elemEqual generic.EqualFunc
	// generic builds the generic JSON of a value of t (generic.FuncOf's), made on first use.
	genericOnce sync.Once
	generic     generic.Func
}

// genericFunc is generic.FuncOf(tw.t), looked up once rather than for every changed leaf.
func (tw *typeWalk) genericFunc() generic.Func {
	tw.genericOnce.Do(func() { tw.generic = generic.FuncOf(tw.t) })
	return tw.generic
}

// fields are the sorted fields of a struct's plan and the typeWalk of each.
func (tw *typeWalk) fields() ([]generic.SortedField, []*typeWalk) {
	fields := tw.plan.SortedFields()
	tw.fieldsOnce.Do(func() {
		tw.fieldWalks = make([]*typeWalk, len(fields))
		for i, f := range fields {
			tw.fieldWalks[i] = walkOf(f.Type)
		}
	})
	return fields, tw.fieldWalks
}

type walkKind uint8

const (
	walkLeaf      walkKind = iota // compared as generic JSON
	walkStruct                    // a struct of a plain plan: field by field
	walkPointer                   // followed where both sides are not nil
	walkList                      // index by index where both sides are not nil
	walkStringMap                 // map[string]string: key by key where both are not nil
)

var typeWalks sync.Map // reflect.Type → *typeWalk

// walkOf is t's typeWalk.
func walkOf(t reflect.Type) *typeWalk {
	if tw, ok := typeWalks.Load(t); ok {
		return tw.(*typeWalk)
	}
	tw := &typeWalk{t: t}
	switch t.Kind() {
	case reflect.Pointer:
		tw.kind = walkPointer
	case reflect.Struct:
		if plan := generic.PlanOf(t); !generic.OwnEncoding(t) && plan != nil && plan.Plain {
			tw.kind, tw.plan = walkStruct, plan
		}
	case reflect.Slice:
		if t.Elem().Kind() != reflect.Uint8 && !generic.OwnEncoding(t) {
			tw.kind = walkList
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String &&
			!generic.OwnEncoding(t) && !generic.OwnEncoding(t.Key()) && !generic.OwnEncoding(t.Elem()) {
			tw.kind = walkStringMap
		}
	}
	actual, _ := typeWalks.LoadOrStore(t, tw)
	return actual.(*typeWalk)
}

// element is the typeWalk of a pointer's or list's element.
func (tw *typeWalk) element() *typeWalk {
	tw.elemOnce.Do(func() {
		elem := tw.t.Elem()
		tw.elem, tw.elemSize, tw.elemEqual = walkOf(elem), elem.Size(), generic.EqualOf(elem)
	})
	return tw.elem
}

// walkValue compares two values that are not equal as Go values (their JSON may still be
// equal: two timestamps within the same second), at the current path, which is not
// ignored.
func (w *typedWalk) walkValue(tw *typeWalk, a, b unsafe.Pointer) {
	switch tw.kind {
	case walkPointer:
		pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if pa != nil && pb != nil {
			w.walkValue(tw.element(), pa, pb)
			return
		}
	case walkStruct:
		w.walkStruct(tw, a, b)
		return
	case walkList:
		sa, sb := (*generic.SliceHeader)(a), (*generic.SliceHeader)(b)
		if sa.Data != nil && sb.Data != nil {
			w.walkList(tw, sa, sb)
			return
		}
	case walkStringMap:
		ma, mb := *(*map[string]string)(a), *(*map[string]string)(b)
		if ma != nil && mb != nil {
			w.walkStringMap(ma, mb)
			return
		}
	}
	w.walkGeneric(w.genericAt(tw, a), w.genericAt(tw, b))
}

// walkList compares two lists index by index, as jsondiff compares arrays: the elements
// a shorter new list lost first (each at the index where the list now ends), then the
// elements at each common index, then the ones appended ("-").
func (w *typedWalk) walkList(list *typeWalk, a, b *generic.SliceHeader) {
	elem := list.element()
	size, equal, typ := list.elemSize, list.elemEqual, elem.t
	common := min(a.Len, b.Len)
	pathLen := len(w.path)
	if b.Len < a.Len {
		w.pushIndex(common)
		at := string(w.path)
		w.pop(pathLen)
		for i := common; i < a.Len; i++ {
			w.pushIndex(i)
			if !w.ignored() {
				w.remove(at, w.genericAt(elem, unsafe.Add(a.Data, uintptr(i)*size)))
			}
			w.pop(pathLen)
		}
	}
	for i := range common {
		ea, eb := unsafe.Add(a.Data, uintptr(i)*size), unsafe.Add(b.Data, uintptr(i)*size)
		if sameAt(typ, equal, ea, eb, w.sameMemory) {
			continue
		}
		w.pushIndex(i)
		if !w.ignored() {
			w.walkValue(elem, ea, eb)
		}
		w.pop(pathLen)
	}
	if b.Len > a.Len {
		at := string(append(w.path, "/-"...))
		for i := common; i < b.Len; i++ {
			w.pushIndex(i)
			if !w.ignored() {
				w.add(at, w.genericAt(elem, unsafe.Add(b.Data, uintptr(i)*size)))
			}
			w.pop(pathLen)
		}
	}
}

// walkStringMap compares labels, annotations and other string maps key by key.
func (w *typedWalk) walkStringMap(a, b map[string]string) {
	walkKeys(w, a, b, func(va, vb string) bool { return va == vb }, func(va, vb string) { w.replace(va, vb) })
}

// walkKeys compares two maps key by key in sorted order, as jsondiff compares objects: a
// key only in the old map is removed, one only in the new map added, and one in both
// passed to compare unless same says its values are equal.
func walkKeys[V any](w *typedWalk, a, b map[string]V, same func(V, V) bool, compare func(V, V)) {
	keys := make([]string, 0, max(len(a), len(b)))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	pathLen := len(w.path)
	for _, k := range keys {
		va, inOld := a[k]
		vb, inNew := b[k]
		if inOld && inNew && same(va, vb) {
			continue
		}
		w.push(k)
		if !w.ignored() {
			switch {
			case !inNew:
				w.remove(string(w.path), va)
			case !inOld:
				w.add(string(w.path), vb)
			default:
				compare(va, vb)
			}
		}
		w.pop(pathLen)
	}
}

// walkGeneric is jsondiff's comparison of two generic JSON values at the current path
// (which is not ignored): a replacement where their JSON types differ or they are
// different scalars, objects key by key, arrays index by index.
func (w *typedWalk) walkGeneric(a, b any) {
	if jsonTypeOf(a) != jsonTypeOf(b) {
		w.replace(a, b)
		return
	}
	if jsonEqual(a, b) {
		return
	}
	pathLen := len(w.path)
	switch a := a.(type) {
	case map[string]any:
		// walkGeneric itself passes over equal values.
		walkKeys(w, a, b.(map[string]any), func(any, any) bool { return false }, w.walkGeneric)
	case []any:
		b := b.([]any)
		common := min(len(a), len(b))
		if len(b) < len(a) {
			w.pushIndex(common)
			at := string(w.path)
			w.pop(pathLen)
			for i := common; i < len(a); i++ {
				w.pushIndex(i)
				if !w.ignored() {
					w.remove(at, a[i])
				}
				w.pop(pathLen)
			}
		}
		for i := range common {
			w.pushIndex(i)
			if !w.ignored() {
				w.walkGeneric(a[i], b[i])
			}
			w.pop(pathLen)
		}
		if len(b) > len(a) {
			at := string(append(w.path, "/-"...))
			for i := common; i < len(b); i++ {
				w.pushIndex(i)
				if !w.ignored() {
					w.add(at, b[i])
				}
				w.pop(pathLen)
			}
		}
	default:
		w.replace(a, b)
	}
}

// jsonTypeOf is the JSON type of a generic value as jsondiff tells them apart (a float64
// and a json.Number are different types to it).
func jsonTypeOf(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case string:
		return 1
	case bool:
		return 2
	case float64:
		return 3
	case json.Number:
		return 4
	case []any:
		return 5
	case map[string]any:
		return 6
	}
	return -1
}

// jsonEqual is jsondiff's equality of two generic values of one JSON type.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case string:
		return a == b.(string)
	case bool:
		return a == b.(bool)
	case float64:
		return a == b.(float64)
	case json.Number:
		return a == b.(json.Number)
	case []any:
		b := b.([]any)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if jsonTypeOf(a[i]) != jsonTypeOf(b[i]) || !jsonEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		b := b.(map[string]any)
		if len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || jsonTypeOf(va) != jsonTypeOf(vb) || !jsonEqual(va, vb) {
				return false
			}
		}
		return true
	}
	return false
}
