package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func randomDuration(min, max time.Duration) time.Duration {
	n, _ := rand.Int(rand.Reader, big.NewInt(int64(max-min)))
	return min + time.Duration(n.Int64())
}

// TestFaultLoadBlockLossless: 20,000 events in under a minute through three sinks (the
// terminal's JSON on stdout, a file sink, a jq sink writing to a file) with on-full
// block: every sink writes every event, once.
func TestFaultLoadBlockLossless(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	const pods, rounds = 200, 99 // 200 ADDED + 19,800 MODIFIED
	const total = pods + pods*rounds
	names := createPods(t, fc.client, ns, "load", pods)
	dir := t.TempDir()
	stdout, file, jq := filepath.Join(dir, "stdout.jsonl"), filepath.Join(dir, "file.jsonl"), filepath.Join(dir, "jq.jsonl")
	p := startProc(t, createFile(t, stdout), nil, "watch", "pods", "-n", ns, "-o", "json", "-v=1",
		"--on-full", "block", "--kubeconfig", fc.kubeconfig,
		"--sink", "file(name=file)="+file, "--sink", "jq(name=jq,output="+jq+")=.")
	waitLines(t, p, eventWait, pods, stdout, file, jq)

	start := time.Now()
	made, err := patchPods(context.Background(), fc.client, ns, names, rounds, 16)
	if err != nil {
		t.Fatal(err)
	}
	generated := time.Since(start)
	waitLines(t, p, 3*time.Minute, total, stdout, file, jq)
	took := time.Since(start)
	t.Logf("%d changes made in %s; all %d events in all three sinks after %s", made, generated.Round(time.Millisecond), total, took.Round(time.Millisecond))
	// Not a speed target (those are benchmarks): a stall detector. How fast the changes are
	// made is the API server's business and varies with the machine's load; what
	// kubeevents adds is the time after the last change until every sink has it.
	if behind := took - generated; behind > 30*time.Second {
		t.Errorf("the three sinks had every event only %s after the last change was made, want under 30s", behind.Round(time.Second))
	}
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code after Ctrl-C = %d; stderr:\n%s", code, p.Stderr())
	}
	sum := parseSummary(t, p.Stderr())
	if sum.events != total {
		t.Errorf("summary: %d events, want %d", sum.events, total)
	}
	for _, path := range []string{stdout, file, jq} {
		evs := readEvents(t, path)
		seqs := make(map[uint64]bool, len(evs))
		modified := 0
		for _, ev := range evs {
			if seqs[ev.Seq] {
				t.Errorf("%s: seq %d twice", filepath.Base(path), ev.Seq)
			}
			seqs[ev.Seq] = true
			if ev.Type == "MODIFIED" {
				modified++
			}
		}
		if len(evs) != total || modified != made || len(seqs) != total {
			t.Errorf("%s: %d events (%d MODIFIED, %d distinct seqs), want %d (%d MODIFIED)", filepath.Base(path), len(evs), modified, len(seqs), total, made)
		}
	}
	for _, name := range []string{"screen", "file", "jq"} {
		c := sum.sinks[name]
		if c["delivered"] != total || len(c) != 1 {
			t.Errorf("summary for %s: %v, want %d delivered and nothing else", name, c, total)
		}
	}
}

// TestFaultLoadDropOldestExactCount: a sink that stalls (a jq sink writing into a FIFO
// nobody reads until the end) with on-full drop-oldest loses events, and the summary
// counts them exactly: dropped = generated − written.
func TestFaultLoadDropOldestExactCount(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	const pods, rounds = 50, 40
	const total = pods + pods*rounds
	names := createPods(t, fc.client, ns, "drop", pods)
	dir := t.TempDir()
	fifo, control := filepath.Join(dir, "slow.fifo"), filepath.Join(dir, "control.jsonl")
	reader := stalledFIFO(t, fifo) // read at the end only
	metricsAddr := freeAddr(t)
	p := startProc(t, io.Discard, nil, "watch", "pods", "-n", ns, "-o", "name", "-v=1", "--kubeconfig", fc.kubeconfig,
		"--metrics-addr", metricsAddr,
		"--sink", "jq(name=slow,on-full=drop-oldest,buffer=16,output="+fifo+")=.",
		"--sink", "file(name=control)="+control)
	waitLines(t, p, eventWait, pods, control)
	made, err := patchPods(context.Background(), fc.client, ns, names, rounds, 8)
	if err != nil || made != pods*rounds {
		t.Fatalf("made %d patches: %v", made, err)
	}
	waitLines(t, p, 2*time.Minute, total, control)
	// client-go hands events to each sink's handler on its own goroutine: the slow sink's
	// (which never waits) must have taken the last ones before the informers stop.
	waitMetric(t, p, metricsAddr, `kubeevents_sink_received_total{sink="slow"}`, total)

	p.signal(os.Interrupt)
	if err := syscall.SetNonblock(int(reader.Fd()), false); err != nil {
		t.Fatal(err)
	}
	written, err := io.ReadAll(reader) // until kubeevents closes the FIFO
	if err != nil {
		t.Fatal(err)
	}
	if _, code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code after Ctrl-C = %d; stderr:\n%s", code, p.Stderr())
	}
	lines := uint64(len(parseEvents(t, "slow sink", written)))
	sum := parseSummary(t, p.Stderr())
	slow := sum.sinks["slow"]
	t.Logf("generated %d, slow sink wrote %d; summary: %v", total, lines, slow)
	if sum.events != total {
		t.Errorf("summary: %d events, want %d", sum.events, total)
	}
	if slow["delivered"] != lines {
		t.Errorf("summary: slow sink delivered %d, but %d lines were written", slow["delivered"], lines)
	}
	if slow["dropped"] != total-lines || slow["dropped"] == 0 {
		t.Errorf("summary: slow sink dropped %d, want generated − written = %d − %d = %d (and some)", slow["dropped"], total, lines, total-lines)
	}
	if c := sum.sinks["control"]; c["delivered"] != total || len(c) != 1 {
		t.Errorf("summary: control sink %v, want %d delivered", c, total)
	}
	if !strings.Contains(p.Stderr(), `sink "slow" is full (buffer 16, on-full=drop-oldest); dropping events`) {
		t.Errorf("no notice that the slow sink drops events; stderr:\n%s", p.Stderr())
	}
}

