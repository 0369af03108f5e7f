package render

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

// prettyChangeLines renders ev in pretty format and returns its change lines, without
// their indentation.
func prettyChangeLines(t *testing.T, ev *event.Event) []string {
	t.Helper()
	out := render(t, Options{Format: FormatPretty, Location: time.UTC, Diff: diff.NewDiffer(nil)}, []*event.Event{ev})
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
	out := render(t, Options{Format: FormatJSON, Location: time.UTC, Diff: diff.NewDiffer(nil), ShowOld: true}, []*event.Event{ev})
	var envelope struct {
		Old, Object, Diff json.RawMessage
	}
	if err := json.Unmarshal(out, &envelope); err != nil {
		t.Fatal(err)
	}
	return eventtest.CheckPatch(t, envelope.Old, envelope.Object, envelope.Diff)
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
	return corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(eventtest.T0.Add(transition))}
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
	pod := eventtest.WebPod(corev1.PodPending, false, "", "100")
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
			ev := eventtest.Modified(1, eventtest.Pods, "Pod", pod, changed)
			if got := lineHeads(prettyChangeLines(t, ev)); !reflect.DeepEqual(got, tc.pretty) {
				t.Errorf("pretty diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.pretty, "\n"))
			}
			ev = eventtest.Modified(1, eventtest.Pods, "Pod", pod, changed)
			if got := opsSummary(jsonDiff(t, ev)); !reflect.DeepEqual(got, tc.json) {
				t.Errorf("JSON diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.json, "\n"))
			}
		})
	}
}
