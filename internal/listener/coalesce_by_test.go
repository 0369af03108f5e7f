package listener

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// A coalesced change names every writer of the changes it stands for, each diff
// operation its own.
func TestCoalesceKeepsWriters(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	entry := func(manager string, second int, fields string) metav1.ManagedFieldsEntry {
		ts := metav1.NewTime(t0.Add(time.Duration(second) * time.Second))
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &ts, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	tracker := managedfields.NewTracker()
	tracker.KeepFields()
	var last *corev1.Pod
	version := func(rv string, change func(*corev1.Pod), entries ...metav1.ManagedFieldsEntry) *event.Event {
		p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default", UID: "uid-a", CreationTimestamp: metav1.NewTime(t0)}}
		if last != nil {
			p = last.DeepCopy()
		}
		p.ResourceVersion = rv
		change(p)
		p.ManagedFields = entries
		tracker.Observe(p)
		p.ManagedFields = nil
		ev := &event.Event{Type: event.Modified, Resource: podsGVR, Kind: "Pod", Object: p, Old: last, ManagedFields: tracker.Take(p)}
		last = p
		return ev
	}
	creator := entry("creator", 0, `{}`)
	version("1", func(*corev1.Pod) {}, creator)
	alice := entry("alice", 3, `{"f:metadata":{"f:annotations":{".":{},"f:a":{}}}}`)
	queued := version("2", func(p *corev1.Pod) { p.Annotations = map[string]string{"a": "1"} }, creator, alice)
	bob := entry("bob", 4, `{"f:metadata":{"f:labels":{".":{},"f:b":{}}}}`)
	next := version("3", func(p *corev1.Pod) { p.Labels = map[string]string{"b": "1"} }, creator, alice, bob)

	merged := coalesce(queued, next, true)
	d := diff.NewDiffer(nil)
	a := attribution.Of(merged, d)
	if a == nil || attribution.Mark(a.By, a.Ambiguous) != "alice, bob" {
		t.Fatalf("merged: by %+v, want alice, bob", a)
	}
	changes, err := d.Changes(merged)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"/metadata/annotations": "alice", "/metadata/labels": "bob"}
	for i, c := range changes {
		var got []string
		for _, e := range a.ChangeBy(i) {
			got = append(got, e.Manager)
		}
		if !slices.Equal(got, []string{want[c.Path]}) {
			t.Errorf("%s %s: by %v, want %s", c.Op, c.Path, got, want[c.Path])
		}
	}
	if len(changes) != len(want) {
		t.Errorf("merged diff %+v, want the annotation and the label", changes)
	}
}
