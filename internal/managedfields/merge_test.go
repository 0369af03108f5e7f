package managedfields

import (
	"encoding/json"
	"reflect"
	"testing"
)

const noteFields = `{"f:metadata":{"f:annotations":{".":{},"f:note":{}}}}`

// byChange is who made each change, as manager names.
func byChange(a Attribution, n int) [][]string {
	out := make([][]string, n)
	for i := range n {
		for _, e := range a.ChangeBy(i) {
			out[i] = append(out[i], e.Manager)
		}
	}
	return out
}

// Two changes made one (a sink that coalesces) keep every writer, each change its own.
func TestMergeKeepsEveryWriter(t *testing.T) {
	tr := NewTracker()
	tr.KeepFields()
	r := observe(t, tr,
		pod("1", mf("creator", "", "", 0, `{}`)),
		pod("2", mf("creator", "", "", 0, `{}`), mf("alice", "", "", 3, labelFields)),
		pod("3", mf("creator", "", "", 0, `{}`), mf("alice", "", "", 3, labelFields), mf("bob", "", "", 4, noteFields)),
	)
	merged := Merge(r[1], r[2])
	if _, ok := merged.Decided(false); ok {
		t.Fatal("two writers decided by time alone")
	}
	changes := []Change{
		{Op: "add", Path: "/metadata/annotations", Value: map[string]any{"note": "n"}},
		{Op: "add", Path: "/metadata/labels", Value: map[string]any{"app": "web"}},
	}
	a := merged.Resolve(changes, map[string]any{"metadata": map[string]any{}})
	if !reflect.DeepEqual(managers(a), []string{"alice", "bob"}) || a.Ambiguous {
		t.Fatalf("%+v, want alice and bob, in managedFields' order", a)
	}
	if got, want := byChange(a, 2), [][]string{{"bob"}, {"alice"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("per change %v, want %v", got, want)
	}
	// Neither input changed.
	if a, ok := r[2].Decided(false); !ok || !reflect.DeepEqual(managers(a), []string{"bob"}) {
		t.Errorf("next's own record now says %+v", a)
	}
	// Merged again with a third: still every writer.
	r4 := observe(t, tr, pod("4", mf("creator", "", "", 0, `{}`), mf("alice", "", "", 3, labelFields), mf("bob", "", "", 4, noteFields),
		mf("carol", "", "status", 5, statusFields)))
	again := Merge(merged, r4[0])
	a = again.Resolve(append(changes, Change{Op: "add", Path: "/status/phase", Value: "Running"}), map[string]any{"metadata": map[string]any{}})
	if got, want := byChange(a, 3), [][]string{{"bob"}, {"alice"}, {"carol"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("merged thrice: per change %v, want %v", got, want)
	}
}

// Two managers writing the same field one after the other: the change is the newer's,
// although the older still owned it in its own version.
func TestMergeNewestOwnerWins(t *testing.T) {
	tr := NewTracker()
	tr.KeepFields()
	r := observe(t, tr,
		pod("1", mf("creator", "", "", 0, labelFields)),
		pod("2", mf("creator", "", "", 0, labelFields), mf("a", "", "", 3, replicasFields)),
		pod("3", mf("creator", "", "", 0, labelFields), mf("a", "", "", 3, `{}`), mf("b", "", "", 4, replicasFields)),
	)
	a := Merge(r[1], r[2]).Resolve([]Change{{Op: "replace", Path: "/spec/replicas", Value: json.Number("4"), Old: json.Number("2")}},
		map[string]any{"spec": map[string]any{"replicas": json.Number("2")}})
	if got := byChange(a, 1); !reflect.DeepEqual(got, [][]string{{"b"}}) || a.Ambiguous {
		t.Errorf("%+v: per change %v, want b's", a, got)
	}
	if !reflect.DeepEqual(managers(a), []string{"a", "b"}) {
		t.Errorf("by %v, want both (both wrote)", managers(a))
	}
}

// A new object's changes made one stay an ADDED by its creator; one writer's two
// changes are that writer's, decided by time.
func TestMergeAddedAndOneWriter(t *testing.T) {
	tr := NewTracker()
	tr.KeepFields()
	r := observe(t, tr,
		pod("1", mf("creator", "", "", 0, labelFields)),
		pod("2", mf("creator", "", "", 0, labelFields), mf("kwok", "", "status", 3, statusFields)),
		pod("3", mf("creator", "", "", 0, labelFields), mf("kwok", "", "status", 6, statusFields)),
	)
	if a, ok := Merge(r[0], r[1]).Decided(true); !ok || !reflect.DeepEqual(managers(a), []string{"creator"}) {
		t.Errorf("ADDED then MODIFIED: %+v, want the creator", a)
	}
	if a, ok := Merge(r[1], r[2]).Decided(false); !ok || !reflect.DeepEqual(managers(a), []string{"kwok"}) {
		t.Errorf("kwok twice: %+v (decided %v), want kwok", a, ok)
	}
	if Merge(nil, r[2]) != r[2] || Merge(r[1], nil) != r[1] {
		t.Error("a change without a record (SYNC) changed the other's")
	}
}

// A checkpoint keeps a version's managers without their fields; seeded from them, the
// next version's Record has every entry that moved since, each change its owner's.
func TestSeedThenSeveralMoved(t *testing.T) {
	tr := NewTracker()
	saved := observe(t, tr, pod("5", mf("creator", "", "", 0, `{}`), mf("alice", "", "", 1, labelFields)))[0]
	entries := saved.Managers().Entries()
	want, err := json.Marshal(entries)
	if err != nil {
		t.Fatal(err)
	}
	if got := saved.Managers().AppendJSON(nil); string(got) != string(want) {
		t.Errorf("AppendJSON %s\nwant, as Entries encode, %s", got, want)
	}
	for _, e := range entries {
		if e.FieldsV1 != nil || e.Time == nil || e.APIVersion != "v1" || e.Operation != "Update" {
			t.Errorf("kept entry %+v: want its identity and time, no fields", e)
		}
	}

	resumed := NewTracker()
	m := resumed.Seed(pod("5", entries...))
	if got := m.Entries(); !reflect.DeepEqual(got, entries) {
		t.Errorf("seeded %+v, want %+v", got, entries)
	}
	r := observe(t, resumed, pod("9", mf("creator", "", "", 0, `{}`), mf("alice", "", "", 3, `{"f:data":{"f:a":{}}}`),
		mf("bob", "", "", 4, labelFields)))[0]
	changes := []Change{
		{Op: "replace", Path: "/data/a", Value: "2", Old: "1"},
		{Op: "add", Path: "/metadata/labels", Value: map[string]any{"app": "web"}},
	}
	a := r.Resolve(changes, map[string]any{"data": map[string]any{"a": "1"}, "metadata": map[string]any{}})
	if got, want := byChange(a, 2), [][]string{{"alice"}, {"bob"}}; !reflect.DeepEqual(got, want) || a.Ambiguous {
		t.Errorf("%+v: per change %v, want %v", a, got, want)
	}
	if m := resumed.Seed(pod("5")); !m.Empty() {
		t.Error("an object without managedFields (an older checkpoint) seeded something")
	}
	var none *Record
	if !none.Managers().Empty() || len(none.Managers().Entries()) != 0 {
		t.Error("no record: managers")
	}
}

// After a checkpoint's version, a manager may have written again within the second of
// its earlier write: its time did not move. The one entry that moved is named for what
// it owns only, never for the other's change.
func TestSeedOneMovedToldByFields(t *testing.T) {
	tr := NewTracker()
	tr.Seed(pod("5", mf("creator", "", "", 0, `{}`), mf("alice", "", "", 1, `{}`)))
	r := observe(t, tr, pod("9", mf("creator", "", "", 0, `{}`), mf("alice", "", "", 1, `{"f:data":{"f:a":{}}}`),
		mf("bob", "", "", 4, labelFields)))[0]
	if _, ok := r.Decided(false); ok {
		t.Fatal("decided by time alone after a checkpoint's version")
	}
	changes := []Change{
		{Op: "replace", Path: "/data/a", Value: "2", Old: "1"},
		{Op: "add", Path: "/metadata/labels", Value: map[string]any{"app": "web"}},
	}
	a := r.Resolve(changes, map[string]any{"data": map[string]any{"a": "1"}, "metadata": map[string]any{}})
	if got, want := byChange(a, 2), [][]string{nil, {"bob"}}; !reflect.DeepEqual(got, want) || !reflect.DeepEqual(managers(a), []string{"bob"}) {
		t.Errorf("%+v: per change %v, want %v", a, got, want)
	}
	// The version after is the next one: decided by time again.
	next := observe(t, tr, pod("10", mf("creator", "", "", 0, `{}`), mf("alice", "", "", 1, `{"f:data":{"f:a":{}}}`),
		mf("bob", "", "", 7, labelFields)))[0]
	if a, ok := next.Decided(false); !ok || !reflect.DeepEqual(managers(a), []string{"bob"}) {
		t.Errorf("the next version: %+v (decided %v), want bob by time", a, ok)
	}
}

// A checkpoint's version that the first list finds unchanged: the change after it is
// the next version's, decided by time as usual.
func TestSeedUnchangedThenNext(t *testing.T) {
	tr := NewTracker()
	tr.Seed(pod("5", mf("creator", "", "", 0, `{}`)))
	if r := observe(t, tr, pod("5", mf("creator", "", "", 0, `{}`)))[0]; r != nil {
		t.Fatalf("the unchanged version left a record: %+v", r)
	}
	r := observe(t, tr, pod("6", mf("creator", "", "", 0, `{}`), mf("bob", "", "", 4, labelFields)))[0]
	if a, ok := r.Decided(false); !ok || !reflect.DeepEqual(managers(a), []string{"bob"}) {
		t.Errorf("%+v (decided %v), want bob by time", a, ok)
	}
}
