package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Health of any kind, on the living cluster: a custom resource, MyApp, whose controller
// (test/e2e/testcontroller, started by each test for its namespace) behaves as its
// spec.behavior says; and the built-in kinds as the cluster's controllers and kwok's
// nodes move them.

// myAppsCRD is the definition of MyApp, with a status subresource as controllers use.
const myAppsCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"myapps.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced",
  "names":{"plural":"myapps","singular":"myapp","kind":"MyApp"},
  "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

var (
	controllerOnce sync.Once
	controllerBin  string
	controllerErr  error
)

// startMyApps installs MyApp's definition and starts its controller for ns.
func startMyApps(t *testing.T, ns string) {
	t.Helper()
	installMyApps(t)
	startController(t, ns)
}

// installMyApps installs MyApp's definition (left installed: other runs of these tests
// may use it at the same time).
func installMyApps(t *testing.T) {
	t.Helper()
	applyJSON(t, "", myAppsCRD)
	waitForResource(t, "myapps.example.com")
}

// startController starts MyApp's controller for ns, until the test ends.
func startController(t *testing.T, ns string) {
	t.Helper()
	controllerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kubeevents-e2e-controller-")
		if err != nil {
			controllerErr = err
			return
		}
		controllerBin = filepath.Join(dir, "testcontroller")
		build := exec.Command("go", "build", "-o", controllerBin, "./test/e2e/testcontroller")
		build.Dir = repoRoot
		if out, err := build.CombinedOutput(); err != nil {
			controllerErr = fmt.Errorf("building the test controller: %v\n%s", err, out)
		}
	})
	if controllerErr != nil {
		t.Fatal(controllerErr)
	}
	cmd := exec.Command(controllerBin, "-kubeconfig", kubeconfig, "-namespace", ns)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("the test controller said:\n%s", log.String())
		}
	})
}

// createMyApp creates a MyApp whose controller behaves as behavior says, with more spec.
func createMyApp(t *testing.T, ns, name, behavior string, spec map[string]any) {
	t.Helper()
	s := map[string]any{"behavior": behavior}
	for k, v := range spec {
		s[k] = v
	}
	raw, _ := json.Marshal(map[string]any{"apiVersion": "example.com/v1", "kind": "MyApp", "metadata": map[string]any{"name": name}, "spec": s})
	applyJSON(t, ns, string(raw))
}

// healthLine is what these tests read of a JSON line.
type healthLine struct {
	envelope
	Health *struct {
		Status   string `json:"status"`
		Message  string `json:"message"`
		Previous string `json:"previous"`
	} `json:"health"`
	On      []string      `json:"on"`
	Owners  []event0Owner `json:"owners"`
	Rollout *struct {
		State string `json:"state"`
	} `json:"rollout"`
}

type event0Owner struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

func parseHealth(t *testing.T, line string) healthLine {
	t.Helper()
	var h healthLine
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		t.Fatalf("not a JSON line: %v\n%s", err, line)
	}
	return h
}

