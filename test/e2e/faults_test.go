package e2e

// Fault tests: kube-apiserver killed mid-stream, etcd compacted behind a watch, a server
// that is down at start-up, load through several sinks with each on-full policy, Ctrl-C
// under load, failing file sinks and a closed stdout. They kill and compact a cluster,
// so they run against a SEPARATE cluster of their own, never the shared one of
// `make test-e2e`: `make test-faults` starts it and passes
//
//	KUBEEVENTS_FAULTS_CLUSTER_DIR   its hack/cluster.sh state directory
//	KUBEEVENTS_FAULTS_KUBECONFIG    its kubeconfig
//	KUBEEVENTS_FAULTS_APISERVER_PORT, KUBEEVENTS_FAULTS_ETCD_PORT  its ports
//
// Without them the tests skip, except under CI=true when they were asked for by name
// (make test-faults runs -run 'Fault|...'), where a missing cluster is a failure.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// faultCluster is the fault tests' own cluster.
type faultCluster struct {
	dir, kubeconfig   string
	apiPort, etcdPort string
	config            *rest.Config
	client            *kubernetes.Clientset
}

var (
	faultsOnce sync.Once
	faults     *faultCluster
	faultsErr  error
)

// faultsCluster returns the fault tests' cluster, healthy, or skips the test.
func faultsCluster(t *testing.T) *faultCluster {
	t.Helper()
	dir, kc := os.Getenv("KUBEEVENTS_FAULTS_CLUSTER_DIR"), os.Getenv("KUBEEVENTS_FAULTS_KUBECONFIG")
	if dir == "" || kc == "" {
		if os.Getenv("CI") == "true" && runPatternSelects("Fault") {
			t.Fatal("KUBEEVENTS_FAULTS_CLUSTER_DIR / KUBEEVENTS_FAULTS_KUBECONFIG are not set under CI=true; run the fault tests with 'make test-faults', which starts their own cluster")
		}
		t.Skip("no fault-test cluster (KUBEEVENTS_FAULTS_CLUSTER_DIR, KUBEEVENTS_FAULTS_KUBECONFIG unset); run 'make test-faults'")
	}
	if clusterBin == "" {
		t.Fatal("KUBEEVENTS_CLUSTER_BIN is not set; run the fault tests with 'make test-faults'")
	}
	faultsOnce.Do(func() { faults, faultsErr = openFaultCluster(dir, kc) })
	if faultsErr != nil {
		t.Fatal(faultsErr)
	}
	faults.ensureUp(t)
	t.Cleanup(func() { faults.ensureUp(t) }) // never leave the apiserver down for the next test
	return faults
}

// runPatternSelects reports whether the -run pattern names tests containing word.
func runPatternSelects(word string) bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), word)
}

// openFaultCluster checks that the cluster it is given is not the shared one before any
// test may kill or compact it.
func openFaultCluster(dir, kc string) (*faultCluster, error) {
	dir = filepath.Clean(dir)
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	if shared := filepath.Join(cache, "kubeevents", "cluster"); dir == shared {
		return nil, fmt.Errorf("KUBEEVENTS_FAULTS_CLUSTER_DIR is the shared cluster's %s; the fault tests need a cluster of their own (make test-faults)", shared)
	}
	if filepath.Dir(filepath.Clean(kc)) != dir {
		return nil, fmt.Errorf("KUBEEVENTS_FAULTS_KUBECONFIG %s is not the kubeconfig of %s", kc, dir)
	}
	fc := &faultCluster{dir: dir, kubeconfig: kc,
		apiPort: os.Getenv("KUBEEVENTS_FAULTS_APISERVER_PORT"), etcdPort: os.Getenv("KUBEEVENTS_FAULTS_ETCD_PORT")}
	if rec, err := os.ReadFile(filepath.Join(dir, "ports")); err == nil {
		if f := strings.Fields(string(rec)); len(f) == 2 {
			if fc.apiPort == "" {
				fc.apiPort = f[0]
			}
			if fc.etcdPort == "" {
				fc.etcdPort = f[1]
			}
			if fc.apiPort != f[0] || fc.etcdPort != f[1] {
				return nil, fmt.Errorf("%s was started with ports %s, not %s %s", dir, strings.TrimSpace(string(rec)), fc.apiPort, fc.etcdPort)
			}
		}
	}
	if fc.apiPort == "" || fc.etcdPort == "" {
		return nil, errors.New("KUBEEVENTS_FAULTS_APISERVER_PORT and KUBEEVENTS_FAULTS_ETCD_PORT are not set; run 'make test-faults'")
	}
	if fc.apiPort == "16443" || fc.etcdPort == "12379" {
		return nil, fmt.Errorf("fault-test cluster ports %s/%s are the shared cluster's defaults; give it ports of its own", fc.apiPort, fc.etcdPort)
	}
	var err error
	if fc.config, err = clientcmd.BuildConfigFromFlags("", kc); err != nil {
		return nil, fmt.Errorf("fault-test kubeconfig: %v", err)
	}
	if u, err := url.Parse(fc.config.Host); err != nil || u.Port() != fc.apiPort {
		return nil, fmt.Errorf("fault-test kubeconfig points at %s, not port %s", fc.config.Host, fc.apiPort)
	}
	fc.config.QPS, fc.config.Burst = 5000, 10000
	// Protobuf responses: the generators' load on the server goes into events, not JSON.
	fc.config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	fc.config.ContentType = "application/vnd.kubernetes.protobuf"
	if fc.client, err = kubernetes.NewForConfig(fc.config); err != nil {
		return nil, err
	}
	return fc, nil
}

