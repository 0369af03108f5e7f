package wire

import (
	"encoding/json"
	"reflect"
	"slices"
	"sync"

	segjson "github.com/segmentio/encoding/json"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/jsonfield"
)

// Marshal is json.Marshal of an object, byte for byte, in less time for the typed
// objects of client-go's scheme (BenchmarkMarshalJSON measures how much).
//
// Encoding the object is the largest cost of a JSON line after decoding it; encoding/json
// spends it on reflection and on re-validating what every MarshalJSON method (times,
// quantities) returns. segmentio/encoding/json produces the same bytes (a test checks
// every type of the scheme) except for one thing: it does not know the omitzero option,
// which ObjectMeta.CreationTimestamp carries. So where an omitzero field is zero (the
// pod template of a Deployment has no creationTimestamp), or could be zero out of sight
// (inside a map or an interface), encoding/json does the work.
func Marshal(obj runtime.Object) ([]byte, error) {
	return marshalValue(reflect.ValueOf(obj))
}

// marshalValue is Marshal of what v holds (an object, or a pointer to one of its
// fields, which encoding/json then encodes as it does inside the object).
func marshalValue(v reflect.Value) ([]byte, error) {
	if plan := fastEncodingOf(v.Type()); plan != nil && plan.allSet(v) {
		return segjson.Marshal(v.Interface())
	}
	return json.Marshal(v.Interface())
}

// fastEncoding is, for one type, where its omitzero fields are: each as a path of
// steps from the top, through structs, pointers and lists.
type fastEncoding struct {
	omitZero [][]step
}

// step is a struct field by index, or every element of a list.
type step struct {
	field int
	each  bool
}

var fastEncodings sync.Map // reflect.Type → *fastEncoding (nil: always encoding/json)

func fastEncodingOf(t reflect.Type) *fastEncoding {
	if p, ok := fastEncodings.Load(t); ok {
		return p.(*fastEncoding)
	}
	plan := &fastEncoding{}
	if !plan.collect(t, nil, map[reflect.Type]bool{}) {
		plan = nil
	}
	fastEncodings.Store(t, plan)
	return plan
}

// collect adds the paths of t's omitzero fields below path, and reports false if one is
// out of reach (in a map or an interface, or in a recursive type).
func (p *fastEncoding) collect(t reflect.Type, path []step, visiting map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
	case reflect.Slice, reflect.Array:
		if !hasOmitZero(t.Elem(), map[reflect.Type]bool{}) {
			return true
		}
		return p.collect(t.Elem(), append(slices.Clone(path), step{each: true}), visiting)
	case reflect.Map:
		return !hasOmitZero(t.Key(), map[reflect.Type]bool{}) && !hasOmitZero(t.Elem(), map[reflect.Type]bool{})
	case reflect.Interface:
		return false // what it holds is not known in advance
	default:
		return true
	}
	if visiting[t] {
		return !hasOmitZero(t, map[reflect.Type]bool{})
	}
	visiting[t] = true
	defer delete(visiting, t)
	for i := range t.NumField() {
		f := t.Field(i)
		json := jsonfield.Of(f)
		if json.Skip {
			continue
		}
		fieldPath := append(slices.Clone(path), step{field: i})
		if json.OmitZero {
			p.omitZero = append(p.omitZero, fieldPath)
		}
		if !p.collect(f.Type, fieldPath, visiting) {
			return false
		}
	}
	return true
}

// hasOmitZero reports whether an omitzero field is anywhere in t.
func hasOmitZero(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map:
		return hasOmitZero(t.Key(), seen) || hasOmitZero(t.Elem(), seen)
	case reflect.Interface:
		return true // could hold anything
	case reflect.Struct:
	default:
		return false
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if jsonfield.Of(f).OmitZero || hasOmitZero(f.Type, seen) {
			return true
		}
	}
	return false
}

// allSet reports whether every omitzero field of v that encoding/json would reach is
// non-zero (a nil pointer on the way means the field is not written at all).
func (p *fastEncoding) allSet(v reflect.Value) bool {
	for _, path := range p.omitZero {
		if !setAlong(v, path) {
			return false
		}
	}
	return true
}

func setAlong(v reflect.Value, path []step) bool {
	for i, st := range path {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return true // not written
			}
			v = v.Elem()
		}
		if st.each {
			for j := range v.Len() {
				if !setAlong(v.Index(j), path[i+1:]) {
					return false
				}
			}
			return true
		}
		v = v.Field(st.field)
	}
	return !jsonfield.IsZero(v)
}
