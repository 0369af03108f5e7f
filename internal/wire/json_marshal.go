package wire

import (
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// Marshal is json.Marshal of an object. (Encoders compiled per type once wrote the same
// bytes in about half encoding/json's time, but saved under 10% of kubeevents' CPU per
// event on every mode of make bench: removed, see the ledger in bench/README.md.)
func Marshal(obj runtime.Object) ([]byte, error) {
	return json.Marshal(obj)
}

// appendJSON appends json.Marshal of what v holds (a pointer to a part of an object).
func appendJSON(dst []byte, v reflect.Value) ([]byte, error) {
	encoded, err := json.Marshal(v.Interface())
	return append(dst, encoded...), err
}