// script runs hack/cluster.sh against the fault-test cluster only.
func (fc *faultCluster) script(args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "cluster.sh"), args...)
	cmd.Env = append(os.Environ(), "KUBEEVENTS_CLUSTER_DIR="+fc.dir,
		"KUBEEVENTS_APISERVER_PORT="+fc.apiPort, "KUBEEVENTS_ETCD_PORT="+fc.etcdPort)
	return cmd
}

func (fc *faultCluster) healthy() bool {
	return fc.script("status").Run() == nil
}

// ensureUp starts a killed kube-apiserver again (hack/cluster.sh up keeps what runs).
func (fc *faultCluster) ensureUp(t *testing.T) {
	t.Helper()
	if fc.healthy() {
		return
	}
	if out, err := fc.script("up").CombinedOutput(); err != nil {
		t.Fatalf("hack/cluster.sh up (fault-test cluster): %v\n%s", err, out)
	}
}

// restartAPIServer SIGKILLs kube-apiserver and starts it again after down, in the
// background; the channel yields the script's result once the server is back.
func (fc *faultCluster) restartAPIServer(t *testing.T, down time.Duration) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	pidFile := filepath.Join(fc.dir, "kube-apiserver.pid")
	oldPID, _ := os.ReadFile(pidFile)
	cmd := fc.script("restart-apiserver", strconv.Itoa(int(down.Seconds())))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		if err != nil {
			err = fmt.Errorf("hack/cluster.sh restart-apiserver: %v\n%s", err, out.String())
		}
		done <- err
	}()
	// Return once the old process is gone, so the outage has begun.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pid, err := strconv.Atoi(strings.TrimSpace(string(oldPID)))
		if err != nil || syscall.Kill(pid, 0) != nil {
			return done
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("kube-apiserver did not die")
	return done
}

func (fc *faultCluster) compact(t *testing.T) {
	t.Helper()
	if out, err := fc.script("compact").CombinedOutput(); err != nil {
		t.Fatalf("hack/cluster.sh compact: %v\n%s", err, out)
	}
}

