package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fileEvents reads a file sink's events from offset on: (name, resourceVersion) pairs,
// in order.
func fileEvents(t *testing.T, path string, offset int64) []haEvent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []haEvent
	sc := bufio.NewScanner(bytes.NewReader(data[min(offset, int64(len(data))):]))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var ev envelope
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s holds a line that is not an event: %q", path, sc.Text())
		}
		m := ev.meta()
		out = append(out, haEvent{typ: ev.Type, name: m.Metadata.Name, rv: m.Metadata.ResourceVersion})
	}
	return out
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// A leader paused past its lease's duration (SIGSTOP for 8 s, as a long GC pause or a
// frozen VM would), while the standby takes over and changes keep coming (4 a second):
// once it runs again (SIGCONT) it knows at once that it may no longer lead, and holds
// back what its sink has not written, rather than deliver it until its renew deadline
// says the lease is lost. At most the write in flight when it was paused goes out: no
// (name, resourceVersion) is written after the pause by both replicas. It says so, ends
// with exit 1, and counts what it held back; the new leader delivers every change.
func TestHAPausedLeaderHoldsBackDelivery(t *testing.T) {
	ns := newNamespace(t)
	r := applyChartRBAC(t, ns)
	dir := t.TempDir()
	file1, file2 := filepath.Join(dir, "one.jsonl"), filepath.Join(dir, "two.jsonl")
	one := startProc(t, nil, nil, r.replicaSinkArgs("file="+file1)...)
	one.waitStderr(30*time.Second, leadingRe)
	two := startProc(t, nil, nil, r.replicaSinkArgs("file="+file2)...)
	two.waitStderr(30*time.Second, standingByRe)

	var mu sync.Mutex
	var changes []haChange
	for i := range 5 {
		changes = append(changes, haCreate(t, ns, fmt.Sprintf("p-%d", i)))
	}
	ctx, stop := context.WithCancel(context.Background())
	writing := make(chan struct{})
	go func() {
		defer close(writing)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			c := haUpdate(t, ns, fmt.Sprintf("p-%d", n%5), fmt.Sprint(n))
			mu.Lock()
			changes = append(changes, c)
			mu.Unlock()
		}
	}()
	defer func() {
		stop()
		<-writing
	}()
	waitUntil(t, one, 30*time.Second, "the leader writing the changes", func() bool { return len(fileEvents(t, file1, 0)) >= 10 })

	if err := one.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	two.waitStderr(haLease+5*haRetry+5*time.Second, leadingRe)
	time.Sleep(8*time.Second - time.Since(paused)) // the pause itself: 8 s in all
	before := fileSize(t, file1)                   // what the paused leader wrote before
	if err := one.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	_, code := one.wait(haRenew + 10*time.Second)
	stop()
	<-writing

	mu.Lock()
	final := finalOf(changes)
	mu.Unlock()
	got := two.waitGotFile(t, file2, final, 30*time.Second)
	type state struct{ name, rv string }
	inTwo := map[state]bool{}
	for _, e := range got {
		inTwo[state{e.name, e.rv}] = true
	}
	after := fileEvents(t, file1, before)
	var twice []haEvent
	for _, e := range after {
		if inTwo[state{e.name, e.rv}] {
			twice = append(twice, e)
		}
	}
	t.Logf("after the pause the old leader wrote %d events, %d of them written by the new leader too: %v", len(after), len(twice), twice)
	if len(twice) > 1 {
		t.Errorf("%d (name, resourceVersion) written by both leaders after the pause, more than the one write in flight: %v; old leader's stderr:\n%s",
			len(twice), twice, one.Stderr())
	}
	stderr := one.Stderr()
	if code != 1 || !strings.Contains(stderr, "--leader-elect: lost the lease") {
		t.Errorf("the paused leader ended with %d; stderr:\n%s", code, stderr)
	}
	if !regexp.MustCompile(`--leader-elect: the lease \S+ was last renewed \d[\d.]*s ago, past its duration 3s: another replica may lead; holding back what the sinks have not written \(another replica may lead\)`).MatchString(stderr) {
		t.Errorf("the paused leader did not say it held delivery back:\n%s", stderr)
	}
	if !strings.Contains(stderr, "held back for the leader") {
		t.Errorf("the paused leader's summary does not count what it held back:\n%s", stderr)
	}
	// Nothing lost: every configmap's state now came to the new leader's sink, or was
	// written by the old one before the pause.
	list, err := client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "ha=yes"})
	if err != nil {
		t.Fatal(err)
	}
	written := map[state]bool{}
	for _, e := range append(fileEvents(t, file1, 0), got...) {
		written[state{e.name, e.rv}] = true
	}
	for _, cm := range list.Items {
		if !written[state{cm.Name, cm.ResourceVersion}] {
			t.Errorf("%s at %s (kubectl get) was written by neither replica", cm.Name, cm.ResourceVersion)
		}
	}
}

// waitGotFile waits until the file sink at path holds every change, and returns its
// events.
func (p *proc) waitGotFile(t *testing.T, path string, changes []haChange, timeout time.Duration) []haEvent {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		events := fileEvents(t, path, 0)
		missing := 0
		for _, c := range changes {
			if !has(events, c) {
				missing++
			}
		}
		if missing == 0 {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s lacks %d changes after %s; stderr:\n%s", path, missing, timeout, p.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
