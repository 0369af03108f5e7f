package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Under on-full=block, an http sink loses nothing while its receiver is down: the events
// wait, and each arrives exactly once when it is back.
func TestHTTPSinkBlockLosesNothingAcrossAnOutage(t *testing.T) {
	ns := newNamespace(t)
	r := startReceiver(t)
	metricsAddr := freeAddr(t)
	p := startProc(t, io.Discard, nil, watchArgs(ns, "--metrics-addr", metricsAddr, "--sink",
		"http(name=hook,on-full=block,buffer=8,batch=5,batch-interval=100ms,retries=1000)="+r.url())...)
	waitWatching(t, p)

	createLabelled(t, ns, names("a", 0, 10)...)
	r.waitDelivered(t, p, 10, 30*time.Second)
	r.down()
	createLabelled(t, ns, names("a", 10, 40)...) // 30 while the receiver is down: more than the buffer holds
	// The sink meets the outage, which then lasts a while longer: events pile up beyond
	// its buffer, and the informer waits for room (on-full=block).
	p.waitStderr(30*time.Second, regexp.MustCompile(`http sink "hook": POST \S+: connection refused; retry 1 of 1000 in `))
	waitMetric(t, p, metricsAddr, `kubeevents_sink_queue_length{sink="hook"}`, 8)
	r.up()
	createLabelled(t, ns, names("a", 40, 50)...)
	r.waitDelivered(t, p, 50, 60*time.Second)

	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	got := r.delivered(t)
	sorted := slices.Sorted(slices.Values(got))
	if !slices.Equal(sorted, names("a", 0, 50)) {
		t.Errorf("the receiver got %d events, want each of 50 once: %v", len(got), sorted)
	}
	if s := summaryOf(t, p.Stderr(), "hook"); s["delivered"] != 50 || len(s) != 1 {
		t.Errorf("summary %v, want 50 delivered and nothing else", s)
	}
	if !strings.Contains(p.Stderr(), `http sink "hook": POST `+r.url()+`: connection refused; retry 1 of 1000 in `) {
		t.Errorf("the outage was not said; stderr:\n%s", p.Stderr())
	}
}

// TestFaultHTTPSinkBlockLosesNothingAcrossATwoMinuteOutage: under
// on-full=block, with the default retries, an http sink whose receiver is down for two
// minutes, far longer than any count of retries, holds its events, counts none as
// failed, and delivers each once when the receiver is back. It takes about three
// minutes, so it is among the fault tests (make test-faults), though it harms no cluster.
func TestFaultHTTPSinkBlockLosesNothingAcrossATwoMinuteOutage(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	r := startReceiver(t)
	metricsAddr := freeAddr(t)
	p := startProc(t, io.Discard, nil, "watch", "configmaps", "-n", ns, "-l", "sinks-act=yes", "--watch-only",
		"--no-screen", "-v=1", "--kubeconfig", fc.kubeconfig, "--metrics-addr", metricsAddr,
		"--sink", "http(name=hook,batch=3)="+r.url())
	waitWatching(t, p)
	r.down()
	downAt := time.Now()
	createLabelledIn(t, fc.client, ns, names("o", 0, 6)...)
	p.waitStderr(30*time.Second, regexp.MustCompile(`http sink "hook": POST \S+: connection refused; retry 1 in \S+ \(retrying until the receiver answers\)`))
	// Two minutes down, looking every few seconds: the sink holds the six events and
	// counts none of them as failed or dropped.
	for time.Since(downAt) < 2*time.Minute {
		mf := scrape(t, metricsAddr)
		for _, what := range []string{"failed", "dropped", "delivered"} {
			if v := value(mf, "kubeevents_sink_"+what+"_total", "sink", "hook"); v != 0 {
				t.Fatalf("after %s down: kubeevents_sink_%s_total = %v; stderr:\n%s", time.Since(downAt).Round(time.Second), what, v, p.Stderr())
			}
		}
		time.Sleep(5 * time.Second)
	}
	if v := value(scrape(t, metricsAddr), "kubeevents_sink_received_total", "sink", "hook"); v != 6 {
		t.Fatalf("kubeevents_sink_received_total = %v, want 6", v)
	}
	r.up()
	upAt := time.Now()
	createLabelledIn(t, fc.client, ns, names("o", 6, 8)...)
	// The first retry after it is back comes within the backoff's cap (30 s, plus up to
	// half of it).
	r.waitDelivered(t, p, 8, 90*time.Second)
	t.Logf("receiver down for %s; all 8 events delivered %s after it was back", upAt.Sub(downAt).Round(time.Second), time.Since(upAt).Round(100*time.Millisecond))
	p.waitStderr(30*time.Second, regexp.MustCompile(`http sink "hook": POST \S+: accepted again after `))

	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	got := r.delivered(t)
	if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, names("o", 0, 8)) {
		t.Errorf("the receiver got %v, want each of the 8 once", sorted)
	}
	if s := summaryOf(t, p.Stderr(), "hook"); s["delivered"] != 8 || len(s) != 1 {
		t.Errorf("summary %v, want 8 delivered and nothing else", s)
	}
}

