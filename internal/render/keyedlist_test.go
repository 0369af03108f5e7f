package render

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/event"
)

// prettyChangeLines renders ev in pretty format and returns its change lines, without
// their indentation.
func prettyChangeLines(t *testing.T, ev *event.Event) []string {
	t.Helper()
	out := render(t, Options{Format: FormatPretty, Location: time.UTC, Diff: NewDiffer(nil)}, []*event.Event{ev})
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")[1:]
	for i, line := range lines {
		lines[i] = strings.TrimLeft(line, " ")
	}
	return lines
}

// jsonDiff renders ev as a JSON line with its previous object and returns the line's
// "diff" after checking that, applied as a JSON Patch to "old", it gives "object".
func jsonDiff(t *testing.T, ev *event.Event) []map[string]any {
	t.Helper()
	out := render(t, Options{Format: FormatJSON, Location: time.UTC, Diff: NewDiffer(nil), ShowOld: true}, []*event.Event{ev})
	var envelope struct {
		Old, Object, Diff json.RawMessage
	}
	if err := json.Unmarshal(out, &envelope); err != nil {
		t.Fatal(err)
	}
	patch, err := jsonpatch.DecodePatch(envelope.Diff)
	if err != nil {
		t.Fatalf("the diff is not a JSON Patch: %v\n%s", err, envelope.Diff)
	}
	patched, err := patch.Apply(envelope.Old)
	if err != nil {
		t.Fatalf("the diff does not apply to the old object: %v\ndiff: %s\nold: %s", err, envelope.Diff, envelope.Old)
	}
	if !jsonpatch.Equal(patched, envelope.Object) {
		t.Errorf("the diff applied to the old object gives\n%s\nwant the new object\n%s\ndiff: %s", patched, envelope.Object, envelope.Diff)
	}
	var ops []map[string]any
	if err := json.Unmarshal(envelope.Diff, &ops); err != nil {
		t.Fatal(err)
	}
	return ops
}

// opsSummary is each operation as "op path" or "move from path".
func opsSummary(ops []map[string]any) []string {
	summary := make([]string, len(ops))
	for i, op := range ops {
		summary[i] = fmt.Sprintf("%s %s", op["op"], op["path"])
		if from, ok := op["from"]; ok {
			summary[i] = fmt.Sprintf("%s %s %s", op["op"], from, op["path"])
		}
	}
	return summary
}

// lineHeads are the lines up to their value (the mark and the path), in full where the
// value is short enough to state.
func lineHeads(lines []string) []string {
	heads := make([]string, len(lines))
	for i, line := range lines {
		heads[i] = line
		if strings.Contains(line, ": {") {
			heads[i] = line[:strings.Index(line, ": {")]
		}
	}
	return heads
}

func condition(typ corev1.PodConditionType, transition time.Duration) corev1.PodCondition {
	return corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(transition))}
}

func envVars(names ...string) []corev1.EnvVar {
	env := make([]corev1.EnvVar, len(names))
	for i, name := range names {
		env[i] = corev1.EnvVar{Name: name, Value: strings.ToLower(name)}
	}
	return env
}