// etcdDelete deletes a key straight from etcd, as a change made while kube-apiserver is
// down (so no watch can see it).
func (fc *faultCluster) etcdDelete(t *testing.T, key string) {
	t.Helper()
	body := fmt.Sprintf(`{"key":%q}`, base64.StdEncoding.EncodeToString([]byte(key)))
	resp, err := http.Post("http://127.0.0.1:"+fc.etcdPort+"/v3/kv/deleterange", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("etcd deleterange %s: %v", key, err)
	}
	defer resp.Body.Close()
	var r struct {
		Deleted string `json:"deleted"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &r); err != nil || r.Deleted != "1" {
		t.Fatalf("etcd deleterange %s: %s", key, raw)
	}
}

func (fc *faultCluster) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(clusterBin, "kubectl"), append([]string{"--kubeconfig", fc.kubeconfig}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// newNamespace creates a uniquely named namespace in the fault-test cluster.
func (fc *faultCluster) newNamespace(t *testing.T) string {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := strings.ToLower(strings.TrimPrefix(t.Name(), "Test"))
	name = regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(name, "-")
	if len(name) > 40 {
		name = name[:40]
	}
	name = strings.Trim(name, "-") + "-" + hex.EncodeToString(b)
	if _, err := fc.client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// createPods creates pods named prefix-000... with several workers.
func createPods(t *testing.T, c kubernetes.Interface, ns, prefix string, n int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	err := parallel(context.Background(), names, 8, func(ctx context.Context, name string) error {
		_, err := c.CoreV1().Pods(ns).Create(ctx, pod(name, map[string]string{"app": prefix}), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("creating pods: %v", err)
	}
	return names
}

// patchPods gives each pod rounds label changes (each a new resourceVersion, so one
// MODIFIED event), spread over workers goroutines; it returns the changes made. Each
// pod is changed by one worker, with updates (protobuf with the fault cluster's client:
// the cheapest write for the server) of the object the last one returned.
func patchPods(ctx context.Context, c kubernetes.Interface, ns string, names []string, rounds, workers int) (int, error) {
	var done atomic.Int64
	err := parallel(ctx, names, workers, func(ctx context.Context, name string) error {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for r := range rounds {
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			p.Labels["round"] = fmt.Sprintf("r%d", r)
			if p, err = c.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating %s: %w", name, err)
			}
			done.Add(1)
		}
		return nil
	})
	return int(done.Load()), err
}

// churn patches pods without end until ctx ends, at about perSecond patches a second.
func churn(ctx context.Context, c kubernetes.Interface, ns string, names []string, perSecond int) *sync.WaitGroup {
	var wg sync.WaitGroup
	const workers = 4
	for w := range workers {
		wg.Go(func() {
			tick := time.NewTicker(time.Second * workers / time.Duration(perSecond))
			defer tick.Stop()
			for i := w; ; i += workers {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				name := names[i%len(names)]
				patch := fmt.Sprintf(`{"metadata":{"labels":{"churn":"c%d"}}}`, i)
				_, _ = c.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			}
		})
	}
	return &wg
}

// parallel runs f on every item with at most workers at once; the first error wins.
func parallel(ctx context.Context, items []string, workers int, f func(context.Context, string) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for item := range work {
				if err := f(ctx, item); err != nil {
					cancel(err)
				}
			}
		})
	}
	for _, item := range items {
		select {
		case work <- item:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	return context.Cause(ctx)
}

// lineCounter counts the lines of a growing file, reading only what was added.
type lineCounter struct {
	path   string
	offset int64
	lines  int
}

func (c *lineCounter) count() int {
	f, err := os.Open(c.path)
	if err != nil {
		return c.lines
	}
	defer f.Close()
	if _, err := f.Seek(c.offset, io.SeekStart); err != nil {
		return c.lines
	}
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		c.lines += bytes.Count(buf[:n], []byte{'\n'})
		c.offset += int64(n)
		if err != nil {
			return c.lines
		}
	}
}

// waitLines waits until every file has at least n lines; it fails the test, naming
// the counts, after timeout, or when p exits.
func waitLines(t *testing.T, p *proc, timeout time.Duration, n int, paths ...string) {
	t.Helper()
	counters := make([]*lineCounter, len(paths))
	for i, path := range paths {
		counters[i] = &lineCounter{path: path}
	}
	deadline := time.Now().Add(timeout)
	for {
		ok := true
		var counts []string
		for _, c := range counters {
			got := c.count()
			ok = ok && got >= n
			counts = append(counts, fmt.Sprintf("%s: %d", filepath.Base(c.path), got))
		}
		if ok {
			return
		}
		if time.Now().After(deadline) || (p != nil && !p.Alive()) {
			stderr := ""
			if p != nil {
				stderr = p.Stderr()
			}
			t.Fatalf("want %d lines in each of %s within %s; have %s; stderr:\n%s", n, strings.Join(paths, ", "), timeout, strings.Join(counts, ", "), stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readEvents parses a JSON Lines file; every line must be a whole JSON envelope.
func readEvents(t *testing.T, path string) []envelope {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseEvents(t, path, data)
}

func parseEvents(t *testing.T, what string, data []byte) []envelope {
	t.Helper()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("%s: last line is not whole: %q", what, tail(data, 200))
	}
	var evs []envelope
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		var ev envelope
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s:%d: not a JSON envelope: %v: %q", what, n, err, tail(sc.Bytes(), 200))
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return evs
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// finalStates replays events into each object's last state: name → resourceVersion.
func finalStates(evs []envelope) map[string]string {
	return statesBy(evs, func(m objectMeta) string { return m.Metadata.Name })
}

// statesBy replays events into each object's last state: key(object) → resourceVersion.
func statesBy(evs []envelope, key func(objectMeta) string) map[string]string {
	state := map[string]string{}
	for _, ev := range evs {
		m := ev.meta()
		switch ev.Type {
		case "ADDED", "MODIFIED":
			state[key(m)] = m.Metadata.ResourceVersion
		case "DELETED":
			delete(state, key(m))
		}
	}
	return state
}

// kindName keys an object by kind and name, for a watch of several types.
func kindName(m objectMeta) string { return m.Kind + "/" + m.Metadata.Name }

// liveStates is `kubectl get TYPES -o json` as kind/name → resourceVersion.
func (fc *faultCluster) liveStates(t *testing.T, ns, types string) map[string]string {
	t.Helper()
	var list struct {
		Items []objectMeta `json:"items"`
	}
	if err := json.Unmarshal([]byte(fc.kubectl(t, "get", types, "-n", ns, "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, item := range list.Items {
		state[kindName(item)] = item.Metadata.ResourceVersion
	}
	return state
}

// converge waits until the events in path leave every object of types (kubectl's
// TYPE[,TYPE...]) in ns in the state kubectl reports, and returns the events.
func (fc *faultCluster) converge(t *testing.T, p *proc, path, ns, types string, timeout time.Duration) []envelope {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		data, _ := os.ReadFile(path)
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i+1]
		} else {
			data = nil
		}
		evs := parseEvents(t, path, data)
		diff := stateDiff(statesBy(evs, kindName), fc.liveStates(t, ns, types))
		if diff == "" {
			return evs
		}
		if time.Now().After(deadline) || !p.Alive() {
			t.Fatalf("kubeevents' final states do not match kubectl get after %s:\n%s\nstderr:\n%s", timeout, diff, p.Stderr())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func stateDiff(got, want map[string]string) string {
	var b strings.Builder
	for name, rv := range want {
		if got[name] != rv {
			fmt.Fprintf(&b, "  %s: kubeevents rv %q, kubectl rv %q\n", name, got[name], rv)
		}
	}
	for name, rv := range got {
		if _, ok := want[name]; !ok {
			fmt.Fprintf(&b, "  %s: kubeevents has it (rv %q), kubectl does not\n", name, rv)
		}
	}
	return b.String()
}

// checkNoReprints fails the test for an object printed twice at one resourceVersion
// (ADDED/MODIFIED), and for SYNC events, which a watch without --resync never prints.
func checkNoReprints(t *testing.T, evs []envelope) {
	t.Helper()
	seen := map[string]bool{}
	for _, ev := range evs {
		m := ev.meta().Metadata
		switch ev.Type {
		case "SYNC":
			t.Errorf("SYNC event for %s (rv %s) without --resync", m.Name, m.ResourceVersion)
		case "ADDED", "MODIFIED":
			key := m.Name + "@" + m.ResourceVersion
			if seen[key] {
				t.Errorf("%s printed again at unchanged resourceVersion %s (%s)", m.Name, m.ResourceVersion, ev.Type)
			}
			seen[key] = true
		}
	}
}

// summary is kubeevents' exit line (-v=1): "stopped after N events — NAME N delivered,
// N dropped; NAME ...", parsed into the event count and per sink counts.
type summary struct {
	events uint64
	sinks  map[string]map[string]uint64 // sink → "delivered"/"dropped"/... → count
}

var summaryRE = regexp.MustCompile(`(?m)^kubeevents: stopped after ([\d,]+) events? — (.*)$`)

func parseSummary(t *testing.T, stderr string) summary {
	t.Helper()
	m := summaryRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no exit summary on stderr:\n%s", stderr)
	}
	s := summary{events: parseCount(t, m[1]), sinks: map[string]map[string]uint64{}}
	for _, part := range strings.Split(m[2], "; ") {
		counts := map[string]uint64{}
		fields := strings.Split(part, ", ")
		first := strings.Fields(fields[0]) // NAME N delivered
		if len(first) != 3 {
			t.Fatalf("summary part %q: want NAME N delivered", part)
		}
		counts[first[2]] = parseCount(t, first[1])
		for _, f := range fields[1:] {
			nw := strings.Fields(f)
			if len(nw) != 2 {
				t.Fatalf("summary part %q", part)
			}
			counts[nw[1]] = parseCount(t, nw[0])
		}
		s.sinks[first[0]] = counts
	}
	return s
}

func parseCount(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatalf("count %q: %v", s, err)
	}
	return n
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func randomDuration(min, max time.Duration) time.Duration {
	n, _ := rand.Int(rand.Reader, big.NewInt(int64(max-min)))
	return min + time.Duration(n.Int64())
}

func createFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestFaultAPIServerRestart kills kube-apiserver mid-stream (SIGKILL, back after 10 s):
// kubeevents keeps running, says the watch was lost and how it came back, prints the
// pods deleted while the server was down as DELETED (finalStateUnknown), does not print
// unchanged pods again, and ends with every pod in the state kubectl shows.
func TestFaultAPIServerRestart(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	names := createPods(t, fc.client, ns, "p", 12)
	out := filepath.Join(t.TempDir(), "stdout.jsonl")
	p := startProc(t, createFile(t, out), nil, "watch", "pods", "-n", ns, "-o", "json", "--kubeconfig", fc.kubeconfig)
	waitLines(t, p, eventWait, 12, out)
	if _, err := patchPods(context.Background(), fc.client, ns, names[0:3], 1, 3); err != nil {
		t.Fatal(err)
	}
	waitLines(t, p, eventWait, 15, out)

	restarted := fc.restartAPIServer(t, 10*time.Second)
	p.waitStderr(8*time.Second, regexp.MustCompile(`watch of pods lost \([^)]+\); retrying`))
	// Deleted while the server is down: no watch can see these.
	for _, name := range names[3:6] {
		fc.etcdDelete(t, "/registry/pods/"+ns+"/"+name)
	}
	select { // kubeevents rides the outage out
	case err := <-restarted:
		if err != nil {
			t.Fatal(err)
		}
	case <-p.Exited():
		t.Fatalf("kubeevents exited (code %d) while the server was down; stderr:\n%s", p.ExitCode(), p.Stderr())
	}
	// Changed after the server is back, perhaps before kubeevents reconnects.
	if _, err := patchPods(context.Background(), fc.client, ns, names[6:9], 2, 3); err != nil {
		t.Fatal(err)
	}
	for _, name := range names[9:11] {
		if err := fc.client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createPods(t, fc.client, ns, "after", 3)

	evs := fc.converge(t, p, out, ns, "pods", 90*time.Second)
	// The deletions behind the watch can only be seen by a re-list.
	p.waitStderr(10*time.Second, regexp.MustCompile(`re-synced [\d,]+ pods \(\d+ changed, \d+ created, [1-9]\d* deleted while disconnected\)`))
	stderr := p.Stderr()
	if strings.Contains(stderr, "resumed; no events were missed") && strings.Contains(stderr, "re-synced") {
		t.Errorf("stderr says the watch resumed with nothing missed, and then re-synced:\n%s", stderr)
	}
	deleted := map[string]envelope{}
	for _, ev := range evs {
		if ev.Type == "DELETED" {
			deleted[ev.name()] = ev
		}
	}
	for _, name := range names[3:6] {
		ev, ok := deleted[name]
		switch {
		case !ok:
			t.Errorf("%s, deleted while the server was down, was not reported DELETED", name)
		case !ev.FinalStateUnknown:
			t.Errorf("%s, deleted while the server was down, is DELETED without finalStateUnknown", name)
		}
	}
	for _, name := range names[9:11] {
		if _, ok := deleted[name]; !ok {
			t.Errorf("%s, deleted after the outage, was not reported DELETED", name)
		}
	}
	checkNoReprints(t, evs)
	if _, code := p.interrupt(15 * time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0; stderr:\n%s", code, p.Stderr())
	}
	t.Logf("stderr:\n%s", p.Stderr())
}

// TestFaultAPIServerRestartSecrets: the same outage on a resource kubeevents watches
// through its own JSON watch decoding (Secrets, redacted, go the dynamic way, as custom
// resources do): the outage is reported as a lost watch, not as a decoding failure, and
// what changed meanwhile arrives, redacted.
func TestFaultAPIServerRestartSecrets(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	create := func(name string) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"password": "hunter2"}}
		if _, err := fc.client.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	out := filepath.Join(t.TempDir(), "stdout.jsonl")
	p := startProc(t, createFile(t, out), nil, "watch", "secrets", "-n", ns, "-o", "json", "--kubeconfig", fc.kubeconfig)
	waitLines(t, p, eventWait, 1, out)

	restarted := fc.restartAPIServer(t, 5*time.Second)
	// client-go's JSON watch sees the dead connection as a broken stream, so the reflector
	// re-lists rather than re-watches (as with the dynamic client's own watch).
	p.waitStderr(8*time.Second, regexp.MustCompile(`watch of secrets lost( \([^)]+\); retrying|; re-listing)`))
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	create("after")
	waitLines(t, p, 60*time.Second, 2, out)
	if stderr := p.Stderr(); strings.Contains(stderr, "decode") {
		t.Errorf("the outage was reported as a decoding failure:\n%s", stderr)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"name":"after"`) || strings.Contains(string(raw), "hunter2") {
		t.Errorf("output after the outage:\n%s", raw)
	}
	if _, code := p.interrupt(15 * time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0; stderr:\n%s", code, p.Stderr())
	}
	t.Logf("stderr:\n%s", p.Stderr())
}