// statuses are the health statuses of name's events in lines, in order, each once in a
// row.
func statuses(t *testing.T, lines []string, kind, name string) []string {
	var out []string
	for _, l := range lines {
		h := parseHealth(t, l)
		if h.meta().Kind != kind || h.name() != name || h.Health == nil {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != h.Health.Status {
			out = append(out, h.Health.Status)
		}
	}
	return out
}

// The issue's own example: a custom resource followed with what it owns (nothing names
// its children: every namespaced type is watched for their metadata) through Reconciling
// to Ready: exit 0, its health InProgress then Current.
//
// The MyApp is there before its controller runs: with no status yet it is InProgress
// (kstatus alone would call it Current, having no conditions to read).
func TestHealthCustomResourceReady(t *testing.T) {
	ns := newNamespace(t)
	installMyApps(t)
	createMyApp(t, ns, "web", "ready", map[string]any{"delayMs": 2000})
	start := time.Now()
	p := startKubeevents(t, "watch", "myapps.example.com/web", "-n", ns, "--owned", "--until-ready", "--timeout", "60s", "-o", "json")
	first := parseHealth(t, p.waitFor(livingWait, "the MyApp listed", func(string) bool { return true }))
	if first.Health == nil || first.Health.Status != "InProgress" || !strings.Contains(first.Health.Message, "no status yet") {
		t.Errorf("the MyApp before its controller ran: %+v, want InProgress, no status yet", first.Health)
	}
	listed := time.Since(start)
	startController(t, ns)
	rest, code := p.wait(livingWait)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", code, p.Stderr(), strings.Join(p.Lines(), "\n"))
	}
	lines := append(p.Lines(), rest...)
	got := statuses(t, lines, "MyApp", "web")
	if len(got) < 2 || got[len(got)-2] != "InProgress" || got[len(got)-1] != "Current" {
		t.Errorf("the MyApp's health went %q, want InProgress then Current:\n%s", got, strings.Join(lines, "\n"))
	}
	last := parseHealth(t, lines[len(lines)-1])
	if last.name() != "web" || last.Health.Status != "Current" || last.Health.Previous != "InProgress" {
		t.Errorf("the last line is not the MyApp becoming Current: %s", lines[len(lines)-1])
	}
	// A MyApp has no rollout of its own: the followed one's rollout line is its health.
	if last.Rollout == nil || last.Rollout.State != "complete" || first.Rollout == nil || first.Rollout.State != "progressing" {
		t.Errorf("the MyApp's rollout went %+v to %+v, want progressing to complete", first.Rollout, last.Rollout)
	}
	t.Logf("listed after %s (every namespaced type watched for its children), ready after %s; stderr:\n%s",
		listed.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond), p.Stderr())
}

// A custom resource whose controller gives up (Stalled): exit 1, saying why.
func TestHealthCustomResourceFails(t *testing.T) {
	ns := newNamespace(t)
	startMyApps(t, ns)
	createMyApp(t, ns, "web", "stall", map[string]any{"delayMs": 1000})
	r := runKubeevents(t, livingWait, "watch", "myapps.example.com/web", "-n", ns, "--owned", "--until-ready", "--timeout", "60s")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	want := `kubeevents: not ready: myapp "web" failed: spec.config is invalid: replicas must be positive`
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr does not say why:\n%s\nwant %s", r.stderr, want)
	}
	if !strings.Contains(r.stdout, "✗ Failed: spec.config is invalid") {
		t.Errorf("the stream does not show the failure:\n%s", r.stdout)
	}
}

// A failure kstatus cannot see (Ready False with a reason, as Flux says it), taught in
// the config file by a health rule: exit 1, with the rule's message. Without the rule
// it stays InProgress: --timeout, exit 3, saying what it still waited for.
func TestHealthRuleFromConfigFile(t *testing.T) {
	ns := newNamespace(t)
	startMyApps(t, ns)
	createMyApp(t, ns, "web", "fail", map[string]any{"delayMs": 500})
	without := runKubeevents(t, livingWait, "watch", "myapps.example.com", "web", "-n", ns, "--until-ready", "--timeout", "5s")
	if without.code != 3 || !strings.Contains(without.stderr, "timed out after 5s before --until-ready was met (not ready: web)") {
		t.Errorf("without a rule: exit %d, stderr %q; want 3, timed out", without.code, without.stderr)
	}
	config := filepath.Join(t.TempDir(), "config.yaml")
	rule := `health:
  MyApp.example.com:
    jq: |
      first(.object.status.conditions[]? | select(.type == "Ready" and .status == "False" and .reason == "ReconciliationFailed"))
      | {status: "Failed", message: "\(.reason): \(.message)"}
`
	if err := os.WriteFile(config, []byte(rule), 0o600); err != nil {
		t.Fatal(err)
	}
	with := runKubeevents(t, livingWait, "watch", "myapps.example.com", "web", "-n", ns, "--until-ready", "--timeout", "30s", "--config", config)
	if with.code != 1 || !strings.Contains(with.stderr, `not ready: myapp "web" failed: ReconciliationFailed: applying the manifests failed: quota exceeded`) {
		t.Errorf("with the rule: exit %d, stderr %q; want 1 with the rule's message", with.code, with.stderr)
	}
}

