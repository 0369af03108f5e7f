package e2e

import (
	"context"
	"regexp"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFaultCompaction: kubeevents' watch falls behind (the process is stopped) while
// pods change; then, with kube-apiserver down, two pods are deleted straight from etcd
// and etcd is compacted, so the watch's resourceVersion is too old (410 Gone) when the
// server is back: kubeevents re-lists, reports the deletions it could not have watched,
// prints no duplicates for unchanged pods, and every pod ends in the state kubectl shows.
func TestFaultCompaction(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	names := createPods(t, fc.client, ns, "p", 20)
	p, out := fc.watchToFile(t, "pods", ns, 20)

	p.signal(syscall.SIGSTOP)
	if _, err := patchPods(context.Background(), fc.client, ns, names[0:10], 20, 4); err != nil {
		t.Fatal(err)
	}
	for _, name := range names[10:13] {
		if err := fc.client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createPods(t, fc.client, ns, "new", 5)
	restarted := fc.restartAPIServer(t, 3*time.Second)
	for _, name := range names[13:15] {
		fc.etcdDelete(t, "/registry/pods/"+ns+"/"+name)
	}
	fc.compact(t)
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	p.signal(syscall.SIGCONT)
	if _, err := patchPods(context.Background(), fc.client, ns, names[15:17], 1, 2); err != nil {
		t.Fatal(err)
	}

	evs := fc.converge(t, p, out, ns, "pods", 90*time.Second)
	p.waitStderr(10*time.Second, regexp.MustCompile(`re-synced [\d,]+ pods \(\d+ changed, \d+ created, [1-9]\d* deleted while disconnected\)`))
	for _, name := range names[13:15] {
		found := false
		for _, ev := range evs {
			found = found || (ev.Type == "DELETED" && ev.name() == name && ev.FinalStateUnknown)
		}
		if !found {
			t.Errorf("%s, deleted behind the watch, is not DELETED with finalStateUnknown", name)
		}
	}
	checkNoReprints(t, evs)
	if _, code := p.interrupt(15 * time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0", code)
	}
	t.Logf("stderr:\n%s", p.Stderr())
}
