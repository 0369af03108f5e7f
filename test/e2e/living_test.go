package e2e

// Tests that the local cluster is alive (hack/cluster.sh's living mode: controllers, a
// scheduler and kwok's simulated nodes), seen through kubeevents itself: pods scheduled,
// Running and Ready; a rolling update replacing pods; a namespace deleted with everything
// in it; a container that keeps restarting.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// livingWait bounds how long the controllers and kwok take to move an object along.
const livingWait = 90 * time.Second

// requireLiving skips (or, under CI, fails) a test on a cluster without simulated nodes.
func requireLiving(t *testing.T) {
	t.Helper()
	nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil {
		t.Fatalf("listing nodes: %v", err)
	}
	if len(nodes.Items) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the local cluster has no simulated nodes: start it in living mode (hack/cluster.sh up)")
		}
		t.Skip("the local cluster is bare (no simulated nodes); start it with hack/cluster.sh up in living mode")
	}
}

// podState is what the living tests read of a pod in a JSON event.
type podState struct {
	Metadata struct {
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
		OwnerReferences   []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		PodIP      string `json:"podIP"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
		ContainerStatuses []struct {
			RestartCount int `json:"restartCount"`
			State        struct {
				Waiting *struct {
					Reason string `json:"reason"`
				} `json:"waiting"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

func (e envelope) pod(t *testing.T) podState {
	t.Helper()
	var p podState
	if err := json.Unmarshal(e.Object, &p); err != nil {
		t.Fatalf("event object is not a pod: %v", err)
	}
	return p
}

func (p podState) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

func (p podState) runningReady() bool {
	return p.Status.Phase == "Running" && p.ready() && strings.HasPrefix(p.Spec.NodeName, "kwok-node-") && p.Status.PodIP != ""
}

func createLivingDeployment(t *testing.T, ns, name, image string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	grace := int64(3)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				// A short grace period: kwok removes a deleted pod once it is over.
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}
}

// waitPodsReady reads JSON pod events until n distinct pods (that pass keep) have been
// seen Running and Ready on a simulated node; it returns their names.
func waitPodsReady(t *testing.T, js *proc, n int, keep func(podState) bool) map[string]bool {
	t.Helper()
	ready := map[string]bool{}
	js.waitJSON(livingWait, fmt.Sprintf("%d pods Running and Ready", n), func(ev envelope) bool {
		if ev.Type == "DELETED" {
			return false
		}
		p := ev.pod(t)
		if keep(p) && p.runningReady() && p.Metadata.DeletionTimestamp == nil {
			ready[p.Metadata.Name] = true
		}
		return len(ready) >= n
	})
	return ready
}

// A Deployment's pods are scheduled to simulated nodes, get IPs, go Running and Ready, and
// the pretty stream says so.
func TestLivingPodsRunAndBecomeReady(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	js := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json")
	// -o wide: the node column, as in kubectl get pods -o wide.
	pretty := startKubeevents(t, "watch", "pods", "-n", ns, "--color", "never", "-o", "wide")
	createLivingDeployment(t, ns, "web", "nginx:1.27", 2)

	ready := waitPodsReady(t, js, 2, func(p podState) bool { return p.Metadata.Labels["app"] == "web" })
	if len(ready) != 2 {
		t.Fatalf("ready pods = %v", ready)
	}
	// ADDED when kubeevents lists the pod only once it already runs.
	runningLine := regexp.MustCompile(`(ADDED|MODIFIED)\s+(\S+/)?web-[0-9a-z]+-[0-9a-z]+\s+1/1\s+Running\b.*\bkwok-node-\d+`)
	pretty.waitFor(livingWait, "a pretty line of a pod Running 1/1 on a simulated node", runningLine.MatchString)
}

// A rolling update: the new ReplicaSet's pods are ADDED and become Ready; the old ones are
// TERMINATING, then DELETED.
func TestLivingRollingUpdate(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	createLivingDeployment(t, ns, "web", "nginx:1.27", 2)
	js := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json")
	pretty := startKubeevents(t, "watch", "pods", "-n", ns, "--color", "never")
	old := waitPodsReady(t, js, 2, func(p podState) bool { return true })

	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}`
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("updating the image: %v", err)
	}

	newReady := map[string]bool{}
	deleted := map[string]bool{}
	terminating := map[string]bool{}
	js.waitJSON(livingWait, "two new pods Ready and both old pods DELETED", func(ev envelope) bool {
		p := ev.pod(t)
		name := p.Metadata.Name
		switch {
		case old[name] && ev.Type == "DELETED":
			deleted[name] = true
		case old[name] && p.Metadata.DeletionTimestamp != nil:
			terminating[name] = true
		case !old[name] && ev.Type != "DELETED" && p.runningReady():
			newReady[name] = true
		}
		return len(newReady) >= 2 && len(deleted) == 2
	})
	if len(terminating) == 0 {
		t.Errorf("no old pod was seen with a deletionTimestamp before its deletion (deleted: %v)", deleted)
	}
	pretty.waitFor(livingWait, "DELETED of both old pods", func(string) bool {
		n := 0
		for name := range old {
			for _, l := range pretty.Seen() {
				if strings.Contains(l, "DELETED") && strings.Contains(l, name) {
					n++
					break
				}
			}
		}
		return n == len(old)
	})
	// Each old pod is TERMINATING in the pretty stream before it is DELETED.
	for name := range old {
		var term, del int
		for i, l := range pretty.Seen() {
			if strings.Contains(l, name) && strings.Contains(l, "TERMINATING") && term == 0 {
				term = i + 1
			}
			if strings.Contains(l, name) && strings.Contains(l, "DELETED") {
				del = i + 1
			}
		}
		if term == 0 || term > del {
			t.Errorf("old pod %s: TERMINATING at line %d, DELETED at line %d; want TERMINATING first\n%s", name, term, del, strings.Join(pretty.Seen(), "\n"))
		}
	}
}

// Deleting a namespace: the namespace controller deletes what is in it (DELETED of each
// object), then the namespace itself goes from Terminating to DELETED.
func TestLivingNamespaceDeletion(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	createLivingDeployment(t, ns, "web", "nginx:1.27", 1)
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "1"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	objects := startKubeevents(t, "watch", "pods,configmaps,deployments", "-n", ns, "-o", "json")
	nsWatch := startKubeevents(t, "watch", "namespaces", ns, "-o", "json")
	waitPodsReady(t, objects, 1, func(p podState) bool { return true })
	nsWatch.waitJSON(eventWait, "ADDED of the namespace", func(ev envelope) bool { return ev.Type == "ADDED" })

	if err := client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting namespace: %v", err)
	}
	want := map[string]bool{"configmaps/settings": false, "deployments/web": false, "pods": false}
	objects.waitJSON(livingWait, "DELETED of the pod, the deployment and the configmap", func(ev envelope) bool {
		if ev.Type != "DELETED" {
			return false
		}
		res := fmt.Sprint(ev.Resource["resource"])
		if res == "pods" {
			want["pods"] = true
		} else {
			want[res+"/"+ev.name()] = true
		}
		for _, seen := range want {
			if !seen {
				return false
			}
		}
		return true
	})
	nsWatch.waitJSON(livingWait, "MODIFIED of the namespace to Terminating", func(ev envelope) bool {
		return ev.Type == "MODIFIED" && strings.Contains(string(ev.Object), `"phase":"Terminating"`)
	})
	nsWatch.waitJSON(livingWait, "DELETED of the namespace", func(ev envelope) bool { return ev.Type == "DELETED" })
}

// A pod labelled to crash (hack/kwok/stages.yaml) restarts again and again: its restart
// count goes up, with CrashLoopBackOff in between, and pretty output shows both.
func TestLivingContainerRestarts(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	js := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json")
	pretty := startKubeevents(t, "watch", "pods", "-n", ns, "--color", "never")
	p := pod("flaky", map[string]string{"sim.kubeevents.dev/behavior": "crashloop"})
	p.Spec.SchedulerName = "" // the default scheduler
	p.Annotations = map[string]string{"sim.kubeevents.dev/crash-after-ms": "500", "sim.kubeevents.dev/restart-after-ms": "500"}
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod: %v", err)
	}
	var backoff bool
	js.waitJSON(livingWait, "the pod restarted twice", func(ev envelope) bool {
		st := ev.pod(t).Status
		if len(st.ContainerStatuses) == 0 {
			return false
		}
		cs := st.ContainerStatuses[0]
		if cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" {
			backoff = true
		}
		return cs.RestartCount >= 2 && backoff
	})
	pretty.waitFor(livingWait, "a pretty line with restarts 2", func(l string) bool {
		return strings.Contains(l, "flaky") && regexp.MustCompile(`\s2 \(\S+ ago\)\s`).MatchString(l)
	})
}