// An http sink's header from a file follows the file: a token rotated as the kubelet
// rotates a projected ServiceAccount token (a symbolic link swapped to a new directory)
// is sent from the next request on.
func TestHTTPSinkRereadsARotatedTokenFile(t *testing.T) {
	ns := newNamespace(t)
	r := startReceiver(t)
	dir := t.TempDir()
	rotate := func(token string) {
		data := filepath.Join(dir, fmt.Sprintf("..%d", time.Now().UnixNano()))
		if err := os.Mkdir(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "token"), []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(filepath.Join(dir, "..data_tmp"))
		if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	rotate("Bearer first-e2e-token")
	if err := os.Symlink("..data/token", filepath.Join(dir, "token")); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, io.Discard, nil, watchArgs(ns, "--sink",
		`http(name=hook,batch=1,header="Authorization=file:`+dir+`/token")=`+r.url())...)
	waitWatching(t, p)
	createLabelled(t, ns, "r-0")
	r.waitDelivered(t, p, 1, 30*time.Second)
	rotate("Bearer second-e2e-token")
	createLabelled(t, ns, "r-1")
	r.waitDelivered(t, p, 2, 30*time.Second)
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	var tokens []string
	for _, req := range r.got() {
		tokens = append(tokens, req.header.Get("Authorization"))
	}
	if !slices.Equal(tokens, []string{"Bearer first-e2e-token", "Bearer second-e2e-token"}) {
		t.Errorf("the receiver was sent %q, want the first token, then the rotated one", tokens)
	}
	if strings.Contains(p.Stderr(), "e2e-token") {
		t.Errorf("a token is on stderr:\n%s", p.Stderr())
	}
}

// Under on-full=drop-oldest, an http sink whose receiver is down drops events, and the
// summary and the metrics count exactly those the receiver never got.
func TestHTTPSinkDropOldestCountsDropsAndMetricsAgree(t *testing.T) {
	ns := newNamespace(t)
	r := startReceiver(t)
	metricsAddr := freeAddr(t)
	p := startProc(t, io.Discard, nil, watchArgs(ns, "--metrics-addr", metricsAddr, "--sink",
		"http(name=hook,on-full=drop-oldest,buffer=5,batch=1,retries=1000)="+r.url())...)
	waitWatching(t, p)
	r.down()
	const total = 40
	createLabelled(t, ns, names("d", 0, total)...)
	// Every event was made, and the buffer is full: drops happened.
	waitMetric(t, p, metricsAddr, `kubeevents_events_total{type="ADDED"}`, total)
	r.up()
	var mf map[string]*dto.MetricFamily
	waitUntil(t, p, 60*time.Second, fmt.Sprintf("delivered + dropped reaching %d", total), func() bool {
		mf = scrape(t, metricsAddr)
		return value(mf, "kubeevents_sink_delivered_total", "sink", "hook")+value(mf, "kubeevents_sink_dropped_total", "sink", "hook") == total
	})
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	got := r.delivered(t)
	s := summaryOf(t, p.Stderr(), "hook")
	if s["delivered"] != len(got) || s["dropped"] != total-len(got) || s["dropped"] == 0 {
		t.Errorf("summary %v, but the receiver got %d of %d", s, len(got), total)
	}
	if !slices.Contains(got, fmt.Sprintf("d-%03d", total-1)) {
		t.Errorf("drop-oldest lost the newest event; the receiver got %v", got)
	}
	// The metrics say what the summary says.
	for what, n := range map[string]int{"delivered": s["delivered"], "dropped": s["dropped"], "failed": 0, "received": total} {
		if got := value(mf, "kubeevents_sink_"+what+"_total", "sink", "hook"); got != float64(n) {
			t.Errorf("kubeevents_sink_%s_total = %v, summary says %d", what, got, n)
		}
	}
	if got := value(mf, "kubeevents_sink_queue_capacity", "sink", "hook"); got != 5 {
		t.Errorf("kubeevents_sink_queue_capacity = %v, want 5", got)
	}
	if h := mf["kubeevents_delivery_lag_seconds"]; h == nil || h.GetMetric()[0].GetHistogram().GetSampleCount() != uint64(s["delivered"]) {
		t.Errorf("delivery lag histogram: %v, want %d samples", h, s["delivered"])
	}
	if ev := mf["kubeevents_events_total"]; ev == nil || label(ev.GetMetric()[0], "resource") != "configmaps" || label(ev.GetMetric()[0], "cluster") == "" {
		t.Errorf("kubeevents_events_total labels: %v", ev)
	}
}