// TestFaultServerDownAtStartup: a server that is down, or that never answers, when
// kubeevents starts is one clear error and exit 1 within --request-timeout or so, not a
// hang, and no output file is left behind.
func TestFaultServerDownAtStartup(t *testing.T) {
	fc := faultsCluster(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn // accept and never answer
		for {
			c, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	cases := []struct {
		name, server, want string
		within             time.Duration
		killAPIServer      bool
	}{
		{"closed port", "https://127.0.0.1:1", `cannot reach the API server at https://127\.0\.0\.1:1: connection refused \(is the cluster up\?`, 5 * time.Second, false},
		{"no answer", "https://" + silent.Addr().String(), `cannot reach the API server at https://127\.0\.0\.1:\d+: no answer within 2s \(is the cluster up\? check --kubeconfig, --context and --server; --request-timeout sets how long to wait\)$`, 12 * time.Second, false},
		{"apiserver killed", "", `cannot reach the API server at https://127\.0\.0\.1:` + fc.apiPort + `: connection refused`, 5 * time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"watch", "pods", "--kubeconfig", fc.kubeconfig, "--request-timeout", "2s",
				"--cache-dir", filepath.Join(dir, "cache"), "--sink", "file=" + filepath.Join(dir, "events.jsonl")}
			if c.server != "" {
				args = append(args, "--server", c.server)
			}
			var restarted <-chan error
			if c.killAPIServer {
				restarted = fc.restartAPIServer(t, 6*time.Second)
			}
			start := time.Now()
			r := runKubeevents(t, 60*time.Second, args...)
			took := time.Since(start)
			if restarted != nil {
				if err := <-restarted; err != nil {
					t.Fatal(err)
				}
			}
			if r.code != 1 {
				t.Errorf("exit code %d, want 1; stderr %q", r.code, r.stderr)
			}
			if took > c.within {
				t.Errorf("took %s, want at most %s", took.Round(time.Millisecond), c.within)
			}
			checkOneLine(t, r.stderr, regexp.MustCompile(`^kubeevents: `+c.want))
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err == nil {
				t.Errorf("the file sink's file was left behind")
			}
		})
	}
}

