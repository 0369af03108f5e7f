package informer

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
