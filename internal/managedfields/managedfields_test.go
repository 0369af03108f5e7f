package managedfields

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// mf is a managedFields entry: manager, operation ("" for Update), subresource, the
// second of its write after t0, and its fields as the API server writes them.
func mf(manager, op, sub string, second int, fields string) metav1.ManagedFieldsEntry {
	if op == "" {
		op = "Update"
	}
	ts := metav1.NewTime(t0.Add(time.Duration(second) * time.Second))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(op), APIVersion: "v1",
		Subresource: sub, Time: &ts, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func pod(rv string, entries ...metav1.ManagedFieldsEntry) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "4a5b6c7d-0000-4000-8000-000000000001",
		ResourceVersion: rv, CreationTimestamp: metav1.NewTime(t0), ManagedFields: entries}}
}

const (
	replicasFields = `{"f:spec":{"f:replicas":{}}}`
	labelFields    = `{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`
	imageFields    = `{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}`
	statusFields   = `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}},"f:phase":{}}}`
	portFields     = `{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:ports":{"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:name":{}}}}}}}`
)

// observe has t observe every version in turn and returns each one's Record.
func observe(t *testing.T, tr *Tracker, objs ...runtime.Object) []*Record {
	t.Helper()
	var records []*Record
	for _, obj := range objs {
		tr.Observe(obj)
		records = append(records, tr.Take(obj))
	}
	return records
}

func managers(a Attribution) []string {
	var out []string
	for _, e := range a.By {
		out = append(out, e.Manager)
	}
	return out
}

