package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeevents/kubeevents/internal/event"
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
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGone waits until no process holds marker in its command line; it fails the test
// with those that still do after a few seconds.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := processesWith(t, marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of the hook are still running", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sleeperScript writes a hook that runs a sleep of its own, with a marker of this test
// in its command line (a sleep of 100.NNNNNN seconds), and returns it and the marker.
func sleeperScript(t *testing.T) (script, marker string) {
	t.Helper()
	marker = fmt.Sprintf("100.%06d", time.Now().UnixNano()%1000000)
	script = filepath.Join(t.TempDir(), "s.sh")
	// The sleep is a child of the shell (the echo after it keeps the shell from
	// running it in its own place).
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep "+marker+"\necho done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range processesWith(t, marker) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
	return script, marker
}

func newTestExec(t *testing.T, argv []string, timeout time.Duration, retries int, warn func(string, ...any)) (*Exec, *settled) {
	t.Helper()
	if warn == nil {
		warn = func(string, ...any) {}
	}
	s, err := NewExec(ExecOptions{Name: "hook", Argv: argv, Batching: Batching{Size: 1}, Timeout: timeout,
		Retries: retries, Backoff: wait.Backoff{Duration: time.Millisecond},
		Encoder: &Encoder{Printer: jsonPrinter(t)}, Warn: warn})
	if err != nil {
		t.Fatal(err)
	}
	rec := &settled{}
	s.Hold(rec.settle)
	return s, rec
}

// A run that times out is killed with what it started: each attempt's sleep goes with
// it, rather than living on under init.
func TestExecSinkTimeoutKillsTheWholeGroup(t *testing.T) {
	script, marker := sleeperScript(t)
	var mu sync.Mutex
	var warned []string
	s, rec := newTestExec(t, []string{script}, 500*time.Millisecond, 1, func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, fmt.Sprintf(f, a...))
	})
	if err := s.Write(podEvent(event.Added, "a", "1", nil)); err != nil {
		t.Fatal(err)
	}
	errs := rec.wait(t, 1)
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "timed out after 500ms") {
		t.Errorf("settled as %v, want a time-out", errs[0])
	}
	waitGone(t, marker)
	_ = s.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 1 || !strings.HasPrefix(warned[0], `exec sink "hook": event failed after 1 retry: timed out after 500ms (1 failed so far)`) {
		t.Errorf("said %q", warned)
	}
}

// Abort, when the grace time at exit has run out, kills the runs in flight with their
// groups before it returns.
func TestExecSinkAbortKillsTheWholeGroup(t *testing.T) {
	script, marker := sleeperScript(t)
	s, _ := newTestExec(t, []string{script}, time.Minute, 0, nil)
	if err := s.Write(podEvent(event.Added, "a", "1", nil)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(processesWith(t, marker)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the hook's sleep never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { _ = s.Close(); close(closed) }()
	s.Abort()
	waitGone(t, marker)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return after Abort")
	}
}

// What a hook prints is passed on escaped, as object names are: an annotation it echoes
// cannot retitle or clear the terminal.
func TestExecSinkEscapesWhatTheHookPrints(t *testing.T) {
	var mu sync.Mutex
	var warned []string
	// As a hook that prints an annotation it decoded (jq -r .object.metadata.annotations.note).
	s, rec := newTestExec(t, []string{"sh", "-c", `cat >/dev/null; printf 'note: \033]0;pwned\007\033[2J\n'; printf 'tab\there\n' >&2`},
		10*time.Second, 0, func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			warned = append(warned, fmt.Sprintf(f, a...))
		})
	if err := s.Write(podEvent(event.Added, "a", "1", nil)); err != nil {
		t.Fatal(err)
	}
	if errs := rec.wait(t, 1); errs[0] != nil {
		t.Fatal(errs[0])
	}
	_ = s.Close()
	mu.Lock()
	defer mu.Unlock()
	text := strings.Join(warned, "\n")
	for _, want := range []string{`[hook] note: \x1b]0;pwned\a\x1b[2J`, `[hook] tab\there`} {
		if !strings.Contains(text, want) {
			t.Errorf("stderr lacks %q:\n%s", want, text)
		}
	}
	if strings.ContainsAny(text, "\x1b\x07\t") {
		t.Errorf("a control character reached stderr: %q", text)
	}
}
