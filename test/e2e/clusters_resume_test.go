package e2e

// --resume with several clusters: one checkpoint section per cluster in the
// same file, against the two REAL local clusters of clusters_test.go.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

// collectClusters reads JSON events for d: "CLUSTER TYPE name" each, sorted.
func (s *proc) collectClusters(d time.Duration) []string {
	s.t.Helper()
	from := len(s.Seen())
	s.collect(d)
	var out []string
	for _, ev := range parseClusterEvents(s.t, s.Seen()[from:]) {
		out = append(out, clusterOf(ev)+" "+ev.Type+" "+ev.name())
	}
	sort.Strings(out)
	return out
}

// sectionLines are the checkpoint's lines of the section of context name: its header to
// its end line.
func sectionLines(t *testing.T, path, name string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if strings.HasPrefix(line, `{"format":`) {
			in = strings.Contains(line, `"context":"`+name+`"`)
		}
		if in && line != "" {
			out = append(out, line)
		}
	}
	return out
}

var resumedLine = regexp.MustCompile(`cluster (\w+): resumed configmaps from \S+ \(written [^)]*\): (.*)`)

// A run of one cluster, then of both with the same --resume file (the first resumes
// from its version 1 checkpoint, the second starts afresh, said in one line), a clean
// stop, changes in both clusters while down, and a restart: exactly those changes, each
// once and tagged with its cluster. A section whose cluster UID is not the cluster's any
// more is refused (exit 2); a cluster unreachable at start keeps its section as it was.
func TestClustersResume(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	clusters := map[string]kubernetes.Interface{"one": client, "two": second.client}
	for _, c := range clusters {
		for _, name := range []string{"keep", "change", "remove"} {
			resumeCM(t, c, ns, name, "v1", true)
		}
	}
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	args := func(contexts string, more ...string) []string {
		return append([]string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json",
			"--kubeconfig", kc, "--context", contexts, "--resume", ckpt}, more...)
	}
	stop := func(s *proc, what string) {
		t.Helper()
		if _, code := s.interrupt(15 * time.Second); code != 0 {
			t.Fatalf("%s: exit %d after Ctrl-C; stderr:\n%s", what, code, s.Stderr())
		}
	}

	// One cluster: today's file, version 1.
	run := startKubeevents(t, args("one")...)
	if got := run.collectClusters(3 * time.Second); len(got) != 3 {
		t.Fatalf("--context one: %v, want 3 ADDED; stderr:\n%s", got, run.Stderr())
	}
	stop(run, "--context one")
	if raw, _ := os.ReadFile(ckpt); !strings.HasPrefix(string(raw), `{"format":"kubeevents-checkpoint","version":1,`) {
		t.Fatalf("a run of one cluster wrote:\n%s", raw)
	}

	// Both: one resumes from it, two is new to the file.
	run = startKubeevents(t, args("one,two")...)
	got := run.collectClusters(4 * time.Second)
	if want := []string{"two ADDED change", "two ADDED keep", "two ADDED remove"}; !slices.Equal(got, want) {
		t.Fatalf("--context one,two on a checkpoint of one: %v, want exactly %v; stderr:\n%s", got, want, run.Stderr())
	}
	run.waitStderr(5*time.Second, literal("cluster two: --resume "+ckpt+" has no checkpoint of this cluster yet; starting afresh for it"))
	run.waitStderr(5*time.Second, literal("cluster one: resumed configmaps from "+ckpt))
	stop(run, "--context one,two")
	info, err := os.Stat(ckpt)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("checkpoint after a clean stop: %v, %v; want mode 600", info, err)
	}
	for _, name := range []string{"one", "two"} {
		if lines := sectionLines(t, ckpt, name); len(lines) != 5 || !strings.Contains(lines[0], `"version":2`) {
			t.Fatalf("section %s: %d lines, want a version 2 header, 3 objects and the end:\n%s", name, len(lines), strings.Join(lines, ""))
		}
	}

	// While it is down: in each cluster a change, a deletion, a creation.
	for _, c := range clusters {
		resumeCM(t, c, ns, "change", "v2", false)
		resumeCM(t, c, ns, "remove", "-", false)
		resumeCM(t, c, ns, "new", "v1", true)
	}
	run = startKubeevents(t, args("one,two")...)
	got = run.collectClusters(4 * time.Second)
	want := []string{"one ADDED new", "one DELETED remove", "one MODIFIED change", "two ADDED new", "two DELETED remove", "two MODIFIED change"}
	t.Logf("resumed both clusters after a clean stop: %d events (%s)", len(got), strings.Join(got, ", "))
	if !slices.Equal(got, want) {
		t.Fatalf("resumed run: %v, want exactly %v; stderr:\n%s", got, want, run.Stderr())
	}
	run.waitStderr(5*time.Second, literal("cluster one: resumed configmaps from "+ckpt))
	run.waitStderr(5*time.Second, literal("cluster two: resumed configmaps from "+ckpt))
	for _, m := range resumedLine.FindAllStringSubmatch(run.Stderr(), -1) {
		t.Logf("resume counts of cluster %s: %s", m[1], m[2])
		if m[2] != "3 now, 1 changed, 1 created, 1 deleted since" {
			t.Errorf("cluster %s: %q, want 3 now, 1 changed, 1 created, 1 deleted since", m[1], m[2])
		}
	}
	stop(run, "resumed run")

	// A cluster unreachable at start (bad's token is refused) keeps its section as it was.
	good, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	twoLines := sectionLines(t, ckpt, "two")
	badSection := strings.ReplaceAll(strings.Join(twoLines, ""), `"context":"two"`, `"context":"bad"`)
	if err := os.WriteFile(ckpt, append(good, badSection...), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runKubeevents(t, 60*time.Second, args("one,two,bad", "--timeout", "3s")...)
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "cluster bad: ") {
		t.Fatalf("--context one,two,bad: exit %d, want 0, no events and a line about bad; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if after := sectionLines(t, ckpt, "bad"); strings.Join(after, "") != badSection {
		t.Errorf("the unreachable cluster's section changed:\n%s\nwant:\n%s", strings.Join(after, ""), badSection)
	}

	// Section two's cluster is another now (its kube-system UID differs): refused, the
	// file untouched.
	uid := regexp.MustCompile(`"cluster":"[^"]*"`)
	twoHeader := sectionLines(t, ckpt, "two")[0]
	mangled := strings.Replace(string(mustRead(t, ckpt)), twoHeader, uid.ReplaceAllString(twoHeader, `"cluster":"not-this-cluster"`), 1)
	if err := os.WriteFile(ckpt, []byte(mangled), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runKubeevents(t, 60*time.Second, args("one,two", "--timeout", "3s")...)
	if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("mismatched section: exit %d, want 2, no output and one line; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{ckpt, "cluster two", `"not-this-cluster" in the checkpoint`, "--resume-reset"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q: %s", want, r.stderr)
		}
	}
	if string(mustRead(t, ckpt)) != mangled {
		t.Error("the refused checkpoint was changed")
	}
	t.Logf("refused: %s", strings.TrimSpace(r.stderr))
}
