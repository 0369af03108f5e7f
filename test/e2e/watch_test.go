package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const eventWait = 20 * time.Second

// The first vertical slice: ADDED, MODIFIED and DELETED of a pod in JSON Lines, with the
// envelope kubectl's keys and apiVersion/kind filled in, managedFields dropped.
func TestWatchPodsJSON(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "existing", nil)
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json")

	added := s.waitJSON(eventWait, "ADDED existing", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == "existing" })
	m := added.meta()
	if m.APIVersion != "v1" || m.Kind != "Pod" {
		t.Errorf("object apiVersion/kind = %q/%q, want v1/Pod", m.APIVersion, m.Kind)
	}
	if m.Metadata.ManagedFields != nil {
		t.Errorf("managedFields were not dropped: %v", m.Metadata.ManagedFields)
	}
	if added.Resource["resource"] != "pods" || added.Resource["version"] != "v1" || added.Seq == 0 || added.Time == "" {
		t.Errorf("envelope = %+v; want resource pods/v1, a seq and a time", added)
	}
	if _, err := time.Parse(time.RFC3339Nano, added.Time); err != nil {
		t.Errorf("time %q is not RFC 3339: %v", added.Time, err)
	}

	labelPod(t, ns, "existing", "tier", "web")
	mod := s.waitJSON(eventWait, "MODIFIED existing", func(ev envelope) bool { return ev.Type == "MODIFIED" && ev.name() == "existing" })
	if mod.meta().Metadata.Labels["tier"] != "web" {
		t.Errorf("MODIFIED object labels = %v, want tier=web", mod.meta().Metadata.Labels)
	}
	if mod.Seq <= added.Seq {
		t.Errorf("seq did not increase: ADDED %d, MODIFIED %d", added.Seq, mod.Seq)
	}

	deletePod(t, ns, "existing")
	s.waitJSON(eventWait, "DELETED existing", func(ev envelope) bool { return ev.Type == "DELETED" && ev.name() == "existing" })

	_, code := s.interrupt(10 * time.Second)
	if code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0; stderr:\n%s", code, s.Stderr())
	}
}

func TestWatchPodsPretty(t *testing.T) {
	ns := newNamespace(t)
	s := startKubeevents(t, "watch", "po", "-n", ns, "--color", "never")
	createPod(t, ns, "web-1", nil)
	line := s.waitFor(eventWait, "ADDED line", func(l string) bool { return strings.Contains(l, "ADDED") })
	// -n says the namespace, so the name leaves it out, as kubectl get does; the node
	// is shown with -o wide, as in kubectl. The creating manager closes the line: the
	// test's own client, named after its binary as client-go names every client.
	want := regexp.MustCompile(`^\d\d:\d\d:\d\d  ADDED\s+web-1\s+0/1\s+Pending\s+0\s+\d+s  by e2e\.test$`)
	if !want.MatchString(line) {
		t.Errorf("pretty ADDED line = %q, want it to match %s", line, want)
	}
	if strings.Contains(line, "\x1b[") {
		t.Errorf("--color never printed escape codes: %q", line)
	}
	labelPod(t, ns, "web-1", "tier", "web")
	s.waitFor(eventWait, "MODIFIED line", func(l string) bool { return strings.Contains(l, "MODIFIED") && strings.Contains(l, "web-1") })
	deletePod(t, ns, "web-1")
	s.waitFor(eventWait, "DELETED line", func(l string) bool { return strings.Contains(l, "DELETED") && strings.Contains(l, "web-1") })
	_, code := s.interrupt(10 * time.Second)
	if code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0", code)
	}
}

func TestColorAlways(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "web-1", nil)
	s := startKubeevents(t, "watch", "pods", "-n", ns, "--color", "always")
	line := s.waitFor(eventWait, "ADDED line", func(l string) bool { return strings.Contains(l, "ADDED") })
	if !strings.Contains(line, "\x1b[32mADDED\x1b[0m") {
		t.Errorf("--color always: ADDED is not green: %q", line)
	}
}

