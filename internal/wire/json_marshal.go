package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// Marshal is json.Marshal of an object, byte for byte, in less time: the compiled
// encoder of json_encoder.go (BenchmarkMarshalJSON measures how much).
func Marshal(obj runtime.Object) ([]byte, error) {
	return marshalValue(reflect.ValueOf(obj))
}

// marshalValue is Marshal of what v holds (an object, or a pointer to one of its
// fields, which is then encoded as encoding/json encodes it inside the object).
func marshalValue(v reflect.Value) ([]byte, error) {
	if !v.IsValid() {
		return []byte("null"), nil // json.Marshal(nil)
	}
	if v.Kind() != reflect.Pointer {
		return json.Marshal(v.Interface()) // not an object: encoding/json says what it makes of it
	}
	buf := scratchBuffers.Get().(*[]byte)
	encoded, err := appendJSON((*buf)[:0], v)
	if err == nil && cap(encoded) <= 1<<20 {
		*buf = encoded
	}
	scratchBuffers.Put(buf)
	if err != nil {
		return nil, err
	}
	// Written into a scratch buffer, then copied once at its size: growing the result
	// as it is written cost more than the copy.
	return bytes.Clone(encoded), nil
}

var scratchBuffers = sync.Pool{New: func() any { return new(make([]byte, 0, 16<<10)) }}
