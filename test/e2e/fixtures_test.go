package e2e

// What the tests share around a kubeevents they launched (harness_test.go): namespaces
// and the objects made in them, a second cluster, receivers of what kubeevents sends,
// reading what it printed (events, files, summaries), and the waits.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeevents/kubeevents/internal/notify/notifytest"
)

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

// stalledFIFO makes a FIFO at path for a sink to write into, and returns its read end,
// which the test reads only when it chooses: opened first, so that kubeevents' open for
// writing does not wait; unread, so that the sink stalls once the pipe is full. It is
// closed when the test ends.
func stalledFIFO(t *testing.T, path string) *os.File {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close() })
	return reader
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

func labelPod(t *testing.T, ns, name, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if _, err := client.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("labelling pod %s/%s: %v", ns, name, err)
	}
}

// labelled configmaps are what these tests watch (-l sinks-act=yes): the namespace's own
// kube-root-ca.crt is left out.
func createLabelled(t *testing.T, ns string, names ...string) {
	t.Helper()
	createLabelledIn(t, client, ns, names...)
}

// createLabelledIn is createLabelled in the cluster of c.
func createLabelledIn(t *testing.T, c kubernetes.Interface, ns string, names ...string) {
	t.Helper()
	for _, name := range names {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"sinks-act": "yes"}},
			Data: map[string]string{"n": "0"}}
		if _, err := c.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating configmap %s/%s: %v", ns, name, err)
		}
	}
}

func names(prefix string, from, to int) []string {
	var ns []string
	for i := from; i < to; i++ {
		ns = append(ns, fmt.Sprintf("%s-%03d", prefix, i))
	}
	return ns
}

// crashLooping is a pod whose containers kwok crash-loops quickly (hack/kwok/stages.yaml):
// every crash is one event in which crashloop and not-ready happen together.
func crashLooping(name string, containers int) *corev1.Pod {
	p := pod(name, map[string]string{"sim.kubeevents.dev/behavior": "crashloop"})
	p.Spec.SchedulerName = ""
	p.Annotations = map[string]string{"sim.kubeevents.dev/crash-after-ms": "500ms", "sim.kubeevents.dev/restart-after-ms": "1s",
		"pod-create.stage.kwok.x-k8s.io/delay": "100ms", "pod-ready.stage.kwok.x-k8s.io/delay": "100ms"}
	if containers > 1 {
		p.Spec.Containers = nil
		for i := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
				Name: fmt.Sprintf("sidecar-with-a-name-as-long-as-the-team-could-make-it-%03d", i), Image: "nginx:1.27"})
		}
	}
	return p
}

