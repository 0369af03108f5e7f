package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// addedNamespaces runs kubeevents with -o json until its timeout and returns the
// namespaces of the pods named name it printed ADDED.
func addedNamespaces(t *testing.T, name string, args ...string) map[string]bool {
	t.Helper()
	r := runKubeevents(t, 60*time.Second, append([]string{"watch", "pods", "-o", "json", "--timeout", "3s"}, args...)...)
	if r.code != 0 {
		t.Fatalf("kubeevents %v: exit %d\n%s", args, r.code, r.stderr)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev envelope
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if m := ev.meta(); ev.Type == "ADDED" && m.Metadata.Name == name {
			seen[m.Metadata.Namespace] = true
		}
	}
	return seen
}

// TestSeveralNamespacesAndExclusions: -n a,b watches exactly those namespaces;
// --exclude-namespace leaves a namespace out of -A by name and by glob.
func TestSeveralNamespacesAndExclusions(t *testing.T) {
	a, b, c := newNamespace(t), newNamespace(t), newNamespace(t)
	for _, ns := range []string{a, b, c} {
		createPod(t, ns, "same-name", nil)
	}
	if got := addedNamespaces(t, "same-name", "-n", a+","+c); len(got) != 2 || !got[a] || !got[c] {
		t.Errorf("-n %s,%s: pods seen in %v", a, c, got)
	}
	glob := b[:len(b)-2] + "??" // b's name, its last two characters any
	got := addedNamespaces(t, "same-name", "-A", "--exclude-namespace", a, "--exclude-namespace", glob)
	if got[a] || got[b] || !got[c] {
		t.Errorf("-A --exclude-namespace %s --exclude-namespace %s: pods seen in %v, want only %s", a, glob, got, c)
	}
}

// TestSinkEventTypes: a sink's event-types keeps only those types, while the terminal
// gets every event.
func TestSinkEventTypes(t *testing.T) {
	ns := newNamespace(t)
	out := filepath.Join(t.TempDir(), "deleted.txt")
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "name", "--sink", "jq(event-types=DELETED,raw,output="+out+")=\"sink \" + .type")
	createPod(t, ns, "web-1", nil)
	s.waitFor(eventWait, "ADDED on the terminal", func(l string) bool { return l == "ADDED pod/web-1" })
	labelPod(t, ns, "web-1", "tier", "web")
	s.waitFor(eventWait, "MODIFIED on the terminal", func(l string) bool { return l == "MODIFIED pod/web-1" })
	deletePod(t, ns, "web-1")
	s.waitFor(eventWait, "DELETED on the terminal", func(l string) bool { return l == "DELETED pod/web-1" })
	if _, code := s.interrupt(10 * time.Second); code != 0 {
		t.Fatalf("exit %d: %s", code, s.Stderr())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "sink DELETED\n" {
		t.Errorf("the sink with event-types=DELETED wrote %q, want only the DELETED event", data)
	}
}
