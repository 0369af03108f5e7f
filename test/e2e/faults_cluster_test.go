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

// watchToFile starts kubeevents on resource in ns (with more arguments), its stdout JSON
// into a file, and waits until the file holds the n objects of the initial list; it
// returns the process and the file's path.
func (fc *faultCluster) watchToFile(t *testing.T, resource, ns string, n int, more ...string) (*proc, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "stdout.jsonl")
	args := append([]string{"watch", resource, "-n", ns, "-o", "json", "--kubeconfig", fc.kubeconfig}, more...)
	p := startProc(t, createFile(t, out), nil, args...)
	waitLines(t, p, eventWait, n, out)
	return p, out
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

// churn patches the pods of ns named names, at about perSecond patches a second, until
// the test ends.
func churn(t *testing.T, c kubernetes.Interface, ns string, names []string, perSecond int) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
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
