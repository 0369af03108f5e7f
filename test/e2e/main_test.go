// Package e2e runs the real kubeevents binary, as a user would, against the real local
// local cluster that hack/cluster.sh starts (make test-e2e brings it up and passes its
// kubeconfig in KUBEEVENTS_KUBECONFIG). Each test works in a fresh namespace of its own.
// The cluster is living (controllers, a scheduler, kwok's simulated nodes): tests of
// kubeevents' own mechanics use pods that are never scheduled (pod), so that only the
// test changes them; living_test.go follows what the controllers and nodes do.
package e2e

import (
	"bufio"
	"bytes"
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
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, withKubeconfig(args)...)
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kubeevents %s did not end within %s; stderr:\n%s", strings.Join(args, " "), timeout, stderr.String())
	}
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("running kubeevents: %v", err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code}
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

// stream is a running kubeevents whose output lines are read as they come.
type stream struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string
	mu     sync.Mutex
	stderr bytes.Buffer
	all    []string
	done   chan struct{}
	code   int
}

func startKubeevents(t *testing.T, args ...string) *stream {
	t.Helper()
	return startKubeeventsEnv(t, nil, args...)
}

// startKubeeventsEnv is startKubeevents with env added to the clean environment.
func startKubeeventsEnv(t *testing.T, env []string, args ...string) *stream {
	t.Helper()
	cmd := exec.Command(binary, withKubeconfig(args)...)
	cmd.Env = append(cleanEnv(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &stream{t: t, cmd: cmd, lines: make(chan string, 100000), done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &s.mu, w: &s.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
		err := cmd.Wait()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			s.code = exitErr.ExitCode()
		}
		close(s.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.done
	})
	return s
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (s *stream) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// waitFor reads lines until match returns true, failing after timeout.
func (s *stream) waitFor(timeout time.Duration, what string, match func(line string) bool) string {
	s.t.Helper()
	line, ok := s.tryFor(timeout, what, match)
	if !ok {
		s.t.Fatalf("no %s within %s; output so far:\n%s\nstderr:\n%s", what, timeout, strings.Join(s.all, "\n"), s.Stderr())
	}
	return line
}

// tryFor reads lines until match returns true (the line, true) or timeout passes ("",
// false); it fails only if kubeevents ends.
func (s *stream) tryFor(timeout time.Duration, what string, match func(line string) bool) (string, bool) {
	s.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("kubeevents ended before %s; output so far:\n%s\nstderr:\n%s", what, strings.Join(s.all, "\n"), s.Stderr())
			}
			s.all = append(s.all, line)
			if match(line) {
				return line, true
			}
		case <-deadline:
			return "", false
		}
	}
}

// waitJSON reads JSON lines until match returns true.
func (s *stream) waitJSON(timeout time.Duration, what string, match func(ev envelope) bool) envelope {
	s.t.Helper()
	var found envelope
	s.waitFor(timeout, what, func(line string) bool {
		var ev envelope
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			s.t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		if match(ev) {
			found = ev
			return true
		}
		return false
	})
	return found
}

// interrupt sends SIGINT and waits for the process to end, returning the remaining
// output lines and the exit code.
func (s *stream) interrupt(timeout time.Duration) ([]string, int) {
	s.t.Helper()
	_ = s.cmd.Process.Signal(os.Interrupt)
	return s.wait(timeout)
}

// wait waits for the process to end by itself.
func (s *stream) wait(timeout time.Duration) ([]string, int) {
	s.t.Helper()
	var rest []string
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				<-s.done
				return rest, s.code
			}
			s.all = append(s.all, line)
			rest = append(rest, line)
		case <-deadline:
			s.t.Fatalf("kubeevents did not exit within %s; stderr:\n%s", timeout, s.Stderr())
		}
	}
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
}

type diffOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
	Old   any    `json:"old"`
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