// An observedGeneration that lags: Ready True, but for the generation before. kubectl
// wait --for=condition=Ready is satisfied at once; --until-ready waits until the
// controller observed the new generation.
func TestHealthObservedGenerationLags(t *testing.T) {
	ns := newNamespace(t)
	startMyApps(t, ns)
	createMyApp(t, ns, "web", "lag", map[string]any{"delayMs": 4000})
	first := runKubeevents(t, livingWait, "watch", "myapps.example.com/web", "-n", ns, "--until-ready", "--timeout", "30s")
	if first.code != 0 {
		t.Fatalf("the first generation: exit %d; stderr %s", first.code, first.stderr)
	}
	patched := time.Now()
	if err := kubectlRun("-n", ns, "patch", "myapp", "web", "--type=merge", "-p", `{"spec":{"size":2}}`); err != nil {
		t.Fatal(err)
	}
	p := startKubeevents(t, "watch", "myapps.example.com/web", "-n", ns, "--until-ready", "--timeout", "60s", "-o", "json")
	if err := kubectlRun("-n", ns, "wait", "--for=condition=Ready", "myapp/web", "--timeout=60s"); err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl wait --for=condition=Ready returned %s after the new generation", time.Since(patched).Round(time.Millisecond))
	rest, code := p.wait(livingWait)
	took := time.Since(patched)
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, p.Stderr())
	}
	if took < 3*time.Second {
		t.Errorf("--until-ready exited %s after the new generation, before the controller observed it (4s)", took)
	}
	var sawLag bool
	for _, l := range append(p.Lines(), rest...) {
		if h := parseHealth(t, l); h.Health != nil && strings.Contains(h.Health.Message, "generation is 2, but latest observed generation is 1") {
			sawLag = true
		}
	}
	if !sawLag {
		t.Errorf("no event says the generation was not observed yet:\n%s", strings.Join(p.Lines(), "\n"))
	}
}

// Side by side with kubectl wait --for=condition=Ready on the same custom resource:
// kubeevents says it is ready within a second of kubectl.
func TestHealthBesideKubectlWait(t *testing.T) {
	ns := newNamespace(t)
	startMyApps(t, ns)
	createMyApp(t, ns, "web", "ready", map[string]any{"delayMs": 4000})
	var wg sync.WaitGroup
	var kubectlDone time.Time
	var kubectlErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		cmd := exec.Command(clusterBin+"/kubectl", "--kubeconfig", kubeconfig, "-n", ns, "wait", "--for=condition=Ready", "myapp/web", "--timeout=60s")
		out, err := cmd.CombinedOutput()
		kubectlDone = time.Now()
		if err != nil {
			kubectlErr = fmt.Errorf("%v: %s", err, out)
		}
	}()
	r := runKubeevents(t, livingWait, "watch", "myapps.example.com/web", "-n", ns, "--until-ready", "--timeout", "60s")
	ours := time.Now()
	wg.Wait()
	if kubectlErr != nil || r.code != 0 {
		t.Fatalf("kubectl wait: %v; kubeevents: exit %d, %s", kubectlErr, r.code, r.stderr)
	}
	if d := ours.Sub(kubectlDone); d > time.Second || d < -time.Second {
		t.Errorf("kubeevents said ready %s from kubectl wait, want within 1s", d.Round(time.Millisecond))
	}
	t.Logf("kubeevents - kubectl wait = %s", ours.Sub(kubectlDone).Round(time.Millisecond))
}

