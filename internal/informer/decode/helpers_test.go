package decode

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/randfill"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/render/partjson"
)

func fillObject(fill *randfill.Filler, obj any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	fill.Fill(obj)
	return true
}

func benchPod() *corev1.Pod {
	t0 := metav1.NewTime(time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "web-7d9f8b6c5-abc12", Namespace: "shop", UID: "0b6c7f3e-2d4a-4e8b-9c1f-5a7d3e9b2c4f", ResourceVersion: "88123412",
		CreationTimestamp: t0, Labels: map[string]string{"app.kubernetes.io/name": "web", "pod-template-hash": "7d9f8b6c5"},
		Annotations: map[string]string{"prometheus.io/scrape": "true"},
	}}
	for _, name := range []string{"app", "sidecar", "proxy"} {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: name, Image: "registry.example.com/" + name + ":2.14.1",
			Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "PORT", Value: "8080"}},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}},
		})
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: name, Image: "registry.example.com/" + name + ":2.14.1", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t0}},
		})
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t0}}
	return pod
}

// BenchmarkLabelChange is one label change of the application pod, as the protobuf watch
// hands it over: decoding it, then encoding it as JSON. The baseline decodes and encodes
// the whole pod; with reuse, spec and status come from the previous version, decoded and
// encoded before. The last case is reuse's worst: a change to every part, where it only
// adds its comparisons. Each reports the time per event and the ratio to the baseline.
func BenchmarkLabelChange(b *testing.B) {
	prev, next := benchPod(), benchPod()
	next.ResourceVersion, next.Labels = "88123413", map[string]string{"app.kubernetes.io/name": "web", "round": "2"}
	prevRaw, err := prev.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	nextRaw, err := next.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	everything := next.DeepCopy()
	everything.Spec.Containers[0].Image += "-2"
	everything.Status.Phase = corev1.PodSucceeded
	everythingRaw, err := everything.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	var baseline float64
	for _, mode := range []string{"whole", "reuse", "reuse-every-part-changed"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			reuse, enc := newPartReuse(TypedDecoding{}), partjson.NewEncoder()
			if mode == "whole" {
				reuse, enc = nil, nil
			}
			nextRaw := nextRaw
			if mode == "reuse-every-part-changed" {
				nextRaw = everythingRaw
			}
			first := &corev1.Pod{}
			if err := decodeWith(reuse, first, prevRaw); err != nil {
				b.Fatal(err)
			}
			if _, err := enc.Marshal(first, event.RecordVersion); err != nil {
				b.Fatal(err)
			}
			var kept decodedParts
			if reuse != nil {
				kept = *reuse.seen[string(first.UID)]
				kept.parts = slices.Clone(kept.parts)
			}
			for b.Loop() {
				pod := &corev1.Pod{}
				if err := decodeWith(reuse, pod, nextRaw); err != nil {
					b.Fatal(err)
				}
				if _, err := enc.Marshal(pod, event.KeepVersions); err != nil {
					b.Fatal(err)
				}
				if reuse != nil { // the next event is compared with the first version again
					*reuse.seen[string(first.UID)] = decodedParts{obj: kept.obj, parts: slices.Clone(kept.parts), size: kept.size}
				}
			}
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if mode == "whole" {
				baseline = perOp
			} else if baseline > 0 {
				b.ReportMetric(perOp/baseline, "ratio-to-whole")
			}
		})
	}
}

func decodeWith(reuse *partReuse, pod *corev1.Pod, raw []byte) error {
	if reuse == nil {
		return pod.Unmarshal(raw)
	}
	return reuse.unmarshal(watch.Modified, pod, raw)
}
