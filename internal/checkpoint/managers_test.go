package checkpoint

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// The checkpoint keeps each object's managers and their times (not their fields) in its
// managedFields, as the delivered version had them, so that a resumed run can tell who
// wrote since; the objects the sinks and the cache share are left as they were.
func TestCheckpointKeepsManagers(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	at := func(sec int) *metav1.Time { ts := metav1.NewTime(t0.Add(time.Duration(sec) * time.Second)); return &ts }
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "creator", Operation: "Update", APIVersion: "v1", Time: at(0), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{}}`)},
		{Manager: "alice", Operation: "Apply", APIVersion: "v1", Time: at(3), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:a":{}}}`)},
		{Manager: "kubectl", Operation: "Update", APIVersion: "v1", Subresource: "scale", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{}`)},
	}
	want := make([]metav1.ManagedFieldsEntry, len(entries))
	for i, e := range entries {
		want[i] = metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: e.Operation, APIVersion: e.APIVersion, Subresource: e.Subresource, Time: e.Time}
		if e.Operation == metav1.ManagedFieldsOperationApply {
			want[i].APIVersion = "" // an applier is one manager whatever version it applies through
		}
	}
	mfTracker := managedfields.NewTracker()
	tr := NewTracker(1)
	typed := pod("typed", "7")
	typed.ManagedFields = entries
	mfTracker.Observe(typed)
	typed.ManagedFields = nil // as the informer's transform leaves it
	untyped := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "untyped", "namespace": "ns", "uid": "uid-untyped", "resourceVersion": "8", "managedFields": []any{
			map[string]any{"manager": "creator", "operation": "Update", "apiVersion": "v1", "time": t0.Format(time.RFC3339), "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}},
			map[string]any{"manager": "alice", "operation": "Apply", "apiVersion": "v1", "time": t0.Add(3 * time.Second).Format(time.RFC3339), "fieldsType": "FieldsV1", "fieldsV1": map[string]any{}},
			map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "subresource": "scale", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{}},
		}}}}
	mfTracker.Observe(untyped)
	unstructured.RemoveNestedField(untyped.Object, "metadata", "managedFields")
	for i, obj := range []runtime.Object{typed, untyped} {
		e := &event.Event{Type: event.Added, Resource: pods, Object: obj, Seq: uint64(i + 1), ManagedFields: mfTracker.Take(obj)}
		tr.Made(e)
		e.Written()
	}

	path := filepath.Join(t.TempDir(), "ckpt")
	if err := (&Writer{Path: path, Sections: oneSection(testWatch(), tr)}).Write(); err != nil {
		t.Fatal(err)
	}
	file, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	objects := file.Sections[0].Objects[ResourceName(pods)]
	if len(objects) != 2 {
		t.Fatalf("%d objects, want 2", len(objects))
	}
	for _, raw := range objects {
		var got struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if !sameEntries(got.Metadata.ManagedFields, want) {
			t.Errorf("%s: managedFields %+v\nwant %+v", got.Metadata.Name, got.Metadata.ManagedFields, want)
		}
	}
	if typed.ManagedFields != nil {
		t.Errorf("the delivered object was changed: %+v", typed.ManagedFields)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(untyped.Object, "metadata", "managedFields"); found {
		t.Error("the delivered unstructured object was changed")
	}

	// Seeded back (a resumed run), an unchanged object is written again with them.
	resumed := managedfields.NewTracker()
	seeded := &metav1.PartialObjectMetadata{}
	if err := json.Unmarshal(objects[0], seeded); err != nil {
		t.Fatal(err)
	}
	m := resumed.Seed(seeded)
	seeded.ManagedFields = nil
	again := NewTracker(1)
	again.Seed(ResourceName(pods), []runtime.Object{seeded}, []managedfields.Managers{m})
	path2 := filepath.Join(t.TempDir(), "ckpt")
	if err := (&Writer{Path: path2, Sections: oneSection(testWatch(), again)}).Write(); err != nil {
		t.Fatal(err)
	}
	file, err = Load(path2)
	if err != nil {
		t.Fatal(err)
	}
	var got metav1.PartialObjectMetadata
	if err := json.Unmarshal(file.Sections[0].Objects[ResourceName(pods)][0], &got); err != nil {
		t.Fatal(err)
	}
	if !sameEntries(got.ManagedFields, want) {
		t.Errorf("written again: managedFields %+v\nwant %+v", got.ManagedFields, want)
	}
}

// sameEntries compares managedFields entries as JSON (times as written, whatever their
// location).
func sameEntries(a, b []metav1.ManagedFieldsEntry) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// metadataAt finds a typed object's metadata, whose members before it are plain values,
// and leaves other shapes to the copy.
func TestMetadataAt(t *testing.T) {
	for raw, want := range map[string]int{
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"},"spec":{}}`:           44,
		`{ "n" : 1 , "t": true, "s":"x\"metadata\":{", "metadata" : {}}`:               60,
		`{"apiVersion":"v1","data":{"metadata":"x"},"kind":"ConfigMap","metadata":{}}`: -1,
		`{"metadata":null}`: -1,
		`{"kind":"Pod"}`:    -1,
		`[]`:                -1,
	} {
		at, ok := metadataAt([]byte(raw))
		if !ok {
			at = -1
		}
		if at != want {
			t.Errorf("%s: %d, want %d", raw, at, want)
		}
	}
}

// A ConfigMap's data comes before its metadata: its managers are written all the same.
func TestCheckpointKeepsManagersAfterData(t *testing.T) {
	mfTracker := managedfields.NewTracker()
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"metadata": "x"},
		"metadata": map[string]any{"name": "cm", "namespace": "ns", "uid": "uid-cm", "resourceVersion": "3", "managedFields": []any{
			map[string]any{"manager": "alice", "operation": "Update", "apiVersion": "v1", "time": "2026-11-27T10:00:03Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{}},
		}}}}
	mfTracker.Observe(cm)
	unstructured.RemoveNestedField(cm.Object, "metadata", "managedFields")
	o := SnapshotObject{Resource: "configmaps.v1", obj: cm, managers: mfTracker.Take(cm).Managers()}
	line, err := o.AppendLine(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Object struct {
			Data     map[string]string `json:"data"`
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"object"`
	}
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if m := got.Object.Metadata.ManagedFields; len(m) != 1 || m[0].Manager != "alice" || m[0].Time == nil || got.Object.Data["metadata"] != "x" {
		t.Errorf("line %s", line)
	}
}
