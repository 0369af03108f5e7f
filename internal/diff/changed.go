package diff

import (
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// comparedParts is what jsondiff compares for a MODIFIED event: the previous and the new
// state as generic JSON (maps, slices, json.Number), holding only the fields that differ
// down to prunedLevels deep. Fields equal on both sides cannot produce a change, and
// turning a whole object into generic JSON costs several times encoding it, so an update
// that touches a label converts little more than the labels and the resourceVersion.
//
// Fields are compared on the objects themselves: the maps of unstructured objects, the
// struct fields (by their JSON names) of typed ones. Where a typed object has a shape
// this does not follow, the encodings are compared instead (changedParts). Typed objects
// are mostly diffed without it (typedPatch, typeddiff.go): it serves unstructured ones,
// the keyed lists' alignment, pretty paths after that, and KUBEEVENTS_FAST_PATHS=off.
func comparedParts(ev *event.Event, sameMemory bool) (old, object any, err error) {
	if o, ok := ev.Old.(*unstructured.Unstructured); ok {
		if n, ok := ev.Object.(*unstructured.Unstructured); ok {
			old, object := mapParts(o.Object, n.Object, prunedLevels)
			return old, object, nil
		}
	}
	if old, object, ok := structParts(reflect.ValueOf(ev.Old), reflect.ValueOf(ev.Object), prunedLevels, sameMemory); ok {
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
			oldParts[key] = generic.Copy(o)
		case generic.Equal(o, n):
		default:
			om, oIsMap := o.(map[string]any)
			nm, nIsMap := n.(map[string]any)
			if levels > 1 && oIsMap && nIsMap {
				oldParts[key], newParts[key] = mapParts(om, nm, levels-1)
			} else {
				oldParts[key], newParts[key] = generic.Copy(o), generic.Copy(n)
			}
		}
	}
	for key, n := range object {
		if _, both := old[key]; !both {
			newParts[key] = generic.Copy(n)
		}
	}
	return oldParts, newParts
}

// structParts is comparedParts for typed objects. It follows encoding/json's rules for
// the struct fields it walks (names, omitempty, omitzero, embedded structs whose fields
// are inlined) and reports false for anything else, such as a type with its own JSON
// encoding at the top, so that the caller compares encodings instead.
func structParts(old, object reflect.Value, levels int, sameMemory bool) (map[string]any, map[string]any, bool) {
	old, object = reflect.Indirect(old), reflect.Indirect(object)
	if !old.IsValid() || !object.IsValid() || old.Type() != object.Type() || old.Kind() != reflect.Struct {
		return nil, nil, false
	}
	plan := generic.PlanOf(old.Type())
	if plan == nil {
		return nil, nil, false
	}
	oldParts, newParts := map[string]any{}, map[string]any{}
	for i := range plan.Fields {
		field := &plan.Fields[i]
		o, n := old.Field(field.Index), object.Field(field.Index)
		if field.Inline {
			// Inlined fields (TypeMeta): equal, they add nothing; else compare encodings.
			if same(field, o, n, sameMemory) {
				continue
			}
			return nil, nil, false
		}
		oPresent, nPresent := field.Present(o), field.Present(n)
		switch {
		case !oPresent && !nPresent:
		case same(field, o, n, sameMemory):
		case oPresent && !nPresent:
			v, err := generic.Of(o)
			if err != nil {
				return nil, nil, false
			}
			oldParts[field.Name] = v
		case !oPresent && nPresent:
			v, err := generic.Of(n)
			if err != nil {
				return nil, nil, false
			}
			newParts[field.Name] = v
		default:
			if levels > 1 {
				if op, np, ok := structParts(o, n, levels-1, sameMemory); ok {
					oldParts[field.Name], newParts[field.Name] = op, np
					continue
				}
			} else if op, np, ok := listParts(o, n, sameMemory); ok {
				oldParts[field.Name], newParts[field.Name] = op, np
				continue
			}
			ov, err1 := generic.Of(o)
			nv, err2 := generic.Of(n)
			if err1 != nil || err2 != nil {
				return nil, nil, false
			}
			oldParts[field.Name], newParts[field.Name] = ov, nv
		}
	}
	return oldParts, newParts, true
}

// listParts is structParts one level further down, into a list of structs that differs
// between the two sides (a pod's conditions and containerStatuses, which a kubelet's
// report changes): each element pair is compared, and an element that differs is given
// as its differing fields only, one that does not as its key alone, the same on both
// sides. A kubelet's report flips a condition and a container's readiness and moves a
// few timestamps; converting both lists whole to generic JSON, then comparing them, cost
// ten times the diff of a label change.
//
// It applies only where jsondiff's comparison by index is already the right one, so
// that the diff is the same as of the whole lists: both sides as long, and at every
// index the same key ("name" and "type", the keys keyedlist.go aligns lists by). Else it
// reports false, and the lists are compared whole. Every element keeps its key fields,
// which pretty output names elements by (readablePaths).
func listParts(old, object reflect.Value, sameMemory bool) ([]any, []any, bool) {
	if old.Kind() != reflect.Slice || old.Len() != object.Len() || old.Len() == 0 {
		return nil, nil, false
	}
	elem := old.Type().Elem()
	if elem.Kind() != reflect.Struct {
		return nil, nil, false
	}
	plan := generic.PlanOf(elem)
	if plan == nil {
		return nil, nil, false
	}
	equal := generic.EqualOf(elem)
	oldList, newList := make([]any, old.Len()), make([]any, old.Len())
	for i := range oldList {
		o, n := old.Index(i), object.Index(i)
		for _, k := range plan.Keys {
			if o.Field(k).String() != n.Field(k).String() {
				return nil, nil, false
			}
		}
		var oldElem, newElem map[string]any
		if equal(o.Addr().UnsafePointer(), n.Addr().UnsafePointer()) {
			oldElem = map[string]any{}
			newElem = oldElem
		} else {
			var ok bool
			if oldElem, newElem, ok = structParts(o, n, 1, sameMemory); !ok {
				return nil, nil, false
			}
		}
		for _, k := range plan.Keys {
			if field := &plan.Fields[plan.KeyFields[k]]; field.Present(o.Field(k)) {
				oldElem[field.Name] = o.Field(k).String()
				newElem[field.Name] = n.Field(k).String()
			}
		}
		oldList[i], newList[i] = oldElem, newElem
	}
	return oldList, newList, true
}

// same reports whether field f has the same value on both sides (see sameAt).
func same(f *generic.FieldPlan, o, n reflect.Value, sameMemory bool) bool {
	if o.CanAddr() && n.CanAddr() {
		return sameAt(o.Type(), f.Equal, o.Addr().UnsafePointer(), n.Addr().UnsafePointer(), sameMemory)
	}
	return reflect.DeepEqual(o.Interface(), n.Interface())
}

// sameAt reports whether the values of type t at a and b are equal; with sameMemory,
// equal bytes (pointers included) are equal without a look inside: a part the protobuf
// watch took from the previous version is recognised without walking it (one of the
// fast paths whose invariant package decode states).
func sameAt(t reflect.Type, equal generic.EqualFunc, a, b unsafe.Pointer, sameMemory bool) bool {
	if sameMemory {
		if size := t.Size(); unsafe.String((*byte)(a), size) == unsafe.String((*byte)(b), size) {
			return true
		}
	}
	return equal(a, b)
}