// TestFaultInterruptUnderLoad: Ctrl-C at a random moment while events pour in, 20
// times: every line of the file sink is whole JSON, and the summary's delivered count
// for the file sink is the number of lines in it.
func TestFaultInterruptUnderLoad(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	churn(t, fc.client, ns, createPods(t, fc.client, ns, "ctrlc", 100), 300)
	dir := t.TempDir()
	for i := range 20 {
		path := filepath.Join(dir, fmt.Sprintf("run-%02d.jsonl", i))
		p := startProc(t, io.Discard, nil, "watch", "pods", "-n", ns, "-o", "name", "-v=1", "--kubeconfig", fc.kubeconfig,
			"--sink", "file(name=archive)="+path)
		// Once it is running (a SIGINT before Go's runtime has set up its handler would
		// kill it outright), at any moment of its initial list or of the stream.
		p.waitStderr(eventWait, regexp.MustCompile(`kubeevents: watching pods`))
		wait := randomDuration(0, 2*time.Second)
		time.Sleep(wait)
		if _, code := p.interrupt(15 * time.Second); code != 0 {
			t.Fatalf("run %d (Ctrl-C after %s): exit code %d; stderr:\n%s", i, wait, code, p.Stderr())
		}
		data, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		lines := uint64(len(parseEvents(t, fmt.Sprintf("run %d (Ctrl-C after %s)", i, wait), data)))
		t.Logf("run %2d: Ctrl-C %s after it started watching: %d whole lines", i, wait.Round(time.Millisecond), lines)
		sum := parseSummary(t, p.Stderr())
		if got := sum.sinks["archive"]["delivered"]; got != lines {
			t.Errorf("run %d (Ctrl-C after %s): summary says %d delivered, the file has %d lines; stderr:\n%s", i, wait, got, lines, p.Stderr())
		}
	}
}

// TestFaultHeadUnderLoad: `kubeevents ... | head -1` while events pour in: once the
// reader is gone kubeevents ends within a second, quietly, with exit 0.
func TestFaultHeadUnderLoad(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	churn(t, fc.client, ns, createPods(t, fc.client, ns, "head", 50), 300)
	// The reader goes away at three moments: during the initial list (after its first
	// line), while kubeevents watches (after the first change it printed), and while it
	// is blocked writing to a pipe the reader stopped reading.
	for i, moment := range []string{"initial list", "watching", "pipe full"} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		p := startProc(t, w, nil, "watch", "pods", "-n", ns, "-o", "json", "--kubeconfig", fc.kubeconfig)
		w.Close()
		if err := r.SetReadDeadline(time.Now().Add(eventWait)); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewReader(r)
		line, err := lines.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, `{"type":"ADDED"`) {
			t.Fatalf("first line %q: %v", line, err)
		}
		for moment != "initial list" && !strings.HasPrefix(line, `{"type":"MODIFIED"`) {
			if line, err = lines.ReadString('\n'); err != nil {
				t.Fatalf("run %d: no change printed: %v; stderr:\n%s", i, err, p.Stderr())
			}
		}
		if moment == "pipe full" {
			waitUntil(t, p, eventWait, "kubeevents blocked writing to the full pipe", func() bool { return blockedWriting(t, p) })
		}
		r.Close()
		closed := time.Now()
		_, code := p.wait(10 * time.Second)
		if took := time.Since(closed); took > time.Second {
			t.Errorf("run %d (%s): kubeevents took %s to end after stdout was closed, want under 1s", i, moment, took.Round(time.Millisecond))
		}
		if code != 0 || p.Stderr() != "" {
			t.Errorf("run %d (%s): exit code %d, stderr %q; want 0 and nothing", i, moment, code, p.Stderr())
		}
	}
	// And as a shell pipeline.
	start := time.Now()
	pipeline := kubeevents(t).Via("bash", "-c", `set -o pipefail; "$@" | head -1 >/dev/null`, "bash").
		Run(time.Minute, "watch", "pods", "-n", ns, "--kubeconfig", fc.kubeconfig, "-o", "json")
	if out := pipeline.stdout + pipeline.stderr; pipeline.code != 0 || len(out) != 0 {
		t.Errorf("pipeline | head -1: exit %d, output %q; want exit 0 and nothing on stderr", pipeline.code, out)
	}
	t.Logf("pipeline | head -1 took %s in all", time.Since(start).Round(time.Millisecond))
}

// blockedWriting reports whether a thread of p waits in the kernel to write into a full
// pipe (its wchan, the kernel function it sleeps in, is anon_pipe_write or pipe_write).
func blockedWriting(t *testing.T, p *proc) bool {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if wchan, err := os.ReadFile(task); err == nil && strings.HasSuffix(string(wchan), "pipe_write") {
			return true
		}
	}
	return false
}