func generic(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	dec := json.NewDecoder(bytesReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOneMovedEntryIsTheWriter(t *testing.T) {
	tr := NewTracker()
	r := observe(t, tr,
		pod("1", mf("kubectl-create", "", "", 0, labelFields)),
		pod("2", mf("kubectl-create", "", "", 0, labelFields), mf("kwok", "", "status", 3, statusFields)),
		pod("3", mf("kubectl-create", "", "", 0, labelFields), mf("kwok", "", "status", 7, statusFields)),
		pod("4", mf("kubectl-create", "", "", 0, labelFields), mf("kwok", "", "status", 7, statusFields), mf("hpa", "", "scale", 9, replicasFields)),
	)
	if a, ok := r[0].Decided(true); !ok || !reflect.DeepEqual(managers(a), []string{"kubectl-create"}) || a.Ambiguous {
		t.Errorf("ADDED: %+v, %v; want kubectl-create", a, ok)
	}
	for i, want := range []Entry{
		{Manager: "kwok", Operation: "Update", Subresource: "status", Time: t0.Add(3 * time.Second)},
		{Manager: "kwok", Operation: "Update", Subresource: "status", Time: t0.Add(7 * time.Second)},
		{Manager: "hpa", Operation: "Update", Subresource: "scale", Time: t0.Add(9 * time.Second)},
	} {
		a, ok := r[i+1].Decided(false)
		if !ok || len(a.By) != 1 || a.By[0] != want || a.Ambiguous || a.Changes != nil {
			t.Errorf("version %d: %+v (decided %v), want %+v alone", i+2, a, ok, want)
		}
		if r[i+1].candidates[0].fields != nil {
			t.Errorf("version %d: keeps the field set of an entry decided by time", i+2)
		}
	}
}

// Two managers fighting over spec.replicas within one second: the one that wrote
// again owns the field again (an Update takes what it changes).
func TestSameSecondDecidedByFields(t *testing.T) {
	tr := NewTracker()
	r := observe(t, tr,
		pod("1", mf("creator", "", "", 0, labelFields), mf("a", "", "", 5, replicasFields)),
		pod("2", mf("creator", "", "", 0, labelFields), mf("a", "", "", 5, `{}`), mf("b", "", "", 5, replicasFields)),
		pod("3", mf("creator", "", "", 0, labelFields), mf("a", "", "", 5, replicasFields), mf("b", "", "", 5, `{}`)),
	)
	changes := []Change{{Op: "replace", Path: "/spec/replicas", Value: json.Number("3"), Old: json.Number("2")}}
	old := map[string]any{"spec": map[string]any{"replicas": json.Number("2")}}
	if a, ok := r[1].Decided(false); !ok || !reflect.DeepEqual(managers(a), []string{"b"}) {
		t.Errorf("b's first write: %+v, want b by time", a)
	}
	if _, ok := r[2].Decided(false); ok {
		t.Fatal("a's write within the same second was decided without its fields")
	}
	a := r[2].Resolve(changes, old)
	if !reflect.DeepEqual(managers(a), []string{"a"}) || a.Ambiguous {
		t.Errorf("a's second write: %+v, want a", a)
	}
}

func TestNobodysChangeIsNobodys(t *testing.T) {
	tr := NewTracker()
	r := observe(t, tr,
		pod("1", mf("kube-controller-manager", "", "", 0, labelFields)),
		pod("2", mf("kube-controller-manager", "", "", 0, labelFields)),
	)
	// A deletion sets deletionTimestamp; a binding sets spec.nodeName: neither is recorded.
	changes := []Change{
		{Op: "add", Path: "/metadata/deletionTimestamp", Value: "2026-11-27T10:00:09Z"},
		{Op: "add", Path: "/spec/nodeName", Value: "kwok-node-1"},
	}
	if a := r[1].Resolve(changes, map[string]any{}); len(a.By) != 0 {
		t.Errorf("a change no manager owns: %+v, want nobody", a)
	}
}

// The previous object is made only when a change may be a candidate's: a deletion's
// metadata needs none, a label the candidate owns does.
func TestPreviousObjectOnlyWhenFieldsNeedIt(t *testing.T) {
	tr := NewTracker()
	r := observe(t, tr,
		pod("1", mf("kube-controller-manager", "", "", 0, labelFields)),
		pod("2", mf("kube-controller-manager", "", "", 0, labelFields)),
	)
	made := 0
	old := func() (any, bool) {
		made++
		return map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "a"}}}, true
	}
	deletion := []Change{{Op: "add", Path: "/metadata/deletionTimestamp", Value: "2026-11-27T10:00:09Z"}}
	if a := r[1].ResolveLazily(deletion, old); len(a.By) != 0 || made != 0 {
		t.Errorf("a deletion: %+v, previous object made %d times, want nobody and 0", a, made)
	}
	label := []Change{{Op: "replace", Path: "/metadata/labels/app", Value: "b", Old: "a"}}
	if a := r[1].ResolveLazily(label, old); !reflect.DeepEqual(managers(a), []string{"kube-controller-manager"}) || made != 1 {
		t.Errorf("a label: %+v, previous object made %d times, want kube-controller-manager and 1", a, made)
	}
	failed := func() (any, bool) { return nil, false }
	if a := r[1].ResolveLazily(label, failed); len(a.By) != 0 {
		t.Errorf("without the previous object: %+v, want only the times to decide (nobody)", a)
	}
}

func TestAmbiguousWhenBothOwnIt(t *testing.T) {
	tr := NewTracker()
	r := observe(t, tr,
		pod("1", mf("x", "Apply", "", 4, labelFields), mf("y", "Apply", "", 4, labelFields)),
		pod("2", mf("x", "Apply", "", 4, labelFields), mf("y", "Apply", "", 4, labelFields)),
	)
	a := r[1].Resolve([]Change{{Op: "replace", Path: "/metadata/labels/app", Value: "b", Old: "a"}},
		map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "a"}}})
	if !reflect.DeepEqual(managers(a), []string{"x", "y"}) || !a.Ambiguous {
		t.Errorf("%+v, want x and y, ambiguous", a)
	}
}

