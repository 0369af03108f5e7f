package diff

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/wI2L/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// mustParseIgnores parses ignore paths, failing the test on an error.
func mustParseIgnores(t testing.TB, paths ...string) []IgnorePath {
	return eventtest.MustParseAll(t, ParseIgnorePath, paths...)
}

func TestChanges(t *testing.T) {
	ev := eventtest.DiffEvents()[0] // the deployment scaled from 1 to 3
	changes, err := NewDiffer(nil).Changes(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Op: OpReplace, Path: "/metadata/generation", Value: json.Number("5"), Old: json.Number("4")},
		{Op: OpReplace, Path: "/spec/replicas", Value: json.Number("3"), Old: json.Number("1")},
	}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("Changes = %#v\nwant %#v", changes, want)
	}

	changes, err = NewDiffer(mustParseIgnores(t, eventtest.UserIgnores...)).Changes(eventtest.DiffEvents()[6])
	if err != nil {
		t.Fatal(err)
	}
	want = []Change{
		{Op: OpAdd, Path: "/metadata/annotations", Value: map[string]any{"note": "drained for maintenance"}},
		{Op: OpReplace, Path: "/status/conditions/1/status", Value: "False", Old: "True"},
	}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("Changes with user ignores = %#v\nwant %#v", changes, want)
	}
}

func TestChangesAddRemoveLists(t *testing.T) {
	object := func(args ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Thing", "metadata": map[string]any{"name": "x"},
			"spec": map[string]any{"args": args},
		}}
	}
	grown := eventtest.Modified(1, eventtest.Widgets, "Thing", object("a"), object("a", "b", map[string]any{"name": "c"}))
	shrunk := eventtest.Modified(2, eventtest.Widgets, "Thing", object("a", "b", "c"), object("a"))
	d := NewDiffer(nil)
	for _, tc := range []struct {
		ev    *event.Event
		want  []Change
		paths []string
	}{
		{grown, []Change{
			{Op: OpAdd, Path: "/spec/args/-", Value: "b"},
			{Op: OpAdd, Path: "/spec/args/-", Value: map[string]any{"name": "c"}},
		}, []string{"spec.args[1]", "spec.args[c]"}},
		{shrunk, []Change{
			{Op: OpRemove, Path: "/spec/args/1", Old: "b"},
			{Op: OpRemove, Path: "/spec/args/1", Old: "c"},
		}, []string{"spec.args[1]", "spec.args[2]"}},
	} {
		changes, paths, err := d.ReadableChanges(tc.ev)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(changes, tc.want) || !reflect.DeepEqual(paths, tc.paths) {
			t.Errorf("seq %d: changes %#v, paths %q\nwant %#v, %q", tc.ev.Seq, changes, paths, tc.want, tc.paths)
		}
	}
}

// TestDiffsOff: a nil Differ computes no diff, and no event counts as unchanged.
func TestDiffsOff(t *testing.T) {
	var d *Differ
	ev := eventtest.DiffEvents()[0]
	if changes, err := d.Changes(ev); changes != nil || err != nil {
		t.Errorf("nil Differ: Changes = %v, %v", changes, err)
	}
	if d.Unchanged(ev) {
		t.Error("nil Differ: Unchanged = true")
	}
	if d.Diffs(ev) {
		t.Error("nil Differ: Diffs = true")
	}
	if text, err := d.ChangesJSON(ev); text != nil || err != nil {
		t.Errorf("nil Differ: ChangesJSON = %s, %v", text, err)
	}
}

// TestDiffShared checks that the diff is computed once per event for every caller with
// the same Differ, while a Differ with other ignores gets its own.
func TestDiffShared(t *testing.T) {
	ev := eventtest.DiffEvents()[6]
	d := NewDiffer(nil)
	first, err := d.Changes(ev)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := d.Changes(ev)
	if &first[0] != &again[0] {
		t.Error("Changes computed twice for one event")
	}
	text, _ := d.ChangesJSON(ev)
	if textAgain, _ := d.ChangesJSON(ev); &text[0] != &textAgain[0] {
		t.Error("ChangesJSON encoded twice for one event")
	}
	other, _ := NewDiffer(mustParseIgnores(t, eventtest.UserIgnores...)).Changes(ev)
	if len(other) == len(first) {
		t.Errorf("a Differ with other ignores got the same %d changes", len(first))
	}
}