// TestKeyedListDiffs: elements of keyed lists are matched by key, so elements inserted
// before others, removed from the front, or reordered are reported as what happened to
// them, in pretty output by their key and in JSON as a patch that applies.
func TestKeyedListDiffs(t *testing.T) {
	pod := webPod(corev1.PodPending, false, "", "100")
	pod.Status.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, 0)}
	pod.Spec.Containers = []corev1.Container{
		{Name: "init-db", Image: "postgres:17"},
		{Name: "app", Image: "nginx:1.27", Env: envVars("A", "B", "C")},
		{Name: "sidecar", Image: "envoy:1.32"},
	}

	for _, tc := range []struct {
		name   string
		change func(*corev1.Pod)
		pretty []string
		json   []string
	}{
		{
			name: "inserted before",
			change: func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{
					condition(corev1.PodInitialized, time.Second), condition(corev1.PodReady, time.Second),
					condition(corev1.ContainersReady, time.Second), condition(corev1.PodScheduled, 0),
				}
			},
			pretty: []string{
				"+ status.conditions[Initialized]",
				"+ status.conditions[Ready]",
				"+ status.conditions[ContainersReady]",
			},
			json: []string{"add /status/conditions/0", "add /status/conditions/1", "add /status/conditions/2"},
		},
		{
			name: "inserted before, existing one changed",
			change: func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{
					condition(corev1.PodInitialized, time.Second), condition(corev1.PodReady, time.Second),
					condition(corev1.PodScheduled, time.Second),
				}
			},
			pretty: []string{
				"~ status.conditions[PodScheduled].lastTransitionTime: 2026-11-22T15:04:05Z → 2026-11-22T15:04:06Z",
				"+ status.conditions[Initialized]",
				"+ status.conditions[Ready]",
			},
			json: []string{"replace /status/conditions/0/lastTransitionTime", "add /status/conditions/0", "add /status/conditions/1"},
		},
		{
			name: "removed from the front, next one changed",
			change: func(p *corev1.Pod) {
				p.Spec.Containers = p.Spec.Containers[1:]
				p.Spec.Containers[0].Image = "nginx:1.28"
			},
			pretty: []string{
				"~ spec.containers[app].image: nginx:1.27 → nginx:1.28",
				"- spec.containers[init-db]",
			},
			json: []string{"replace /spec/containers/1/image", "remove /spec/containers/0"},
		},
		{
			name: "removed from the middle",
			change: func(p *corev1.Pod) {
				p.Spec.Containers = slices.Delete(p.Spec.Containers, 1, 2)
			},
			pretty: []string{"- spec.containers[app]"},
			json:   []string{"remove /spec/containers/1"},
		},
		{
			name:   "reordered",
			change: func(p *corev1.Pod) { p.Spec.Containers[1].Env = envVars("C", "A", "B") },
			pretty: []string{"~ spec.containers[app].env[C]: position 2 → 0"},
			json:   []string{"move /spec/containers/1/env/2 /spec/containers/1/env/0"},
		},
		{
			name: "reordered, changed, removed and added at once, in nested lists",
			change: func(p *corev1.Pod) {
				app := p.Spec.Containers[1]
				app.Env = []corev1.EnvVar{{Name: "D", Value: "d"}, {Name: "C", Value: "c"}, {Name: "A", Value: "new"}}
				p.Spec.Containers = []corev1.Container{app, p.Spec.Containers[2], p.Spec.Containers[0]}
			},
			pretty: []string{
				"~ spec.containers[app].env[A].value: a → new",
				"- spec.containers[app].env[B]",
				"~ spec.containers[app].env[A]: position 0 → 2",
				"+ spec.containers[app].env[D]",
				"~ spec.containers[init-db]: position 0 → 2",
			},
			json: []string{
				"replace /spec/containers/1/env/0/value",
				"remove /spec/containers/1/env/1",
				"move /spec/containers/1/env/0 /spec/containers/1/env/1",
				"add /spec/containers/1/env/0",
				"move /spec/containers/0 /spec/containers/2",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := pod.DeepCopy()
			tc.change(changed)
			ev := modified(1, podsGVR, "Pod", pod, changed)
			if got := lineHeads(prettyChangeLines(t, ev)); !reflect.DeepEqual(got, tc.pretty) {
				t.Errorf("pretty diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.pretty, "\n"))
			}
			ev = modified(1, podsGVR, "Pod", pod, changed)
			if got := opsSummary(jsonDiff(t, ev)); !reflect.DeepEqual(got, tc.json) {
				t.Errorf("JSON diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.json, "\n"))
			}
		})
	}
}

