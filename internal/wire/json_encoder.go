package wire

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubeevents/kubeevents/internal/jsonfield"
	"github.com/kubeevents/kubeevents/internal/switches"
)

// The compiled JSON encoder: json.Marshal's bytes, from per-type encoders built once from
// each type's layout.
//
// Why: encoding an object's JSON was the largest cost of an `-o json` line after decoding
// it (a seventh of kubeevents' CPU on a rollout), spent on reflection for every field and
// on calling and re-validating the MarshalJSON of every time and quantity. Objects of
// client-go's scheme are plain trees of structs, pointers, slices, string maps and a few
// types with MarshalJSON, so each type's encoder is a list of field offsets and the
// encoders of their types, as equal.go in package render compares.
//
// The invariant, held by TestMarshalJSONSameAsEncodingJSON (every type of the scheme,
// random values) and TestEncoderEdgeCases: for every value, the encoder writes exactly
// what encoding/json writes, or fails where it fails. Whatever this file does not model
// exactly (floats, interfaces, maps with other than string keys, structs whose fields'
// names collide or use ",string", types with MarshalJSON or MarshalText other than the
// three below) is handed to encoding/json, value by value, with the same addressability
// encoding/json would give it (a pointer-receiver MarshalJSON runs on a struct field or a
// slice element, not on a map value).
//
// Objects decoded from the API server are trees: a pointer cycle, which encoding/json
// reports as an error, would recurse here until the stack ran out.

// encodeFunc appends the JSON of the value of one type at p.
type encodeFunc func(dst []byte, p unsafe.Pointer) ([]byte, error)

// encoderKey is a type and whether its values are addressable where they are encoded.
type encoderKey struct {
	t           reflect.Type
	addressable bool
}

var encoders sync.Map // encoderKey → encodeFunc

// delegatedTypes records the types handed to encoding/json, for the test that checks
// they are only those this file says.
var delegatedTypes sync.Map // reflect.Type → true

// encoderOf returns the encoder of t's values.
func encoderOf(t reflect.Type, addressable bool) encodeFunc {
	key := encoderKey{t, addressable}
	if f, ok := encoders.Load(key); ok {
		return f.(encodeFunc)
	}
	f := (&encoderCompiler{building: map[encoderKey]*encodeFunc{}, done: map[encoderKey]encodeFunc{}}).compile(t, addressable)
	encoders.Store(key, f)
	return f
}

// appendJSON appends json.Marshal of the value v points to (v is a pointer).
func appendJSON(dst []byte, v reflect.Value) ([]byte, error) {
	if !compiledEncoders {
		encoded, err := json.Marshal(v.Interface())
		return append(dst, encoded...), err
	}
	ptr := v.UnsafePointer()
	return encoderOf(v.Type(), false)(dst, unsafe.Pointer(&ptr))
}

// compiledEncoders is switches.WireEncoder, read once: off, objects are encoded by
// encoding/json, which the compiled encoders match byte for byte
// (TestMarshalJSONSameAsEncodingJSON).
var compiledEncoders = switches.WireEncoder.Enabled()

// encoderCompiler holds the types of one compilation: those being built, which a
// recursive type refers to through their slot, and those done, used again (a Container
// is in three lists of a pod, a Probe in three fields of a Container).
type encoderCompiler struct {
	building map[encoderKey]*encodeFunc
	done     map[encoderKey]encodeFunc
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	timeType          = reflect.TypeFor[metav1.Time]()
	quantityType      = reflect.TypeFor[resource.Quantity]()
	intOrStringType   = reflect.TypeFor[intstr.IntOrString]()
	numberType        = reflect.TypeFor[json.Number]()
)

func (c *encoderCompiler) compile(t reflect.Type, addressable bool) encodeFunc {
	key := encoderKey{t, addressable}
	if f, ok := encoders.Load(key); ok {
		return f.(encodeFunc)
	}
	if f, ok := c.done[key]; ok {
		return f
	}
	if slot, ok := c.building[key]; ok {
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) { return (*slot)(dst, p) }
	}
	slot := new(encodeFunc)
	c.building[key] = slot
	*slot = c.compileType(t, addressable)
	delete(c.building, key)
	c.done[key] = *slot
	return *slot
}

