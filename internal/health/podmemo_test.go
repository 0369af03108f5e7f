package health

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/event"
)

// podVariants are pods that differ, one from the next, in one thing kstatus reads of a
// pod, or in one thing it does not (name, labels, spec, times, a container's state but
// for waiting).
func podVariants() []*corev1.Pod {
	base := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", Generation: 1},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{
				Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}}
	var out []*corev1.Pod
	vary := func(change func(p *corev1.Pod)) {
		p := base.DeepCopy()
		change(p)
		out = append(out, p)
	}
	vary(func(p *corev1.Pod) {})
	vary(func(p *corev1.Pod) { p.Name, p.Labels = "web-2", map[string]string{"a": "b"} })
	vary(func(p *corev1.Pod) { p.Spec.NodeName = "worker-1" })
	vary(func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = 4 })
	vary(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Now()} })
	vary(func(p *corev1.Pod) { p.Generation = 2 })
	vary(func(p *corev1.Pod) { p.Status.ObservedGeneration = 1 })
	vary(func(p *corev1.Pod) { p.Status.ObservedGeneration = 2 })
	vary(func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending })
	vary(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	vary(func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse })
	vary(func(p *corev1.Pod) { p.Status.Conditions[0].Reason = "ContainersNotReady" })
	vary(func(p *corev1.Pod) { p.Status.Conditions[0].Message = "not ready" })
	vary(func(p *corev1.Pod) { p.Status.Conditions[0].Type = "Reconciling" })
	vary(func(p *corev1.Pod) { p.Status.Conditions = nil })
	vary(func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "Stalled", Status: corev1.ConditionTrue, Message: "stuck"})
	})
	waiting := func(reason, message string) func(p *corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
		}
	}
	vary(waiting("CrashLoopBackOff", ""))
	vary(waiting("CrashLoopBackOff", "back-off 10s"))
	vary(waiting("", "CrashLoopBackOff"))
	vary(waiting("", ""))
	vary(func(p *corev1.Pod) {
		waiting("CrashLoopBackOff", "")(p)
		p.Status.ContainerStatuses[0].Name = "sidecar"
	})
	vary(func(p *corev1.Pod) {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "sidecar"})
	})
	vary(func(p *corev1.Pod) { p.Status.ContainerStatuses = nil })
	return out
}

// The memo's key frames everything kstatus is given of a pod (unstructuredOf, but for
// the name and times that it reads of no pod but one unschedulable): two pods have one
// key exactly when kstatus is given the same of them, so that a pod's health is never
// another state's.
func TestPodKeyIsWhatKstatusReads(t *testing.T) {
	read := func(p *corev1.Pod) map[string]any {
		u, err := unstructuredOf(p)
		if err != nil {
			t.Fatal(err)
		}
		metadata := u.Object["metadata"].(map[string]any)
		delete(metadata, "name")
		delete(metadata, "namespace")
		delete(metadata, "creationTimestamp")
		if _, ok := metadata["deletionTimestamp"]; ok {
			metadata["deletionTimestamp"] = "set"
		}
		return u.Object
	}
	pods := podVariants()
	for i, a := range pods {
		for j, b := range pods[:i] {
			ka, _ := podKey(nil, a)
			kb, _ := podKey(nil, b)
			sameKey, sameRead := string(ka) == string(kb), reflect.DeepEqual(read(a), read(b))
			if sameKey != sameRead {
				t.Errorf("variants %d and %d: same key %v, but kstatus reads the same of both: %v\n%q\n%q", i, j, sameKey, sameRead, ka, kb)
			}
		}
	}
}

// A pod's health from the memo is kstatus's, the first time and every time after; an
// unschedulable pod's is not kept, its health changing with time alone.
func TestPodMemoGivesKstatus(t *testing.T) {
	var m podMemo
	pods := podVariants()
	for round := range 2 {
		for i, p := range pods {
			if got, want := m.of(p), Kstatus(p); got != want {
				t.Errorf("round %d, variant %d: %+v, kstatus %+v", round, i, got, want)
			}
		}
	}
	unschedulable := pods[0].DeepCopy()
	unschedulable.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Hour))
	unschedulable.Status.Phase = corev1.PodPending
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	if _, ok := podKey(nil, unschedulable); ok {
		t.Error("an unschedulable pod has a key: its health would be kept past its 15 seconds of grace")
	}
	if got := m.of(unschedulable); got.Status != event.HealthFailed {
		t.Errorf("a pod unschedulable for an hour: %+v, want Failed", got)
	}
}
