package kubectl

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/event"
)

var t0 = time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC)

// TestPodStatusAsKubectl checks STATUS, READY and RESTARTS against what
// `kubectl get pods` prints for the same pod.
func TestPodStatusAsKubectl(t *testing.T) {
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
	terminated := func(reason string, code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code}}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	always := corev1.ContainerRestartPolicyAlways
	condition := func(typ corev1.PodConditionType, status corev1.ConditionStatus, reason string) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: status, Reason: reason}
	}
	newPod := func(phase corev1.PodPhase, statuses ...corev1.ContainerStatus) *corev1.Pod {
		pod := &corev1.Pod{Status: corev1.PodStatus{Phase: phase, ContainerStatuses: statuses}}
		for _, s := range statuses {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: s.Name})
		}
		if len(statuses) == 0 {
			pod.Spec.Containers = []corev1.Container{{Name: "app"}}
		}
		return pod
	}
	app := func(state corev1.ContainerState, ready bool, restarts int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "app", State: state, Ready: ready, RestartCount: restarts}
	}

	crashLoop := newPod(corev1.PodRunning, app(waiting("CrashLoopBackOff"), false, 5))
	imagePull := newPod(corev1.PodPending, app(waiting("ImagePullBackOff"), false, 0))
	creating := newPod(corev1.PodPending, app(waiting("ContainerCreating"), false, 0))
	completed := newPod(corev1.PodSucceeded, app(terminated("Completed", 0), false, 0))
	failed := newPod(corev1.PodFailed, app(terminated("Error", 1), false, 0))
	oomKilled := newPod(corev1.PodRunning, app(terminated("OOMKilled", 137), false, 3))
	exitCode := newPod(corev1.PodFailed, app(terminated("", 2), false, 0))
	runningPod := newPod(corev1.PodRunning, app(running, true, 1))
	readyWithoutRunning := newPod(corev1.PodRunning, app(corev1.ContainerState{}, true, 0))
	terminatingPod := newPod(corev1.PodRunning, app(running, true, 0))
	terminatingPod.DeletionTimestamp = &metav1.Time{Time: t0}
	lost := newPod(corev1.PodRunning, app(running, true, 0))
	lost.DeletionTimestamp = &metav1.Time{Time: t0}
	lost.Status.Reason = "NodeLost"
	evicted := newPod(corev1.PodFailed)
	evicted.Status.Reason = "Evicted"
	gated := newPod(corev1.PodPending)
	gated.Status.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonSchedulingGated)}
	notReady := newPod(corev1.PodRunning,
		corev1.ContainerStatus{Name: "app", State: running, Ready: true},
		corev1.ContainerStatus{Name: "job", State: terminated("Completed", 0)})
	notReady.Spec.Containers = []corev1.Container{{Name: "job"}, {Name: "app"}}
	initWaiting := newPod(corev1.PodPending, app(waiting("PodInitializing"), false, 0))
	initWaiting.Spec.InitContainers = []corev1.Container{{Name: "migrate"}, {Name: "seed"}}
	initWaiting.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "migrate", State: terminated("Completed", 0)},
		{Name: "seed", State: running},
	}
	initCrash := newPod(corev1.PodPending, app(waiting("PodInitializing"), false, 0))
	initCrash.Spec.InitContainers = []corev1.Container{{Name: "migrate"}}
	initCrash.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "migrate", State: waiting("CrashLoopBackOff"), RestartCount: 4}}
	sidecar := newPod(corev1.PodRunning, app(running, true, 1))
	sidecar.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: &always}}
	sidecar.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", State: running, Ready: true, Started: new(true), RestartCount: 2}}
	sidecar.Status.Conditions = []corev1.PodCondition{condition(corev1.PodInitialized, corev1.ConditionTrue, "")}

	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want podRow
	}{
		{"CrashLoopBackOff", crashLoop, podRow{status: "CrashLoopBackOff", ready: 0, total: 1, restarts: 5}},
		{"ImagePullBackOff", imagePull, podRow{status: "ImagePullBackOff", total: 1}},
		{"ContainerCreating", creating, podRow{status: "ContainerCreating", total: 1}},
		{"Completed", completed, podRow{status: "Completed", total: 1}},
		{"Error", failed, podRow{status: "Error", total: 1}},
		{"OOMKilled", oomKilled, podRow{status: "OOMKilled", total: 1, restarts: 3}},
		{"exit code without reason", exitCode, podRow{status: "ExitCode:2", total: 1}},
		{"Running", runningPod, podRow{status: "Running", ready: 1, total: 1, restarts: 1}},
		{"ready but not running", readyWithoutRunning, podRow{status: "Running", ready: 0, total: 1}},
		{"Terminating", terminatingPod, podRow{status: "Terminating", ready: 1, total: 1}},
		{"node lost", lost, podRow{status: "Unknown", ready: 1, total: 1}},
		{"Evicted", evicted, podRow{status: "Evicted", total: 1}},
		{"SchedulingGated", gated, podRow{status: "SchedulingGated", total: 1}},
		{"NotReady", notReady, podRow{status: "NotReady", ready: 1, total: 2}},
		{"init progress", initWaiting, podRow{status: "Init:1/2", total: 1}},
		{"init crash loop", initCrash, podRow{status: "Init:CrashLoopBackOff", total: 1, restarts: 4}},
		{"sidecar", sidecar, podRow{status: "Running", ready: 2, total: 2, restarts: 3}},
	} {
		if got := kubectlPodRow(tc.pod); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}

	// And as cells: kubectl's columns READY, STATUS, RESTARTS and AGE.
	table, err := NewTable(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	ev := &event.Event{Type: event.Modified, Time: t0, Kind: "Pod", Object: crashLoop, Old: crashLoop}
	if got, want := row(table, ev), `[READY STATUS RESTARTS AGE] ["0/1" "CrashLoopBackOff" "5" "<unknown>"]`; got != want {
		t.Errorf("headers and cells %s, want %s", got, want)
	}
}