func TestUnchanged(t *testing.T) {
	d := NewDiffer(mustParseIgnores(t, eventtest.UserIgnores...))
	events := eventtest.DiffEvents()
	fixture := eventtest.Events()
	for _, tc := range []struct {
		name string
		ev   *event.Event
		want bool
	}{
		{"scaled", events[0], false},
		{"resourceVersion only", events[1], true},
		{"heartbeat only, ignored by a wildcard", events[5], true},
		{"heartbeat and a real change", events[6], false},
		{"ADDED", fixture[0], false},
		{"DELETED", fixture[3], false},
		{"SYNC", fixture[9], false},
		{"MODIFIED to the same object", fixture[5], true},
	} {
		if got := d.Unchanged(tc.ev); got != tc.want {
			t.Errorf("%s: Unchanged = %v, want %v", tc.name, got, tc.want)
		}
	}
	if NewDiffer(nil).Unchanged(events[5]) {
		t.Error("heartbeat with default ignores only: Unchanged = true")
	}
}

// TestDiffDoesNotModifyEvent checks that pruning ignored values copies what it changes:
// the values are shared with every other sink.
func TestDiffDoesNotModifyEvent(t *testing.T) {
	ev := eventtest.DiffEvents()[6]
	before, err := ev.ObjectJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewDiffer(mustParseIgnores(t, eventtest.UserIgnores...)).Changes(ev); err != nil {
		t.Fatal(err)
	}
	object, _ := ev.ObjectValue()
	after, _ := json.Marshal(object)
	var want any
	if err := json.Unmarshal(before, &want); err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(after, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the event's object changed:\n%s\nwas\n%s", after, before)
	}
}

func TestReadablePaths(t *testing.T) {
	old := map[string]any{
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app", "ports": []any{map[string]any{"containerPort": json.Number("80")}}},
		}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready"}}},
		"data":   map[string]any{"a/b": "x", "c~d": "y"},
		"list":   []any{"x"},
	}
	for _, tc := range []struct {
		change Change
		want   string
	}{
		{Change{Op: OpReplace, Path: "/spec/containers/0/ports/0/containerPort"}, "spec.containers[app].ports[0].containerPort"},
		{Change{Op: OpReplace, Path: "/status/conditions/0/status"}, "status.conditions[Ready].status"},
		{Change{Op: OpAdd, Path: "/spec/containers/-", Value: map[string]any{"name": "sidecar"}}, "spec.containers[sidecar]"},
		{Change{Op: OpRemove, Path: "/spec/containers/0", Old: map[string]any{"name": "app"}}, "spec.containers[app]"},
		{Change{Op: OpReplace, Path: "/list/0", Value: "y", Old: "x"}, "list[0]"},
		{Change{Op: OpAdd, Path: "/list/-", Value: "z"}, "list[1]"},
		{Change{Op: OpRemove, Path: "/data/a~1b"}, "data.a/b"},
		{Change{Op: OpRemove, Path: "/data/c~0d"}, "data.c~d"},
		{Change{Op: OpAdd, Path: "/metadata/labels", Value: map[string]any{}}, "metadata.labels"},
		{Change{Op: OpReplace, Path: ""}, "."},
	} {
		if got := readablePaths([]Change{tc.change}, old)[0]; got != tc.want {
			t.Errorf("readable path of %s %s = %q, want %q", tc.change.Op, tc.change.Path, got, tc.want)
		}
	}
}

