// Package generic turns objects into generic JSON values (map[string]any, []any,
// string, bool, json.Number, nil), the values decoding their JSON would give, without
// that JSON: typed objects from their fields (Value, PartOf, Of), unstructured ones by a
// copy with their numbers converted (Copy). It also compares values deeply (EqualOf for
// typed values, Equal for generic ones). The diff, jq and kubectl's templates read
// objects through it.
//
// Both work from plans and functions compiled once per type (PlanOf, FuncOf, EqualOf;
// compiled.go) that follow encoding/json's rules; the tests hold them to encoding/json
// and reflect.DeepEqual for every type of client-go's scheme.
package generic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Of is one field's value as generic JSON (maps, lists, strings, json.Number,
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
func Of(v reflect.Value) (any, error) {
	if !v.CanAddr() {
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		v = c
	}
	return FuncOf(v.Type())(v.Addr().UnsafePointer())
}

var numberType = reflect.TypeFor[json.Number]()

// Func builds the generic JSON of the value of one type at p.
type Func func(p unsafe.Pointer) (any, error)

// genericFuncs are FuncOf's builders, compiled once per type from its layout:
// reflection per field and a map lookup per struct were most of building a status
// report's values.
var genericFuncs = &funcCache[Func]{build: compileGeneric, forward: func(slot *Func) Func {
	return func(p unsafe.Pointer) (any, error) { return (*slot)(p) }
}}

// FuncOf is t's builder.
func FuncOf(t reflect.Type) Func { return genericFuncs.of(t) }

