package informer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func podAt(name, rv string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv},
	}
}

// A MODIFIED event's old state is the object the previous event made new: its JSON and
// generic forms are reused, not computed again.
func TestOldFormsSharedWithPreviousEvent(t *testing.T) {
	r := newRecentEncodings(4)
	v1, v2 := podAt("a", "1"), podAt("a", "2")
	added := &Event{Type: Added, Object: v1}
	r.share(added)
	modified := &Event{Type: Modified, Object: v2, Old: v1}
	r.share(modified)

	newJSON, _ := added.ObjectJSON()
	oldJSON, _ := modified.OldJSON()
	if &newJSON[0] != &oldJSON[0] {
		t.Error("the old state's JSON was encoded again instead of shared")
	}
	newValue, _ := added.ObjectValue()
	oldValue, _ := modified.OldValue()
	if fmt.Sprintf("%p", newValue) != fmt.Sprintf("%p", oldValue) {
		t.Error("the old state's generic form was decoded again instead of shared")
	}
	if _, kept := r.byObject[v1]; kept {
		t.Error("a superseded object is still remembered")
	}
}

// Only the last capacity objects are remembered; older ones are encoded on demand.
func TestRecentEncodingsBounded(t *testing.T) {
	r := newRecentEncodings(2)
	var objs []*corev1.Pod
	for i := range 3 {
		p := podAt(fmt.Sprint("p", i), "1")
		objs = append(objs, p)
		r.share(&Event{Type: Added, Object: p})
	}
	if len(r.byObject) != 2 {
		t.Fatalf("remembers %d objects, want 2", len(r.byObject))
	}
	if _, ok := r.byObject[objs[0]]; ok {
		t.Error("the oldest object was not forgotten")
	}
	late := &Event{Type: Modified, Object: podAt("p0", "2"), Old: objs[0]}
	r.share(late)
	if js, err := late.OldJSON(); err != nil || len(js) == 0 {
		t.Errorf("a forgotten old state must still encode: %q, %v", js, err)
	}
	r.share(&Event{Type: Deleted, Object: objs[2]})
	if _, ok := r.byObject[objs[2]]; ok {
		t.Error("a deleted object is still remembered")
	}
}

// An unstructured object's generic form has json.Number where it held int64, and the
// cached object itself is left as it was.
func TestUnstructuredValueNormalised(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "generation": int64(3)},
		"spec":     map[string]any{"sizes": []any{int64(1), 2.5, "x", true, nil}},
	}}
	ev := &Event{Type: Added, Object: u}
	v, err := ev.ObjectValue()
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON any
	raw, _ := ev.ObjectJSON()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&fromJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, fromJSON) {
		t.Errorf("normalised value %#v differs from the decoded JSON %#v", v, fromJSON)
	}
	if _, still := u.Object["metadata"].(map[string]any)["generation"].(int64); !still {
		t.Error("the cached object was modified")
	}
}