// applyJSON creates an object from JSON with kubectl (namespace "" for cluster-scoped).
func applyJSON(t *testing.T, ns, manifest string) {
	t.Helper()
	args := []string{"apply", "-f", "-"}
	if ns != "" {
		args = append(args, "-n", ns)
	}
	cmd := exec.Command(clusterBin+"/kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// waitForResource waits until discovery serves a newly created CRD.
func waitForResource(t *testing.T, resource string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		cmd := exec.Command(clusterBin+"/kubectl", "--kubeconfig", kubeconfig, "get", resource, "-A")
		if err := cmd.Run(); err == nil {
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("%s was not served within 30s", resource)
}

// kubectlOut runs the cached kubectl against the local cluster.
func kubectlOut(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(clusterBin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// kubectlRun runs kubectl against the test cluster.
func kubectlRun(args ...string) error {
	cmd := exec.Command(clusterBin+"/kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// livingWait bounds how long the controllers and kwok take to move an object along.
const livingWait = 90 * time.Second

// requireLiving skips (or, under CI, fails) a test on a cluster without simulated nodes.
func requireLiving(t *testing.T) {
	t.Helper()
	nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil {
		t.Fatalf("listing nodes: %v", err)
	}
	if len(nodes.Items) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the local cluster has no simulated nodes: start it in living mode (hack/cluster.sh up)")
		}
		t.Skip("the local cluster is bare (no simulated nodes); start it with hack/cluster.sh up in living mode")
	}
}

func createLivingDeployment(t *testing.T, ns, name, image string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	grace := int64(3)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				// A short grace period: kwok removes a deleted pod once it is over.
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "app", Image: image}}},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}
}

// podState is what the living tests read of a pod in a JSON event.
type podState struct {
	Metadata struct {
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
		OwnerReferences   []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		PodIP      string `json:"podIP"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
		ContainerStatuses []struct {
			RestartCount int `json:"restartCount"`
			State        struct {
				Waiting *struct {
					Reason string `json:"reason"`
				} `json:"waiting"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

func (e envelope) pod(t *testing.T) podState {
	t.Helper()
	var p podState
	if err := json.Unmarshal(e.Object, &p); err != nil {
		t.Fatalf("event object is not a pod: %v", err)
	}
	return p
}

func (p podState) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

func (p podState) runningReady() bool {
	return p.Status.Phase == "Running" && p.ready() && strings.HasPrefix(p.Spec.NodeName, "kwok-node-") && p.Status.PodIP != ""
}

// waitPodsReady reads JSON pod events until n distinct pods (that pass keep) have been
// seen Running and Ready on a simulated node; it returns their names.
func waitPodsReady(t *testing.T, js *proc, n int, keep func(podState) bool) map[string]bool {
	t.Helper()
	ready := map[string]bool{}
	js.waitJSON(livingWait, fmt.Sprintf("%d pods Running and Ready", n), func(ev envelope) bool {
		if ev.Type == "DELETED" {
			return false
		}
		p := ev.pod(t)
		if keep(p) && p.runningReady() && p.Metadata.DeletionTimestamp == nil {
			ready[p.Metadata.Name] = true
		}
		return len(ready) >= n
	})
	return ready
}

// secondCluster is the second local cluster: its state directory (for hack/cluster.sh),
// kubeconfig and client.
type secondCluster struct {
	dir, kubeconfig string
	client          *kubernetes.Clientset
}

// twoClusters returns the second cluster and a kubeconfig with four contexts: "one"
// (the test cluster), "two" (the second cluster), "bad" (the second cluster with a
// token it does not know) and "gone" (a server that is not there). Without a second cluster the test is skipped, and fails
// under CI=true.
func twoClusters(t *testing.T) (*secondCluster, string) {
	t.Helper()
	dir := os.Getenv("KUBEEVENTS_SECOND_CLUSTER_DIR")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("KUBEEVENTS_SECOND_CLUSTER_DIR is not set under CI=true; run the tests with 'make test-e2e', which starts the second cluster")
		}
		t.Skip("no second cluster (KUBEEVENTS_SECOND_CLUSTER_DIR unset); run 'make test-e2e'")
	}
	second := &secondCluster{dir: dir, kubeconfig: filepath.Join(dir, "kubeconfig")}
	cfg, err := clientcmd.BuildConfigFromFlags("", second.kubeconfig)
	if err != nil {
		t.Fatalf("second cluster's kubeconfig: %v", err)
	}
	if second.client, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}

	merged := clientcmdapi.NewConfig()
	for _, c := range []struct{ name, path string }{{"one", kubeconfig}, {"two", second.kubeconfig}} {
		kc, err := clientcmd.LoadFromFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		ctx := kc.Contexts[kc.CurrentContext]
		merged.Clusters[c.name] = kc.Clusters[ctx.Cluster]
		merged.AuthInfos[c.name] = kc.AuthInfos[ctx.AuthInfo]
		merged.Contexts[c.name] = &clientcmdapi.Context{Cluster: c.name, AuthInfo: c.name, Namespace: "default"}
	}
	merged.AuthInfos["bad"] = &clientcmdapi.AuthInfo{Token: "not-a-token-" + randomHex(8)}
	merged.Contexts["bad"] = &clientcmdapi.Context{Cluster: "two", AuthInfo: "bad", Namespace: "default"}
	merged.Clusters["gone"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true} // nothing listens there
	merged.Contexts["gone"] = &clientcmdapi.Context{Cluster: "gone", AuthInfo: "bad", Namespace: "default"}
	merged.CurrentContext = "one"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		t.Fatal(err)
	}
	return second, path
}