// An http sink sends batches of at most batch= events as JSON Lines, retries a request
// that hung, a 429 after its Retry-After, and a 500, then fails a 4xx at once; its token
// header reaches the receiver and no output, even at -v=9.
func TestHTTPSinkBatchesRetriesAndKeepsItsToken(t *testing.T) {
	ns := newNamespace(t)
	r := startReceiver(t)
	const token = "Bearer e2e-secret-token-4711"
	r.answerNext(answer{hang: true}, answer{status: 429, retryAfter: "2"}, answer{status: 503})
	var stdout lockedBuffer
	p := startProc(t, &stdout, []string{"HOOK_TOKEN=" + token}, append(watchArgs(ns, "--sink",
		`http(name=hook,batch=4,batch-interval=500ms,timeout=1s,retries=5,header="Authorization=env:HOOK_TOKEN;X-Source=e2e")=`+r.url()), "-v=9")...)
	waitWatching(t, p)
	createLabelled(t, ns, names("b", 0, 10)...)
	r.waitDelivered(t, p, 10, 60*time.Second)

	reqs := r.got()
	if len(reqs) < 4 {
		t.Fatalf("%d requests, want the hung one, the 429, the 503 and more", len(reqs))
	}
	first := reqs[0]
	for i, req := range reqs {
		if len(req.lines) == 0 || len(req.lines) > 4 {
			t.Errorf("request %d holds %d events, want 1 to 4", i, len(req.lines))
		}
		if ct := req.header.Get("Content-Type"); ct != "application/x-ndjson" {
			t.Errorf("request %d: Content-Type %q", i, ct)
		}
		if req.header.Get("Authorization") != token || req.header.Get("X-Source") != "e2e" {
			t.Errorf("request %d: headers %v", i, req.header)
		}
		if i > 0 && i < 4 && !slices.Equal(req.lines, first.lines) {
			t.Errorf("retry %d sent other events: %v, first %v", i, req.lines, first.lines)
		}
	}
	// The hung request is given up after timeout=1s; the retry after the 429 waits the 2s
	// it asked for.
	if d := reqs[1].at.Sub(reqs[0].at); d < time.Second {
		t.Errorf("retry after a hung request came %s later, before the 1s timeout", d)
	}
	if d := reqs[2].at.Sub(reqs[1].at); d < 2*time.Second || d > 4*time.Second {
		t.Errorf("retry after 429 with Retry-After: 2 came %s later", d)
	}
	t.Logf("retry after a hung request: %s, after 429 (Retry-After: 2): %s, after 503: %s",
		reqs[1].at.Sub(reqs[0].at), reqs[2].at.Sub(reqs[1].at), reqs[3].at.Sub(reqs[2].at))

	// A 4xx fails its batch at once, said once with the status and the body's first line.
	r.answerNext(answer{status: 400, body: "payload rejected: no field x\nsecond line"})
	createLabelled(t, ns, "b-bad")
	p.waitStderr(30*time.Second, regexp.MustCompile(`400 Bad Request: payload rejected: no field x; the receiver refused 1 event`))
	createLabelled(t, ns, "b-after")
	r.waitDelivered(t, p, 11, 30*time.Second)

	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	if s := summaryOf(t, p.Stderr(), "hook"); s["delivered"] != 11 || s["failed"] != 1 {
		t.Errorf("summary %v, want 11 delivered, 1 failed", s)
	}
	if strings.Contains(p.Stderr(), "second line") {
		t.Errorf("more than the body's first line was said")
	}
	for what, out := range map[string]string{"stderr": p.Stderr(), "stdout": stdout.String()} {
		if strings.Contains(out, "e2e-secret-token") {
			t.Errorf("the token is in %s at -v=9", what)
		}
	}
	if !strings.Contains(p.Stderr(), "round_trippers") {
		t.Errorf("-v=9 printed no request dumps: the test does not show that they leave the token out")
	}
}

