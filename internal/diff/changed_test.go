package diff

import (
	"fmt"
	"testing"
	"time"

	"github.com/wI2L/jsondiff"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

// wholeDiff is the reference: the diff of the two objects decoded whole.
func wholeDiff(t *testing.T, old, object runtime.Object) string {
	t.Helper()
	o, n := values(t, old, object)
	return patchString(t, o, n)
}

func partsDiff(t *testing.T, old, object runtime.Object) string {
	t.Helper()
	o, n, err := comparedParts(&event.Event{Type: event.Modified, Object: object, Old: old}, true)
	if err != nil {
		t.Fatal(err)
	}
	return patchString(t, o, n)
}

// values are the generic JSON values of old and object.
func values(t *testing.T, old, object runtime.Object) (o, n any) {
	t.Helper()
	ev := &event.Event{Type: event.Modified, Object: object, Old: old}
	o, err := ev.OldValue()
	if err != nil {
		t.Fatal(err)
	}
	if n, err = ev.ObjectValue(); err != nil {
		t.Fatal(err)
	}
	return o, n
}

// patchString is jsondiff's patch from o to n, as text.
func patchString(t *testing.T, o, n any) string {
	t.Helper()
	patch, err := jsondiff.CompareWithoutMarshal(o, n)
	if err != nil {
		t.Fatal(err)
	}
	return patch.String()
}

// Comparing only the fields that differ gives the diff of the whole objects, for typed
// objects (with omitempty fields appearing and vanishing, pointers, quantities and
// times) and unstructured ones.
func TestComparedPartsSameDiffAsWholeObjects(t *testing.T) {
	mutations := map[string]func(p *corev1.Pod){
		"label added":        func(p *corev1.Pod) { p.Labels["canary"] = "true" },
		"labels removed":     func(p *corev1.Pod) { p.Labels = nil },
		"annotation changed": func(p *corev1.Pod) { p.Annotations = map[string]string{"a": "b"} },
		"image changed":      func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" },
		"node assigned":      func(p *corev1.Pod) { p.Spec.NodeName = "worker-9" },
		"deletion timestamp": func(p *corev1.Pod) { ts := metav1.NewTime(time.Unix(1e9, 0)); p.DeletionTimestamp = &ts },
		"grace period":       func(p *corev1.Pod) { g := int64(0); p.DeletionGracePeriodSeconds = &g },
		"status phase":       func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed },
		"condition time":     func(p *corev1.Pod) { p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Unix(2e9, 0)) },
		"restart count":      func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount += 3 },
		"resources quantity": func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"cpu": resource.MustParse("500m")}
		},
		"same quantity again": func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("0.5")}
		},
		"type meta":      func(p *corev1.Pod) { p.APIVersion = "v2" },
		"nothing but rv": func(p *corev1.Pod) {},
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			old := eventtest.RealisticPod()
			old.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("500m")}
			pod := old.DeepCopy()
			pod.ResourceVersion += "1"
			mutate(pod)
			if got, want := partsDiff(t, old, pod), wholeDiff(t, old, pod); got != want {
				t.Errorf("diff of the compared parts:\n%s\nwant the diff of the whole objects:\n%s", got, want)
			}
		})
	}

	scale := eventtest.DiffEvents()[0] // a Deployment scaled from 1 to 3
	if got, want := partsDiff(t, scale.Old, scale.Object), wholeDiff(t, scale.Old, scale.Object); got != want {
		t.Errorf("deployment scale: %s, want %s", got, want)
	}

	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "generation": int64(1), "labels": map[string]any{"a": "1"}},
		"spec":     map[string]any{"size": int64(3), "ratio": 0.5, "tags": []any{"x", "y"}},
	}}
	changed := u.DeepCopy()
	changed.Object["spec"].(map[string]any)["size"] = int64(4)
	changed.Object["spec"].(map[string]any)["tags"] = []any{"x"}
	delete(changed.Object["metadata"].(map[string]any), "labels")
	changed.Object["status"] = map[string]any{"ready": true}
	if got, want := partsDiff(t, u, changed), wholeDiff(t, u, changed); got != want {
		t.Errorf("unstructured: %s, want %s", got, want)
	}
}