// namespaceIn creates the namespace ns in the second cluster too (newNamespace made it
// in the first), and deletes it at the end.
func (c *secondCluster) namespaceIn(t *testing.T, ns string) {
	t.Helper()
	if _, err := c.client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s in the second cluster: %v", ns, err)
	}
	t.Cleanup(func() {
		_ = c.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
}

func createConfigMapIn(t *testing.T, c kubernetes.Interface, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating configmap %s/%s: %v", ns, name, err)
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

// onEnvelope is what these tests read of a JSON line: the transitions and a ROLLOUT
// line's rollout besides the envelope.
type onEnvelope struct {
	envelope
	On       []string `json:"on"`
	Unfolded uint64   `json:"unfolded"`
	Folded   int      `json:"folded"`
	Rollout  *struct {
		State   string `json:"state"`
		Message string `json:"message"`
	} `json:"rollout"`
}

// readLines returns the lines of a file, failing the test if one is not valid JSON when
// asJSON is set.
func readLines(t *testing.T, path string, asJSON bool) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if asJSON && !json.Valid([]byte(line)) {
			t.Errorf("%s: not a whole JSON line: %q", filepath.Base(path), line)
		}
		lines = append(lines, line)
	}
	return lines
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// receiver is a real HTTP server on 127.0.0.1 that an http sink posts to. It records
// every request, and answers as it is told: 2xx, a status (with Retry-After), hanging,
// or not at all (down: its port refuses connections until it comes back up).
type receiver struct {
	t    *testing.T
	addr string

	mu       sync.Mutex
	srv      *http.Server
	answers  []answer // the next answers, in order; then 200
	requests []request
}

// answer is how the receiver answers one request.
type answer struct {
	status     int
	retryAfter string
	body       string
	hang       bool // never answer (until the client gives up)
}

// request is one request the receiver got.
type request struct {
	at     time.Time
	header http.Header
	lines  []string
	answer int // the status it was given; 0 for hung
}

func startReceiver(t *testing.T) *receiver {
	r := &receiver{t: t}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	t.Cleanup(r.down)
	return r
}

func (r *receiver) url() string { return "http://" + r.addr + "/hook" }

func (r *receiver) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(r.handle)}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// down closes the port and every connection: the receiver is gone.
func (r *receiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// up serves again on the same port.
func (r *receiver) up() {
	r.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger for a moment
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	r.serve(ln)
}

func (r *receiver) answerNext(as ...answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers = append(r.answers, as...)
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	rec := request{at: time.Now(), header: req.Header.Clone()}
	for line := range strings.SplitSeq(strings.TrimSuffix(string(body), "\n"), "\n") {
		if line != "" {
			rec.lines = append(rec.lines, line)
		}
	}
	r.mu.Lock()
	a := answer{status: http.StatusOK}
	if len(r.answers) > 0 {
		a = r.answers[0]
		r.answers = r.answers[1:]
	}
	if !a.hang {
		rec.answer = a.status
	}
	r.requests = append(r.requests, rec)
	r.mu.Unlock()
	if a.hang {
		<-req.Context().Done()
		return
	}
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

func (r *receiver) got() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// delivered lists the names of the configmaps in the requests answered 2xx, in order.
func (r *receiver) delivered(t *testing.T) []string {
	var names []string
	for _, req := range r.got() {
		if req.answer/100 != 2 {
			continue
		}
		for _, line := range req.lines {
			var ev envelope
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("the receiver got a line that is not an event: %q: %v", line, err)
			}
			names = append(names, ev.name())
		}
	}
	return names
}

// waitDelivered waits until the receiver was given n events; p's stderr is shown if not.
func (r *receiver) waitDelivered(t *testing.T, p interface{ Stderr() string }, n int, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		names := r.delivered(t)
		if len(names) >= n {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d of %d events within %s; stderr:\n%s", len(names), n, timeout, p.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// formatReceiver is an HTTP server that plays the receivers of several formats, one path each,
// and keeps what each got; a request its format refuses is answered 400, or 413 when it
// is over a size limit the service answers so, as the services do, and kept as an error.
type formatReceiver struct {
	t      *testing.T
	srv    *httptest.Server
	byPath map[string]string // path -> format

	mu     sync.Mutex
	bodies map[string][]string // format -> bodies that passed
	errs   []string
}

func newFormatReceiver(t *testing.T, byPath map[string]string) *formatReceiver {
	r := &formatReceiver{t: t, byPath: byPath, bodies: map[string][]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *formatReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	format, ok := r.byPath[req.URL.Path]
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.errs = append(r.errs, fmt.Sprintf("a request to %s, which no format posts to", req.URL.Path))
		http.NotFound(w, req)
		return
	}
	if req.Method != http.MethodPost {
		r.errs = append(r.errs, fmt.Sprintf("%s: method %s, want POST", format, req.Method))
	}
	errs := notifytest.Check(format, notifytest.Request{Path: req.URL.Path, ContentType: req.Header.Get("Content-Type"), Body: body})
	for _, err := range errs {
		r.errs = append(r.errs, fmt.Sprintf("%s: %v\nbody: %s", format, err, body))
	}
	if len(errs) > 0 {
		status := http.StatusBadRequest
		if slices.ContainsFunc(errs, notifytest.IsTooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	r.bodies[format] = append(r.bodies[format], string(body))
	if format == "elasticsearch" {
		// The bulk API answers 200 with each item's result; errors:false says all were taken.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"errors":false,"took":1,"items":[]}`)
	}
}

// got returns the bodies format's receiver took, and fails the test on any refused request.
func (r *formatReceiver) got(format string) []string {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		r.t.Fatalf("the receivers refused requests:\n%s", strings.Join(r.errs, "\n"))
	}
	return slices.Clone(r.bodies[format])
}

// waitBodies waits until format's receiver took a body for which match is true.
func (r *formatReceiver) waitBodies(p *proc, format string, match func(body string) bool) {
	r.t.Helper()
	waitUntil(r.t, p, livingWait, format+"'s receiver took the events", func() bool {
		return slices.ContainsFunc(r.got(format), match)
	})
}

// timedLines is a stdout that notes when each line arrived.
type timedLines struct {
	mu      sync.Mutex
	partial []byte
	lines   []timedLine
}

type timedLine struct {
	at   time.Time
	text string
}

func (l *timedLines) Write(p []byte) (int, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, timedLine{at: now, text: string(l.partial[:i])})
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

// wait returns when the first line containing s arrived, waiting up to timeout for it.
func (l *timedLines) wait(timeout time.Duration, s string) (time.Time, bool) {
	deadline := time.Now().Add(timeout)
	for {
		l.mu.Lock()
		for _, line := range l.lines {
			if strings.Contains(line.text, s) {
				l.mu.Unlock()
				return line.at, true
			}
		}
		l.mu.Unlock()
		if time.Now().After(deadline) {
			return time.Time{}, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// freeAddr is a 127.0.0.1 address whose port is free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// scrape reads /metrics with the Prometheus text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scraping: %v", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := parser.TextToMetricFamilies(bufio.NewReader(resp.Body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return mf
}

// value sums a family's samples whose label has the value ("" matches all).
func value(mf map[string]*dto.MetricFamily, name, labelName, labelValue string) float64 {
	f := mf[name]
	if f == nil {
		return -1
	}
	sum := 0.0
	for _, m := range f.GetMetric() {
		if labelName != "" && label(m, labelName) != labelValue {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		}
	}
	return sum
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// waitMetric waits until a counter, given as name{label="value"}, reaches n.
func waitMetric(t *testing.T, p *proc, addr, sel string, n float64) {
	t.Helper()
	name, lv, _ := strings.Cut(strings.TrimSuffix(sel, "}"), "{")
	ln, lval, _ := strings.Cut(lv, "=")
	lval = strings.Trim(lval, `"`)
	deadline := time.Now().Add(30 * time.Second)
	for value(scrape(t, addr), name, ln, lval) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached %v; stderr:\n%s", sel, n, p.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
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

// resumeLabel selects the test's own ConfigMaps: not the namespace's kube-root-ca.crt,
// which the living cluster's controller adds at its own moment.
const resumeLabel = "resume-test=yes"

func createResumeConfigMap(t *testing.T, ns, name, value string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"resume-test": "yes"}},
		Data:       map[string]string{"k": value},
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating configmap %s: %v", name, err)
	}
}

func patchResumeConfigMap(t *testing.T, ns, name, value string) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"data": map[string]string{"k": value}})
	if _, err := client.CoreV1().ConfigMaps(ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching configmap %s: %v", name, err)
	}
}

func deleteResumeConfigMap(t *testing.T, ns, name string) {
	t.Helper()
	if err := client.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting configmap %s: %v", name, err)
	}
}

// eventSummary is "TYPE name" for each event, sorted: what a resumed start emitted.
func eventSummary(evs []envelope) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type+" "+ev.name())
	}
	sort.Strings(out)
	return out
}

