// Package jsonfield answers what encoding/json does with a struct field: the name it
// writes it under, and whether omitempty or omitzero leave it out. The diff (which
// compares objects field by field, as their JSON would differ) and the fast encoder
// (which must write exactly what encoding/json writes) both follow these rules.
package jsonfield

import (
	"reflect"
	"strings"
	"unsafe"
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

// OmittedFunc is Omitted on the memory of a field of type t, for the typed diff: directly for the kinds omitempty meets in API types, through
// reflect for the rest (floats, maps, omitzero's IsZero methods). Nil when the field is
// always written.
func (f Field) OmittedFunc(t reflect.Type) func(unsafe.Pointer) bool {
	if !f.OmitEmpty && !f.OmitZero {
		return nil
	}
	if f.OmitEmpty && !f.OmitZero {
		switch t.Kind() {
		case reflect.String:
			return func(p unsafe.Pointer) bool { return len(*(*string)(p)) == 0 }
		case reflect.Slice:
			return func(p unsafe.Pointer) bool { return len(*(*[]struct{})(p)) == 0 } // any slice's length
		case reflect.Pointer:
			return func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
		case reflect.Struct:
			return nil // omitempty never leaves out a struct
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			// Zero is all bits zero (for floats too, but -0 is not zero: they go below).
			size := t.Size()
			return func(p unsafe.Pointer) bool {
				for _, b := range unsafe.Slice((*byte)(p), size) {
					if b != 0 {
						return false
					}
				}
				return true
			}
		}
	}
	return func(p unsafe.Pointer) bool { return f.Omitted(reflect.NewAt(t, p).Elem()) }
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
