package diff

import (
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/event"
)

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

// TypedValue is event.ObjectValue's builder of a typed object's generic JSON values (an
// event.TypedValue): the object's fields through genericOf, the values decoding its JSON
// would give (TestGenericOfSameAsEncodingEveryType, TestTypedValueSameAsDecoding), in
// about the same time as that decoding but with less allocation (BenchmarkObjectValue;
// bench/README.md, "Figures that code comments used to quote"). A type whose plan is not
// plain is left to the decoding of the JSON the event has already (genericOf would
// encode it again).
func TypedValue(obj runtime.Object) (any, bool, error) {
	v, ok := plainStruct(obj)
	if !ok {
		return nil, false, nil
	}
	value, err := genericOf(v)
	return value, true, err
}

// PartOf is the part of obj's generic JSON values that part names, built from the typed
// object's fields (as TypedValue builds them all) or from the unstructured object's
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
	if v.Kind() != reflect.Pointer || v.IsNil() || ownEncoding(v.Elem().Type()) {
		return reflect.Value{}, false
	}
	plan := planOf(v.Elem().Type())
	return v.Elem(), plan != nil && plan.plain
}

// typedPart is genericOf(v) with only the keys reads names, where v is a struct of a
// plain plan (or a pointer to one); other values are built whole.
func typedPart(v reflect.Value, reads *Part) (any, error) {
	for v.Kind() == reflect.Pointer && !ownEncoding(v.Type()) {
		if v.IsNil() {
			return nil, nil
		}
		v = v.Elem()
	}
	if reads.Whole || v.Kind() != reflect.Struct || ownEncoding(v.Type()) {
		return genericOf(v)
	}
	plan := planOf(v.Type())
	if plan == nil || !plan.plain {
		return genericOf(v)
	}
	m := make(map[string]any, len(reads.Keys))
	return m, plan.addFields(m, v, reads)
}

// genericPart is Generic(v) with only the keys reads names.
func genericPart(v any, reads *Part) any {
	m, ok := v.(map[string]any)
	if reads.Whole || !ok {
		return event.Generic(v)
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
func (p *structPlan) addFields(m map[string]any, v reflect.Value, reads *Part) error {
	for _, field := range p.fields {
		f := v.Field(field.index)
		if field.Inline {
			if err := planOf(f.Type()).addFields(m, f, reads); err != nil {
				return err
			}
			continue
		}
		sub := reads.At(field.Name)
		if sub == nil || !field.present(f) {
			continue
		}
		var value any
		var err error
		if sub.Whole {
			value, err = genericOf(f)
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
