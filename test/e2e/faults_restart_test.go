package e2e

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFaultAPIServerRestart kills kube-apiserver mid-stream (SIGKILL, back after 10 s):
// kubeevents keeps running, says the watch was lost and how it came back, prints the
// pods deleted while the server was down as DELETED (finalStateUnknown), does not print
// unchanged pods again, and ends with every pod in the state kubectl shows.
func TestFaultAPIServerRestart(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	names := createPods(t, fc.client, ns, "p", 12)
	p, out := fc.watchToFile(t, "pods", ns, 12)
	if _, err := patchPods(context.Background(), fc.client, ns, names[0:3], 1, 3); err != nil {
		t.Fatal(err)
	}
	waitLines(t, p, eventWait, 15, out)

	restarted := fc.restartAPIServer(t, 10*time.Second)
	p.waitStderr(8*time.Second, regexp.MustCompile(`watch of pods lost \([^)]+\); retrying`))
	// Deleted while the server is down: no watch can see these.
	for _, name := range names[3:6] {
		fc.etcdDelete(t, "/registry/pods/"+ns+"/"+name)
	}
	select { // kubeevents rides the outage out
	case err := <-restarted:
		if err != nil {
			t.Fatal(err)
		}
	case <-p.Exited():
		t.Fatalf("kubeevents exited (code %d) while the server was down; stderr:\n%s", p.ExitCode(), p.Stderr())
	}
	// Changed after the server is back, perhaps before kubeevents reconnects.
	if _, err := patchPods(context.Background(), fc.client, ns, names[6:9], 2, 3); err != nil {
		t.Fatal(err)
	}
	for _, name := range names[9:11] {
		if err := fc.client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createPods(t, fc.client, ns, "after", 3)

	evs := fc.converge(t, p, out, ns, "pods", 90*time.Second)
	// The deletions behind the watch can only be seen by a re-list.
	p.waitStderr(10*time.Second, regexp.MustCompile(`re-synced [\d,]+ pods \(\d+ changed, \d+ created, [1-9]\d* deleted while disconnected\)`))
	stderr := p.Stderr()
	if strings.Contains(stderr, "resumed; no events were missed") && strings.Contains(stderr, "re-synced") {
		t.Errorf("stderr says the watch resumed with nothing missed, and then re-synced:\n%s", stderr)
	}
	deleted := map[string]envelope{}
	for _, ev := range evs {
		if ev.Type == "DELETED" {
			deleted[ev.name()] = ev
		}
	}
	for _, name := range names[3:6] {
		ev, ok := deleted[name]
		switch {
		case !ok:
			t.Errorf("%s, deleted while the server was down, was not reported DELETED", name)
		case !ev.FinalStateUnknown:
			t.Errorf("%s, deleted while the server was down, is DELETED without finalStateUnknown", name)
		}
	}
	for _, name := range names[9:11] {
		if _, ok := deleted[name]; !ok {
			t.Errorf("%s, deleted after the outage, was not reported DELETED", name)
		}
	}
	checkNoReprints(t, evs)
	if _, code := p.interrupt(15 * time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0; stderr:\n%s", code, p.Stderr())
	}
	t.Logf("stderr:\n%s", p.Stderr())
}

// TestFaultAPIServerRestartSecrets: the same outage on a resource kubeevents watches
// through its own JSON watch decoding (Secrets, redacted, go the dynamic way, as custom
// resources do): the outage is reported as a lost watch, not as a decoding failure, and
// what changed meanwhile arrives, redacted.
func TestFaultAPIServerRestartSecrets(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	create := func(name string) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"password": "hunter2"}}
		if _, err := fc.client.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	p, out := fc.watchToFile(t, "secrets", ns, 1)

	restarted := fc.restartAPIServer(t, 5*time.Second)
	// client-go's JSON watch sees the dead connection as a broken stream, so the reflector
	// re-lists rather than re-watches (as with the dynamic client's own watch).
	p.waitStderr(8*time.Second, regexp.MustCompile(`watch of secrets lost( \([^)]+\); retrying|; re-listing)`))
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	create("after")
	waitLines(t, p, 60*time.Second, 2, out)
	if stderr := p.Stderr(); strings.Contains(stderr, "decode") {
		t.Errorf("the outage was reported as a decoding failure:\n%s", stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"name":"after"`) || strings.Contains(string(raw), "hunter2") {
		t.Errorf("output after the outage:\n%s", raw)
	}
	if _, code := p.interrupt(15 * time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0; stderr:\n%s", code, p.Stderr())
	}
	t.Logf("stderr:\n%s", p.Stderr())
}