// checkOneLine fails unless stderr is exactly one line matching re.
func checkOneLine(t *testing.T, stderr string, re *regexp.Regexp) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1 || !re.MatchString(lines[0]) || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr = %q, want one line matching %s", stderr, re)
	}
}

// TestFaultCompaction: kubeevents' watch falls behind (the process is stopped) while
// pods change; then, with kube-apiserver down, two pods are deleted straight from etcd
// and etcd is compacted, so the watch's resourceVersion is too old (410 Gone) when the
// server is back: kubeevents re-lists, reports the deletions it could not have watched,
// prints no duplicates for unchanged pods, and every pod ends in the state kubectl shows.
func TestFaultCompaction(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	names := createPods(t, fc.client, ns, "p", 20)
	out := filepath.Join(t.TempDir(), "stdout.jsonl")
	p := startProc(t, createFile(t, out), nil, "watch", "pods", "-n", ns, "-o", "json", "--kubeconfig", fc.kubeconfig)
	waitLines(t, p, eventWait, 20, out)

	p.signal(syscall.SIGSTOP)
	if _, err := patchPods(context.Background(), fc.client, ns, names[0:10], 20, 4); err != nil {
		t.Fatal(err)
	}
	for _, name := range names[10:13] {
		if err := fc.client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createPods(t, fc.client, ns, "new", 5)
	restarted := fc.restartAPIServer(t, 3*time.Second)
	for _, name := range names[13:15] {
		fc.etcdDelete(t, "/registry/pods/"+ns+"/"+name)
	}
	fc.compact(t)
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	p.signal(syscall.SIGCONT)
	if _, err := patchPods(context.Background(), fc.client, ns, names[15:17], 1, 2); err != nil {
		t.Fatal(err)
	}

	evs := fc.converge(t, p, out, ns, "pods", 90*time.Second)
	p.waitStderr(10*time.Second, regexp.MustCompile(`re-synced [\d,]+ pods \(\d+ changed, \d+ created, [1-9]\d* deleted while disconnected\)`))
	for _, name := range names[13:15] {
		found := false
		for _, ev := range evs {
			found = found || (ev.Type == "DELETED" && ev.name() == name && ev.FinalStateUnknown)
		}
		if !found {
			t.Errorf("%s, deleted behind the watch, is not DELETED with finalStateUnknown", name)
		}
	}
	checkNoReprints(t, evs)
	if _, code := p.interrupt(15 * time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0", code)
	}
	t.Logf("stderr:\n%s", p.Stderr())
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
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Opened for reading first, so kubeevents' open for writing does not wait; not read
	// until the end, so the sink stalls once the pipe's buffer is full.
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
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
	names := createPods(t, fc.client, ns, "ctrlc", 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wg := churn(ctx, fc.client, ns, names, 300)
	defer wg.Wait()
	defer cancel()
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

// TestFaultHeadUnderLoad: `kubeevents ... | head -1` while events pour in: once the
// reader is gone kubeevents ends within a second, quietly, with exit 0.
func TestFaultHeadUnderLoad(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	names := createPods(t, fc.client, ns, "head", 50)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wg := churn(ctx, fc.client, ns, names, 300)
	defer wg.Wait()
	defer cancel()
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
			waitUntil(t, p, eventWait, "kubeevents blocked on a full pipe", func() bool { return pipeFull(t, r) })
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
	script := fmt.Sprintf("set -o pipefail; %q watch pods -n %s --kubeconfig %q -o json | head -1 >/dev/null", binary, ns, fc.kubeconfig)
	start := time.Now()
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("pipeline | head -1: %v, output %q; want exit 0 and nothing on stderr", err, out)
	}
	t.Logf("pipeline | head -1 took %s in all", time.Since(start).Round(time.Millisecond))
}

// pipeFull reports whether the pipe whose read end is r holds all it can: its writer,
// with more to write, waits.
func pipeFull(t *testing.T, r *os.File) bool {
	t.Helper()
	raw, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var queued, size int
	var errQueued, errSize error
	if err := raw.Control(func(fd uintptr) {
		queued, errQueued = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD: bytes to read
		size, errSize = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
	}); err != nil {
		t.Fatal(err)
	}
	if errQueued != nil || errSize != nil {
		t.Fatalf("reading the pipe's fill: %v, %v", errQueued, errSize)
	}
	return queued >= size
}