// An exec sink runs a real script once per event with its JSON line on stdin: every event
// exactly once, each object's events in order with concurrency=3, a failed run retried,
// a run that keeps failing counted as failed, and the script's stderr passed on with the
// sink's name.
func TestExecSinkRunsAScriptPerEvent(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	script := filepath.Join(dir, "on-change.sh")
	// It fails the first run of every event of c-001 (a marker file per seq), always
	// fails for poison, and appends the event to out.jsonl otherwise.
	err := os.WriteFile(script, []byte(`#!/bin/bash
set -eu
line=$(cat)
marker="`+dir+`/tried-$KUBEEVENTS_SEQ"
if [ "$KUBEEVENTS_NAME" = poison ]; then echo "cannot handle $KUBEEVENTS_NAME" >&2; exit 3; fi
if [ "$KUBEEVENTS_NAME" = c-001 ] && [ ! -e "$marker" ]; then touch "$marker"; echo "first try of $KUBEEVENTS_SEQ fails" >&2; exit 1; fi
echo "handled $KUBEEVENTS_TYPE $KUBEEVENTS_NAMESPACE/$KUBEEVENTS_NAME attempt $KUBEEVENTS_ATTEMPT" >&2
printf '%s\n' "$line" >> "`+out+`"
`), 0o755)
	if err != nil {
		t.Fatal(err)
	}
	p := startProc(t, io.Discard, nil, watchArgs(ns, "--sink", "exec(name=script,concurrency=3,retries=2,timeout=10s)="+script)...)
	waitWatching(t, p)
	objs := names("c", 0, 4)
	createLabelled(t, ns, objs...)
	for round := 1; round <= 3; round++ {
		for _, name := range objs {
			patchConfigMap(t, ns, name, fmt.Sprintf(`{"data":{"n":"%d"}}`, round))
		}
	}
	createLabelled(t, ns, "poison")
	want := len(objs) * 4
	waitUntil(t, p, 60*time.Second, fmt.Sprintf("the script writing %d events, and the poison one failing", want), func() bool {
		return len(fileLines(out)) >= want && strings.Contains(p.Stderr(), `exec sink "script"`)
	})
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	evs := parseEvents(t, out, []byte(strings.Join(fileLines(out), "\n")+"\n"))
	if len(evs) != want {
		t.Fatalf("the script wrote %d events, want %d", len(evs), want)
	}
	seen := map[uint64]bool{}
	versions := map[string][]string{}
	for _, ev := range evs {
		if seen[ev.Seq] {
			t.Errorf("event %d written twice", ev.Seq)
		}
		seen[ev.Seq] = true
		versions[ev.name()] = append(versions[ev.name()], ev.meta().Metadata.ResourceVersion)
	}
	for name, rvs := range versions {
		if len(rvs) != 4 || !slices.IsSortedFunc(rvs, func(a, b string) int {
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(b)
			return x - y
		}) {
			t.Errorf("%s's events were handled in the order %v", name, rvs)
		}
	}
	if s := summaryOf(t, p.Stderr(), "script"); s["delivered"] != want || s["failed"] != 1 {
		t.Errorf("summary %v, want %d delivered, 1 failed (poison)", s, want)
	}
	stderr := p.Stderr()
	for _, line := range []string{
		`kubeevents: [script] first try of`,
		`kubeevents: [script] handled ADDED ` + ns + `/c-001 attempt 2`,
		`kubeevents: [script] cannot handle poison`,
		`exec sink "script": event failed after 2 retries: exit status 3`,
	} {
		if !strings.Contains(stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr)
		}
	}
}

