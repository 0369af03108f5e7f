package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// readPods may get, list and watch pods.
var readPods = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}

// unscheduledPod stays Pending: no scheduler picks it up, so nothing changes it.
func unscheduledPod(name string) *corev1.Pod {
	p := pod(name, nil)
	p.Spec.SchedulerName = "kubeevents-none"
	return p
}

// TestFaultOutageCauseChanges: kubeevents watches pods with a ServiceAccount's token;
// the RoleBinding is deleted and kube-apiserver restarted, so the re-list is refused
// (403); then the ServiceAccount is deleted, so the token is (401). Each change of cause
// is said once, in words a user acts on, while the first "lost (connection refused)"
// line alone said nothing of it.
func TestFaultOutageCauseChanges(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	token := serviceAccountToken(t, fc.config, ns, "watcher", readPods)
	if _, err := fc.client.CoreV1().Pods(ns).Create(context.Background(), unscheduledPod("p1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, _ := fc.watchToFile(t, "pods", ns, 1, "--token", token)

	if err := fc.client.RbacV1().RoleBindings(ns).Delete(context.Background(), "watcher", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	restarted := fc.restartAPIServer(t, 3*time.Second)
	p.waitStderr(10*time.Second, regexp.MustCompile(`watch of pods lost`))
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	sa := `"system:serviceaccount:` + ns + `:watcher"`
	// Right after its restart, kube-apiserver's authorizer may not have read every
	// ClusterRole yet, and says which it missed ("rbac: RBAC: [clusterrole ... not
	// found]"): the server's words, passed on as they are.
	p.waitStderr(90*time.Second, regexp.MustCompile(`kubeevents: watch of pods still lost, now forbidden: user `+regexp.QuoteMeta(sa)+
		` cannot (list|watch) resource "pods" in API group "" in the namespace "`+ns+`"(: rbac: .*)? \(kubeevents needs list and watch rights; ask your cluster admin or use another --context\); retrying…\n`))

	if err := fc.client.CoreV1().ServiceAccounts(ns).Delete(context.Background(), "watcher", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.waitStderr(90*time.Second, regexp.MustCompile(`kubeevents: watch of pods still lost, now unauthorized: the API server rejected the credentials \(expired or wrong token or certificate\?\); check --kubeconfig, --context and --token; retrying…\n`))
	if !p.Alive() {
		t.Fatalf("kubeevents exited during the outage; stderr:\n%s", p.Stderr())
	}
	stderr := p.Stderr()
	if n := strings.Count(stderr, "now forbidden"); n != 1 {
		t.Errorf("the change to forbidden was said %d times, want once:\n%s", n, stderr)
	}
	if _, code := p.interrupt(15 * time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0; stderr:\n%s", code, p.Stderr())
	}
	t.Logf("stderr:\n%s", p.Stderr())
}

// TestRightsCheckedBeforeOutput: missing rights for any informer (--with-events, several
// types, or one type that may be listed but not watched) are one line and exit 1 before
// anything is printed, not after the other informers (or the list) printed theirs.
func TestRightsCheckedBeforeOutput(t *testing.T) {
	ns := newNamespace(t)
	listEvents := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list"}}
	podsOnly := serviceAccountToken(t, restConfig, ns, "pods-only", readPods)
	noWatch := serviceAccountToken(t, restConfig, ns, "events-no-watch", readPods, listEvents)
	for _, name := range []string{"p1", "p2"} {
		if _, err := client.CoreV1().Pods(ns).Create(context.Background(), unscheduledPod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	recordEvent(t, ns, "p1.started", "p1", "Normal", "Started", "listed, so printed unless the rights are checked first")
	user := func(sa string) string { return regexp.QuoteMeta(`user "system:serviceaccount:` + ns + `:` + sa + `"`) }
	hint := regexp.QuoteMeta(` (kubeevents needs list and watch rights; ask your cluster admin or use another --context)`) + `$`
	cases := []struct {
		name  string
		args  []string
		token string
		want  string
	}{
		{"--with-events, no rights on events", []string{"watch", "pods", "--with-events"}, podsOnly,
			`^kubeevents: --with-events: forbidden: ` + user("pods-only") + ` cannot list resource "events" in API group "" in the namespace "` + ns + `"` + hint},
		{"--with-events, events listed but not watched", []string{"watch", "pods", "--with-events"}, noWatch,
			`^kubeevents: --with-events: forbidden: ` + user("events-no-watch") + ` cannot watch resource "events" in API group "" in the namespace "` + ns + `"` + hint},
		{"several types", []string{"watch", "pods,configmaps"}, podsOnly,
			`^kubeevents: forbidden: ` + user("pods-only") + ` cannot list resource "configmaps" in API group "" in the namespace "` + ns + `"` + hint},
		{"one type, listed but not watched", []string{"watch", "events"}, noWatch,
			`^kubeevents: forbidden: ` + user("events-no-watch") + ` cannot watch resource "events" in API group "" in the namespace "` + ns + `"` + hint},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args, "-n", ns, "-o", "json", "--token", c.token)
			r := runKubeevents(t, 30*time.Second, args...)
			if r.code != 1 {
				t.Errorf("exit code %d, want 1", r.code)
			}
			if r.stdout != "" {
				t.Errorf("printed before failing:\n%s", r.stdout)
			}
			checkOneLine(t, r.stderr, regexp.MustCompile(c.want))
		})
	}
	// With the rights, the same command runs.
	watchEvents := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}}
	both := serviceAccountToken(t, restConfig, ns, "pods-and-events", readPods, watchEvents)
	s := startKubeevents(t, "watch", "pods", "--with-events", "-n", ns, "-o", "json", "--token", both)
	s.waitJSON(eventWait, "ADDED p1", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == "p1" })
	if _, code := s.interrupt(10 * time.Second); code != 0 {
		t.Errorf("with the rights: exit code %d after Ctrl-C, want 0; stderr:\n%s", code, s.Stderr())
	}
}