func TestPruneIgnored(t *testing.T) {
	d := NewDiffer(mustParseIgnores(t, "spec.template.metadata.annotations.*", "spec.list.*.secret"))
	shared := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"a": "1"}, "labels": map[string]any{"x": "y"}},
	}
	list := []any{map[string]any{"secret": "s", "name": "n"}, "plain"}
	for _, tc := range []struct {
		change Change
		want   Change
		keep   bool
	}{
		{Change{Op: OpAdd, Path: "/spec/template", Value: shared},
			Change{Op: OpAdd, Path: "/spec/template", Value: map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{}, "labels": map[string]any{"x": "y"}},
			}}, true},
		{Change{Op: OpAdd, Path: "/spec/template/metadata/annotations", Value: map[string]any{"a": "1"}}, Change{}, false},
		{Change{Op: OpRemove, Path: "/spec/list", Old: list},
			Change{Op: OpRemove, Path: "/spec/list", Old: []any{map[string]any{"name": "n"}, "plain"}}, true},
		{Change{Op: OpAdd, Path: "/spec/list/-", Value: map[string]any{"secret": "s"}}, Change{}, false},
		{Change{Op: OpReplace, Path: "/spec/replicas", Value: 1, Old: 2}, Change{Op: OpReplace, Path: "/spec/replicas", Value: 1, Old: 2}, true},
	} {
		got, keep := d.pruneIgnored(tc.change)
		if keep != tc.keep || (keep && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("pruneIgnored(%+v) = %+v, %v; want %+v, %v", tc.change, got, keep, tc.want, tc.keep)
		}
	}
	if len(shared["metadata"].(map[string]any)["annotations"].(map[string]any)) != 1 || len(list[0].(map[string]any)) != 2 {
		t.Errorf("pruning eventtest.Modified the shared values: %v, %v", shared, list)
	}
}

// changedParts leaves out what is equal on both sides, and the diff from its parts is the
// diff of the whole objects.
func TestChangedPartsSameDiffAsWholeObjects(t *testing.T) {
	old := []byte(`{"metadata":{"name":"a","labels":{"x":"1"},"resourceVersion":"1"},"spec":{"replicas":1,"template":{"big":[1,2,3]}},"status":{"phase":"Pending"}}`)
	cases := map[string]string{
		"label changed":   `{"metadata":{"name":"a","labels":{"x":"2"},"resourceVersion":"2"},"spec":{"replicas":1,"template":{"big":[1,2,3]}},"status":{"phase":"Pending"}}`,
		"field added":     `{"metadata":{"name":"a","labels":{"x":"1"},"resourceVersion":"2"},"spec":{"replicas":1,"template":{"big":[1,2,3]}},"status":{"phase":"Pending","podIP":"10.0.0.1"}}`,
		"section removed": `{"metadata":{"name":"a","labels":{"x":"1"},"resourceVersion":"2"},"spec":{"replicas":1,"template":{"big":[1,2,3]}}}`,
		"deep change":     `{"metadata":{"name":"a","labels":{"x":"1"},"resourceVersion":"2"},"spec":{"replicas":1,"template":{"big":[1,2,4]}},"status":{"phase":"Pending"}}`,
		"not an object":   `[1]`,
	}
	for name, updated := range cases {
		t.Run(name, func(t *testing.T) {
			oldPart, newPart, err := changedParts(old, []byte(updated), prunedLevels)
			if err != nil {
				t.Fatal(err)
			}
			got, err := jsondiff.CompareWithoutMarshal(oldPart, newPart)
			if err != nil {
				t.Fatal(err)
			}
			oldWhole, _ := generic.Decode(old)
			newWhole, _ := generic.Decode([]byte(updated))
			want, _ := jsondiff.CompareWithoutMarshal(oldWhole, newWhole)
			if got.String() != want.String() {
				t.Errorf("diff of the changed parts:\n%s\nwant the diff of the whole objects:\n%s", got, want)
			}
		})
	}
	oldPart, _, _ := changedParts(old, []byte(cases["label changed"]), prunedLevels)
	if _, decoded := oldPart.(map[string]any)["spec"]; decoded {
		t.Error("the unchanged spec was decoded")
	}
}