// Bad exec and http options are one clear line before anything runs; config validate
// knows the new kinds.
func TestSinksActBadOptions(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sink string
		code int
		want string
	}{
		{"http=hooks.example.com/x", 2, `URL "hooks.example.com/x" has no http:// or https:// scheme`},
		{"http(batch-interval=soon)=http://127.0.0.1:1/x", 2, `option "batch-interval": invalid duration "soon"`},
		{"http(header=Authorization=file:" + dir + "/missing)=http://127.0.0.1:1/x", 4, `header Authorization: cannot read ` + dir + `/missing: no such file or directory`},
		{"http(ca-file=" + notExec + ")=https://127.0.0.1:1/x", 4, `ca-file ` + notExec + `: no PEM certificate in it`},
		{"exec=" + notExec, 4, `command "` + notExec + `": permission denied`},
		{"exec=no-such-command-kubeevents", 4, `command "no-such-command-kubeevents": executable file not found in $PATH`},
		{`exec=sh -c 'unterminated`, 2, `unterminated ' in the command`},
		{"http(single,batch=5)=http://127.0.0.1:1/x", 2, `sink "http": single sends one event per request; drop batch and batch-bytes, or single`},
	} {
		r := runKubeevents(t, 30*time.Second, "watch", "configmaps", "--sink", tc.sink)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != tc.code || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("--sink %s: exit %d, stderr:\n%s\nwant exit %d and one line with %q", tc.sink, r.code, r.stderr, tc.code, tc.want)
		}
	}
	cfg := filepath.Join(dir, "config.yaml")
	_ = os.WriteFile(cfg, []byte("sinks:\n  - type: http\n    url: https://hooks.example.com/k8s\n    batch: 50\n    headers: Authorization=env:KUBEEVENTS_E2E_UNSET\n"), 0o600)
	r := runKubeevents(t, 30*time.Second, "config", "validate", cfg)
	if r.code != 2 || !strings.Contains(r.stderr, "environment variable KUBEEVENTS_E2E_UNSET is not set") {
		t.Errorf("config validate: exit %d, stderr %s", r.code, r.stderr)
	}
	_ = os.WriteFile(cfg, []byte("sinks:\n  - type: exec\n    command: sh -c 'cat >> out.jsonl'\n    concurrency: 2\n  - type: http\n    url: example.com\n"), 0o600)
	r = runKubeevents(t, 30*time.Second, "config", "validate", cfg)
	if r.code != 2 || !strings.Contains(r.stderr, `config.yaml:6:10: sinks[1].url: URL "example.com" has no http:// or https:// scheme`) {
		t.Errorf("config validate: exit %d, stderr %s", r.code, r.stderr)
	}
}

