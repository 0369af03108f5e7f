package diff

import (
	"encoding/json"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/compiled"
)

// genericOf is one field's value as generic JSON (maps, lists, strings, json.Number,
// booleans, nil): what decoding its JSON would give. Built directly for the plain
// values most updates touch (resourceVersion, phase, counts, labels and annotations),
// for timestamps and quantities, and for structs, pointers and lists made of them (a
// container's state, a condition); through its encoding for anything else (floats, byte
// slices, interfaces, maps of other kinds, other types that encode themselves).
// TestGenericOfSameAsEncoding and TestGenericOfSameAsEncodingEveryType compare it with
// encoding then decoding, on every field of a realistic pod and on random objects of
// every type of the scheme.
//
// The value is read as a field of an object reached by pointer, which is how its JSON is
// written (pointer-receiver MarshalJSON methods included): a value that is not
// addressable is copied first.
func genericOf(v reflect.Value) (any, error) {
	if !v.CanAddr() {
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		v = c
	}
	return genericFuncOf(v.Type())(v.Addr().UnsafePointer())
}

var numberType = reflect.TypeFor[json.Number]()

// genericFunc builds the generic JSON of the value of one type at p.
type genericFunc func(p unsafe.Pointer) (any, error)

// genericFuncs are genericFuncOf's builders, compiled once per type from its layout:
// reflection per field and a map lookup per struct were most of building a status
// report's values.
var genericFuncs = compiled.NewCache(compileGeneric, func(slot *genericFunc) genericFunc {
	return func(p unsafe.Pointer) (any, error) { return (*slot)(p) }
})

// genericFuncOf is t's builder.
func genericFuncOf(t reflect.Type) genericFunc { return genericFuncs.Of(t) }

// genericCompilation is the build of one type's builder and of those it needs.
type genericCompilation = compiled.Compilation[reflect.Type, genericFunc]

func compileGeneric(c *genericCompilation, t reflect.Type) genericFunc {
	switch t {
	case timeType:
		// metav1.Time.MarshalJSON: null when zero, else RFC 3339 in UTC, to the second.
		return func(p unsafe.Pointer) (any, error) {
			tm := (*metav1.Time)(p)
			if tm.IsZero() {
				return nil, nil
			}
			return tm.UTC().Format(time.RFC3339), nil
		}
	case quantityType:
		// resource.Quantity.MarshalJSON: its canonical form (String, on a copy: it caches
		// the form in the value, which is shared with the informer's cache).
		return func(p unsafe.Pointer) (any, error) {
			q := *(*resource.Quantity)(p)
			return q.String(), nil
		}
	}
	if ownEncoding(t) || t == numberType || t.Kind() == reflect.Map && t.Elem() == numberType {
		return genericByEncoding(t) // json.Number is written as the number it holds
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem := c.Compile(t.Elem())
		return func(p unsafe.Pointer) (any, error) {
			if to := *(*unsafe.Pointer)(p); to != nil {
				return elem(to)
			}
			return nil, nil
		}
	case reflect.Struct:
		if plan := planOf(t); plan != nil && plan.plain {
			return compileGenericStruct(c, plan)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			break // base64
		}
		elem, size := c.Compile(t.Elem()), t.Elem().Size()
		return func(p unsafe.Pointer) (any, error) {
			s := (*compiled.SliceHeader)(p)
			if s.Data == nil {
				return nil, nil
			}
			list := make([]any, s.Len)
			for i := range list {
				value, err := elem(unsafe.Add(s.Data, uintptr(i)*size))
				if err != nil {
					return nil, err
				}
				list[i] = value
			}
			return list, nil
		}
	case reflect.String:
		return func(p unsafe.Pointer) (any, error) { return *(*string)(p), nil }
	case reflect.Bool:
		return func(p unsafe.Pointer) (any, error) { return *(*bool)(p), nil }
	case reflect.Int:
		return func(p unsafe.Pointer) (any, error) { return jsonInt(int64(*(*int)(p))), nil }
	case reflect.Int8:
		return func(p unsafe.Pointer) (any, error) { return jsonInt(int64(*(*int8)(p))), nil }
	case reflect.Int16:
		return func(p unsafe.Pointer) (any, error) { return jsonInt(int64(*(*int16)(p))), nil }
	case reflect.Int32:
		return func(p unsafe.Pointer) (any, error) { return jsonInt(int64(*(*int32)(p))), nil }
	case reflect.Int64:
		return func(p unsafe.Pointer) (any, error) { return jsonInt(*(*int64)(p)), nil }
	case reflect.Uint:
		return func(p unsafe.Pointer) (any, error) { return jsonUint(uint64(*(*uint)(p))), nil }
	case reflect.Uint8:
		return func(p unsafe.Pointer) (any, error) { return jsonUint(uint64(*(*uint8)(p))), nil }
	case reflect.Uint16:
		return func(p unsafe.Pointer) (any, error) { return jsonUint(uint64(*(*uint16)(p))), nil }
	case reflect.Uint32:
		return func(p unsafe.Pointer) (any, error) { return jsonUint(uint64(*(*uint32)(p))), nil }
	case reflect.Uint64:
		return func(p unsafe.Pointer) (any, error) { return jsonUint(*(*uint64)(p)), nil }
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String &&
			!ownEncoding(t.Key()) && !ownEncoding(t.Elem()) {
			// Named string types have string's layout.
			return func(p unsafe.Pointer) (any, error) {
				m := *(*map[string]string)(p)
				if m == nil {
					return nil, nil
				}
				generic := make(map[string]any, len(m))
				for k, v := range m {
					generic[k] = v
				}
				return generic, nil
			}
		}
	}
	return genericByEncoding(t)
}

