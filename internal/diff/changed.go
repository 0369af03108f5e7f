package diff

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jsonfield"
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
			oldParts[key] = event.Generic(o)
		case genericEqual(o, n):
		default:
			om, oIsMap := o.(map[string]any)
			nm, nIsMap := n.(map[string]any)
			if levels > 1 && oIsMap && nIsMap {
				oldParts[key], newParts[key] = mapParts(om, nm, levels-1)
			} else {
				oldParts[key], newParts[key] = event.Generic(o), event.Generic(n)
			}
		}
	}
	for key, n := range object {
		if _, both := old[key]; !both {
			newParts[key] = event.Generic(n)
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
func structParts(old, object reflect.Value, levels int, sameMemory bool) (map[string]any, map[string]any, bool) {
	old, object = reflect.Indirect(old), reflect.Indirect(object)
	if !old.IsValid() || !object.IsValid() || old.Type() != object.Type() || old.Kind() != reflect.Struct {
		return nil, nil, false
	}
	plan := planOf(old.Type())
	if plan == nil {
		return nil, nil, false
	}
	oldParts, newParts := map[string]any{}, map[string]any{}
	for _, field := range plan.fields {
		o, n := old.Field(field.index), object.Field(field.index)
		if field.Inline {
			// Inlined fields (TypeMeta): equal, they add nothing; else compare encodings.
			if field.same(o, n, sameMemory) {
				continue
			}
			return nil, nil, false
		}
		oPresent, nPresent := field.present(o), field.present(n)
		switch {
		case !oPresent && !nPresent:
		case field.same(o, n, sameMemory):
		case oPresent && !nPresent:
			v, err := genericOf(o)
			if err != nil {
				return nil, nil, false
			}
			oldParts[field.Name] = v
		case !oPresent && nPresent:
			v, err := genericOf(n)
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
			ov, err1 := genericOf(o)
			nv, err2 := genericOf(n)
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
	plan := planOf(elem)
	if plan == nil {
		return nil, nil, false
	}
	equal := equalOf(elem)
	oldList, newList := make([]any, old.Len()), make([]any, old.Len())
	for i := range oldList {
		o, n := old.Index(i), object.Index(i)
		for _, k := range plan.keys {
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
		for _, k := range plan.keys {
			if field := &plan.fields[plan.keyFields[k]]; field.present(o.Field(k)) {
				oldElem[field.Name] = o.Field(k).String()
				newElem[field.Name] = n.Field(k).String()
			}
		}
		oldList[i], newList[i] = oldElem, newElem
	}
	return oldList, newList, true
}

var (
	timeType     = reflect.TypeFor[metav1.Time]()
	quantityType = reflect.TypeFor[resource.Quantity]()
)

// structPlan is what structParts needs of a struct type, worked out once per type: its
// fields as encoding/json writes them.
type structPlan struct {
	typ    reflect.Type
	fields []fieldPlan
	// keys are the struct indices of its string fields named "name" or "type" in JSON,
	// which identify list elements (listParts); keyFields maps each to its fieldPlan.
	keys      []int
	keyFields map[int]int
	// plain: no field is written as a quoted string (`json:",string"`), and every
	// inlined field is a struct (not a pointer) of a plain plan whose names no other field
	// of this struct has, so genericOf can build its generic JSON field by field as
	// encoding/json writes it.
	plain bool
	// sorted is sortedFields' result (typeddiff.go), for plain plans.
	sortedOnce sync.Once
	sorted     []sortedField
}

type fieldPlan struct {
	index int
	jsonfield.Field
	equal equalFunc
}

var structPlans sync.Map // reflect.Type → *structPlan (nil: structParts does not apply)

// planOf is t's plan, or nil when t encodes itself (metav1.Time, resource.Quantity): its
// fields say nothing about its JSON.
func planOf(t reflect.Type) *structPlan {
	if p, ok := structPlans.Load(t); ok {
		return p.(*structPlan)
	}
	var plan *structPlan
	if !ownEncoding(t) {
		plan = &structPlan{plain: true, typ: t}
		for i := range t.NumField() {
			field := t.Field(i)
			if json := jsonfield.Of(field); !json.Skip {
				if slices.Contains(strings.Split(field.Tag.Get("json"), ",")[1:], "string") {
					plan.plain = false
				}
				if (json.Name == "name" || json.Name == "type") && !json.Inline && field.Type.Kind() == reflect.String && !ownEncoding(field.Type) {
					if plan.keyFields == nil {
						plan.keyFields = map[int]int{}
					}
					plan.keys = append(plan.keys, i)
					plan.keyFields[i] = len(plan.fields)
				}
				plan.fields = append(plan.fields, fieldPlan{index: i, Field: json, equal: equalOf(field.Type)})
			}
		}
	}
	if plan != nil && plan.plain {
		plan.plain = plan.inlinesPlainly()
	}
	structPlans.Store(t, plan)
	return plan
}

// inlinesPlainly reports whether every inlined field of p is a struct of a plain plan
// whose JSON names no other field of p has (encoding/json's rules for conflicting names
// are not followed by addFields).
func (p *structPlan) inlinesPlainly() bool {
	names := map[string]int{}
	var count func(p *structPlan, v reflect.Type) bool
	count = func(p *structPlan, v reflect.Type) bool {
		for _, field := range p.fields {
			if !field.Inline {
				names[field.Name]++
				continue
			}
			ft := v.Field(field.index).Type
			if ft.Kind() != reflect.Struct {
				return false
			}
			inner := planOf(ft)
			if inner == nil || !inner.plain || !count(inner, ft) {
				return false
			}
		}
		return true
	}
	if !count(p, p.typ) {
		return false
	}
	for _, n := range names {
		if n > 1 {
			return false
		}
	}
	return true
}

// same reports whether a field has the same value on both sides (see sameAt).
func (f *fieldPlan) same(o, n reflect.Value, sameMemory bool) bool {
	if o.CanAddr() && n.CanAddr() {
		return sameAt(o.Type(), f.equal, o.Addr().UnsafePointer(), n.Addr().UnsafePointer(), sameMemory)
	}
	return reflect.DeepEqual(o.Interface(), n.Interface())
}

// sameAt reports whether the values of type t at a and b are equal; with sameMemory,
// equal bytes (pointers included) are equal without a look inside: a part the protobuf
// watch took from the previous version is recognised without walking it (one of the
// fast paths whose invariant package decode states).
func sameAt(t reflect.Type, equal equalFunc, a, b unsafe.Pointer, sameMemory bool) bool {
	if sameMemory {
		if size := t.Size(); unsafe.String((*byte)(a), size) == unsafe.String((*byte)(b), size) {
			return true
		}
	}
	return equal(a, b)
}

// present reports whether encoding/json writes the field.
func (f *fieldPlan) present(v reflect.Value) bool { return !f.Omitted(v) }

// ownEncoding reports whether t (or *t) encodes itself (metav1.Time, resource.Quantity):
// its fields say nothing about its JSON.
func ownEncoding(t reflect.Type) bool {
	if own, ok := ownEncodings.Load(t); ok {
		return own.(bool)
	}
	pt := reflect.PointerTo(t)
	own := t.Implements(jsonMarshaler) || pt.Implements(jsonMarshaler) || t.Implements(textMarshaler) || pt.Implements(textMarshaler)
	ownEncodings.Store(t, own)
	return own
}

var ownEncodings sync.Map // reflect.Type → bool, as Implements is slow