// A custom resource that owns pods through a Deployment, taught by a rule what it owns:
// --owned --until-ready follows the tree (MyApp › Deployment › ReplicaSet › Pod) and
// exits 0 once the MyApp and everything it owns is Current.
func TestHealthCustomResourceOwnsPods(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	startMyApps(t, ns)
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("health:\n  MyApp.example.com:\n    owns: [deployments.apps, replicasets.apps, pods]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	createMyApp(t, ns, "shop", "deploy", map[string]any{"replicas": 2})
	r := runKubeevents(t, livingWait, "watch", "myapps.example.com/shop", "-n", ns, "--owned", "--until-ready", "--timeout", "80s", "-o", "json", "--config", config, "-v", "1")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	readyPods := map[string]bool{}
	for _, l := range lines {
		h := parseHealth(t, l)
		if h.meta().Kind == "Pod" && h.Health != nil && h.Health.Status == "Current" {
			readyPods[h.name()] = true
			if len(h.Owners) != 3 || h.Owners[0].Kind != "MyApp" || h.Owners[1].Kind != "Deployment" {
				t.Errorf("pod %s: owners %+v, want MyApp › Deployment › ReplicaSet", h.name(), h.Owners)
			}
		}
	}
	if len(readyPods) < 2 {
		t.Errorf("%d pods seen Current, want 2:\n%s", len(readyPods), r.stdout)
	}
	if !strings.Contains(r.stderr, "and what it owns: deployments.apps, replicasets.apps, pods") {
		t.Errorf("the start line does not name the rule's types:\n%s", r.stderr)
	}
}

// --on degraded with an http sink in Slack's format: one post, when the custom resource
// fails, that Slack's checks take and that says why.
func TestHealthDegradedToSlack(t *testing.T) {
	ns := newNamespace(t)
	startMyApps(t, ns)
	rcv := newFormatReceiver(t, map[string]string{"/slack/hook": "slack"})
	p := startKubeevents(t, "watch", "myapps.example.com", "-n", ns, "--on", "degraded", "--no-screen",
		"--sink", "http(format=slack,batch-interval=200ms)="+rcv.srv.URL+"/slack/hook")
	createMyApp(t, ns, "web", "stall", map[string]any{"delayMs": 500})
	createMyApp(t, ns, "fine", "ready", map[string]any{"delayMs": 500})
	rcv.waitBodies(p, "slack", func(body string) bool { return strings.Contains(body, "degraded: MyApp") })
	// The fine one becomes Current meanwhile; give both every chance to post more.
	waitUntil(t, p, livingWait, "the other MyApp Current", func() bool {
		out, _ := exec.Command(clusterBin+"/kubectl", "--kubeconfig", kubeconfig, "-n", ns, "get", "myapp", "fine", "-o", "jsonpath={.status.conditions[0].type}").Output()
		return string(out) == "Ready"
	})
	p.interrupt(10 * time.Second)
	bodies := rcv.got("slack")
	if len(bodies) != 1 || !strings.Contains(bodies[0], ns+"/web") || !strings.Contains(bodies[0], "spec.config is invalid") {
		t.Errorf("slack got %d posts, want one about web's failure, saying why:\n%s", len(bodies), strings.Join(bodies, "\n"))
	}
}

// The built-in kinds on the living cluster, each waited for with --until-ready: what the
// controllers and kwok's nodes make of them, as kstatus judges them.
func TestHealthBuiltins(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	ctx := context.Background()
	run := func(timeout string, args ...string) result {
		t.Helper()
		return runKubeevents(t, livingWait, append(append([]string{"watch"}, args...), "-n", ns, "--until-ready", "--timeout", timeout)...)
	}
	expect := func(what string, r result, code int, stderr string) {
		t.Helper()
		if r.code != code || !strings.Contains(r.stderr, stderr) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", what, r.code, r.stderr, code, stderr)
		}
	}

	createLivingDeployment(t, ns, "web", "nginx:1.27", 2)
	expect("a Deployment rolled out", run("80s", "deployment/web", "--owned"), 0, "")

	createStuckDeployment(t, ns, "stuck", 5)
	expect("a Deployment past its progress deadline", run("80s", "deployment/stuck"), 1, `not ready: deployment "stuck" failed: Progress deadline exceeded`)

	two := int32(2)
	labels := map[string]string{"app": "db"}
	grace := int64(1)
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "db", Image: "postgres:17"}}}}
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("a StatefulSet", run("80s", "statefulset/db"), 0, "")

	agentLabels := map[string]string{"app": "agent"}
	agent := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: agentLabels},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "agent", Image: "busybox"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	if _, err := client.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: agentLabels}, Template: agent}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("a DaemonSet", run("80s", "daemonset/agent"), 0, "")

	job := func(name string, deadline *int64) {
		t.Helper()
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.JobSpec{ActiveDeadlineSeconds: deadline,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector: nodeSelectorFor(deadline), Containers: []corev1.Container{{Name: "run", Image: "busybox"}}}}}}
		if _, err := client.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	job("once", nil)
	expect("a Job that completes", run("80s", "job/once"), 0, "")
	deadline := int64(2)
	job("late", &deadline)
	expect("a Job past its deadline", run("80s", "job/late"), 1, `not ready: job "late" failed: Job Failed`)

	storage := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	empty := ""
	pv := "pv-" + ns
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv},
		Spec: corev1.PersistentVolumeSpec{Capacity: storage, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: "", PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + pv}},
			ClaimRef: &corev1.ObjectReference{Namespace: ns, Name: "data"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().PersistentVolumes().Delete(context.Background(), pv, metav1.DeleteOptions{})
	})
	if _, err := client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &empty, VolumeName: pv, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: storage}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("a PVC bound", run("80s", "pvc/data"), 0, "")

	for name, typ := range map[string]corev1.ServiceType{"plain": corev1.ServiceTypeClusterIP, "public": corev1.ServiceTypeLoadBalancer} {
		if _, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Type: typ, Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expect("a ClusterIP Service", run("30s", "service/plain"), 0, "")
	// No load balancer controller here: it never gets its address, but kstatus calls a
	// LoadBalancer Service Current once it has a cluster IP.
	expect("a LoadBalancer Service", run("30s", "service/public"), 0, "")
}

