package render

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wI2L/jsondiff"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

var (
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	nodesGVR      = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
)

// modified is a MODIFIED event from old to object, each event fresh since it caches.
func modified(seq uint64, gvr schema.GroupVersionResource, kind string, old, object runtime.Object) *event.Event {
	return &event.Event{
		Type: event.Modified, Time: t0.Add(time.Duration(seq) * time.Second), Seq: seq,
		Resource: gvr, Kind: kind, Object: object, Old: old,
	}
}

func mustParseIgnores(t testing.TB, paths ...string) []IgnorePath {
	t.Helper()
	var ignores []IgnorePath
	for _, s := range paths {
		path, err := ParseIgnorePath(s)
		if err != nil {
			t.Fatal(err)
		}
		ignores = append(ignores, path)
	}
	return ignores
}

// userIgnores are the ignore paths of the "ignore" golden files: a wildcard, an escaped
// annotation key and a plain field.
var userIgnores = []string{
	"status.conditions.*.lastHeartbeatTime",
	`metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`,
	"/metadata/generation",
}

// diffFixtureEvents has one MODIFIED event per kind of change the diff goldens show.
func diffFixtureEvents() []*event.Event {
	var events []*event.Event
	add := func(gvr schema.GroupVersionResource, kind string, old, object runtime.Object) {
		events = append(events, modified(uint64(100+len(events)), gvr, kind, old, object))
	}

	// A scalar change, with a resourceVersion change the default ignores hide and a
	// generation change only the user's ignores hide.
	deployment := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", ResourceVersion: "8811", Generation: 4,
			CreationTimestamp: metav1.NewTime(t0.Add(-48 * time.Hour)),
		},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr(int32(1))},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1},
	}
	scaled := deployment.DeepCopy()
	scaled.ResourceVersion, scaled.Generation, scaled.Spec.Replicas = "8820", 5, ptr(int32(3))
	add(deploymentsGVR, "Deployment", deployment, scaled)

	// Only the resourceVersion: an empty diff.
	touched := scaled.DeepCopy()
	touched.ResourceVersion = "8821"
	add(deploymentsGVR, "Deployment", scaled, touched)

	// Map add and remove, nested changes, lists of named elements (containers by name,
	// conditions by type), an appended container and a long value.
	pod := webPod(corev1.PodRunning, false, "worker-1", "9000")
	pod.Annotations = map[string]string{"note": "old-value", "owner": "team-a"}
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"},
	}
	pod.Status.ContainerStatuses[0].ImageID = "docker.io/library/nginx@sha256:3f2a9c1d5e7b8a0f4c6d2e1b9a8f7e6d5c4b3a29180f7e6d5c4b3a2918079c1d"
	rolled := pod.DeepCopy()
	rolled.ResourceVersion = "9004"
	rolled.Labels["tier"] = "web"
	delete(rolled.Annotations, "note")
	rolled.Spec.Containers[0].Image = "nginx:1.28"
	rolled.Spec.Containers = append(rolled.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoyproxy/envoy:v1.32.1"})
	rolled.Status.Conditions[1] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	rolled.Status.ContainerStatuses[0].Ready = true
	rolled.Status.ContainerStatuses[0].RestartCount = 2
	rolled.Status.ContainerStatuses[0].ImageID = "docker.io/library/nginx@sha256:9c1d5e7b8a0f4c6d2e1b9a8f7e6d5c4b3a29180f7e6d5c4b3a2918079c1d3f2a"
	add(podsGVR, "Pod", pod, rolled)

	// A ConfigMap: a key added, a key removed, a multi-line value changed.
	configMap := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system", ResourceVersion: "215"},
		Data:       map[string]string{"Corefile": ".:53 {\n    errors\n}\n", "legacy": "yes", "replicas": "2"},
	}
	edited := configMap.DeepCopy()
	edited.ResourceVersion = "216"
	edited.Data = map[string]string{"Corefile": ".:53 {\n    errors\n    health\n}\n", "replicas": "3", "empty": ""}
	add(configMapsGVR, "ConfigMap", configMap, edited)

	// A Secret, redacted upstream by the informer: the change shows as a change between
	// two placeholders, and the value stays hidden.
	secret := func(rv, password string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "db", "namespace": "default", "resourceVersion": rv},
			"type":     "Opaque",
			"data":     map[string]any{"password": password, "user": "<redacted: 5 bytes #51c2a7e0>"},
		}}
	}
	add(secretsGVR, "Secret", secret("300", "<redacted: 12 bytes #9a1f03bc>"), secret("301", "<redacted: 12 bytes #e7d2c410>"))

	// A node's heartbeat, which the user's wildcard ignore hides, next to a real change;
	// and annotations added whole, with one the user ignores.
	node := func(rv, heartbeat, ready string, annotations map[string]any) *unstructured.Unstructured {
		metadata := map[string]any{"name": "worker-1", "resourceVersion": rv}
		if annotations != nil {
			metadata["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Node", "metadata": metadata,
			"status": map[string]any{"conditions": []any{
				map[string]any{"type": "MemoryPressure", "status": "False", "lastHeartbeatTime": heartbeat},
				map[string]any{"type": "Ready", "status": ready, "lastHeartbeatTime": heartbeat},
			}},
		}}
	}
	add(nodesGVR, "Node", node("500", "2026-11-22T15:00:00Z", "True", nil), node("501", "2026-11-22T15:00:40Z", "True", nil))
	add(nodesGVR, "Node", node("501", "2026-11-22T15:00:40Z", "True", nil), node("502", "2026-11-22T15:01:20Z", "False", map[string]any{
		"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Node","metadata":{"name":"worker-1"}}`,
		"note": "drained for maintenance",
	}))

	// A rewrite with more changes than the cap, and numbers too large for a float64.
	widget := func(rv string, base int64) *unstructured.Unstructured {
		spec := map[string]any{"total": base + 9007199254740993}
		for i := range 25 {
			spec[fmt.Sprintf("field%02d", i)] = base + int64(i)
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1alpha1", "kind": "Widget",
			"metadata": map[string]any{"name": "blue", "namespace": "default", "resourceVersion": rv},
			"spec":     spec,
		}}
	}
	add(widgetsGVR, "Widget", widget("9001", 0), widget("9002", 100))
	return events
}

// diffGoldenEvents are the fixture's two pod MODIFIED events and its SYNC event (which
// never has a diff, but has an old object), then diffFixtureEvents.
func diffGoldenEvents() []*event.Event {
	fixture := fixtureEvents()
	return append([]*event.Event{fixture[1], fixture[2], fixture[9]}, diffFixtureEvents()...)
}

func TestDiffGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		ignores []string
	}{
		{name: "diff-pretty", opts: Options{Format: FormatPretty}},
		{name: "diff-pretty-color", opts: Options{Format: FormatPretty, Color: true}},
		{name: "diff-pretty-ignore", opts: Options{Format: FormatPretty}, ignores: userIgnores},
		{name: "diff-wide-timestamps", opts: Options{Format: FormatWide, Timestamps: true}},
		{name: "diff-json", opts: Options{Format: FormatJSON}},
		{name: "diff-json-old", opts: Options{Format: FormatJSON, ShowOld: true}},
		{name: "diff-yaml", opts: Options{Format: FormatYAML, ShowOld: true}},
		{name: "diff-name", opts: Options{Format: FormatName, ShowOld: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Location = time.UTC
			tc.opts.Diff = NewDiffer(mustParseIgnores(t, tc.ignores...))
			checkGolden(t, tc.name, render(t, tc.opts, diffGoldenEvents()))
		})
	}
}

func TestChanges(t *testing.T) {
	ev := diffFixtureEvents()[0] // the deployment scaled from 1 to 3
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

	changes, err = NewDiffer(mustParseIgnores(t, userIgnores...)).Changes(diffFixtureEvents()[6])
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
	grown := modified(1, widgetsGVR, "Thing", object("a"), object("a", "b", map[string]any{"name": "c"}))
	shrunk := modified(2, widgetsGVR, "Thing", object("a", "b", "c"), object("a"))
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
		changes, paths, err := d.readableChanges(tc.ev)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(changes, tc.want) || !reflect.DeepEqual(paths, tc.paths) {
			t.Errorf("seq %d: changes %#v, paths %q\nwant %#v, %q", tc.ev.Seq, changes, paths, tc.want, tc.paths)
		}
	}
}

func TestDiffsOff(t *testing.T) {
	var d *Differ
	ev := diffFixtureEvents()[0]
	if changes, err := d.Changes(ev); changes != nil || err != nil {
		t.Errorf("nil Differ: Changes = %v, %v", changes, err)
	}
	if d.Unchanged(ev) {
		t.Error("nil Differ: Unchanged = true")
	}
	for _, format := range []Format{FormatJSON, FormatYAML} {
		out := render(t, Options{Format: format}, []*event.Event{ev})
		if strings.Contains(string(out), "diff") || strings.Contains(string(out), "old") {
			t.Errorf("%s without diffs: %s", format, out)
		}
	}
	p, err := NewPrinter(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Unchanged(diffFixtureEvents()[1]) {
		t.Error("Printer without diffs: Unchanged = true")
	}
}

func TestUnchanged(t *testing.T) {
	d := NewDiffer(mustParseIgnores(t, userIgnores...))
	events := diffFixtureEvents()
	fixture := fixtureEvents()
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

// TestDiffSharedBetweenSinks checks that the diff is computed once per event for every
// Printer with the same Differ, while a Differ with other ignores gets its own.
func TestDiffSharedBetweenSinks(t *testing.T) {
	ev := diffFixtureEvents()[6]
	d := NewDiffer(nil)
	first, err := d.Changes(ev)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := d.Changes(ev)
	if &first[0] != &again[0] {
		t.Error("Changes computed twice for one event")
	}
	other, _ := NewDiffer(mustParseIgnores(t, userIgnores...)).Changes(ev)
	if len(other) == len(first) {
		t.Errorf("a Differ with other ignores got the same %d changes", len(first))
	}

	// Once the event's JSON and diff are encoded, further JSON sinks cost no allocations.
	sinks := make([]*Printer, 2)
	for i := range sinks {
		if sinks[i], err = NewPrinter(Options{Format: FormatJSON, Diff: d, ShowOld: true}); err != nil {
			t.Fatal(err)
		}
	}
	dst := make([]byte, 0, 64<<10)
	if dst, err = sinks[0].Append(dst[:0], ev); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if dst, err = sinks[1].Append(dst[:0], ev); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("JSON line with diff and old: %v allocations per further sink, want 0", allocs)
	}
}

// TestDiffDoesNotModifyEvent checks that pruning ignored values copies what it changes:
// the values are shared with every other sink.
func TestDiffDoesNotModifyEvent(t *testing.T) {
	ev := diffFixtureEvents()[6]
	before, err := ev.ObjectJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewDiffer(mustParseIgnores(t, userIgnores...)).Changes(ev); err != nil {
		t.Fatal(err)
	}
	object, _ := ev.ObjectValue(typedValue)
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

func TestChangeLinesAreCapped(t *testing.T) {
	events := diffFixtureEvents()
	ev := events[len(events)-1] // 26 changes
	out := string(render(t, Options{Location: time.UTC, Diff: NewDiffer(nil)}, []*event.Event{ev}))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1+maxChangeLines {
		t.Errorf("%d lines, want the event line and %d change lines:\n%s", len(lines), maxChangeLines, out)
	}
	if last := lines[len(lines)-1]; last != "          … and 7 more changes" {
		t.Errorf("last line = %q", last)
	}
}

// TestHostileDiffValues checks that keys and values from the object reach the terminal
// escaped, and cannot start a line of their own.
func TestHostileDiffValues(t *testing.T) {
	object := func(value string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "x", "namespace": "default"},
			"data":     map[string]any{"evil\x1b[2J\nkey": value, "list": []any{value}},
		}}
	}
	ev := modified(1, configMapsGVR, "ConfigMap", object("calm"), object("x\x1b]0;pwned\x07\n\u009b\u202e"))
	out := string(render(t, Options{Location: time.UTC, Diff: NewDiffer(nil)}, []*event.Event{ev}))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want the event line and 2 change lines, got %q", out)
	}
	for _, r := range out {
		if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u202e') {
			t.Errorf("raw %U in %q", r, out)
		}
	}
	want := `          ~ data.evil\x1b[2J\nkey: calm → "x\u001b]0;pwned\u0007\n\u009b\u202e"`
	if lines[1] != want {
		t.Errorf("change line = %q\nwant          %q", lines[1], want)
	}
}

func TestChangeValues(t *testing.T) {
	p, err := NewPrinter(Options{})
	if err != nil {
		t.Fatal(err)
	}
	long := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"web", "web"},
		{"two words", "two words"},
		{"", `""`},
		{" padded", `" padded"`},
		{"true", `"true"`},
		{"null", `"null"`},
		{"3", `"3"`},
		{"1e5", `"1e5"`},
		{"{x}", `"{x}"`},
		{"a → b", `"a → b"`},
		{"line\nbreak", `"line\nbreak"`},
		{"<redacted: 5 bytes #51c2a7e0>", "<redacted: 5 bytes #51c2a7e0>"},
		{json.Number("12345678901234567890"), "12345678901234567890"},
		{true, "true"},
		{nil, "null"},
		{map[string]any{"b": json.Number("1"), "a": "<x>"}, `{"a":"<x>","b":1}`},
		{[]any{}, "[]"},
		{long, "sha256:0123456789abcdef0123456…3456789abcdef0123456789abcdef"},
		{strings.Repeat("é", 100), strings.Repeat("é", 30) + "…" + strings.Repeat("é", 29)},
	} {
		text := p.changeValueText(tc.v)
		if got := string(appendEscaped(nil, shortenMiddle(text, valueLimit(text, 0)))); got != tc.want {
			t.Errorf("change value %#v = %q, want %q", tc.v, got, tc.want)
		}
	}
	if n := len([]rune(shortenMiddle(long, maxValueRunes))); n != maxValueRunes {
		t.Errorf("shortened to %d runes, want %d", n, maxValueRunes)
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
		t.Errorf("pruning modified the shared values: %v, %v", shared, list)
	}
}

func TestJSONLinesWithDiffKeys(t *testing.T) {
	events := diffGoldenEvents()
	out := render(t, Options{Format: FormatJSON, Diff: NewDiffer(nil), ShowOld: true}, events)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, line := range lines {
		ev := events[i]
		want := []string{"type", "time"}
		if ev.Seq != 0 {
			want = append(want, "seq")
		}
		want = append(want, "resource", "object", "old")
		if ev.Type == event.Modified {
			want = append(want, "diff")
		}
		if got := topLevelKeys(t, line); !reflect.DeepEqual(got, want) {
			t.Errorf("line %d (%s) keys = %v, want %v", i, ev.Type, got, want)
		}
	}
}

// TestConcurrentSinks renders the same events from several goroutines at once, in every
// format and through jq, as sinks do; run with -race it checks the per-event caches.
func TestConcurrentSinks(t *testing.T) {
	events := diffGoldenEvents()
	d := NewDiffer(mustParseIgnores(t, userIgnores...))
	q := mustCompileJQ(t, ".diff | length")
	formats := []Format{FormatPretty, FormatJSON, FormatYAML, FormatWide}
	want := make([][]byte, len(formats))
	for i, format := range formats {
		want[i] = render(t, Options{Format: format, Location: time.UTC, Diff: d, ShowOld: true}, diffGoldenEvents())
	}
	done := make(chan error)
	for i, format := range formats {
		go func() {
			p, err := NewPrinter(Options{Format: format, Location: time.UTC, Diff: d, ShowOld: true})
			if err != nil {
				done <- err
				return
			}
			var out []byte
			for _, ev := range events {
				if out, err = p.Append(out, ev); err != nil {
					done <- err
					return
				}
				envelope, err := EnvelopeValue(ev, d, i%2 == 0)
				if err != nil {
					done <- err
					return
				}
				if _, err := q.Run(context.Background(), envelope); err != nil {
					done <- err
					return
				}
			}
			if !reflect.DeepEqual(out, want[i]) {
				done <- fmt.Errorf("%s output differs when rendered concurrently", format)
				return
			}
			done <- nil
		}()
	}
	for range formats {
		if err := <-done; err != nil {
			t.Error(err)
		}
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
			oldWhole, _ := decodeGeneric(old)
			newWhole, _ := decodeGeneric([]byte(updated))
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
