package render

import (
	"reflect"
	"sync"
	"unsafe"
)

// equalFunc reports whether the values of one type at a and b are deeply equal.
type equalFunc func(a, b unsafe.Pointer) bool

// equalFuncs caches equalOf per type.
var equalFuncs sync.Map // reflect.Type → equalFunc

// equalOf returns a comparison for values of type t with reflect.DeepEqual's meaning
// (all fields, unexported ones too; nil and empty slices or maps differ; NaN differs
// from itself), compiled once per type from its layout.
//
// Why not reflect.DeepEqual: a MODIFIED pod compares its previous and new spec and
// status, which are equal in most updates, so the whole of both is walked for every
// event. DeepEqual goes through reflect.Value for every field and records every pointer,
// slice and map it passes in a map, to detect cycles; that was half of the diff's cost.
// Objects decoded from the API server are trees, so there is no cycle to detect, and the
// layout of each type is known in advance.
func equalOf(t reflect.Type) equalFunc {
	if f, ok := equalFuncs.Load(t); ok {
		return f.(equalFunc)
	}
	f := compileEqual(t, &equalCompiler{building: map[reflect.Type]*equalFunc{}, done: map[reflect.Type]equalFunc{}})
	equalFuncs.Store(t, f)
	return f
}

// equalCompiler holds the types of one compilation: those being built, which a recursive
// type refers to through their slot (one more call per value), and those done, used
// directly.
type equalCompiler struct {
	building map[reflect.Type]*equalFunc
	done     map[reflect.Type]equalFunc
}

// compileEqual builds t's comparison.
func compileEqual(t reflect.Type, c *equalCompiler) equalFunc {
	if f, ok := equalFuncs.Load(t); ok {
		return f.(equalFunc)
	}
	if f, ok := c.done[t]; ok {
		return f
	}
	if slot, ok := c.building[t]; ok {
		return func(a, b unsafe.Pointer) bool { return (*slot)(a, b) }
	}
	slot := new(equalFunc)
	c.building[t] = slot
	*slot = compileKind(t, c)
	delete(c.building, t)
	c.done[t] = *slot
	return *slot
}

func compileKind(t reflect.Type, c *equalCompiler) equalFunc {
	switch t.Kind() {
	case reflect.Bool:
		return func(a, b unsafe.Pointer) bool { return *(*bool)(a) == *(*bool)(b) }
	case reflect.Int, reflect.Uint, reflect.Uintptr:
		return func(a, b unsafe.Pointer) bool { return *(*uint)(a) == *(*uint)(b) }
	case reflect.Int8, reflect.Uint8:
		return func(a, b unsafe.Pointer) bool { return *(*uint8)(a) == *(*uint8)(b) }
	case reflect.Int16, reflect.Uint16:
		return func(a, b unsafe.Pointer) bool { return *(*uint16)(a) == *(*uint16)(b) }
	case reflect.Int32, reflect.Uint32:
		return func(a, b unsafe.Pointer) bool { return *(*uint32)(a) == *(*uint32)(b) }
	case reflect.Int64, reflect.Uint64:
		return func(a, b unsafe.Pointer) bool { return *(*uint64)(a) == *(*uint64)(b) }
	case reflect.Float32:
		return func(a, b unsafe.Pointer) bool { return *(*float32)(a) == *(*float32)(b) }
	case reflect.Float64:
		return func(a, b unsafe.Pointer) bool { return *(*float64)(a) == *(*float64)(b) }
	case reflect.String:
		return func(a, b unsafe.Pointer) bool { return *(*string)(a) == *(*string)(b) }
	case reflect.Pointer:
		elem := compileEqual(t.Elem(), c)
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
			equal  equalFunc
		}
		fields := make([]field, 0, t.NumField())
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Type.Size() == 0 {
				continue
			}
			fields = append(fields, field{f.Offset, compileEqual(f.Type, c)})
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
		elem, size, n := compileEqual(t.Elem(), c), t.Elem().Size(), uintptr(t.Len())
		return func(a, b unsafe.Pointer) bool {
			for i := range n {
				if !elem(unsafe.Add(a, i*size), unsafe.Add(b, i*size)) {
					return false
				}
			}
			return true
		}
	case reflect.Slice:
		elem, size := compileEqual(t.Elem(), c), t.Elem().Size()
		return func(a, b unsafe.Pointer) bool {
			sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
			if (sa.data == nil) != (sb.data == nil) || sa.len != sb.len {
				return false
			}
			if sa.data == sb.data {
				return true
			}
			for i := range uintptr(sa.len) {
				if !elem(unsafe.Add(sa.data, i*size), unsafe.Add(sb.data, i*size)) {
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
			elem := compileEqual(t.Elem(), c)
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

// deepEqualAt compares two values of type t in place with reflect.DeepEqual.
func deepEqualAt(t reflect.Type) equalFunc {
	return func(a, b unsafe.Pointer) bool {
		return reflect.DeepEqual(reflect.NewAt(t, a).Interface(), reflect.NewAt(t, b).Interface())
	}
}

// sliceHeader is the layout of every slice value.
type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// genericEqual is reflect.DeepEqual for the values of unstructured objects (maps, lists,
// strings, numbers, booleans), without reflection for them.
func genericEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !genericEqual(va, vb) {
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
			if !genericEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case string:
		b, ok := b.(string)
		return ok && a == b
	case int64:
		b, ok := b.(int64)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && a == b
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}
