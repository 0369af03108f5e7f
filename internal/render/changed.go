package render

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/informer"
)

// comparedParts is what jsondiff compares for a MODIFIED event: the previous and the new
// state as generic JSON (maps, slices, json.Number), holding only the fields that differ
// down to prunedLevels deep. Fields equal on both sides cannot produce a change, and
// turning a whole object into generic JSON costs several times encoding it, so an update
// that touches a label converts little more than the labels and the resourceVersion.
//
// Fields are compared on the objects themselves: the maps of unstructured objects, the
// struct fields (by their JSON names) of typed ones. Where a typed object has a shape
// this does not follow, the encodings are compared instead (changedParts).
func comparedParts(ev *informer.Event) (old, object any, err error) {
	if o, ok := ev.Old.(*unstructured.Unstructured); ok {
		if n, ok := ev.Object.(*unstructured.Unstructured); ok {
			old, object := mapParts(o.Object, n.Object, prunedLevels)
			return old, object, nil
		}
	}
	if old, object, ok := structParts(reflect.ValueOf(ev.Old), reflect.ValueOf(ev.Object), prunedLevels); ok {
		return old, object, nil
	}
	oldJSON, err := ev.OldJSON()
	if err != nil {
		return nil, nil, err
	}
	objectJSON, err := ev.ObjectJSON()
	if err != nil {
		return nil, nil, err
	}
	return changedParts(oldJSON, objectJSON, prunedLevels)
}

// mapParts is comparedParts for unstructured content.
func mapParts(old, object map[string]any, levels int) (map[string]any, map[string]any) {
	oldParts, newParts := map[string]any{}, map[string]any{}
	for key, o := range old {
		n, both := object[key]
		switch {
		case !both:
			oldParts[key] = informer.Generic(o)
		case reflect.DeepEqual(o, n):
		default:
			om, oIsMap := o.(map[string]any)
			nm, nIsMap := n.(map[string]any)
			if levels > 1 && oIsMap && nIsMap {
				oldParts[key], newParts[key] = mapParts(om, nm, levels-1)
			} else {
				oldParts[key], newParts[key] = informer.Generic(o), informer.Generic(n)
			}
		}
	}
	for key, n := range object {
		if _, both := old[key]; !both {
			newParts[key] = informer.Generic(n)
		}
	}
	return oldParts, newParts
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// structParts is comparedParts for typed objects. It follows encoding/json's rules for
// the struct fields it walks (names, omitempty, omitzero, embedded structs whose fields
// are inlined) and reports false for anything else, such as a type with its own JSON
// encoding at the top, so that the caller compares encodings instead.
func structParts(old, object reflect.Value, levels int) (map[string]any, map[string]any, bool) {
	old, object = reflect.Indirect(old), reflect.Indirect(object)
	if !old.IsValid() || !object.IsValid() || old.Type() != object.Type() || old.Kind() != reflect.Struct || ownEncoding(old.Type()) {
		return nil, nil, false
	}
	oldParts, newParts := map[string]any{}, map[string]any{}
	for i := range old.NumField() {
		field := old.Type().Field(i)
		if !field.IsExported() {
			continue
		}
		tag := field.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		o, n := old.Field(i), object.Field(i)
		if field.Anonymous && name == "" {
			// Inlined fields (TypeMeta): equal, they add nothing; else compare encodings.
			if same(o, n) {
				continue
			}
			return nil, nil, false
		}
		if name == "" {
			name = field.Name
		}
		oPresent, nPresent := present(o, opts), present(n, opts)
		switch {
		case !oPresent && !nPresent:
		case same(o, n):
		case oPresent && !nPresent:
			v, err := genericOf(o)
			if err != nil {
				return nil, nil, false
			}
			oldParts[name] = v
		case !oPresent && nPresent:
			v, err := genericOf(n)
			if err != nil {
				return nil, nil, false
			}
			newParts[name] = v
		default:
			if levels > 1 {
				if op, np, ok := structParts(o, n, levels-1); ok {
					oldParts[name], newParts[name] = op, np
					continue
				}
			}
			ov, err1 := genericOf(o)
			nv, err2 := genericOf(n)
			if err1 != nil || err2 != nil {
				return nil, nil, false
			}
			oldParts[name], newParts[name] = ov, nv
		}
	}
	return oldParts, newParts, true
}

// same compares two fields deeply through their addresses, so that a large struct (a
// pod's spec) is not copied into an interface to be compared.
func same(o, n reflect.Value) bool {
	return reflect.DeepEqual(addressOf(o), addressOf(n))
}

// addressOf is &v where v is addressable (fields of an object reached by pointer are),
// as encoding/json sees such a field, pointer methods included.
func addressOf(v reflect.Value) any {
	if v.CanAddr() {
		return v.Addr().Interface()
	}
	return v.Interface()
}

// ownEncoding reports whether t (or *t) encodes itself (metav1.Time, resource.Quantity):
// its fields say nothing about its JSON.
func ownEncoding(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonMarshaler) || pt.Implements(jsonMarshaler) || t.Implements(textMarshaler) || pt.Implements(textMarshaler)
}

// present reports whether encoding/json writes a field with these tag options.
func present(v reflect.Value, opts string) bool {
	for opt := range strings.SplitSeq(opts, ",") {
		switch opt {
		case "omitempty":
			if isEmptyValue(v) {
				return false
			}
		case "omitzero":
			if isZero(v) {
				return false
			}
		}
	}
	return true
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// isZero is encoding/json's test for omitzero: an IsZero method if the type has one.
func isZero(v reflect.Value) bool {
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	if v.CanAddr() {
		if z, ok := v.Addr().Interface().(interface{ IsZero() bool }); ok {
			return z.IsZero()
		}
	}
	return v.IsZero()
}

// genericOf is one field's value as generic JSON: directly for the plain values most
// updates touch (resourceVersion, phase, counts, labels and annotations), through its
// encoding for anything else.
func genericOf(v reflect.Value) (any, error) {
	if !ownEncoding(v.Type()) {
		switch v.Kind() {
		case reflect.String:
			return v.String(), nil
		case reflect.Bool:
			return v.Bool(), nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return json.Number(strconv.FormatInt(v.Int(), 10)), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return json.Number(strconv.FormatUint(v.Uint(), 10)), nil
		case reflect.Map:
			if v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.String &&
				!ownEncoding(v.Type().Key()) && !ownEncoding(v.Type().Elem()) {
				if v.IsNil() {
					return nil, nil
				}
				m := make(map[string]any, v.Len())
				for it := v.MapRange(); it.Next(); {
					m[it.Key().String()] = it.Value().String()
				}
				return m, nil
			}
		}
	}
	raw, err := json.Marshal(addressOf(v))
	if err != nil {
		return nil, err
	}
	return decodeGeneric(raw)
}