// Versions missed (a re-list): every moved entry wrote, each change goes to its owner.
func TestSeveralMovedSplitPerChange(t *testing.T) {
	tr := NewTracker()
	old := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1",
		Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: "TCP", Name: "http"}}}}}}
	r := observe(t, tr,
		pod("1", mf("creator", "", "", 0, labelFields), mf("kubectl-set", "", "", 1, imageFields), mf("kwok", "", "status", 1, statusFields)),
		pod("9", mf("creator", "", "", 0, labelFields), mf("kubectl-set", "", "", 8, imageFields), mf("kwok", "", "status", 9, statusFields),
			mf("porter", "", "", 9, portFields)),
	)
	changes := []Change{
		{Op: "replace", Path: "/spec/containers/0/image", Value: "web:2", Old: "web:1"},
		{Op: "replace", Path: "/spec/containers/0/ports/0/name", Value: "web", Old: "http"},
		{Op: "replace", Path: "/status/phase", Value: "Running", Old: "Pending"},
		{Op: "remove", Path: "/metadata/annotations", Old: map[string]any{"a": "b"}},
	}
	a := r[1].Resolve(changes, generic(t, old))
	if !reflect.DeepEqual(managers(a), []string{"kubectl-set", "kwok", "porter"}) || a.Ambiguous {
		t.Fatalf("%+v, want kubectl-set, kwok and porter", a)
	}
	want := [][]string{{"kubectl-set"}, {"porter"}, {"kwok"}, nil}
	for i := range changes {
		var got []string
		for _, e := range a.ChangeBy(i) {
			got = append(got, e.Manager)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("change %s: %v, want %v", changes[i].Path, got, want[i])
		}
	}
	if !a.Differs() {
		t.Error("Differs = false for changes by different managers")
	}
}

func TestSameVersionAgainLeavesNoRecord(t *testing.T) {
	tr := NewTracker()
	p := pod("1", mf("a", "", "", 0, labelFields))
	tr.Observe(p)
	tr.Take(p)
	again := pod("1", mf("a", "", "", 0, labelFields))
	tr.Observe(again)
	if r := tr.Take(again); r != nil {
		t.Errorf("a re-listed unchanged object left a record: %+v", r)
	}
	if tr.Objects() != 1 {
		t.Errorf("Objects = %d, want 1", tr.Objects())
	}
	tr.Forget(again)
	if tr.Objects() != 0 {
		t.Errorf("after Forget, Objects = %d, want 0", tr.Objects())
	}
}

