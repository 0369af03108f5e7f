package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// processesWith lists the pids of the processes whose command line holds marker.
func processesWith(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(cmdline), marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitProcesses waits until some process holds marker in its command line (gone false),
// or none does (gone true).
func waitProcesses(t *testing.T, p *proc, marker string, gone bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for (len(processesWith(t, marker)) == 0) != gone {
		if time.Now().After(deadline) {
			if gone {
				t.Fatalf("processes %v the hook started are still running; stderr:\n%s", processesWith(t, marker), p.Stderr())
			}
			t.Fatalf("the hook's sleep never started; stderr:\n%s", p.Stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sleeperHook writes a hook that runs a sleep of its own, marked by its length (100.NNNNNN
// seconds) so that the test finds it, and returns the hook and the marker.
func sleeperHook(t *testing.T) (string, string) {
	t.Helper()
	marker := fmt.Sprintf("100.%06d", time.Now().UnixNano()%1000000)
	hook := filepath.Join(t.TempDir(), "s.sh")
	// The echo after the sleep keeps the shell from running it in its own place: the
	// sleep is the hook's child.
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat >/dev/null\nsleep "+marker+"\necho done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range processesWith(t, marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return hook, marker
}

// An exec hook's own children go with it: a run killed at its timeout takes its sleep
// along, on each attempt, and so does a run still going when --grace runs out after a
// SIGTERM.
func TestExecSinkKillsWhatItsHookStarted(t *testing.T) {
	ns := newNamespace(t)
	hook, marker := sleeperHook(t)
	p := startProc(t, io.Discard, nil, watchArgs(ns, "--sink", "exec(name=hook,timeout=1s,retries=1)="+hook)...)
	waitWatching(t, p)
	createLabelled(t, ns, "k-0")
	p.waitStderr(30*time.Second, regexp.MustCompile(`exec sink "hook": event failed after 1 retry: timed out after 1s \(1 failed so far\)`))
	waitProcesses(t, p, marker, true, 5*time.Second)
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}

	p = startProc(t, io.Discard, nil, watchArgs(ns, "--grace", "1s", "--sink", "exec(name=hook,timeout=1m)="+hook)...)
	waitWatching(t, p)
	createLabelled(t, ns, "k-1")
	waitProcesses(t, p, marker, false, 30*time.Second)
	p.signal(syscall.SIGTERM)
	if _, code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	waitProcesses(t, p, marker, true, 5*time.Second)
	if s := summaryOf(t, p.Stderr(), "hook"); s["dropped"] != 1 || s["delivered"] != 0 || s["failed"] != 0 {
		t.Errorf("summary %v, want 1 dropped", s)
	}
}

// What an exec hook prints is passed on escaped: an annotation it decodes and echoes
// cannot retitle or clear the terminal.
func TestExecSinkEscapesWhatItsHookPrints(t *testing.T) {
	ns := newNamespace(t)
	hook := filepath.Join(t.TempDir(), "note.sh")
	// It prints the annotation as jq -r would, control characters and all.
	script := `#!/bin/bash
note=$(sed -n 's/.*"note":"\([^"]*\)".*/\1/p')
printf 'note: %b\n' "$note"
`
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, io.Discard, nil, watchArgs(ns, "--sink", "exec(name=hook)="+hook)...)
	waitWatching(t, p)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pwn", Labels: map[string]string{"sinks-act": "yes"},
		Annotations: map[string]string{"note": "\x1b]0;pwned\x07\x1b[2J"}}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.waitStderr(30*time.Second, regexp.MustCompile(regexp.QuoteMeta(`kubeevents: [hook] note: \x1b]0;pwned\a\x1b[2J`)))
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	if strings.ContainsAny(p.Stderr(), "\x1b\x07") {
		t.Errorf("a control character reached stderr: %q", p.Stderr())
	}
}
