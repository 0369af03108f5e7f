package e2e

// Several clusters in one stream: kubeevents watch --context one,two against
// two REAL local clusters at once, the test cluster and a second one that make test-e2e
// brings up beside it (hack/clusters.sh; KUBEEVENTS_SECOND_CLUSTER_DIR names its state
// directory, whose kubeconfig and recorded ports these tests use).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Events of both clusters come in one stream, each tagged with its context: "cluster" in
// JSON (and in jq's input), a cluster column in pretty output; seq is one sequence over
// both. One context alone prints what it always did: no "cluster", no column.
func TestClustersEventsTagged(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	createConfigMapIn(t, client, ns, "in-one-0")
	createConfigMapIn(t, second.client, ns, "in-two-0")

	s := startKubeevents(t, "watch", "configmaps", "-n", ns, "--kubeconfig", kc, "--context", "one,two", "-o", "json")
	waitAll(s, "in-one-0", "in-two-0")
	for i := 1; i <= 5; i++ {
		createConfigMapIn(t, client, ns, fmt.Sprintf("in-one-%d", i))
		createConfigMapIn(t, second.client, ns, fmt.Sprintf("in-two-%d", i))
	}
	waitAll(s, "in-one-5", "in-two-5")
	if _, code := s.interrupt(10 * time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, s.Stderr())
	}
	evs := parseClusterEvents(t, s.Seen())
	seen := map[string]string{}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d: want one sequence over both clusters, 1, 2, 3, ...", i, ev.Seq)
		}
		name := ev.name()
		want := map[bool]string{true: "one", false: "two"}[strings.HasPrefix(name, "in-one-")]
		if ev.Cluster == nil || *ev.Cluster != want {
			if name != "kube-root-ca.crt" || ev.Cluster == nil {
				t.Errorf("%s: cluster %s, want %q", name, clusterOf(ev), want)
			}
			continue
		}
		seen[name] = *ev.Cluster
	}
	if len(seen) != 12 {
		t.Errorf("saw %d of the 12 configmaps with their cluster: %v", len(seen), seen)
	}

	// jq sees the same envelope.
	r := runKubeevents(t, 30*time.Second, "watch", "configmaps", "-n", ns, "--kubeconfig", kc, "--context", "one,two",
		"--jq", `select(.object.metadata.name | startswith("in-")) | "\(.cluster) \(.object.metadata.name)"`, "-r", "--timeout", "3s")
	for i := 0; i <= 5; i++ {
		for _, want := range []string{fmt.Sprintf("one in-one-%d", i), fmt.Sprintf("two in-two-%d", i)} {
			if !strings.Contains(r.stdout, want+"\n") {
				t.Errorf("--jq output lacks %q:\n%s", want, r.stdout)
			}
		}
	}

	// Pretty: a cluster column after the time, for every line.
	r = runKubeevents(t, 30*time.Second, "watch", "configmaps", "-n", ns, "--kubeconfig", kc, "--context", "t*,o*", "--timeout", "3s", "-v=1")
	if r.code != 0 {
		t.Fatalf("pretty: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[3], "in-") {
			continue
		}
		lines++
		if want := strings.SplitN(f[3], "-", 3)[1]; f[1] != want {
			t.Errorf("pretty line %q: cluster column %q, want %q", line, f[1], want)
		}
	}
	if lines != 12 {
		t.Errorf("pretty: %d lines of the 12 configmaps:\n%s", lines, r.stdout)
	}
	if !strings.Contains(r.stderr, "in clusters two, one") || !regexp.MustCompile(`stopped after \d+ events \(two: 6, one: \d+\)`).MatchString(r.stderr) {
		t.Errorf("the start and summary lines do not name the clusters (two first, as given) with their counts:\n%s", r.stderr)
	}

	// One context: today's output, no cluster anywhere.
	r = runKubeevents(t, 30*time.Second, "watch", "configmaps", "-n", ns, "--kubeconfig", kc, "--context", "two", "-o", "json", "--timeout", "3s")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 6 || strings.Contains(r.stdout, `"cluster"`) {
		t.Errorf("--context two: exit %d, want the 6 configmaps of two without \"cluster\":\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// The second cluster's kube-apiserver is killed and started again while the first
// streams: the first's events keep coming as they happen (no gap), the outage is said
// naming the second cluster, and the second's events come again once it is back.
func TestClustersOneDownOtherStreams(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	createConfigMapIn(t, second.client, ns, "two-before")

	s := startKubeevents(t, "watch", "configmaps", "-n", ns, "--kubeconfig", kc, "--context", "one,two", "-o", "json")
	s.waitJSON(eventWait, "ADDED two-before", func(ev envelope) bool { return ev.name() == "two-before" })

	restarted := make(chan error, 1)
	go func() {
		cmd := exec.Command(filepath.Join(repoRoot, "hack", "cluster.sh"), "restart-apiserver", "8")
		// Its ports and mode are recorded there; the first cluster's must not be given.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "KUBEEVENTS_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "KUBEEVENTS_CLUSTER_DIR="+second.dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%v\n%s", err, out)
		}
		restarted <- err
	}()
	s.waitStderr(20*time.Second, regexp.MustCompile(`kubeevents: cluster two: watch of configmaps lost\b`))

	// While two is down, one's changes come as they happen.
	var lags []time.Duration
	var mu sync.Mutex
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("one-during-%d", i)
		created := time.Now()
		createConfigMapIn(t, client, ns, name)
		s.waitJSON(eventWait, "ADDED "+name, func(ev envelope) bool { return ev.name() == name })
		mu.Lock()
		lags = append(lags, time.Since(created))
		mu.Unlock()
		time.Sleep(300 * time.Millisecond)
	}
	var worst time.Duration
	for _, l := range lags {
		worst = max(worst, l)
	}
	t.Logf("while cluster two was down, cluster one's 10 configmaps were printed at most %s after their creation began", worst.Round(time.Millisecond))
	if worst > 3*time.Second {
		t.Errorf("cluster one's events were held up while two was down: the slowest came %s after its creation", worst)
	}
	if err := <-restarted; err != nil {
		t.Fatalf("restarting the second cluster's kube-apiserver: %v", err)
	}
	createConfigMapIn(t, second.client, ns, "two-after")
	s.waitJSON(30*time.Second, "ADDED two-after", func(ev envelope) bool { return ev.name() == "two-after" })
	s.waitStderr(15*time.Second, regexp.MustCompile(`kubeevents: cluster two: (watch of configmaps resumed|re-synced)`))
	s.interrupt(10 * time.Second)
	evs := parseClusterEvents(t, s.Seen())
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d: a gap", i, ev.Seq)
		}
		// The living first cluster has its kube-root-ca.crt; the bare second none.
		fromOne := strings.HasPrefix(ev.name(), "one-") || ev.name() == "kube-root-ca.crt"
		if want := map[bool]string{true: "one", false: "two"}[fromOne]; ev.Cluster == nil || *ev.Cluster != want {
			t.Errorf("%s: cluster %s, want %q", ev.name(), clusterOf(ev), want)
		}
	}
	if strings.Contains(s.Stderr(), "cluster one:") {
		t.Errorf("cluster one had no outage, yet stderr says something of it:\n%s", s.Stderr())
	}
	t.Logf("stderr:\n%s", s.Stderr())
}

