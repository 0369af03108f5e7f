package e2e

// Named transitions caused by the living cluster's kwok stages that act on one object
// each: a container OOMKilled (hack/kwok/stages.yaml) and a node going NotReady (kwok's
// chaos stage node/chaos/node-not-ready.yaml, which hack/cluster.sh loads).

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/proctest"
)

// kwokStageWait bounds one kwok stage's effect: the stages act within a few seconds.
const kwokStageWait = 30 * time.Second

// A pod labelled sim.kubeevents.dev/behavior=oomkill has its container OOMKilled by
// kwok, as a kubelet reports it: --on oomkilled prints the pod, naming the transition, with
// the container's last state terminated for OOMKilled with exit code 137.
func TestSignalOOMKilledLiving(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	js := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--on", "oomkilled", "--watch-only", "-v=1")
	waitListed(js, "pods in "+ns)

	hog := pod("hog", map[string]string{"sim.kubeevents.dev/behavior": "oomkill"})
	hog.Spec.SchedulerName = ""
	// kwok's general stages wait up to 6 s each by default; this pod asks for less. kwok
	// reads these annotations as Go durations: a bare number is ignored.
	hog.Annotations = map[string]string{"sim.kubeevents.dev/crash-after-ms": "500ms",
		"pod-create.stage.kwok.x-k8s.io/delay": "100ms", "pod-create.stage.kwok.x-k8s.io/jitter-delay": "300ms",
		"pod-ready.stage.kwok.x-k8s.io/delay": "100ms", "pod-ready.stage.kwok.x-k8s.io/jitter-delay": "300ms"}
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), hog, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod: %v", err)
	}

	ev, err := proctest.WaitJSON(js.Process, kwokStageWait, func(ev onEnvelope) bool { return true })
	if err != nil {
		js.fail(err, "the pod's oomkilled transition", kwokStageWait)
	}
	if ev.Type != "MODIFIED" || ev.name() != "hog" || !slices.Equal(ev.On, []string{"oomkilled"}) {
		t.Fatalf("first line under --on oomkilled: %s %s on %v, want MODIFIED hog on [oomkilled]", ev.Type, ev.name(), ev.On)
	}
	var obj struct {
		Status struct {
			ContainerStatuses []struct {
				LastState struct {
					Terminated *struct {
						Reason   string `json:"reason"`
						ExitCode int    `json:"exitCode"`
					} `json:"terminated"`
				} `json:"lastState"`
			} `json:"containerStatuses"`
		} `json:"status"`
	}
	if err := json.Unmarshal(ev.Object, &obj); err != nil {
		t.Fatalf("the pod in the event: %v", err)
	}
	cs := obj.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].LastState.Terminated == nil || cs[0].LastState.Terminated.Reason != "OOMKilled" || cs[0].LastState.Terminated.ExitCode != 137 {
		t.Errorf("the container's last state is not terminated for OOMKilled with exit code 137: %s", ev.Object)
	}
}

// A node kwok manages, labelled node-not-ready.stage.kwok.x-k8s.io=true, is made Ready
// and then NotReady by kwok: watch nodes NAME --on not-ready prints that flip.
func TestSignalNodeNotReadyLiving(t *testing.T) {
	requireLiving(t)
	name := "kwok-not-ready-" + randomHex(3)
	js := startKubeevents(t, "watch", "nodes", name, "-o", "json", "--on", "not-ready", "--watch-only", "-v=1")
	waitListed(js, "nodes (cluster-scoped)")

	// Made as hack/cluster.sh makes the simulated nodes (kwok manages the nodes annotated
	// kwok.x-k8s.io/node=fake), without their type=kwok label, so that what counts those
	// does not count this one, and tainted so that no other test's pod is scheduled on it.
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
				"node-not-ready.stage.kwok.x-k8s.io": "true"},
		},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "kubeevents.dev/e2e-not-ready", Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if _, err := client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node: %v", err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })

	ev, err := proctest.WaitJSON(js.Process, kwokStageWait, func(ev onEnvelope) bool { return true })
	if err != nil {
		js.fail(err, "the node's not-ready transition", kwokStageWait)
	}
	if ev.Type != "MODIFIED" || ev.name() != name || !slices.Equal(ev.On, []string{"not-ready"}) {
		t.Fatalf("first line under --on not-ready: %s %s on %v, want MODIFIED %s on [not-ready]", ev.Type, ev.name(), ev.On, name)
	}
	type condition struct{ Type, Status, Reason string }
	var obj struct {
		Status struct {
			Conditions []condition `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(ev.Object, &obj); err != nil {
		t.Fatalf("the node in the event: %v", err)
	}
	ready := slices.IndexFunc(obj.Status.Conditions, func(c condition) bool { return c.Type == "Ready" })
	if ready < 0 || obj.Status.Conditions[ready].Status != "False" || obj.Status.Conditions[ready].Reason != "nodeFailed" {
		t.Errorf("the node's Ready condition is not False for kwok's nodeFailed: %s", ev.Object)
	}
}