// nodeSelectorFor keeps a Job with a deadline off every node, so that its deadline, not
// its pod, ends it.
func nodeSelectorFor(deadline *int64) map[string]string {
	if deadline == nil {
		return nil
	}
	return map[string]string{"kubeevents.dev/no-such-node": "true"}
}

// An object InProgress for --stalled-after without progress: a STALLED event, once, that
// --on stalled keeps; with --until-ready, exit 1 saying it stalled.
func TestHealthStalled(t *testing.T) {
	ns := newNamespace(t)
	startMyApps(t, ns)
	createMyApp(t, ns, "slow", "ready", map[string]any{"delayMs": 120000}) // Reconciling for 2 minutes
	p := startKubeevents(t, "watch", "myapps.example.com", "-n", ns, "--stalled-after", "3s", "--on", "stalled", "-o", "json")
	line := parseHealth(t, p.waitFor(livingWait, "the STALLED event", func(string) bool { return true }))
	if line.Type != "STALLED" || line.name() != "slow" || !slices.Contains(line.On, "stalled") ||
		!strings.Contains(line.Health.Message, "no progress for 3s: reconciling generation 1") {
		t.Errorf("not slow's STALLED event: %+v %+v", line.envelope, line.Health)
	}
	if more, ok := p.tryFor(5*time.Second, "a second STALLED event", func(string) bool { return true }); ok {
		t.Errorf("stalled twice without progress: %s", more)
	}
	p.interrupt(10 * time.Second)

	r := runKubeevents(t, livingWait, "watch", "myapps.example.com/slow", "-n", ns, "--until-ready", "--stalled-after", "2s", "--timeout", "60s")
	if r.code != 1 || !strings.Contains(r.stderr, `kubeevents: not ready: myapp "slow" stalled: no progress for 2s: reconciling generation 1`) {
		t.Errorf("--until-ready --stalled-after: exit %d, stderr %q; want 1, stalled", r.code, r.stderr)
	}
}

// A custom resource that nothing says the children of (no rule, no --owned-types):
// --owned watches every namespaced type for its metadata, and finds its Deployment, the
// Deployment's ReplicaSet and their pods by their owners.
func TestHealthOwnedFindsChildren(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	startMyApps(t, ns)
	createMyApp(t, ns, "shop", "deploy", map[string]any{"replicas": 1})
	p := startKubeevents(t, "watch", "myapps.example.com/shop", "-n", ns, "--owned", "-o", "json", "-v", "1")
	want := map[string]string{"Deployment": "MyApp", "ReplicaSet": "MyApp>Deployment", "Pod": "MyApp>Deployment>ReplicaSet"}
	seen := map[string]bool{}
	p.waitFor(livingWait, "the Deployment, its ReplicaSet and its pod, under the MyApp", func(line string) bool {
		h := parseHealth(t, line)
		var links []string
		for _, o := range h.Owners {
			links = append(links, o.Kind)
		}
		if chain, ok := want[h.meta().Kind]; ok {
			if strings.Join(links, ">") != chain {
				t.Errorf("%s %s: chain %q, want %q", h.meta().Kind, h.name(), strings.Join(links, ">"), chain)
			}
			seen[h.meta().Kind] = true
		}
		return len(seen) == len(want)
	})
	p.interrupt(10 * time.Second)
	if !strings.Contains(p.Stderr(), "and what it owns: any of the") {
		t.Errorf("the start line does not say every type is watched:\n%s", p.Stderr())
	}
}