func compileGeneric(c *compilation[Func], t reflect.Type) Func {
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
	if OwnEncoding(t) || t == numberType || t.Kind() == reflect.Map && t.Elem() == numberType {
		return genericByEncoding(t) // json.Number is written as the number it holds
	}
	if build, ok := scalarGenerics[t.Kind()]; ok {
		return build
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem := c.compile(t.Elem())
		return func(p unsafe.Pointer) (any, error) {
			if to := *(*unsafe.Pointer)(p); to != nil {
				return elem(to)
			}
			return nil, nil
		}
	case reflect.Struct:
		if plan := PlanOf(t); plan != nil && plan.Plain {
			return compileGenericStruct(c, plan)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			break // base64
		}
		elem, size := c.compile(t.Elem()), t.Elem().Size()
		return func(p unsafe.Pointer) (any, error) {
			s := (*SliceHeader)(p)
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
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String &&
			!OwnEncoding(t.Key()) && !OwnEncoding(t.Elem()) {
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
func compileGenericStruct(c *compilation[Func], plan *StructPlan) Func {
	fields := plan.SortedFields()
	builders := make([]Func, len(fields))
	for i, f := range fields {
		builders[i] = c.compile(f.Type)
	}
	return func(p unsafe.Pointer) (any, error) {
		present := 0
		for i := range fields {
			if f := &fields[i]; f.Omitted == nil || !f.Omitted(unsafe.Add(p, f.Offset)) {
				present++
			}
		}
		m := make(map[string]any, present)
		for i := range fields {
			f := &fields[i]
			fp := unsafe.Add(p, f.Offset)
			if f.Omitted != nil && f.Omitted(fp) {
				continue
			}
			value, err := builders[i](fp)
			if err != nil {
				return nil, err
			}
			m[f.Name] = value
		}
		return m, nil
	}
}

// genericByEncoding builds a value by encoding it (by pointer, as a field of an object
// is encoded) and decoding the JSON.
func genericByEncoding(t reflect.Type) Func {
	return func(p unsafe.Pointer) (any, error) {
		raw, err := json.Marshal(reflect.NewAt(t, p).Interface())
		if err != nil {
			return nil, err
		}
		return Decode(raw)
	}
}

// scalarGenerics build the values of strings, booleans and integers, which are
// themselves in generic JSON (integers as json.Number).
var scalarGenerics = map[reflect.Kind]Func{
	reflect.String: valueAt[string], reflect.Bool: valueAt[bool],
	reflect.Int: intAt[int], reflect.Int8: intAt[int8], reflect.Int16: intAt[int16], reflect.Int32: intAt[int32], reflect.Int64: intAt[int64],
	reflect.Uint: uintAt[uint], reflect.Uint8: uintAt[uint8], reflect.Uint16: uintAt[uint16], reflect.Uint32: uintAt[uint32], reflect.Uint64: uintAt[uint64],
}

func valueAt[T string | bool](p unsafe.Pointer) (any, error) { return *(*T)(p), nil }

func intAt[T int | int8 | int16 | int32 | int64](p unsafe.Pointer) (any, error) {
	return jsonInt(int64(*(*T)(p))), nil
}

func uintAt[T uint | uint8 | uint16 | uint32 | uint64](p unsafe.Pointer) (any, error) {
	return jsonUint(uint64(*(*T)(p))), nil
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

// Part names a part of a JSON value: the whole of it (Whole), or the values of some of
// its keys, each a part of its own. A nil *Part names nothing. A jq expression's input
// is the part of the envelope the expression reads (package jq).
type Part struct {
	Whole bool
	Keys  map[string]*Part
}

// At is the part of key's value that p names: nil if none, p itself when p is whole.
func (p *Part) At(key string) *Part {
	if p == nil || p.Whole {
		return p
	}
	return p.Keys[key]
}

// Value builds a typed object's generic JSON values (event.Event.ObjectValue's): the
// object's fields through Of, the values decoding its JSON would give
// (TestGenericOfSameAsEncodingEveryType, TestTypedValueSameAsDecoding), in
// about the same time as that decoding but with less allocation (BenchmarkObjectValue;
// bench/README.md, "Figures that code comments used to quote"). A type whose plan is not
// plain is left to the decoding of the JSON the event has already (Of would
// encode it again).
func Value(obj runtime.Object) (value any, built bool, err error) {
	v, ok := plainStruct(obj)
	if !ok {
		return nil, false, nil
	}
	value, err = Of(v)
	return value, true, err
}

// PartOf is the part of obj's generic JSON values that part names, built from the typed
// object's fields (as Value builds them all) or from the unstructured object's
// values, with json.Number numbers: at every level, a map of the keys part names, and
// the values it names whole as they are. built is false when part is whole or obj's
// values are not built from its fields (a type with an encoding of its own): the caller
// then takes the whole value (event.Event.ObjectValue).
func PartOf(obj runtime.Object, part *Part) (value any, built bool, err error) {
	if part.Whole {
		return nil, false, nil
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return genericPart(u.Object, part), true, nil
	}
	v, ok := plainStruct(obj)
	if !ok {
		return nil, false, nil
	}
	value, err = typedPart(v, part)
	return value, true, err
}

// plainStruct is the struct obj points to, and whether its type has a plain plan: the
// typed objects whose values are built from their fields.
func plainStruct(obj runtime.Object) (reflect.Value, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || OwnEncoding(v.Elem().Type()) {
		return reflect.Value{}, false
	}
	plan := PlanOf(v.Elem().Type())
	return v.Elem(), plan != nil && plan.Plain
}

// typedPart is Of(v) with only the keys reads names, where v is a struct of a
// plain plan (or a pointer to one); other values are built whole.
func typedPart(v reflect.Value, reads *Part) (any, error) {
	for v.Kind() == reflect.Pointer && !OwnEncoding(v.Type()) {
		if v.IsNil() {
			return nil, nil
		}
		v = v.Elem()
	}
	if reads.Whole || v.Kind() != reflect.Struct || OwnEncoding(v.Type()) {
		return Of(v)
	}
	plan := PlanOf(v.Type())
	if plan == nil || !plan.Plain {
		return Of(v)
	}
	m := make(map[string]any, len(reads.Keys))
	return m, plan.addFields(m, v, reads)
}

// genericPart is Copy(v) with only the keys reads names.
func genericPart(v any, reads *Part) any {
	m, ok := v.(map[string]any)
	if reads.Whole || !ok {
		return Copy(v)
	}
	out := make(map[string]any, len(reads.Keys))
	for key, sub := range reads.Keys {
		if x, ok := m[key]; ok {
			out[key] = genericPart(x, sub)
		}
	}
	return out
}

// addFields adds the generic JSON of the fields of v, a struct of a plain plan, to m;
// those of an inlined struct (TypeMeta) in place. Only the fields that reads names are
// added, each only in the part it names.
func (p *StructPlan) addFields(m map[string]any, v reflect.Value, reads *Part) error {
	for _, field := range p.Fields {
		f := v.Field(field.Index)
		if field.Inline {
			if err := PlanOf(f.Type()).addFields(m, f, reads); err != nil {
				return err
			}
			continue
		}
		sub := reads.At(field.Name)
		if sub == nil || !field.Present(f) {
			continue
		}
		var value any
		var err error
		if sub.Whole {
			value, err = Of(f)
		} else {
			value, err = typedPart(f, sub)
		}
		if err != nil {
			return err
		}
		m[field.Name] = value
	}
	return nil
}

// Copy copies an unstructured value (or part of one), turning its numbers into
// json.Number as decoding its JSON would. The original is shared with the informer's cache and is not touched.
func Copy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = Copy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = Copy(x)
		}
		return out
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case int:
		return json.Number(strconv.Itoa(v))
	case int32:
		return json.Number(strconv.FormatInt(int64(v), 10))
	case float64:
		return floatNumber(v)
	case float32:
		return floatNumber(float64(v))
	}
	return v
}

// floatNumber spells f as the JSON encoding does, so both forms agree; floats are rare
// in objects (resource quantities are strings).
func floatNumber(f float64) any {
	raw, err := json.Marshal(f)
	if err != nil {
		return f // NaN or ±Inf, which no object holds
	}
	return json.Number(raw)
}

// Decode decodes JSON into generic values, numbers as json.Number.
func Decode(raw []byte) (any, error) {
	// A plain string (a timestamp, a quantity: the fields of a status report that encode
	// themselves) needs no decoder of its own; numbers and objects do (json.Number).
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
