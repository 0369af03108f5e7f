package e2e

// Tests that the local cluster is alive (hack/cluster.sh's living mode: controllers, a
// scheduler and kwok's simulated nodes), seen through kubeevents itself: pods scheduled,
// Running and Ready; a rolling update replacing pods; a namespace deleted with everything
// in it; a container that keeps restarting.

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

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
