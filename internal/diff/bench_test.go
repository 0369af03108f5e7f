package diff

import (
	"testing"
	"time"

	"github.com/wI2L/jsondiff"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// BenchmarkDiffPod is the diff of a MODIFIED pod from its encodings (what the first sink
// pays once per event: only the fields whose encodings differ are decoded), against
// decoding both objects whole and against jsondiff.CompareJSON on the encoded objects
// (which also makes numbers float64).
func BenchmarkDiffPod(b *testing.B) {
	ev := eventtest.Warm(b, eventtest.RolledPodEvent())
	d := NewDiffer(mustParseIgnores(b, "status.conditions.*.lastProbeTime"))
	b.Run("ComparedParts", func(b *testing.B) { benchCompute(b, d, ev, 4) })
	// An update of realisticPod, as a MODIFIED event.
	updated := func(update func(pod *corev1.Pod)) *event.Event {
		old := eventtest.RealisticPod()
		pod := old.DeepCopy()
		pod.ResourceVersion = "88123499"
		update(pod)
		return &event.Event{Type: event.Modified, Time: eventtest.T0, Seq: 42, Resource: eventtest.Pods, Kind: "Pod", Object: pod, Old: old}
	}
	// What the churn of make bench does: a label changes, spec and status stay.
	b.Run("ComparedPartsLabelOnly", func(b *testing.B) {
		benchCompute(b, d, updated(func(pod *corev1.Pod) { pod.Labels["bench-round"] = "r2" }), 1)
	})
	// What the status churn of make bench does (a kubelet's report): the api container
	// goes not ready; the Ready and ContainersReady conditions with it, with fresh
	// timestamps.
	b.Run("ComparedPartsStatusReport", func(b *testing.B) {
		benchCompute(b, d, updated(func(pod *corev1.Pod) {
			now := metav1.NewTime(eventtest.T0.Add(time.Minute))
			for i := range pod.Status.Conditions {
				if c := &pod.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
					c.Status, c.Reason, c.LastTransitionTime, c.LastProbeTime = corev1.ConditionFalse, "ContainersNotReady", now, now
				}
			}
			pod.Status.ContainerStatuses[0].Ready = false
		}), 7)
	})
	// A condition inserted before the others: the keyed lists are aligned and compared
	// again (see keyedlist.go), the cost only such updates pay.
	b.Run("ComparedPartsConditionInserted", func(b *testing.B) {
		ev := updated(func(pod *corev1.Pod) {
			pod.Status.Conditions = append([]corev1.PodCondition{{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue}}, pod.Status.Conditions...)
		})
		if changes, _, err := d.compute(ev); err != nil || len(changes) != 1 || changes[0].Path != "/status/conditions/0" {
			b.Fatal(changes, err)
		}
		benchCompute(b, d, ev, 1)
	})
	b.Run("WholeDecode", func(b *testing.B) {
		oldJSON, _ := ev.OldJSON()
		objectJSON, _ := ev.ObjectJSON()
		b.ReportAllocs()
		for b.Loop() {
			old, _ := generic.Decode(oldJSON)
			object, _ := generic.Decode(objectJSON)
			if patch, err := jsondiff.CompareWithoutMarshal(old, object); err != nil || len(patch) == 0 {
				b.Fatal(patch, err)
			}
		}
	})
	b.Run("CompareJSON", func(b *testing.B) {
		old, _ := ev.OldJSON()
		object, _ := ev.ObjectJSON()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsondiff.CompareJSON(old, object, jsondiff.Ignores(d.exact...)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchCompute is the benchmark of d's diff of ev, which has want changes.
func benchCompute(b *testing.B, d *Differ, ev *event.Event, want int) {
	b.ReportAllocs()
	for b.Loop() {
		if changes, _, err := d.compute(ev); err != nil || len(changes) != want {
			b.Fatal(changes, err)
		}
	}
}
