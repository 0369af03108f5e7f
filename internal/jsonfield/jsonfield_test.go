package jsonfield

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type Embedded struct{ E string }

type sample struct {
	Embedded
	Plain     string
	Named     string            `json:"named"`
	Empty     string            `json:"empty,omitempty"`
	EmptyMap  map[string]string `json:"emptyMap,omitempty"`
	EmptyPtr  *int              `json:"emptyPtr,omitempty"`
	ZeroTime  metav1.Time       `json:"zeroTime,omitempty,omitzero"`
	SetTime   metav1.Time       `json:"setTime,omitzero"`
	ZeroPtr   *metav1.Time      `json:"zeroPtr,omitzero"`
	ZeroInt   int               `json:"zeroInt,omitzero"`
	Skipped   string            `json:"-"`
	unexposed string
}

// Of and Omitted say what encoding/json writes: the same names, the same fields left out.
func TestSameAsEncodingJSON(t *testing.T) {
	v := sample{Plain: "p", Named: "n", SetTime: metav1.NewTime(time.Unix(1e9, 0)), unexposed: "u"}
	raw, err := json.Marshal(&v)
	if err != nil {
		t.Fatal(err)
	}
	var written map[string]any
	if err := json.Unmarshal(raw, &written); err != nil {
		t.Fatal(err)
	}
	rv := reflect.ValueOf(&v).Elem()
	want := map[string]bool{}
	for i := range rv.NumField() {
		f := Of(rv.Type().Field(i))
		switch {
		case f.Skip:
		case f.Inline:
			want["E"] = true
		case !f.Omitted(rv.Field(i)):
			want[f.Name] = true
		}
	}
	if len(want) != len(written) {
		t.Errorf("fields by jsonfield %v, encoding/json wrote %s", want, raw)
	}
	for name := range want {
		if _, ok := written[name]; !ok {
			t.Errorf("jsonfield says %q is written; encoding/json wrote %s", name, raw)
		}
	}
	if !strings.Contains(string(raw), `"named":"n"`) || strings.Contains(string(raw), "zeroTime") {
		t.Errorf("unexpected encoding %s", raw)
	}
}