// Only what differs is converted: an unchanged spec is not in the compared parts.
func TestComparedPartsLeaveOutEqualFields(t *testing.T) {
	old := eventtest.RealisticPod()
	pod := old.DeepCopy()
	pod.Labels["canary"] = "true"
	o, n, err := comparedParts(&event.Event{Type: event.Modified, Object: pod, Old: old}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, parts := range []any{o, n} {
		m := parts.(map[string]any)
		if _, ok := m["spec"]; ok {
			t.Errorf("the unchanged spec was converted: %v", m)
		}
		if meta := m["metadata"].(map[string]any); len(meta) != 1 {
			t.Errorf("metadata parts %v, want the labels only", meta)
		}
	}
}

// The lists of a status report are compared element by element (listParts), and give the
// same diff as the whole objects, including where listParts does not apply (lists of
// different lengths, keys at different places) and the lists are compared whole. The
// reference is the same two pods as unstructured objects, whose maps listParts never
// sees, through the whole Differ (keyed lists aligned, pretty paths).
func TestListPartsSameDiffAsWholeLists(t *testing.T) {
	mutations := map[string]func(p *corev1.Pod){
		"kubelet report":      eventtest.KubeletReport,
		"one container ready": func(p *corev1.Pod) { p.Status.ContainerStatuses[1].Ready = false },
		"condition appended": func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "DisruptionTarget", Status: corev1.ConditionTrue})
		},
		"condition inserted": func(p *corev1.Pod) {
			p.Status.Conditions = append([]corev1.PodCondition{{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue}}, p.Status.Conditions...)
		},
		"conditions reordered": func(p *corev1.Pod) {
			c := p.Status.Conditions
			c[0], c[1] = c[1], c[0]
			c[0].LastTransitionTime = metav1.NewTime(time.Unix(2e9, 0))
		},
		"container renamed":  func(p *corev1.Pod) { p.Status.ContainerStatuses[1].Name = "proxy" },
		"pod IP changed":     func(p *corev1.Pod) { p.Status.PodIPs[0].IP = "10.244.9.9" },
		"image and reported": func(p *corev1.Pod) { p.Spec.Containers[0].Image = "x:2"; p.Status.ContainerStatuses[0].Image = "x:2" },
		"condition removed":  func(p *corev1.Pod) { p.Status.Conditions = p.Status.Conditions[1:] },
	}
	toUnstructured := func(p *corev1.Pod) *unstructured.Unstructured {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			old := eventtest.RealisticPod()
			pod := old.DeepCopy()
			pod.ResourceVersion += "1"
			mutate(pod)
			if got, want := partsDiff(t, old, pod), wholeDiff(t, old, pod); got != want {
				t.Errorf("diff of the compared parts:\n%s\nwant the diff of the whole objects:\n%s", got, want)
			}
			d := NewDiffer(nil)
			typed, err := d.Changes(&event.Event{Type: event.Modified, Object: pod, Old: old})
			if err != nil {
				t.Fatal(err)
			}
			generic, err := d.Changes(&event.Event{Type: event.Modified, Object: toUnstructured(pod), Old: toUnstructured(old)})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(typed), fmt.Sprint(generic); got != want {
				t.Errorf("changes of the typed pods:\n%s\nwant those of the same pods unstructured:\n%s", got, want)
			}
			_, paths, err := d.ReadableChanges(&event.Event{Type: event.Modified, Object: pod, Old: old})
			if err != nil {
				t.Fatal(err)
			}
			_, genericPaths, err := d.ReadableChanges(&event.Event{Type: event.Modified, Object: toUnstructured(pod), Old: toUnstructured(old)})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(paths), fmt.Sprint(genericPaths); got != want || len(paths) == 0 {
				t.Errorf("pretty paths %s, want %s", got, want)
			}
		})
	}
}

// A status report converts only the list elements that changed, and of them only the
// fields that changed and their keys: the benchmark's status churn depends on it.
func TestListPartsLeaveOutEqualElements(t *testing.T) {
	old := eventtest.RealisticPod()
	pod := old.DeepCopy()
	eventtest.KubeletReport(pod)
	o, n, err := comparedParts(&event.Event{Type: event.Modified, Object: pod, Old: old}, true)
	if err != nil {
		t.Fatal(err)
	}
	for side, parts := range map[string]any{"old": o, "new": n} {
		status := parts.(map[string]any)["status"].(map[string]any)
		conditions, ok := status["conditions"].([]any)
		if !ok || len(conditions) != 4 {
			t.Fatalf("%s conditions %#v, want 4 elements", side, status["conditions"])
		}
		if got := conditions[0].(map[string]any); len(got) != 1 || got["type"] != "Initialized" {
			t.Errorf("%s: the unchanged Initialized condition is %v, want its type alone", side, got)
		}
		if got := conditions[1].(map[string]any); got["type"] != "Ready" || got["status"] == nil || got["lastTransitionTime"] == nil {
			t.Errorf("%s: the Ready condition is %v, want its type and what changed", side, got)
		}
		statuses := status["containerStatuses"].([]any)
		if got := statuses[1].(map[string]any); len(got) != 1 || got["name"] != "envoy" {
			t.Errorf("%s: the unchanged envoy container status is %v, want its name alone", side, got)
		}
		if got := statuses[0].(map[string]any); got["image"] != nil || got["name"] != "api" {
			t.Errorf("%s: the api container status is %v, want its name and what changed, not its image", side, got)
		}
	}
	// Where keys are not at the same places, the lists are whole.
	reordered := old.DeepCopy()
	c := reordered.Status.Conditions
	c[0], c[1] = c[1], c[0]
	o, _, err = comparedParts(&event.Event{Type: event.Modified, Object: reordered, Old: old}, true)
	if err != nil {
		t.Fatal(err)
	}
	first := o.(map[string]any)["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)
	if first["status"] == nil || first["lastTransitionTime"] == nil {
		t.Errorf("reordered conditions: the old list's first element is %v, want it whole", first)
	}
}
