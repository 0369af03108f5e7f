package e2e

// The store sink: a running watch records into a history store, which get --at and
// history --store read while it runs.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStoreSinkTimeTravel: a watch with a store sink, during a Deployment's rollout and
// a ConfigMap's deletion; kubectl get deploy,pods is captured at a time T. While the
// watch still runs, kubeevents get --at T over the store prints what kubectl printed,
// and history cm/settings --at T the deleted ConfigMap as kubectl get -o yaml did. (A
// file sink beside the store is the test's witness of when kubeevents had each
// version; what is checked is read from the store alone.) replay --store prints what a
// replay of the file sink's recording prints.
func TestStoreSinkTimeTravel(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	dir := t.TempDir()
	witness := filepath.Join(dir, "rec.jsonl")
	db := filepath.Join(dir, "events.db")
	recorder := startKubeevents(t, "watch", "deployments,replicasets,pods,configmaps", "-n", ns, "--no-screen",
		"--sink", "file="+witness, "--sink", "store(max-age=14d,max-size=5GiB)="+db, "-v=1")
	recorder.waitStderr(20*time.Second, literal("watching"))

	at, table, wide, cmYAML := rolloutStory(t, recorder, ns, witness)

	// The store holds the deletion within its commit interval, read while it is written.
	deleted := regexp.MustCompile(`(?m)^\S+\s+DELETED\s+settings\s`)
	var versions result
	waitUntil(t, recorder, 30*time.Second, "the ConfigMap's deletion in the store", func() bool {
		versions = runKubeevents(t, 30*time.Second, "history", "cm/settings", "-n", ns, "--store", db)
		return versions.code == 0 && deleted.MatchString(versions.stdout)
	})
	if !regexp.MustCompile(`(?m)^\S+\s+ADDED\s+settings\s`).MatchString(versions.stdout) {
		t.Errorf("history cm/settings --store: no ADDED version:\n%s", versions.stdout)
	}
	atArg := at.Format(time.RFC3339Nano)
	for _, c := range []struct {
		args []string
		want string
	}{{nil, table}, {[]string{"-o", "wide"}, wide}} {
		got := runKubeevents(t, 30*time.Second, append([]string{"get", "deploy,pods", "-n", ns, "--at", atArg, "--store", db}, c.args...)...)
		if got.code != 0 {
			t.Fatalf("get --at %v: exit %d, stderr:\n%s", c.args, got.code, got.stderr)
		}
		if diff := compareTables(got.stdout, c.want); diff != "" {
			t.Errorf("get deploy,pods --at %s %v: %s\nkubeevents printed:\n%s\nkubectl printed:\n%s", atArg, c.args, diff, got.stdout, c.want)
		}
	}
	// The same moment, said as how long ago.
	ago := time.Since(at).Round(time.Second)
	if got := runKubeevents(t, 30*time.Second, "get", "deploy", "web", "-n", ns, "--at", ago.String()+" ago", "--store", db); got.code != 0 ||
		!strings.Contains(got.stdout, "web") {
		t.Errorf("get deploy web --at '%s ago': exit %d\n%s%s", ago, got.code, got.stdout, got.stderr)
	}
	history := runKubeevents(t, 30*time.Second, "history", "cm/settings", "-n", ns, "--store", db, "--at", atArg)
	if history.code != 0 || history.stdout != cmYAML {
		t.Errorf("history cm/settings --at %s: exit %d, stderr %s\ngot:\n%s\nkubectl printed:\n%s", atArg, history.code, history.stderr, history.stdout, cmYAML)
	}

	// replay --store is a recording's replay: the same lines as the file sink's replay.
	fromStore := runKubeevents(t, 30*time.Second, "replay", "--store", db, "cm", "settings", "-n", ns)
	fromFile := runKubeevents(t, 30*time.Second, "replay", witness, "cm", "settings", "-n", ns)
	if fromStore.code != 0 || fromFile.code != 0 || fromStore.stdout != fromFile.stdout || !strings.Contains(fromStore.stdout, "DELETED") {
		t.Errorf("replay --store cm settings: exit %d, stderr %s\n%s\nreplay of the file sink's recording: exit %d\n%s",
			fromStore.code, fromStore.stderr, fromStore.stdout, fromFile.code, fromFile.stdout)
	}

	_, code := recorder.interrupt(20 * time.Second)
	if code != 0 {
		t.Errorf("watch with a store sink: exit %d; stderr:\n%s", code, recorder.Stderr())
	}
	// Every event the file sink wrote is in the store too: the sink lost nothing at the
	// stop.
	raw, err := os.ReadFile(witness)
	if err != nil {
		t.Fatal(err)
	}
	recorded := 0
	for _, line := range strings.Split(string(raw), "\n") {
		var ev envelope
		if json.Unmarshal([]byte(line), &ev) == nil && strings.Contains("ADDED MODIFIED DELETED SYNC", ev.Type) && ev.Type != "" {
			recorded++
		}
	}
	info := runKubeevents(t, 30*time.Second, "store", "info", db)
	m := regexp.MustCompile(`(?m)^Versions:\s+([\d,]+)`).FindStringSubmatch(info.stdout)
	if info.code != 0 || m == nil || strings.ReplaceAll(m[1], ",", "") != strconv.Itoa(recorded) {
		t.Errorf("store info after the stop: exit %d, want %d versions (the file sink's events):\n%s%s", info.code, recorded, info.stdout, info.stderr)
	}
}

// TestStoreSinkRefuses: a file that is not a store is refused before the watch starts
// (exit 2), and a second watch writing a store that one already writes fails in one
// line (exit 4), while the first goes on.
func TestStoreSinkRefuses(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(foreign, []byte("notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := runKubeevents(t, 30*time.Second, "watch", "cm", "-n", ns, "--sink", "store="+foreign)
	if got.code != 2 || !strings.Contains(got.stderr, "not a kubeevents store") || strings.Count(strings.TrimSpace(got.stderr), "\n") > 0 {
		t.Errorf("a foreign file: exit %d, stderr %q; want exit 2, one line", got.code, got.stderr)
	}
	if data, _ := os.ReadFile(foreign); string(data) != "notes\n" {
		t.Errorf("the foreign file was changed: %q", data)
	}

	db := filepath.Join(dir, "events.db")
	first := startKubeevents(t, "watch", "cm", "-n", ns, "--sink", "store="+db, "-v=1")
	first.waitStderr(20*time.Second, literal("watching"))
	second := runKubeevents(t, 30*time.Second, "watch", "cm", "-n", ns, "--sink", "store="+db)
	if second.code != 4 || !strings.Contains(second.stderr, "another kubeevents is writing this store") || strings.Count(strings.TrimSpace(second.stderr), "\n") > 0 {
		t.Errorf("a second writer: exit %d, stderr %q; want exit 4, one line", second.code, second.stderr)
	}
	if !first.Alive() {
		t.Fatalf("the first writer ended: %s", first.Stderr())
	}
	if _, code := first.interrupt(20 * time.Second); code != 0 {
		t.Errorf("the first writer: exit %d; stderr:\n%s", code, first.Stderr())
	}
}
