// Package jsonfield answers what encoding/json does with a struct field: the name it
// writes it under, and whether omitempty or omitzero leave it out. The diff (which
// compares objects field by field, as their JSON would differ) and the fast encoder
// (which must write exactly what encoding/json writes) both follow these rules.
package jsonfield

import (
	"reflect"
	"strings"
)

// Field is a struct field's JSON options.
type Field struct {
	Name      string // the name in JSON: the tag's, else the Go name
	Skip      bool   // tagged "-" or unexported: never written
	Inline    bool   // an embedded struct without a name: its fields are written in place
	OmitEmpty bool
	OmitZero  bool
}

// Of reads f's `json` tag.
func Of(f reflect.StructField) Field {
	tag := f.Tag.Get("json")
	if tag == "-" || !f.IsExported() && !f.Anonymous {
		return Field{Skip: true}
	}
	name, opts, _ := strings.Cut(tag, ",")
	field := Field{Name: name, Inline: f.Anonymous && name == ""}
	if field.Name == "" {
		field.Name = f.Name
	}
	for opt := range strings.SplitSeq(opts, ",") {
		field.OmitEmpty = field.OmitEmpty || opt == "omitempty"
		field.OmitZero = field.OmitZero || opt == "omitzero"
	}
	return field
}

// Omitted reports whether encoding/json leaves out a field of these options holding v.
func (f Field) Omitted(v reflect.Value) bool {
	return f.OmitEmpty && IsEmpty(v) || f.OmitZero && IsZero(v)
}

// IsEmpty is encoding/json's test for omitempty.
func IsEmpty(v reflect.Value) bool {
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

// IsZero is encoding/json's test for omitzero: the type's IsZero method where it has one
// (on the value, or on its address), else reflect's.
func IsZero(v reflect.Value) bool {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return true
	}
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
		return z.IsZero()
	}
	if v.CanAddr() {
		if z, ok := v.Addr().Interface().(interface{ IsZero() bool }); ok {
			return z.IsZero()
		}
	}
	return v.IsZero()
}