// checkpointed is what the checkpoint file at path holds: object name → resourceVersion
// (kubeevents replaces the file whole, so it is never read half written).
func checkpointed(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var l struct {
			Object *objectMeta `json:"object"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		if l.Object != nil {
			states[l.Object.Metadata.Name] = l.Object.Metadata.ResourceVersion
		}
	}
	return states
}

// resumeCM creates, patches (value != "") or deletes (value == "-") the test's labelled
// ConfigMap name in cluster c.
func resumeCM(t *testing.T, c kubernetes.Interface, ns, name, value string, create bool) {
	t.Helper()
	ctx, cms := context.Background(), c.CoreV1().ConfigMaps(ns)
	var err error
	switch {
	case create:
		_, err = cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"resume-test": "yes"}},
			Data:       map[string]string{"k": value},
		}, metav1.CreateOptions{})
	case value == "-":
		err = cms.Delete(ctx, name, metav1.DeleteOptions{})
	default:
		patch, _ := json.Marshal(map[string]any{"data": map[string]string{"k": value}})
		_, err = cms.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		t.Fatalf("configmap %s/%s: %v", ns, name, err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func patchConfigMap(t *testing.T, ns, name, patch string) {
	t.Helper()
	if _, err := client.CoreV1().ConfigMaps(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching configmap %s/%s: %v", ns, name, err)
	}
}

func createConfigMap(t *testing.T, ns, name string) {
	t.Helper()
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ConfigMap %s: %v", name, err)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func recordEvent(t *testing.T, ns, name, podName, evType, reason, message string) {
	t.Helper()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: podName},
		Type:           evType, Reason: reason, Message: message, Count: 1,
		Source: corev1.EventSource{Component: "e2e"},
	}
	if _, err := client.CoreV1().Events(ns).Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating event: %v", err)
	}
}

// serviceAccountToken creates ServiceAccount name in ns of the cluster of cfg, with a
// Role and RoleBinding (both also called name) granting rules, and returns a token for it.
func serviceAccountToken(t *testing.T, cfg *rest.Config, ns, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ServiceAccount %s/%s: %v", ns, name, err)
	}
	if _, err := c.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Role %s/%s: %v", ns, name, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}
	if _, err := c.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating RoleBinding %s/%s: %v", ns, name, err)
	}
	tr, err := c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a token for %s/%s: %v", ns, name, err)
	}
	// The authorizer sees the binding through its informers: wait until the token works.
	asSA := rest.AnonymousClientConfig(cfg)
	asSA.BearerToken = tr.Status.Token
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		sc, err := kubernetes.NewForConfig(asSA)
		if err == nil {
			if _, err = sc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return tr.Status.Token
}

// clusterEnvelope is the JSON line with its cluster.
type clusterEnvelope struct {
	envelope
	Cluster *string `json:"cluster"`
}

func clusterOf(ev clusterEnvelope) string {
	if ev.Cluster == nil {
		return "(none)"
	}
	return *ev.Cluster
}

func parseClusterEvents(t *testing.T, lines []string) []clusterEnvelope {
	t.Helper()
	var out []clusterEnvelope
	for _, line := range lines {
		var ev clusterEnvelope
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// waitAll reads JSON lines until objects of all these names were seen, in any order:
// the two clusters' events interleave as they come.
func waitAll(s *proc, names ...string) {
	s.t.Helper()
	left := map[string]bool{}
	for _, n := range names {
		left[n] = true
	}
	s.waitJSON(eventWait, "ADDED "+strings.Join(names, ", "), func(ev envelope) bool {
		delete(left, ev.name())
		return len(left) == 0
	})
}

// ownedEvent is what the --owned tests read of a JSON event.
type ownedEvent struct {
	envelope
	Owners  []struct{ Kind, Name string } `json:"owners"`
	Rollout *struct {
		State   string `json:"state"`
		Message string `json:"message"`
	} `json:"rollout"`
	// hasOwners tells "owners":[] (the followed object) from no "owners" at all.
	hasOwners bool
}

func parseOwned(t *testing.T, line string) ownedEvent {
	t.Helper()
	var ev ownedEvent
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("not a JSON line: %q: %v", line, err)
	}
	if err := json.Unmarshal([]byte(line), &ev.envelope); err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal([]byte(line), &raw)
	_, ev.hasOwners = raw["owners"]
	return ev
}

// chain is the owner chain as "Deployment/web>ReplicaSet/web-5d9f".
func (e ownedEvent) chain() string {
	links := make([]string, len(e.Owners))
	for i, o := range e.Owners {
		links[i] = o.Kind + "/" + o.Name
	}
	return strings.Join(links, ">")
}

func (e ownedEvent) kind() string { return e.meta().Kind }

// ownsAny reports whether a ReplicaSet is the one of some of these pods (by the name
// prefix the ReplicaSet gives its pods): the old ReplicaSet owns the old pods.
func (e ownedEvent) ownsAny(oldPods map[string]bool) bool {
	for name := range oldPods {
		if strings.HasPrefix(name, e.name()+"-") {
			return true
		}
	}
	return false
}

type completed struct {
	values    []string // candidates, without descriptions
	directive string
}

// completer runs `kubeevents __complete SUBCOMMAND --kubeconfig ... --cache-dir DIR ARGS...`:
// the connection flags go first so that the last argument stays the word being
// completed. The discovery cache is the test's own.
func completer(t *testing.T) func(subcommand string, args ...string) completed {
	cache := t.TempDir()
	return func(subcommand string, args ...string) completed {
		t.Helper()
		all := append([]string{"__complete", subcommand, "--kubeconfig", kubeconfig, "--cache-dir", cache}, args...)
		start := time.Now()
		r := runKubeevents(t, 20*time.Second, all...)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("completing %q took %s", args, took.Round(time.Millisecond))
		}
		if r.code != 0 {
			t.Fatalf("__complete %q: exit %d, stderr:\n%s", args, r.code, r.stderr)
		}
		return parseCompletion(t, args, r.stdout, r.stderr)
	}
}

func (c completed) has(t *testing.T, what string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(c.values, w) {
			t.Errorf("%s: %q not offered; got %q", what, w, c.values)
		}
	}
}

func (c completed) is(t *testing.T, what string, want ...string) {
	t.Helper()
	if !slices.Equal(c.values, want) {
		t.Errorf("%s: got %q, want %q", what, c.values, want)
	}
	if c.directive != ":4" {
		t.Errorf("%s: directive %s, want :4 (no file completion)", what, c.directive)
	}
}

// waitRecorded waits until the recording at path holds a line that match accepts.
func waitRecorded(t *testing.T, recorder *proc, path string, what string, match func(line string) bool) {
	t.Helper()
	deadline := time.Now().Add(livingWait)
	for {
		raw, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(raw), "\n") {
			if line != "" && match(line) {
				return
			}
		}
		if time.Now().After(deadline) || !recorder.Alive() {
			t.Fatalf("the recording does not hold %s; recorder's stderr:\n%s", what, recorder.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitListed waits for -v=1 --watch-only's notice that the initial list is done, so
// that what the test changes next is seen as a change.
func waitListed(p *proc, watched string) {
	p.t.Helper()
	p.waitStderr(kwokStageWait, regexp.MustCompile(regexp.QuoteMeta(watched)+` listed \(not shown: --watch-only\); changes from here on are shown`))
}

// watchArgs watches the labelled configmaps of ns, from now on, with the summary on.
func watchArgs(ns string, more ...string) []string {
	return append([]string{"watch", "configmaps", "-n", ns, "-l", "sinks-act=yes", "--watch-only", "--no-screen",
		"-v=1", "--kubeconfig", kubeconfig}, more...)
}

// waitWatching waits, for a watch of watchArgs, until kubeevents says it has its
// initial list (not shown: --watch-only): a change made after that is an event.
// "watching" comes before the list, and a change made in between was lost to it.
func waitWatching(t *testing.T, p *proc) {
	t.Helper()
	p.waitStderr(30*time.Second, regexp.MustCompile(`watching configmaps`))
	p.waitStderr(30*time.Second, regexp.MustCompile(`configmaps in \S+ listed \(not shown: --watch-only\); changes from here on are shown`))
}

// summaryOf reads a sink's counts from the exit summary ("hook 12 delivered, 3 dropped").
func summaryOf(t *testing.T, stderr, sink string) map[string]int {
	t.Helper()
	m := regexp.MustCompile(`stopped after [\d,]+ events?.* — (.*)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary in:\n%s", stderr)
	}
	for part := range strings.SplitSeq(m[1], "; ") {
		name, rest, _ := strings.Cut(part, " ")
		if name != sink {
			continue
		}
		counts := map[string]int{}
		for c := range strings.SplitSeq(rest, ", ") {
			num, what, _ := strings.Cut(c, " ")
			n, err := strconv.Atoi(strings.ReplaceAll(num, ",", ""))
			if err != nil {
				t.Fatalf("summary part %q: %v", c, err)
			}
			counts[what] = n
		}
		return counts
	}
	t.Fatalf("no sink %q in the summary %q", sink, m[1])
	return nil
}

func newCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubeevents e2e CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// issue makes a certificate for name signed by ca, writes NAME.crt and NAME.key in dir,
// and returns it.
func issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, name, dir, file string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, file+".crt"), "CERTIFICATE", der)
	writePEM(t, filepath.Join(dir, file+".key"), "EC PRIVATE KEY", keyDER)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
