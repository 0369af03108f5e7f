package generic

import (
	"reflect"
	"unsafe"
)

// EqualFunc reports whether the values of one type at a and b are deeply equal.
type EqualFunc func(a, b unsafe.Pointer) bool

// equalFuncs are EqualOf's comparisons, compiled once per type.
var equalFuncs = &funcCache[EqualFunc]{build: compileEqual, forward: func(slot *EqualFunc) EqualFunc {
	return func(a, b unsafe.Pointer) bool { return (*slot)(a, b) }
}}

// EqualOf returns a comparison for values of type t with reflect.DeepEqual's meaning
// (all fields, unexported ones too; nil and empty slices or maps differ; NaN differs
// from itself), compiled once per type from its layout.
//
// Why not reflect.DeepEqual: a MODIFIED pod compares its previous and new spec and
// status, which are equal in most updates, so the whole of both is walked for every
// event. DeepEqual goes through reflect.Value for every field and records every pointer,
// slice and map it passes in a map, to detect cycles; that was half of the diff's cost.
// Objects decoded from the API server are trees, so there is no cycle to detect, and the
// layout of each type is known in advance.
func EqualOf(t reflect.Type) EqualFunc { return equalFuncs.of(t) }

// compileEqual builds t's comparison, and those of its parts through c.
func compileEqual(c *compilation[EqualFunc], t reflect.Type) EqualFunc {
	if equal, ok := scalarEquals[t.Kind()]; ok {
		return equal
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem := c.compile(t.Elem())
		return func(a, b unsafe.Pointer) bool {
			pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
			if pa == nil || pb == nil || pa == pb {
				return pa == pb
			}
			return elem(pa, pb)
		}
	case reflect.Struct:
		type field struct {
			offset uintptr
			equal  EqualFunc
		}
		fields := make([]field, 0, t.NumField())
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Type.Size() == 0 {
				continue
			}
			fields = append(fields, field{f.Offset, c.compile(f.Type)})
		}
		return func(a, b unsafe.Pointer) bool {
			for _, f := range fields {
				if !f.equal(unsafe.Add(a, f.offset), unsafe.Add(b, f.offset)) {
					return false
				}
			}
			return true
		}
	case reflect.Array:
		elem, size, n := c.compile(t.Elem()), t.Elem().Size(), uintptr(t.Len())
		return func(a, b unsafe.Pointer) bool {
			for i := range n {
				if !elem(unsafe.Add(a, i*size), unsafe.Add(b, i*size)) {
					return false
				}
			}
			return true
		}
	case reflect.Slice:
		elem, size := c.compile(t.Elem()), t.Elem().Size()
		return func(a, b unsafe.Pointer) bool {
			sa, sb := (*SliceHeader)(a), (*SliceHeader)(b)
			if (sa.Data == nil) != (sb.Data == nil) || sa.Len != sb.Len {
				return false
			}
			if sa.Data == sb.Data {
				return true
			}
			for i := range uintptr(sa.Len) {
				if !elem(unsafe.Add(sa.Data, i*size), unsafe.Add(sb.Data, i*size)) {
					return false
				}
			}
			return true
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String {
			// Labels, annotations, selectors: the common maps. Named string types have the
			// layout of string.
			return func(a, b unsafe.Pointer) bool {
				if *(*unsafe.Pointer)(a) == *(*unsafe.Pointer)(b) {
					return true // the same map (or both nil): a part the decoder reused
				}
				ma, mb := *(*map[string]string)(a), *(*map[string]string)(b)
				if (ma == nil) != (mb == nil) || len(ma) != len(mb) {
					return false
				}
				for k, va := range ma {
					if vb, ok := mb[k]; !ok || va != vb {
						return false
					}
				}
				return true
			}
		}
		if t.Key().Comparable() {
			// Resource lists (map[ResourceName]Quantity) and the like: look each key up
			// and compare the values in place of their copies.
			elem := c.compile(t.Elem())
			return func(a, b unsafe.Pointer) bool {
				ma, mb := reflect.NewAt(t, a).Elem(), reflect.NewAt(t, b).Elem()
				if ma.IsNil() != mb.IsNil() || ma.Len() != mb.Len() {
					return false
				}
				if ma.Len() == 0 || ma.UnsafePointer() == mb.UnsafePointer() {
					return true
				}
				va, vb := reflect.New(t.Elem()).Elem(), reflect.New(t.Elem()).Elem()
				for it := ma.MapRange(); it.Next(); {
					other := mb.MapIndex(it.Key())
					if !other.IsValid() {
						return false
					}
					va.SetIterValue(it)
					vb.Set(other)
					if !elem(va.Addr().UnsafePointer(), vb.Addr().UnsafePointer()) {
						return false
					}
				}
				return true
			}
		}
		return deepEqualAt(t)
	}
	// Interfaces, funcs, channels: rare in API types; DeepEqual knows their rules.
	return deepEqualAt(t)
}

// scalarEquals compare the values of the kinds that == compares: integers by their bits
// (a signed and an unsigned kind of one size alike), floats and strings by ==.
var scalarEquals = map[reflect.Kind]EqualFunc{
	reflect.Bool: equalAs[bool], reflect.Float32: equalAs[float32], reflect.Float64: equalAs[float64], reflect.String: equalAs[string],
	reflect.Int: equalAs[uint], reflect.Uint: equalAs[uint], reflect.Uintptr: equalAs[uint],
	reflect.Int8: equalAs[uint8], reflect.Uint8: equalAs[uint8], reflect.Int16: equalAs[uint16], reflect.Uint16: equalAs[uint16],
	reflect.Int32: equalAs[uint32], reflect.Uint32: equalAs[uint32], reflect.Int64: equalAs[uint64], reflect.Uint64: equalAs[uint64],
}

func equalAs[T comparable](a, b unsafe.Pointer) bool { return *(*T)(a) == *(*T)(b) }

// deepEqualAt compares two values of type t in place with reflect.DeepEqual.
func deepEqualAt(t reflect.Type) EqualFunc {
	return func(a, b unsafe.Pointer) bool {
		return reflect.DeepEqual(reflect.NewAt(t, a).Interface(), reflect.NewAt(t, b).Interface())
	}
}

// Equal is reflect.DeepEqual for the values of unstructured objects (maps, lists,
// strings, numbers, booleans), without reflection for them.
func Equal(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !Equal(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !Equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case nil, string, int64, bool, float64:
		return a == b // the same type and value (NaN differs from itself, as in DeepEqual)
	}
	return reflect.DeepEqual(a, b)
}