func fileLines(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var lines []string
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// At exit, --grace bounds the last flush: a receiver that hangs does not hold kubeevents,
// and what the sink still held counts as dropped.
func TestHTTPSinkGraceBoundsTheLastFlush(t *testing.T) {
	ns := newNamespace(t)
	r := startReceiver(t)
	r.answerNext(answer{hang: true}, answer{hang: true}, answer{hang: true})
	// A file sink beside it tells when kubeevents has received all three events: the first
	// request may leave before the third create is seen (CI once saw 2 of 3).
	seen := filepath.Join(t.TempDir(), "seen.jsonl")
	p := startProc(t, io.Discard, nil, watchArgs(ns, "--grace", "1s", "--sink",
		"http(name=hook,batch=10,batch-interval=100ms,timeout=1m)="+r.url(), "--sink", "file="+seen)...)
	waitWatching(t, p)
	createLabelled(t, ns, names("g", 0, 3)...)
	waitUntil(t, p, 30*time.Second, "a request, and the 3 events seen", func() bool {
		return len(r.got()) > 0 && len(fileLines(seen)) >= 3
	})
	start := time.Now()
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	took := time.Since(start)
	t.Logf("exited %s after the interrupt, with --grace 1s and a receiver that hangs", took.Round(time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("exit took %s with --grace 1s", took)
	}
	if s := summaryOf(t, p.Stderr(), "hook"); s["delivered"] != 0 || s["dropped"] != 3 {
		t.Errorf("summary %v, want 0 delivered, 3 dropped", s)
	}
	if !strings.Contains(p.Stderr(), `sink "hook" did not finish writing within --grace 1s; dropped the 3 events it still held`) {
		t.Errorf("stderr:\n%s", p.Stderr())
	}
}

// An https receiver is trusted through ca-file and asks for a client certificate, which
// cert-file and key-file give; without ca-file its certificate is refused, and the events
// count as failed.
func TestHTTPSinkTLSWithCAAndClientCertificate(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	ca, caKey := newCA(t)
	serverCert := issue(t, ca, caKey, "127.0.0.1", dir, "server")
	issue(t, ca, caKey, "kubeevents", dir, "client")
	writePEM(t, filepath.Join(dir, "ca.crt"), "CERTIFICATE", ca.Raw)
	pool := x509.NewCertPool()
	pool.AddCert(ca)

	var mu sync.Mutex
	var clients []string
	var lines int
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		defer mu.Unlock()
		clients = append(clients, req.TLS.PeerCertificates[0].Subject.CommonName)
		lines += strings.Count(string(body), "\n")
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted sink's handshakes fail, as they should
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	p := startProc(t, io.Discard, nil, watchArgs(ns,
		"--sink", fmt.Sprintf("http(name=trusted,batch-interval=100ms,ca-file=%s/ca.crt,cert-file=%s/client.crt,key-file=%s/client.key)=%s/hook", dir, dir, dir, srv.URL),
		"--sink", fmt.Sprintf("http(name=untrusted,batch-interval=100ms,retries=0,cert-file=%s/client.crt,key-file=%s/client.key)=%s/hook", dir, dir, srv.URL))...)
	waitWatching(t, p)
	createLabelled(t, ns, names("t", 0, 4)...)
	waitUntil(t, p, 30*time.Second, "the 4 events at the receiver, and the untrusted sink's failure", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return lines >= 4 && strings.Contains(p.Stderr(), `http sink "untrusted"`)
	})
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	if s := summaryOf(t, p.Stderr(), "trusted"); s["delivered"] != 4 {
		t.Errorf("trusted: summary %v", s)
	}
	if s := summaryOf(t, p.Stderr(), "untrusted"); s["failed"] != 4 || s["delivered"] != 0 {
		t.Errorf("untrusted: summary %v", s)
	}
	if !strings.Contains(p.Stderr(), "certificate signed by unknown authority") {
		t.Errorf("the untrusted sink did not say why:\n%s", p.Stderr())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, cn := range clients {
		if cn != "kubeevents" {
			t.Errorf("client certificate %q", cn)
		}
	}
}

// TestFaultMetricsCountOutages: kube-apiserver is killed and started again; the metrics
// count one outage of the watched type, how long it lasted, and whether it took a re-list,
// as stderr says it.
func TestFaultMetricsCountOutages(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	addr := freeAddr(t)
	p := startProc(t, io.Discard, nil, "watch", "configmaps", "-n", ns, "-o", "json", "-v=1",
		"--metrics-addr", addr, "--kubeconfig", fc.kubeconfig)
	p.waitStderr(30*time.Second, regexp.MustCompile(`watching configmaps`))
	mf := scrape(t, addr)
	if v := value(mf, "kubeevents_watch_outages_total", "", ""); v > 0 {
		t.Fatalf("outages before any: %v", v)
	}
	const down = 3 * time.Second
	restarted := fc.restartAPIServer(t, down)
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	p.waitStderr(90*time.Second, regexp.MustCompile(`watch of configmaps resumed; no events were missed|re-synced [\d,]+ configmaps`))
	mf = scrape(t, addr)
	if v := value(mf, "kubeevents_watch_outages_total", "resource", "configmaps"); v != 1 {
		t.Errorf("kubeevents_watch_outages_total = %v, want 1; stderr:\n%s", v, p.Stderr())
	}
	relisted := 0.0
	if strings.Contains(p.Stderr(), "re-synced") {
		relisted = 1
	}
	if v := value(mf, "kubeevents_watch_relists_total", "resource", "configmaps"); v != relisted {
		t.Errorf("kubeevents_watch_relists_total = %v, want %v; stderr:\n%s", v, relisted, p.Stderr())
	}
	h := mf["kubeevents_watch_reconnect_seconds"]
	if h == nil || len(h.GetMetric()) != 1 {
		t.Fatalf("kubeevents_watch_reconnect_seconds: %v", h)
	}
	hist := h.GetMetric()[0].GetHistogram()
	t.Logf("outage of %s (kube-apiserver down, then starting): reconnect took %.2fs, re-listed: %v", down, hist.GetSampleSum(), relisted == 1)
	if hist.GetSampleCount() != 1 || hist.GetSampleSum() < down.Seconds() || hist.GetSampleSum() > 90 {
		t.Errorf("reconnect histogram: %d samples, sum %.2fs; want 1 of at least %s", hist.GetSampleCount(), hist.GetSampleSum(), down)
	}
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
}