func TestUnstructuredEntries(t *testing.T) {
	u := func(rv string, sec int) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "bench.kubeevents.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "uid": "u-1", "resourceVersion": rv, "creationTimestamp": t0.Format(time.RFC3339),
				"managedFields": []any{
					map[string]any{"manager": "creator", "operation": "Update", "apiVersion": "bench.kubeevents.io/v1", "time": t0.Format(time.RFC3339),
						"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:size": map[string]any{}}}},
					map[string]any{"manager": "sizer", "operation": "Apply", "apiVersion": "bench.kubeevents.io/v1",
						"time":       t0.Add(time.Duration(sec) * time.Second).Format(time.RFC3339),
						"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:color": map[string]any{}}}},
				}}}}
	}
	tr := NewTracker()
	r := observe(t, tr, u("1", 0), u("2", 3), u("3", 3))
	if a, _ := r[1].Decided(false); !reflect.DeepEqual(managers(a), []string{"sizer"}) {
		t.Errorf("moved: %+v, want sizer", a)
	}
	a := r[2].Resolve([]Change{{Op: "replace", Path: "/spec/color", Value: "red", Old: "blue"}},
		map[string]any{"spec": map[string]any{"color": "blue"}})
	if !reflect.DeepEqual(managers(a), []string{"sizer"}) || a.By[0].Operation != "Apply" {
		t.Errorf("same second: %+v, want sizer (Apply)", a)
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// kubectl scale writes through the scale subresource, whose entry has no time: a second
// scale moves no time, and the entry is still the one that owns spec.replicas.
func TestEntryWithoutTime(t *testing.T) {
	scale := mf("kubectl", "", "scale", 0, replicasFields)
	scale.Time = nil
	tr := NewTracker()
	r := observe(t, tr,
		pod("1", mf("kubectl-create", "", "", 0, labelFields), mf("kube-controller-manager", "", "status", 4, statusFields)),
		pod("2", scale, mf("kubectl-create", "", "", 0, labelFields), mf("kube-controller-manager", "", "status", 4, statusFields)),
		pod("3", scale, mf("kubectl-create", "", "", 0, labelFields), mf("kube-controller-manager", "", "status", 5, statusFields)),
		pod("4", scale, mf("kubectl-create", "", "", 0, labelFields), mf("kube-controller-manager", "", "status", 5, statusFields)),
	)
	if a, ok := r[1].Decided(false); !ok || len(a.By) != 1 || a.By[0].Manager != "kubectl" || a.By[0].Subresource != "scale" || !a.By[0].Time.IsZero() {
		t.Errorf("first scale: %+v, want kubectl (scale) without a time", a)
	}
	if a, _ := r[2].Decided(false); !reflect.DeepEqual(managers(a), []string{"kube-controller-manager"}) {
		t.Errorf("status: %+v", a)
	}
	a := r[3].Resolve([]Change{{Op: "replace", Path: "/spec/replicas", Value: json.Number("4"), Old: json.Number("3")}},
		map[string]any{"spec": map[string]any{"replicas": json.Number("3")}})
	if len(a.By) != 1 || a.By[0].Manager != "kubectl" || a.By[0].Subresource != "scale" {
		t.Errorf("second scale: %+v, want kubectl (scale)", a)
	}
}

// ObserveProtobuf, given the managedFields as the protobuf watch's decoder leaves them out
// of the object, keeps the same Records as Observe given the decoded object.
func TestObserveProtobufAsDecoded(t *testing.T) {
	noTime := mf("kubectl-scale", "", "scale", 0, replicasFields)
	noTime.Time = nil
	noFields := mf("quiet", "", "", 0, "")
	noFields.FieldsV1 = nil
	versions := []*corev1.Pod{
		pod("1", mf("kubectl-create", "", "", 0, labelFields)),
		pod("2", mf("kubectl-create", "", "", 0, labelFields), mf("kwok", "", "status", 3, statusFields)),
		pod("3", mf("kubectl-create", "", "", 0, labelFields), mf("kwok", "", "status", 3, statusFields), noTime),
		pod("4", mf("kubectl-create", "", "", 0, labelFields), mf("kwok", "", "status", 5, statusFields), mf("x", "Apply", "", 5, imageFields), noTime),
		pod("5", mf("kubectl-create", "", "", 0, labelFields), mf("kwok", "", "status", 5, statusFields), mf("x", "Apply", "", 5, imageFields), noFields),
		pod("5"), // the same version again: no Record
		pod("6"),
	}
	decoded, fromProtobuf := NewTracker(), NewTracker()
	for i, v := range versions {
		decoded.Observe(v)
		want := decoded.Take(v)

		stripped := v.DeepCopy()
		stripped.ManagedFields = nil
		fromProtobuf.ObserveProtobuf(stripped, managedFieldsProtobuf(t, &v.ObjectMeta))
		fromProtobuf.Observe(stripped) // as the transform then does: nothing more
		got := fromProtobuf.Take(stripped)

		if w, g := recordText(want), recordText(got); w != g {
			t.Errorf("version %d: from protobuf\n%s\nwant, as decoded,\n%s", i+1, g, w)
		}
	}
	if n := len(fromProtobuf.Pending()); n != 0 {
		t.Errorf("%d records left", n)
	}
}

// managedFieldsProtobuf is m's managedFields as the watch's decoder finds them in the
// ObjectMeta message: each occurrence of the field, tag included.
func managedFieldsProtobuf(t *testing.T, m *metav1.ObjectMeta) []byte {
	t.Helper()
	raw, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	const managedFieldsNumber = 17 // ObjectMeta's, in generated.proto
	var out []byte
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if n < 0 || m < 0 {
			t.Fatalf("ObjectMeta does not parse")
		}
		if num == managedFieldsNumber {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return out
}

// recordText is what a Record says, its field sets as their JSON.
func recordText(r *Record) string {
	if r == nil {
		return "none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "previous %v moved %d creators %v\n", r.previous, r.moved, r.creators)
	for _, c := range r.candidates {
		var raw []byte
		switch f := c.fields.(type) {
		case *metav1.FieldsV1:
			raw = f.GetRawBytes()
		case []byte:
			raw = f
		}
		fmt.Fprintf(&b, "  %s %s %s %s kept %v fields %s\n", c.Manager, c.Operation, c.Subresource,
			c.Time.Format(time.RFC3339), c.fields != nil, raw)
	}
	return b.String()
}

// BenchmarkObserveProtobuf is the tracker's work per event of a label churn: one entry
// moved, as the watch's decoder hands the managedFields over.
func BenchmarkObserveProtobuf(b *testing.B) {
	tr := NewTracker()
	var versions [2]*corev1.Pod
	var raw [2][]byte
	for i := range versions {
		v := pod(fmt.Sprint(i), mf("kubectl-create", "", "", 0, labelFields), mf("kwok", "", "status", 3, statusFields),
			mf("bench", "", "", 5+i, labelFields))
		var err error
		if raw[i], err = v.ObjectMeta.Marshal(); err != nil {
			b.Fatal(err)
		}
		raw[i] = managedFieldsOf(raw[i])
		v.ManagedFields = nil
		versions[i] = v
	}
	tr.ObserveProtobuf(versions[1], raw[1]) // new to the tracker: no previous version
	tr.Take(versions[1])
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		v := versions[i%2]
		tr.ObserveProtobuf(v, raw[i%2])
		if r := tr.Take(v); r == nil {
			b.Fatal("no record")
		} else if a, ok := r.Decided(false); !ok || len(a.By) != 1 {
			b.Fatalf("%+v", a)
		}
	}
}

func managedFieldsOf(raw []byte) []byte {
	var out []byte
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if num == 17 {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return out
}

// Read from a field set's JSON, rawMayCover answers as the parsed set does, and says
// "may" where the JSON is unusual.
func TestRawMayCoverAsParsed(t *testing.T) {
	sets := []string{replicasFields, labelFields, imageFields, statusFields, portFields,
		`{"f:metadata":{"f:annotations":{".":{}},"f:labels":{}}, "f:spec" : {"f:a~b/c":{}}}`}
	paths := []string{"/metadata/deletionTimestamp", "/metadata/labels/app", "/metadata/labels/other",
		"/metadata/annotations/x", "/spec/replicas", "/spec/containers/0/image", "/spec/containers/1",
		"/spec/nodeName", "/status/phase", "/status/conditions/0/status", "/status/podIP", "/spec/a~0b~1c",
		"/spec/a~0b~1d", "/metadata", "/kind"}
	for _, raw := range sets {
		parsed := parseFields([]byte(raw))
		for _, p := range paths {
			if got, want := rawMayCover([]byte(raw), p[1:]), parsed.mayCover(p[1:]); got != want {
				t.Errorf("%s in %s: from JSON %v, parsed %v", p, raw, got, want)
			}
		}
	}
	for _, raw := range []string{`{"f:metadata":{"f:la\u0062els":{}}}`, `{"f:metadata":`, `[]`} {
		if !rawMayCover([]byte(raw), "metadata/labels/app") {
			t.Errorf("%s: not in doubt", raw)
		}
	}
}

// The API server stamps a create's managedFields entry before it sets creationTimestamp,
// each from its own clock reading: the two can fall on either side of a second's
// boundary, and the entry is still the creator's.
func TestCreatorStampedTheSecondBefore(t *testing.T) {
	created := pod("1", mf("e2e.test", "", "", -1, labelFields))
	r := observe(t, NewTracker(), created)
	if a, ok := r[0].Decided(true); !ok || !reflect.DeepEqual(managers(a), []string{"e2e.test"}) || a.Ambiguous {
		t.Errorf("ADDED: %+v, %v; want e2e.test", a, ok)
	}
	older := pod("1", mf("restored", "", "", -2, labelFields))
	if a, _ := observe(t, NewTracker(), older)[0].Decided(true); len(a.By) != 0 {
		t.Errorf("ADDED of an object whose only entry is 2 s older than it: %+v, want nobody", a)
	}
}