// compileGenericStruct builds a struct of a plain plan field by field, as encoding/json
// writes it: inlined structs' fields in place, omitted fields left out.
func compileGenericStruct(c *genericCompilation, plan *structPlan) genericFunc {
	fields := plan.sortedFields()
	builders := make([]genericFunc, len(fields))
	for i, f := range fields {
		builders[i] = c.Compile(f.typ)
	}
	return func(p unsafe.Pointer) (any, error) {
		present := 0
		for i := range fields {
			if f := &fields[i]; f.omitted == nil || !f.omitted(unsafe.Add(p, f.offset)) {
				present++
			}
		}
		m := make(map[string]any, present)
		for i := range fields {
			f := &fields[i]
			fp := unsafe.Add(p, f.offset)
			if f.omitted != nil && f.omitted(fp) {
				continue
			}
			value, err := builders[i](fp)
			if err != nil {
				return nil, err
			}
			m[f.name] = value
		}
		return m, nil
	}
}

// genericByEncoding builds a value by encoding it (by pointer, as a field of an object
// is encoded) and decoding the JSON.
func genericByEncoding(t reflect.Type) genericFunc {
	return func(p unsafe.Pointer) (any, error) {
		raw, err := json.Marshal(reflect.NewAt(t, p).Interface())
		if err != nil {
			return nil, err
		}
		return decodeGeneric(raw)
	}
}

// jsonInt is n as a json.Number, as decoding gives it.
func jsonInt(n int64) any {
	if n >= 0 && n < int64(len(smallNumbers)) {
		return smallNumbers[n]
	}
	return json.Number(strconv.FormatInt(n, 10))
}

func jsonUint(n uint64) any {
	if n < uint64(len(smallNumbers)) {
		return smallNumbers[n]
	}
	return json.Number(strconv.FormatUint(n, 10))
}

// smallNumbers are the counts, ports and indices most numbers of an object are, made
// once as the json.Number each is: formatting and boxing one allocated.
var smallNumbers = func() (numbers [1024]any) {
	for i := range numbers {
		numbers[i] = json.Number(strconv.Itoa(i))
	}
	return numbers
}()
