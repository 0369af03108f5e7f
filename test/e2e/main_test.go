// Package e2e runs the real kubeevents binary, as a user would, against the real local
// local cluster that hack/cluster.sh starts (make test-e2e brings it up and passes its
// kubeconfig in KUBEEVENTS_KUBECONFIG). Each test works in a fresh namespace of its own.
// The cluster is living (controllers, a scheduler, kwok's simulated nodes): tests of
// kubeevents' own mechanics use pods that are never scheduled (pod), so that only the
// test changes them; living_test.go follows what the controllers and nodes do.
package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeevents/kubeevents/internal/proctest"
)

var (
	kubeconfig string // the local cluster's kubeconfig
	clusterBin string // directory with kubectl (and kube-apiserver, etcd)
	binary     string // the kubeevents binary under test
	client     *kubernetes.Clientset
	restConfig *rest.Config
	repoRoot   string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	kubeconfig = os.Getenv("KUBEEVENTS_KUBECONFIG")
	clusterBin = os.Getenv("KUBEEVENTS_CLUSTER_BIN")
	if kubeconfig == "" {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "e2e: KUBEEVENTS_KUBECONFIG is not set under CI=true; run the tests with 'make test-e2e', which starts the local cluster")
			return 1
		}
		fmt.Fprintln(os.Stderr, "e2e: no local cluster (KUBEEVENTS_KUBECONFIG unset); skipping. Run 'make test-e2e'.")
		return 0
	}
	wd, _ := os.Getwd()
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	var err error
	if restConfig, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: kubeconfig:", err)
		return 1
	}
	restConfig.QPS, restConfig.Burst = 200, 400
	if client, err = kubernetes.NewForConfig(restConfig); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kubeevents-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "kubeevents")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Dir = repoRoot
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building kubeevents:", err)
		return 1
	}
	return m.Run()
}

// newNamespace creates a uniquely named namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	name = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			return r
		}
		return '-'
	}, name)
	if len(name) > 40 {
		name = name[:40]
	}
	name = strings.Trim(name, "-") + "-" + hex.EncodeToString(b)
	_, err := client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	// In the living cluster the namespace controller then deletes what the test left
	// (Deployments whose pods would otherwise run, and restart, for ever); in a bare one the
	// namespace stays Terminating, which harms nothing.
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// unscheduled names a scheduler that does not exist: a pod that asks for it is never
// scheduled, so in the living cluster too nothing but the test changes it.
const unscheduled = "kubeevents-none"

// pod is a minimal pod that stays Pending and unscheduled (see unscheduled), so that the
// tests of kubeevents' own mechanics see only the changes they make.
func pod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			SchedulerName: unscheduled,
			Containers:    []corev1.Container{{Name: "app", Image: "nginx:1.27"}},
		},
	}
}

func createPod(t *testing.T, ns, name string, labels map[string]string) *corev1.Pod {
	t.Helper()
	p, err := client.CoreV1().Pods(ns).Create(context.Background(), pod(name, labels), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
	return p
}

func deletePod(t *testing.T, ns, name string) {
	t.Helper()
	zero := int64(0)
	if err := client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("deleting pod %s/%s: %v", ns, name, err)
	}
}

// result is a finished kubeevents run.
type result struct {
	stdout, stderr string
	code           int
}

// runKubeevents runs the binary to completion (it must end by itself within timeout).
func runKubeevents(t *testing.T, timeout time.Duration, args ...string) result {
	t.Helper()
	return kubeevents(t).Run(timeout, args...)
}

// withKubeconfig adds the local cluster's kubeconfig unless the test passes its own.
func withKubeconfig(args []string) []string {
	for _, a := range args {
		if a == "--kubeconfig" || strings.HasPrefix(a, "--kubeconfig=") {
			return args
		}
	}
	return append(append([]string{}, args...), "--kubeconfig", kubeconfig)
}

// cleanEnv is the environment without colour or config settings that would change output.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "NO_COLOR=") || strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_CONFIG_HOME="+os.TempDir()+"/kubeevents-e2e-noconfig")
}

// proc is a running kubeevents (internal/proctest): its stdout read as lines, unless it
// goes elsewhere, and its stderr kept. Its waits fail the test, with what kubeevents
// printed so far, where proctest's return an error; it is killed when the test ends.
type proc struct {
	*proctest.Process
	t      *testing.T
	screen *screen // its terminal, when started with Screen
}

// startKubeevents starts kubeevents with args, its stdout read as lines.
func startKubeevents(t *testing.T, args ...string) *proc {
	t.Helper()
	return kubeevents(t).Start(args...)
}

// startProc starts kubeevents with its stdout going to stdout (a file, a pipe, a buffer
// the test reads) and env added to the clean environment.
func startProc(t *testing.T, stdout io.Writer, env []string, args ...string) *proc {
	t.Helper()
	return kubeevents(t).Stdout(stdout).Env(env...).Start(args...)
}

// fail ends the test for err, a wait's for what, with the output so far.
func (p *proc) fail(err error, what string, timeout time.Duration) {
	p.t.Helper()
	switch {
	case errors.Is(err, proctest.ErrTimeout):
		p.t.Fatalf("no %s within %s; output so far:\n%s\nstderr:\n%s", what, timeout, strings.Join(p.Lines(), "\n"), p.Stderr())
	case errors.Is(err, proctest.ErrOutputEnded), errors.Is(err, proctest.ErrExited):
		p.t.Fatalf("kubeevents ended (%v) before %s; output so far:\n%s\nstderr:\n%s", p.Err(), what, strings.Join(p.Lines(), "\n"), p.Stderr())
	default:
		p.t.Fatalf("waiting for %s: %v; stderr:\n%s", what, err, p.Stderr())
	}
}