// A context whose credentials the server refuses, among good ones: one line naming it,
// and the others stream; alone (or with no good context) it is exit 1.
func TestClustersBadTokenAmongGood(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	createConfigMapIn(t, client, ns, "one-0")
	createConfigMapIn(t, second.client, ns, "two-0")

	r := runKubeevents(t, 60*time.Second, "watch", "configmaps", "-n", ns, "--kubeconfig", kc, "--context", "one,bad,two", "-o", "json", "--timeout", "4s")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	checkOneLine(t, r.stderr, regexp.MustCompile(`^kubeevents: cluster bad: unauthorized: .*; watching the other clusters without it$`))
	// And one that cannot be reached: a line each.
	r2 := runKubeevents(t, 60*time.Second, "watch", "configmaps", "-n", ns, "--kubeconfig", kc, "--context", "one,bad,gone,two", "-o", "json", "--timeout", "4s")
	lines := strings.Split(strings.TrimSuffix(r2.stderr, "\n"), "\n")
	if r2.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "kubeevents: cluster gone: cannot reach the API server") ||
		!strings.HasPrefix(lines[1], "kubeevents: cluster bad: unauthorized") || strings.Count(r2.stdout, "\n") != strings.Count(r.stdout, "\n") {
		t.Errorf("one,bad,gone,two: exit %d, stderr:\n%s\nstdout:\n%s", r2.code, r2.stderr, r2.stdout)
	}
	for _, want := range []string{`"cluster":"one"`, `"cluster":"two"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no event with %s:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, `"cluster":"bad"`) {
		t.Errorf("events from the refused context:\n%s", r.stdout)
	}

	r = runKubeevents(t, 60*time.Second, "watch", "configmaps", "-n", ns, "--kubeconfig", kc, "--context", "bad", "--timeout", "4s")
	if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "unauthorized") {
		t.Errorf("--context bad: exit %d, stdout %q, stderr %q; want one line, exit 1", r.code, r.stdout, r.stderr)
	}
	// A context that cannot be reached, with the refused one: nothing to watch, exit 1.
	r = runKubeevents(t, 60*time.Second, "watch", "configmaps", "-n", ns, "--kubeconfig", kc, "--context", "bad,gone", "--timeout", "4s")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "no cluster can be watched") || !strings.Contains(r.stderr, "cluster gone: cannot reach") {
		t.Errorf("--context bad,gone: exit %d, stdout %q, stderr %q; want exit 1", r.code, r.stdout, r.stderr)
	}
}

// A custom resource defined in one cluster only: said once for the other, which goes on
// with the types it has; a type neither has is bad usage.
func TestClustersCRDInOneOnly(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	group := "mc" + randomHex(4) + ".e2e.kubeevents.dev"
	crdName := "widgets." + group
	applyJSON(t, "", fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":%q},
 "spec":{"group":%q,"scope":"Namespaced",
  "names":{"plural":"widgets","singular":"widget","kind":"Widget"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, crdName, group))
	t.Cleanup(func() { _ = kubectlRun("delete", "crd", crdName, "--ignore-not-found", "--wait=false") })
	waitForResource(t, crdName)
	applyJSON(t, ns, fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":"w1"}}`, group+"/v1"))
	createConfigMapIn(t, second.client, ns, "two-0")

	r := runKubeevents(t, 60*time.Second, "watch", crdName+",configmaps", "-n", ns, "--kubeconfig", kc, "--context", "one,two", "-o", "json", "--timeout", "4s")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	checkOneLine(t, r.stderr, regexp.MustCompile(`^kubeevents: cluster two: unknown resource type "`+regexp.QuoteMeta(crdName)+`".*; watched in the other clusters only$`))
	var widget, cmTwo bool
	for _, ev := range parseClusterEvents(t, strings.Split(strings.TrimSpace(r.stdout), "\n")) {
		switch {
		case ev.name() == "w1":
			widget = *ev.Cluster == "one"
		case ev.name() == "two-0":
			cmTwo = *ev.Cluster == "two"
		}
	}
	if !widget || !cmTwo {
		t.Errorf("want the Widget from one and the configmap from two:\n%s", r.stdout)
	}

	// Only the custom resource: two has nothing to watch, said once; one streams.
	r = runKubeevents(t, 60*time.Second, "watch", crdName, "-n", ns, "--kubeconfig", kc, "--context", "two,one", "-o", "json", "--timeout", "3s")
	if r.code != 0 || !strings.Contains(r.stdout, `"name":"w1"`) {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	checkOneLine(t, r.stderr, regexp.MustCompile(`^kubeevents: cluster two: serves none of the types asked for .*; watching the other clusters without it$`))

	r = runKubeevents(t, 60*time.Second, "watch", "gadgets."+group, "-n", ns, "--kubeconfig", kc, "--context", "one,two", "--timeout", "3s")
	if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "unknown resource type") {
		t.Errorf("a type no cluster has: exit %d, stderr %q; want one line, exit 2", r.code, r.stderr)
	}
}

// Contexts that do not exist, and what several clusters do not do (--resume they do:
// clusters_resume_test.go): one line, exit 2,
// before anything connects.
func TestClustersBadInput(t *testing.T) {
	_, kc := twoClusters(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--context", "one,tow"}, `no context "tow" in the kubeconfig (did you mean "two"?); the contexts are: bad, gone, one, two`},
		{[]string{"--context", "prod-*"}, `"prod-*" matches none of the kubeconfig's contexts (bad, gone, one, two)`},
		{[]string{"--all-contexts", "--context", "one"}, "--all-contexts and --context"},
		{[]string{"--context", "one,two", "--until-deleted", "x"}, "--until-deleted waits for objects of one cluster"},
	} {
		args := append([]string{"watch", "configmaps", "--kubeconfig", kc, "--timeout", "3s"}, tc.args...)
		r := runKubeevents(t, 30*time.Second, args...)
		if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line with %q, exit 2", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}