// compileType follows encoding/json's newTypeEncoder: a MarshalJSON or MarshalText
// method first (on the pointer only where the value is addressable), then the kind.
func (c *encoderCompiler) compileType(t reflect.Type, addressable bool) encodeFunc {
	switch t {
	case timeType:
		return encodeTime
	case quantityType:
		return encodeQuantity
	case intOrStringType:
		return encodeIntOrString
	case numberType:
		return byEncodingJSON(t, addressable) // written as a number, once checked
	}
	if t.Kind() == reflect.Pointer {
		// encoding/json calls a pointer's MarshalJSON unless the pointer is nil, which
		// is what a pointer to an addressable value does: one rule for both.
		elem := c.compile(t.Elem(), true)
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			if to := *(*unsafe.Pointer)(p); to != nil {
				return elem(dst, to)
			}
			return append(dst, "null"...), nil
		}
	}
	byPointer := addressable
	if byPointer && reflect.PointerTo(t).Implements(marshalerType) || t.Implements(marshalerType) ||
		byPointer && reflect.PointerTo(t).Implements(textMarshalerType) || t.Implements(textMarshalerType) {
		return byEncodingJSON(t, addressable)
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendBool(dst, *(*bool)(p)), nil
		}
	case reflect.Int:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendInt(dst, int64(*(*int)(p)), 10), nil
		}
	case reflect.Int8:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendInt(dst, int64(*(*int8)(p)), 10), nil
		}
	case reflect.Int16:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendInt(dst, int64(*(*int16)(p)), 10), nil
		}
	case reflect.Int32:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendInt(dst, int64(*(*int32)(p)), 10), nil
		}
	case reflect.Int64:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendInt(dst, *(*int64)(p), 10), nil
		}
	case reflect.Uint, reflect.Uintptr:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendUint(dst, uint64(*(*uint)(p)), 10), nil
		}
	case reflect.Uint8:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendUint(dst, uint64(*(*uint8)(p)), 10), nil
		}
	case reflect.Uint16:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendUint(dst, uint64(*(*uint16)(p)), 10), nil
		}
	case reflect.Uint32:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendUint(dst, uint64(*(*uint32)(p)), 10), nil
		}
	case reflect.Uint64:
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return strconv.AppendUint(dst, *(*uint64)(p), 10), nil
		}
	case reflect.String:
		return encodeString
	case reflect.Struct:
		return c.compileStruct(t, addressable)
	case reflect.Slice:
		return c.compileSlice(t)
	case reflect.Array:
		elem, size, n := c.compile(t.Elem(), addressable), t.Elem().Size(), uintptr(t.Len())
		return func(dst []byte, p unsafe.Pointer) (_ []byte, err error) {
			dst = append(dst, '[')
			for i := range n {
				if i > 0 {
					dst = append(dst, ',')
				}
				if dst, err = elem(dst, unsafe.Add(p, i*size)); err != nil {
					return nil, err
				}
			}
			return append(dst, ']'), nil
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return c.compileStringMap(t)
		}
	}
	// Floats (their formatting and NaN's error), interfaces (what they hold is not known
	// in advance), other maps, and what encoding/json refuses.
	return byEncodingJSON(t, addressable)
}

// byEncodingJSON encodes with encoding/json: a pointer to the value where it is
// addressable (so that json.Marshal finds pointer-receiver methods, as it does on a
// field), else a copy of it.
func byEncodingJSON(t reflect.Type, addressable bool) encodeFunc {
	delegatedTypes.Store(t, true)
	return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
		v := reflect.NewAt(t, p)
		if !addressable {
			v = v.Elem()
		}
		encoded, err := json.Marshal(v.Interface())
		if err != nil {
			return nil, err
		}
		return append(dst, encoded...), nil
	}
}

// encodeTime is metav1.Time's MarshalJSON (null when zero, else RFC 3339 in UTC),
// written in place: its output never needs the compaction or escaping encoding/json
// applies to what a MarshalJSON returns.
func encodeTime(dst []byte, p unsafe.Pointer) ([]byte, error) {
	t := (*metav1.Time)(p)
	if t.IsZero() {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, time.RFC3339)
	return append(dst, '"'), nil
}

// encodeQuantity is resource.Quantity's MarshalJSON (a quoted number with a suffix,
// nothing to escape).
func encodeQuantity(dst []byte, p unsafe.Pointer) ([]byte, error) {
	encoded, err := (*resource.Quantity)(p).MarshalJSON()
	if err != nil {
		return nil, &json.MarshalerError{Type: quantityType, Err: err}
	}
	return append(dst, encoded...), nil
}