// Custom resources go through the dynamic informer, by plural and by short name.
func TestWatchCustomResource(t *testing.T) {
	ns := newNamespace(t)
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"gizmos.e2e.kubeevents.dev"},
 "spec":{"group":"e2e.kubeevents.dev","scope":"Namespaced",
  "names":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo","shortNames":["gzm"]},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	applyJSON(t, "", crd)
	waitForResource(t, "gizmos.e2e.kubeevents.dev")

	for _, typ := range []string{"gizmos", "gzm", "gizmos.e2e.kubeevents.dev"} {
		t.Run(typ, func(t *testing.T) {
			s := startKubeevents(t, "watch", typ, "-n", ns, "-o", "json")
			name := "w-" + strings.ReplaceAll(strings.ReplaceAll(typ, ".", "-"), "_", "-")
			applyJSON(t, ns, fmt.Sprintf(`{"apiVersion":"e2e.kubeevents.dev/v1","kind":"Gizmo","metadata":{"name":%q},"spec":{"size":3}}`, name))
			ev := s.waitJSON(eventWait, "ADDED gizmo", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == name })
			if m := ev.meta(); m.Kind != "Gizmo" || m.APIVersion != "e2e.kubeevents.dev/v1" {
				t.Errorf("gizmo apiVersion/kind = %s/%s", m.APIVersion, m.Kind)
			}
			if ev.Resource["group"] != "e2e.kubeevents.dev" || ev.Resource["resource"] != "gizmos" {
				t.Errorf("resource = %v", ev.Resource)
			}
		})
	}
}

func TestSelectorsFilter(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "front", map[string]string{"tier": "front"})
	createPod(t, ns, "back", map[string]string{"tier": "back"})

	byLabel := runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "-l", "tier=front", "-o", "name", "--max-events", "1")
	byField := runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "--field-selector", "metadata.name=back", "-o", "name", "--max-events", "1")
	if byLabel.code != 0 || strings.TrimSpace(byLabel.stdout) != "ADDED pod/front" {
		t.Errorf("-l tier=front: exit %d, stdout %q, stderr %q; want ADDED pod/front", byLabel.code, byLabel.stdout, byLabel.stderr)
	}
	if byField.code != 0 || strings.TrimSpace(byField.stdout) != "ADDED pod/back" {
		t.Errorf("--field-selector metadata.name=back: exit %d, stdout %q, stderr %q", byField.code, byField.stdout, byField.stderr)
	}
	// Two NAME arguments are filtered client-side (field selectors cannot OR).
	named := startKubeevents(t, "watch", "pods", "-n", ns, "front", "back", "-o", "name")
	got := map[string]bool{}
	for len(got) < 2 {
		got[named.waitFor(eventWait, "two named pods", func(string) bool { return true })] = true
	}
	if !got["ADDED pod/front"] || !got["ADDED pod/back"] {
		t.Errorf("NAME arguments front back: got %v", got)
	}
}