// waitFor reads lines until match returns true, failing after timeout.
func (p *proc) waitFor(timeout time.Duration, what string, match func(line string) bool) string {
	p.t.Helper()
	line, err := p.WaitLine(timeout, match)
	if err != nil {
		p.fail(err, what, timeout)
	}
	return line
}

// tryFor reads lines until match returns true (the line, true) or timeout passes ("",
// false); it fails only if kubeevents ends.
func (p *proc) tryFor(timeout time.Duration, what string, match func(line string) bool) (string, bool) {
	p.t.Helper()
	line, err := p.WaitLine(timeout, match)
	if errors.Is(err, proctest.ErrTimeout) {
		return "", false
	}
	if err != nil {
		p.fail(err, what, timeout)
	}
	return line, true
}

// waitJSON reads JSON lines until match returns true.
func (p *proc) waitJSON(timeout time.Duration, what string, match func(ev envelope) bool) envelope {
	p.t.Helper()
	ev, err := proctest.WaitJSON(p.Process, timeout, match)
	if err != nil {
		p.fail(err, what, timeout)
	}
	return ev
}

// collect reads JSON events for d and returns them: for a test that must see that
// nothing more comes.
func (p *proc) collect(d time.Duration) []envelope {
	p.t.Helper()
	var evs []envelope
	end := time.Now().Add(d)
	for {
		ev, err := proctest.WaitJSON(p.Process, time.Until(end), func(envelope) bool { return true })
		if errors.Is(err, proctest.ErrTimeout) || errors.Is(err, proctest.ErrOutputEnded) {
			return evs
		}
		if err != nil {
			p.t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// waitStderr waits until stderr matches re, failing after timeout or once kubeevents
// has ended without it.
func (p *proc) waitStderr(timeout time.Duration, re *regexp.Regexp) {
	p.t.Helper()
	if err := p.WaitStderr(timeout, re.MatchString); err != nil {
		p.fail(err, "stderr matching "+re.String(), timeout)
	}
}

// waitUntil polls cond until it holds, failing the test after timeout, or once p (when
// not nil) has ended.
func waitUntil(t *testing.T, p *proc, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if p != nil && !p.Alive() {
			t.Fatalf("kubeevents ended (%v) before %s; stderr:\n%s", p.Err(), what, p.Stderr())
		}
		if time.Now().After(deadline) {
			stderr := ""
			if p != nil {
				stderr = p.Stderr()
			}
			t.Fatalf("not %s within %s; stderr:\n%s", what, timeout, stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// literal is a pattern that matches s as it is.
func literal(s string) *regexp.Regexp { return regexp.MustCompile(regexp.QuoteMeta(s)) }

// signal sends sig to kubeevents.
func (p *proc) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// interrupt sends SIGINT and waits for the process to end, returning the remaining
// output lines and the exit code.
func (p *proc) interrupt(timeout time.Duration) ([]string, int) {
	p.t.Helper()
	rest, code, err := p.Interrupt(timeout)
	if err != nil {
		p.t.Fatalf("kubeevents did not exit within %s of SIGINT (%v); stderr:\n%s", timeout, err, p.Stderr())
	}
	return rest, code
}

// wait waits for the process to end by itself, returning the remaining output lines
// and the exit code.
func (p *proc) wait(timeout time.Duration) ([]string, int) {
	p.t.Helper()
	rest, code, err := p.Wait(timeout)
	if err != nil {
		p.t.Fatalf("kubeevents did not exit within %s; stderr:\n%s", timeout, p.Stderr())
	}
	return rest, code
}

// envelope is the JSON line kubeevents prints per event.
type envelope struct {
	Type              string          `json:"type"`
	Time              string          `json:"time"`
	Seq               uint64          `json:"seq"`
	Resource          map[string]any  `json:"resource"`
	Object            json.RawMessage `json:"object"`
	Old               json.RawMessage `json:"old"`
	Diff              []diffOp        `json:"diff"`
	FinalStateUnknown bool            `json:"finalStateUnknown"`
	By                []byEntry       `json:"by"`
	ByAmbiguous       bool            `json:"byAmbiguous"`
}

type diffOp struct {
	Op    string    `json:"op"`
	Path  string    `json:"path"`
	Value any       `json:"value"`
	Old   any       `json:"old"`
	By    []byEntry `json:"by"`
}

// byEntry is one field manager of an event's (or a diff operation's) "by".
type byEntry struct {
	Manager     string `json:"manager"`
	Operation   string `json:"operation"`
	Subresource string `json:"subresource"`
	Time        string `json:"time"`
}

type objectMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
		ManagedFields   []any             `json:"managedFields"`
	} `json:"metadata"`
}

func (e envelope) meta() objectMeta {
	var m objectMeta
	_ = json.Unmarshal(e.Object, &m)
	return m
}

func (e envelope) name() string { return e.meta().Metadata.Name }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
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

// checkOneLine fails unless stderr is exactly one line matching re.
func checkOneLine(t *testing.T, stderr string, re *regexp.Regexp) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1 || !re.MatchString(lines[0]) || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr = %q, want one line matching %s", stderr, re)
	}
}
