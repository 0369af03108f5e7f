package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestFaultFileSinkErrors: a file sink at /dev/full fails at its first write: one clear
// error naming the path, the other sinks run to the end, exit status 4. A file sink in a
// directory that cannot be written fails at start-up, before any event: one line naming
// the path, exit status 4, and the other sinks' files are not left behind.
func TestFaultFileSinkErrors(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	createPods(t, fc.client, ns, "p", 3)
	dir := t.TempDir()
	var unwritable string
	if os.Geteuid() == 0 {
		// Permissions do not stop root: a path under a regular file fails for everyone.
		regular := filepath.Join(dir, "regular-file")
		if err := os.WriteFile(regular, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		unwritable = filepath.Join(regular, "events.jsonl")
	} else {
		ro := filepath.Join(dir, "read-only")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		unwritable = filepath.Join(ro, "events.jsonl")
	}
	good := filepath.Join(dir, "good.jsonl")
	var stdout bytes.Buffer
	p := startProc(t, &stdout, nil, "watch", "pods", "-n", ns, "-o", "name", "--max-events", "3", "--kubeconfig", fc.kubeconfig,
		"--sink", "file(name=full)=/dev/full", "--sink", "file(name=good)="+good)
	_, code := p.wait(60 * time.Second)
	stderr := p.Stderr()
	if code != 4 {
		t.Errorf("exit code %d, want 4; stderr:\n%s", code, stderr)
	}
	if n := strings.Count(stdout.String(), "ADDED pod/"); n != 3 {
		t.Errorf("stdout has %d ADDED lines, want 3:\n%s", n, stdout.String())
	}
	if evs := readEvents(t, good); len(evs) != 3 {
		t.Errorf("the good file sink has %d events, want 3", len(evs))
	}
	wantLines := []*regexp.Regexp{
		regexp.MustCompile(`^kubeevents: sink "full" stopped: writing file /dev/full: no space left on device$`),
		regexp.MustCompile(`^kubeevents: sink "full" failed \(see above\)$`),
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != len(wantLines) {
		t.Errorf("stderr has %d lines, want %d:\n%s", len(lines), len(wantLines), stderr)
	}
	for i, re := range wantLines {
		if i < len(lines) && !re.MatchString(lines[i]) {
			t.Errorf("stderr line %d = %q, want it to match %s", i+1, lines[i], re)
		}
	}
	if err := os.Remove(good); err != nil {
		t.Fatal(err)
	}

	stdout.Reset()
	p = startProc(t, &stdout, nil, "watch", "pods", "-n", ns, "-o", "name", "--kubeconfig", fc.kubeconfig,
		"--sink", "file(name=good)="+good, "--sink", "file(name=unwritable)="+unwritable)
	_, code = p.wait(30 * time.Second)
	stderr = p.Stderr()
	want := regexp.MustCompile(`^kubeevents: sink "unwritable": cannot open file sink ` + regexp.QuoteMeta(unwritable) + `: (not a directory|permission denied \(choose a writable directory\))\n$`)
	if code != 4 || !want.MatchString(stderr) || stdout.Len() != 0 {
		t.Errorf("unwritable sink: exit code %d, stdout %q, stderr %q; want 4, no events and one line matching %s", code, stdout.String(), stderr, want)
	}
	if _, err := os.Stat(good); !os.IsNotExist(err) {
		t.Errorf("the good sink's file was left behind (%v)", err)
	}
}
