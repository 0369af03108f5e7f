package render

import (
	"testing"
	"time"

	"github.com/wI2L/jsondiff"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/event"
)

// wholeDiff is the reference: the diff of the two objects decoded whole.
func wholeDiff(t *testing.T, old, object runtime.Object) string {
	t.Helper()
	ev := &event.Event{Type: event.Modified, Object: object, Old: old}
	o, err := ev.OldValue()
	if err != nil {
		t.Fatal(err)
	}
	n, err := ev.ObjectValue()
	if err != nil {
		t.Fatal(err)
	}
	patch, err := jsondiff.CompareWithoutMarshal(o, n)
	if err != nil {
		t.Fatal(err)
	}
	return patch.String()
}

func partsDiff(t *testing.T, old, object runtime.Object) string {
	t.Helper()
	o, n, err := comparedParts(&event.Event{Type: event.Modified, Object: object, Old: old}, true)
	if err != nil {
		t.Fatal(err)
	}
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
			old := realisticPod()
			old.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("500m")}
			pod := old.DeepCopy()
			pod.ResourceVersion += "1"
			mutate(pod)
			if got, want := partsDiff(t, old, pod), wholeDiff(t, old, pod); got != want {
				t.Errorf("diff of the compared parts:\n%s\nwant the diff of the whole objects:\n%s", got, want)
			}
		})
	}

	replicas := func(n int32) *int32 { return &n }
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 1}, Spec: appsv1.DeploymentSpec{Replicas: replicas(1)}}
	scaled := d.DeepCopy()
	scaled.Spec.Replicas, scaled.Generation = replicas(3), 2
	if got, want := partsDiff(t, d, scaled), wholeDiff(t, d, scaled); got != want {
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
	old := realisticPod()
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