// TestKeyedListDiffsRandom changes keyed lists at random (elements inserted anywhere,
// removed, reordered, changed, in a list inside the elements too) and checks that the
// JSON diff is a patch from the old object to the new one and that pretty output names
// exactly the elements added and removed, and never shows a key changing.
func TestKeyedListDiffsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := []string{"a", "b", "c", "d", "e", "f", "g"}
	randomList := func(depth int) []any {
		keys := slices.Clone(pool)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		keys = keys[:rng.IntN(len(keys)+1)]
		slices.Sort(keys[:rng.IntN(len(keys)+1)]) // often partly in order, as in real updates
		list := make([]any, len(keys))
		for i, key := range keys {
			element := map[string]any{"name": key, "value": int64(rng.IntN(2))}
			if depth > 0 {
				element["ports"] = []any{} // replaced below
			}
			list[i] = element
		}
		return list
	}
	object := func(items []any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1alpha1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default", "resourceVersion": "1"},
			"spec":     map[string]any{"items": items},
		}}
	}
	withInner := func(list []any) []any {
		for _, element := range list {
			element.(map[string]any)["ports"] = randomList(0)
		}
		return list
	}
	keysOf := func(list []any) map[string]bool {
		keys := map[string]bool{}
		for _, element := range list {
			keys[element.(map[string]any)["name"].(string)] = true
		}
		return keys
	}
	for round := range 300 {
		oldItems, newItems := withInner(randomList(1)), withInner(randomList(1))
		ev := func() *event.Event {
			return modified(uint64(round+1), widgetsGVR, "Widget", object(oldItems), object(newItems))
		}
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			jsonDiff(t, ev())
			// The paths pretty output shows, all of them (it shows the first 20).
			changes, paths, err := NewDiffer(nil).readableChanges(ev())
			if err != nil {
				t.Fatal(err)
			}
			heads := make([]string, len(changes))
			for i, change := range changes {
				heads[i] = map[string]string{OpAdd: "+ ", OpRemove: "- "}[change.Op] + paths[i]
			}
			var added, removed []string
			for _, head := range heads {
				if strings.HasSuffix(head, ".name") {
					t.Errorf("a key changes: %s", head)
				}
				if strings.HasPrefix(head, "+ spec.items[") && !strings.Contains(head, "].") {
					added = append(added, strings.TrimSuffix(strings.TrimPrefix(head, "+ spec.items["), "]"))
				}
				if strings.HasPrefix(head, "- spec.items[") && !strings.Contains(head, "].") {
					removed = append(removed, strings.TrimSuffix(strings.TrimPrefix(head, "- spec.items["), "]"))
				}
			}
			oldKeys, newKeys := keysOf(oldItems), keysOf(newItems)
			var wantAdded, wantRemoved []string
			for _, element := range newItems {
				if key := element.(map[string]any)["name"].(string); !oldKeys[key] {
					wantAdded = append(wantAdded, key)
				}
			}
			for _, element := range oldItems {
				if key := element.(map[string]any)["name"].(string); !newKeys[key] {
					wantRemoved = append(wantRemoved, key)
				}
			}
			if len(oldItems) == 0 || len(newItems) == 0 {
				return // the list itself is added or emptied: one change for it
			}
			if !slices.Equal(added, wantAdded) || !slices.Equal(removed, wantRemoved) {
				t.Errorf("pretty diff adds %q and removes %q, want %q and %q\n%s", added, removed, wantAdded, wantRemoved,
					strings.Join(heads, "\n"))
			}
		})
	}
}

// TestKeyedListInPlaceKeepsFastPath: an element changed in place, or elements appended
// or removed at the end, need no alignment by key (the common case stays as fast as it
// was), and a list whose keys are not unique is compared by index.
func TestKeyedListInPlaceKeepsFastPath(t *testing.T) {
	ev := rolledPodEvent()
	old, object, err := comparedParts(ev, true)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDiffer(nil)
	patch, err := d.compare(old, object)
	if err != nil {
		t.Fatal(err)
	}
	if mayMisalignKeyedList(patch) {
		t.Errorf("a pod whose container status and condition changed in place is aligned by key: %v", patch)
	}
	for _, tc := range []struct {
		old, object []any
		key         string
	}{
		{[]any{map[string]any{"name": "a"}}, []any{map[string]any{"name": "b"}, map[string]any{"name": "a"}}, "name"},
		{[]any{map[string]any{"type": "Ready"}}, []any{map[string]any{"type": "Ready"}}, "type"},
		{[]any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}, []any{map[string]any{"name": "a"}}, ""},
		{[]any{map[string]any{"name": ""}}, []any{map[string]any{"name": "a"}}, ""},
		{[]any{"a"}, []any{"a"}, ""},
	} {
		if got := listKeyField(tc.old, tc.object); got != tc.key {
			t.Errorf("listKeyField(%v, %v) = %q, want %q", tc.old, tc.object, got, tc.key)
		}
	}
}

// TestKeyedListIgnoredElements: an ignore path on the elements of a keyed list keeps
// that list compared by index, as the ignore is written.
func TestKeyedListIgnoredElements(t *testing.T) {
	d := NewDiffer(mustParseIgnores(t, "spec.list.*", "status.conditions.*.lastHeartbeatTime"))
	for pointer, want := range map[string]bool{
		"/spec/list":         true,
		"/spec/list/0/more":  true, // under an ignored element
		"/spec/other":        false,
		"/status/conditions": false,
	} {
		if got := d.ignoresListElements(pointer); got != want {
			t.Errorf("ignoresListElements(%q) = %v, want %v", pointer, got, want)
		}
	}
}