func TestErrorsAreOneLine(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"unknown type", []string{"watch", "podz"}, 2, `kubeevents: unknown resource type "podz"; did you mean "pods"?`},
		{"forbidden", []string{"watch", "pods", "-n", ns, "--context", "nobody"}, 1, `kubeevents: forbidden: user "nobody" cannot list resource "pods"`},
		{"bad label selector", []string{"watch", "pods", "-l", "a in (b"}, 2, `kubeevents: -l/--selector "a in (b":`},
		{"bad output", []string{"watch", "pods", "-o", "xml"}, 2, `kubeevents: -o: unknown output format "xml"`},
		{"missing kubeconfig", []string{"watch", "pods", "--kubeconfig", "/nonexistent/kubeconfig"}, 1, `kubeevents: cannot load kubeconfig:`},
		{"no type", []string{"watch"}, 2, `kubeevents: no resource type given; usage: kubeevents watch TYPE`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runKubeevents(t, 30*time.Second, c.args...)
			if r.code != c.wantCode {
				t.Errorf("exit code = %d, want %d; stderr %q", r.code, c.wantCode, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], c.want) {
				t.Errorf("stderr = %q, want one line starting %q", r.stderr, c.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}

// `| head -1` closes stdout: kubeevents ends quietly with 0, even when no further event
// would make a write fail.
func TestClosedStdoutExitsQuietly(t *testing.T) {
	ns := newNamespace(t)
	for i := range 5 {
		createPod(t, ns, fmt.Sprintf("p-%d", i), nil)
	}
	start := time.Now()
	r := kubeevents(t).Via("bash", "-c", `set -o pipefail; "$@" | head -1`, "bash").
		Run(30*time.Second, "watch", "pods", "-n", ns, "--kubeconfig", kubeconfig, "-o", "json")
	// No event comes after the first five: kubeevents must notice by itself that nobody
	// reads its output any more, not wait for a write to fail.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the pipeline took %s to end after head -1 had its line", d)
	}
	if r.code != 0 {
		t.Fatalf("pipeline failed (exit %d); stderr %q", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout, "\n"); n != 1 {
		t.Errorf("head -1 printed %d lines", n)
	}
}

// For the same churn, kubeevents prints the same (type, name, resourceVersion) sequence
// as `kubectl get -w --output-watch-events -o json`.
func TestSameSequenceAsKubectl(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "pre-0", nil)
	createPod(t, ns, "pre-1", nil)

	kctx, kcancel := context.WithCancel(context.Background())
	defer kcancel()
	kc := exec.CommandContext(kctx, clusterBin+"/kubectl", "--kubeconfig", kubeconfig, "get", "pods", "-n", ns, "-w", "--output-watch-events", "-o", "json")
	kout, err := kc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Start(); err != nil {
		t.Fatal(err)
	}
	kubectlEvents := make(chan [3]string, 1000)
	go func() {
		dec := json.NewDecoder(kout)
		for {
			var ev envelope
			if err := dec.Decode(&ev); err != nil {
				if err != io.EOF {
					close(kubectlEvents)
				}
				return
			}
			m := ev.meta()
			kubectlEvents <- [3]string{ev.Type, m.Metadata.Name, m.Metadata.ResourceVersion}
		}
	}()
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json")

	// Both must have seen the initial list before the churn starts.
	var want, got [][3]string
	for len(want) < 2 {
		want = append(want, <-kubectlEvents)
	}
	for len(got) < 2 {
		ev := s.waitJSON(eventWait, "initial list", func(envelope) bool { return true })
		got = append(got, [3]string{ev.Type, ev.name(), ev.meta().Metadata.ResourceVersion})
	}
	for i := range 3 {
		name := fmt.Sprintf("churn-%d", i)
		createPod(t, ns, name, nil)
		labelPod(t, ns, name, "round", "1")
		labelPod(t, ns, "pre-0", "round", fmt.Sprint(i))
		deletePod(t, ns, name)
	}
	const total = 2 + 3*4
	timeout := time.After(eventWait)
	for len(want) < total {
		select {
		case ev, ok := <-kubectlEvents:
			if !ok {
				t.Fatal("kubectl output ended early")
			}
			want = append(want, ev)
		case <-timeout:
			t.Fatalf("kubectl printed %d of %d events", len(want), total)
		}
	}
	for len(got) < total {
		ev := s.waitJSON(eventWait, "churn events", func(envelope) bool { return true })
		got = append(got, [3]string{ev.Type, ev.name(), ev.meta().Metadata.ResourceVersion})
	}
	// The initial list may come in either order; after it, the order is the server's.
	if fmt.Sprint(sortedPair(want[:2])) != fmt.Sprint(sortedPair(got[:2])) {
		t.Errorf("initial list: kubectl %v, kubeevents %v", want[:2], got[:2])
	}
	for i := 2; i < total; i++ {
		if want[i] != got[i] {
			t.Errorf("event %d: kubectl %v, kubeevents %v", i, want[i], got[i])
		}
	}
}

func sortedPair(evs [][3]string) [][3]string {
	if len(evs) == 2 && evs[0][1] > evs[1][1] {
		return [][3]string{evs[1], evs[0]}
	}
	return evs
}

// TestClusterScopedNames: cluster-scoped types have no namespace: NAME arguments work
// with or without -A (as with kubectl get nodes NAME -A), -v=1 names no namespace for
// them, and RBAC names with ':' and ',' are valid names.
func TestClusterScopedNames(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	node := "kubeevents-e2e-" + randomHex(4)
	if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	role := "kubeevents-e2e:a,b=" + randomHex(4)
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{}) })

	for _, c := range []struct {
		args       []string
		stdout     string
		startsWith string
	}{
		{[]string{"nodes", node, "-A"}, "ADDED node/" + node + "\n", "kubeevents: watching nodes (cluster-scoped) — 1 informer"},
		{[]string{"nodes", node, "-n", ns}, "ADDED node/" + node + "\n", "kubeevents: watching nodes (cluster-scoped) — 1 informer"},
		{[]string{"clusterroles", role}, "ADDED clusterrole.rbac.authorization.k8s.io/" + role + "\n",
			"kubeevents: watching clusterroles.rbac.authorization.k8s.io (cluster-scoped) — 1 informer"},
		{[]string{"pods,nodes", "-n", ns, "-l", "kubeevents-none=x"}, "", "kubeevents: watching pods in " + ns + "; nodes (cluster-scoped) — 2 informers"},
	} {
		args := append([]string{"watch", "-o", "name", "-v=1"}, c.args...)
		if c.stdout != "" {
			args = append(args, "--max-events", "1")
		} else {
			args = append(args, "--timeout", "1s")
		}
		r := runKubeevents(t, 30*time.Second, args...)
		if r.code != 0 || r.stdout != c.stdout || !strings.HasPrefix(r.stderr, c.startsWith) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0, %q and stderr starting %q",
				strings.Join(args, " "), r.code, r.stdout, r.stderr, c.stdout, c.startsWith)
		}
		// One event is "1 event" in the summary (#21 item 16).
		if c.stdout != "" && !strings.Contains(r.stderr, "kubeevents: stopped after 1 event — ") {
			t.Errorf("%s: the summary does not say \"stopped after 1 event\": %q", strings.Join(args, " "), r.stderr)
		}
	}
}
