package generic

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

	"github.com/kubeevents/kubeevents/internal/jsonfield"
)

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	timeType      = reflect.TypeFor[metav1.Time]()
	quantityType  = reflect.TypeFor[resource.Quantity]()
)

// StructPlan is a struct type's fields as encoding/json writes them, worked out once per
// type: what building its generic values and walking it in a diff need.
type StructPlan struct {
	Type   reflect.Type
	Fields []FieldPlan
	// Keys are the struct indices of its string fields named "name" or "type" in JSON,
	// which identify list elements; KeyFields maps each to its index in Fields.
	Keys      []int
	KeyFields map[int]int
	// Plain: no field is written as a quoted string (`json:",string"`), and every
	// inlined field is a struct (not a pointer) of a plain plan whose names no other field
	// of this struct has, so Of can build its generic JSON field by field as
	// encoding/json writes it.
	Plain bool
	// sorted is SortedFields' result, for plain plans.
	sortedOnce sync.Once
	sorted     []SortedField
}

// FieldPlan is one field of a StructPlan.
type FieldPlan struct {
	Index int
	jsonfield.Field
	Equal EqualFunc
}

var structPlans sync.Map // reflect.Type → *StructPlan (nil: t encodes itself)

// PlanOf is t's plan, or nil when t encodes itself (metav1.Time, resource.Quantity): its
// fields say nothing about its JSON.
func PlanOf(t reflect.Type) *StructPlan {
	if p, ok := structPlans.Load(t); ok {
		return p.(*StructPlan)
	}
	var plan *StructPlan
	if !OwnEncoding(t) {
		plan = &StructPlan{Plain: true, Type: t}
		for i := range t.NumField() {
			field := t.Field(i)
			if json := jsonfield.Of(field); !json.Skip {
				if slices.Contains(strings.Split(field.Tag.Get("json"), ",")[1:], "string") {
					plan.Plain = false
				}
				if (json.Name == "name" || json.Name == "type") && !json.Inline && field.Type.Kind() == reflect.String && !OwnEncoding(field.Type) {
					if plan.KeyFields == nil {
						plan.KeyFields = map[int]int{}
					}
					plan.Keys = append(plan.Keys, i)
					plan.KeyFields[i] = len(plan.Fields)
				}
				plan.Fields = append(plan.Fields, FieldPlan{Index: i, Field: json, Equal: EqualOf(field.Type)})
			}
		}
	}
	if plan != nil && plan.Plain {
		plan.Plain = plan.inlinesPlainly()
	}
	structPlans.Store(t, plan)
	return plan
}

// inlinesPlainly reports whether every inlined field of p is a struct of a plain plan
// whose JSON names no other field of p has (encoding/json's rules for conflicting names
// are not followed by addFields).
func (p *StructPlan) inlinesPlainly() bool {
	names := map[string]int{}
	var count func(p *StructPlan, v reflect.Type) bool
	count = func(p *StructPlan, v reflect.Type) bool {
		for _, field := range p.Fields {
			if !field.Inline {
				names[field.Name]++
				continue
			}
			ft := v.Field(field.Index).Type
			if ft.Kind() != reflect.Struct {
				return false
			}
			inner := PlanOf(ft)
			if inner == nil || !inner.Plain || !count(inner, ft) {
				return false
			}
		}
		return true
	}
	if !count(p, p.Type) {
		return false
	}
	for _, n := range names {
		if n > 1 {
			return false
		}
	}
	return true
}

// Present reports whether encoding/json writes the field.
func (f *FieldPlan) Present(v reflect.Value) bool { return !f.Omitted(v) }

// OwnEncoding reports whether t (or *t) encodes itself (metav1.Time, resource.Quantity):
// its fields say nothing about its JSON.
func OwnEncoding(t reflect.Type) bool {
	if own, ok := ownEncodings.Load(t); ok {
		return own.(bool)
	}
	pt := reflect.PointerTo(t)
	own := t.Implements(jsonMarshaler) || pt.Implements(jsonMarshaler) || t.Implements(textMarshaler) || pt.Implements(textMarshaler)
	ownEncodings.Store(t, own)
	return own
}

var ownEncodings sync.Map // reflect.Type → bool, as Implements is slow

// SortedField is a field of a struct as its JSON object has it: fields of inlined structs
// (TypeMeta) are in place, at their offset from the outer struct, and all are in the
// order of their JSON names (the order jsondiff compares an object's keys in).
type SortedField struct {
	Name   string
	Offset uintptr
	Type   reflect.Type
	// Omitted reports whether encoding/json leaves the field out; nil when it never does.
	Omitted func(unsafe.Pointer) bool
	Equal   EqualFunc
}

// SortedFields is p's fields in the order of their JSON names, worked out once (p must
// be plain).
func (p *StructPlan) SortedFields() []SortedField {
	p.sortedOnce.Do(func() {
		var fields []SortedField
		for _, field := range p.Fields {
			sf := p.Type.Field(field.Index)
			if field.Inline {
				for _, inner := range PlanOf(sf.Type).SortedFields() {
					inner.Offset += sf.Offset
					fields = append(fields, inner)
				}
				continue
			}
			fields = append(fields, SortedField{Name: field.Name, Offset: sf.Offset, Type: sf.Type,
				Omitted: field.OmittedFunc(sf.Type), Equal: field.Equal})
		}
		slices.SortFunc(fields, func(a, b SortedField) int { return strings.Compare(a.Name, b.Name) })
		p.sorted = fields
	})
	return p.sorted
}