// encodeIntOrString is intstr.IntOrString's MarshalJSON: the number or the string.
func encodeIntOrString(dst []byte, p unsafe.Pointer) ([]byte, error) {
	v := (*intstr.IntOrString)(p)
	switch v.Type {
	case intstr.Int:
		return strconv.AppendInt(dst, int64(v.IntVal), 10), nil
	case intstr.String:
		return AppendJSONString(dst, v.StrVal), nil
	}
	return byEncodingJSON(intOrStringType, false)(dst, p) // its error
}

func encodeString(dst []byte, p unsafe.Pointer) ([]byte, error) {
	return AppendJSONString(dst, *(*string)(p)), nil
}

// AppendJSONString appends s as encoding/json writes a string: HTML's <, > and & escaped,
// as are control characters, U+2028 and U+2029, and each byte that is not valid UTF-8
// written as U+FFFD. Printable ASCII that needs no escape is appended as it is; the rest
// is escaped in place rather than through json.Marshal, whose buffer every annotation
// holding JSON (kubectl's last-applied-configuration) would otherwise cost.
// TestAppendJSONStringSameAsEncodingJSON holds it to encoding/json.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control characters, and <, > and &
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

func (c *encoderCompiler) compileSlice(t reflect.Type) encodeFunc {
	elemType := t.Elem()
	if elemType.Kind() == reflect.Uint8 && !reflect.PointerTo(elemType).Implements(marshalerType) &&
		!reflect.PointerTo(elemType).Implements(textMarshalerType) {
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			b := *(*[]byte)(p)
			if b == nil {
				return append(dst, "null"...), nil
			}
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, b)
			return append(dst, '"'), nil
		}
	}
	elem, size := c.compile(elemType, true), elemType.Size()
	return func(dst []byte, p unsafe.Pointer) (_ []byte, err error) {
		s := (*sliceHeader)(p)
		if s.data == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i := range uintptr(s.len) {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = elem(dst, unsafe.Add(s.data, i*size)); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
}

// sliceHeader is the layout of every slice.
type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// compileStringMap encodes a map with string keys: sorted, as encoding/json sorts them.
// A map's values are not addressable.
func (c *encoderCompiler) compileStringMap(t reflect.Type) encodeFunc {
	if t.Elem().Kind() == reflect.String && t.Elem() != numberType && encoderOfKind(t.Elem()) {
		// Labels, annotations, selectors. A map whose keys or values are of a named
		// string type has the layout of map[string]string.
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return appendSortedMap(dst, *(*map[string]string)(p), encodeString)
		}
	}
	elem, size := c.compile(t.Elem(), false), t.Elem().Size()
	if t.Elem() == quantityType {
		// Resource requests and limits.
		return func(dst []byte, p unsafe.Pointer) ([]byte, error) {
			return appendSortedMap(dst, *(*map[string]resource.Quantity)(p), encodeQuantity)
		}
	}
	sliceType := reflect.SliceOf(t.Elem())
	return func(dst []byte, p unsafe.Pointer) (_ []byte, err error) {
		m := reflect.NewAt(t, p).Elem()
		if m.IsNil() {
			return append(dst, "null"...), nil
		}
		// The values are copied out of the map (one list), as encoding/json copies each.
		n := m.Len()
		keys, values := make([]string, 0, n), reflect.MakeSlice(sliceType, n, n)
		order := make([]int, 0, n)
		for iter := m.MapRange(); iter.Next(); {
			values.Index(len(keys)).SetIterValue(iter)
			order = append(order, len(keys))
			keys = append(keys, iter.Key().String())
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
		base := values.UnsafePointer()
		dst = append(dst, '{')
		for i, at := range order {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(AppendJSONString(dst, keys[at]), ':')
			if dst, err = elem(dst, unsafe.Add(base, uintptr(at)*size)); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
}

// appendSortedMap appends m as encoding/json writes a map with string keys: its keys
// sorted, each value by encode (of the value's copy: map values are not addressable).
func appendSortedMap[V any](dst []byte, m map[string]V, encode encodeFunc) (_ []byte, err error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	v := new(V) // one copy for all values: it escapes to encode
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(AppendJSONString(dst, k), ':')
		*v = m[k]
		if dst, err = encode(dst, unsafe.Pointer(v)); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// encoderOfKind reports whether t's values are encoded by their kind alone: no
// MarshalJSON or MarshalText method of any receiver.
func encoderOfKind(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return !p.Implements(marshalerType) && !p.Implements(textMarshalerType)
}

// structField is one field encoding/json writes, reached from the struct through path.
type structField struct {
	key       []byte                    // "name":
	path      []fieldStep               // more than one step through embedded structs
	offset    uintptr                   // path[0].offset, for the common one-step path
	omitted   func(unsafe.Pointer) bool // nil: always written
	encode    encodeFunc
	typ       reflect.Type
	omitEmpty bool
	omitZero  bool
}

// fieldStep is a field's offset in its struct, and whether that field is a pointer (to
// an embedded struct) to follow.
type fieldStep struct {
	offset uintptr
	deref  bool
}

func (c *encoderCompiler) compileStruct(t reflect.Type, addressable bool) encodeFunc {
	fields, ok := structFields(t, nil, 0, map[reflect.Type]bool{})
	if !ok {
		return byEncodingJSON(t, addressable)
	}
	for i := range fields {
		f := &fields[i]
		// Through an embedded pointer the value is addressable whatever the struct is.
		fieldAddressable := addressable || slices.ContainsFunc(f.path, func(s fieldStep) bool { return s.deref })
		f.encode = c.compile(f.typ, fieldAddressable)
		f.omitted = jsonfield.Field{OmitEmpty: f.omitEmpty, OmitZero: f.omitZero}.OmittedFunc(f.typ)
		f.offset = f.path[0].offset
		if len(f.path) == 1 {
			f.path = nil
		}
	}
	return func(dst []byte, p unsafe.Pointer) (_ []byte, err error) {
		dst = append(dst, '{')
		first := true
		for i := range fields {
			f := &fields[i]
			fp := unsafe.Add(p, f.offset)
			if f.path != nil {
				if fp = follow(p, f.path); fp == nil {
					continue // in an embedded struct whose pointer is nil
				}
			}
			if f.omitted != nil && f.omitted(fp) {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, f.key...)
			if dst, err = f.encode(dst, fp); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
}

// follow walks path from p, or returns nil at a nil pointer.
func follow(p unsafe.Pointer, path []fieldStep) unsafe.Pointer {
	for _, s := range path {
		p = unsafe.Add(p, s.offset)
		if s.deref {
			if p = *(*unsafe.Pointer)(p); p == nil {
				return nil
			}
		}
	}
	return p
}

// structFields lists the fields encoding/json writes for struct t, in its order (embedded
// structs' fields in their place), or ok=false where its rules for colliding names or
// ",string" would have to be followed: encoding/json does those.
func structFields(t reflect.Type, prefix []fieldStep, depth int, embedding map[reflect.Type]bool) (fields []structField, ok bool) {
	if embedding[t] || depth > 8 {
		return nil, false
	}
	embedding[t] = true
	defer delete(embedding, t)
	for i := range t.NumField() {
		sf := t.Field(i)
		ft := sf.Type
		if sf.Anonymous {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if !sf.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validTagName(name) {
			name = "" // the Go name, as encoding/json does
		}
		step := fieldStep{offset: sf.Offset}
		path := append(slices.Clone(prefix), step)
		if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
			if sf.Type.Kind() == reflect.Pointer {
				path[len(path)-1].deref = true
			}
			inner, ok := structFields(ft, path, depth+1, embedding)
			if !ok {
				return nil, false
			}
			fields = append(fields, inner...)
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := structField{path: path, typ: sf.Type}
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "omitempty":
				f.omitEmpty = true
			case "omitzero":
				f.omitZero = true
			case "string":
				return nil, false
			}
		}
		f.key, _ = json.Marshal(name)
		f.key = append(f.key, ':')
		fields = append(fields, f)
	}
	if depth == 0 {
		seen := map[string]bool{}
		for _, f := range fields {
			if seen[string(f.key)] {
				return nil, false // encoding/json's rules of dominance decide
			}
			seen[string(f.key)] = true
		}
	}
	return fields, true
}

// validTagName is encoding/json's isValidTag.
func validTagName(s string) bool {
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
