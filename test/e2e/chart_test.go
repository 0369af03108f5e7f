package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// The chart (charts/kubeevents) lints, renders into objects the API server accepts
// (kubectl apply --dry-run=server) with its defaults and its other choices, and
// installs: helm install brings its two pods to Running (kwok runs them as simulated
// containers) with the Deployment, ServiceAccount, RBAC, ConfigMap, Service and
// PodDisruptionBudget it renders.
func TestChart(t *testing.T) {
	chart := filepath.Join(repoRoot, "charts", "kubeevents")
	helm(t, "lint", "--strict", chart)
	ns := newNamespace(t)
	checkpointNs := newNamespace(t)
	for _, set := range [][]string{
		nil,
		{"checkpoint.kind=configmap", "leaderElection.enabled=false", "replicaCount=1", "watch.allNamespaces=false", "watch.namespaces={a,b}"},
		{"checkpoint.namespace=" + checkpointNs, "checkpoint.maxSlots=4", "spreadReplicas=false"},
		{"replicaCount=1", "checkpoint.enabled=false", "metrics.service.enabled=false", "secretMounts[0].name=hook",
			"watch.types={deployments.apps,pods}", "watch.excludeNamespaces={kube-system}"},
		{"recorder.enabled=true", "replicaCount=1", "leaderElection.enabled=false"},
	} {
		args := []string{"template", "dry", chart, "--namespace", ns}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		out := kubectlOut(t, helm(t, args...), "apply", "--dry-run=server", "-f", "-")
		for _, kind := range []string{"deployment.apps/dry-kubeevents", "serviceaccount/dry-kubeevents", "clusterrole.rbac.authorization.k8s.io/dry-kubeevents", "configmap/dry-kubeevents"} {
			if !strings.Contains(out, kind+" created (server dry run)") {
				t.Errorf("--set %v: %s not accepted:\n%s", set, kind, out)
			}
		}
	}
	// The config file the ConfigMap carries is one kubeevents takes (values' config: an
	// http sink here; a token from a mounted Secret, file:..., is read where it is mounted).
	rendered := helm(t, "template", "dry", chart, "--show-only", "templates/configmap.yaml", "--set-json",
		`config={"sinks":[{"name":"hook","type":"http","url":"https://hooks.example.com/k8s","headers":"X-Team=payments","batch":50}]}`)
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal([]byte(rendered), &cm); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runKubeevents(t, 30*time.Second, "config", "validate", cfgPath); res.code != 0 || !strings.Contains(res.stderr+res.stdout, "OK, 1 sink") {
		t.Errorf("the chart's config file: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// The recorder: a store sink on a ReadWriteOnce claim, one writer (Recreate).
	if out := helm(t, "template", "dry", chart, "--set", "recorder.enabled=true,replicaCount=1,leaderElection.enabled=false,recorder.maxSize=2GiB"); !strings.Contains(out, "type: Recreate") ||
		!strings.Contains(out, "- --sink=store(max-age=14d,max-size=2GiB)=/var/lib/kubeevents/events.db") ||
		!strings.Contains(out, "accessModes: [ReadWriteOnce]") || !strings.Contains(out, "claimName: dry-kubeevents-store") {
		t.Errorf("the recorder's Deployment and claim:\n%s", out)
	}
	// A ServiceMonitor renders (its CRD is not in this cluster: not applied).
	if out := helm(t, "template", "dry", chart, "--set", "serviceMonitor.enabled=true"); !strings.Contains(out, "kind: ServiceMonitor") {
		t.Errorf("no ServiceMonitor rendered:\n%s", out)
	}
	// What cannot work is refused at render time, in one line: a bad checkpoint kind,
	// replicas without leader election (each would deliver every event, into one
	// checkpoint), a checkpoint of Secrets in ConfigMaps.
	for _, tc := range []struct{ set, want string }{
		{"checkpoint.kind=file", `checkpoint.kind "file": use secret or configmap`},
		{"leaderElection.enabled=false", "replicaCount 2 with leaderElection.enabled=false: replicas that are not elected would each deliver every event, and share one checkpoint; set replicaCount=1, or enable leader election"},
		{"checkpoint.kind=configmap,watch.types={pods,secrets}", "checkpoint.kind configmap with Secrets in watch.types: a checkpoint of Secrets holds the key behind their redacted values' fingerprints (and their values, with --show-secrets), and ConfigMaps may be read by anyone who may view the namespace; use checkpoint.kind=secret"},
		{"checkpoint.kind=configmap,watch.types={Secret.v1.}", "checkpoint.kind configmap with Secrets in watch.types"},
		{"recorder.enabled=true", "recorder.enabled: a store has one writer, on a ReadWriteOnce volume; set replicaCount=1 and leaderElection.enabled=false"},
	} {
		cmd := exec.Command(helmBinary(t), "template", "dry", chart, "--set", tc.set)
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("--set %s: %v\n%s\nwant %q", tc.set, err, out, tc.want)
		}
	}
	// The replicas prefer other nodes and zones, softly: a pod is never left unscheduled.
	if out := helm(t, "template", "dry", chart, "--show-only", "templates/deployment.yaml"); !strings.Contains(out, "preferredDuringSchedulingIgnoredDuringExecution") ||
		!strings.Contains(out, "whenUnsatisfiable: ScheduleAnyway") || strings.Contains(out, "requiredDuringScheduling") {
		t.Errorf("no soft spread of the replicas:\n%s", out)
	}

	release := "ke-" + ns[len(ns)-8:]
	helm(t, "install", release, chart, "--namespace", ns)
	t.Cleanup(func() {
		cmd := exec.Command(helmBinary(t), "uninstall", release, "--namespace", ns)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		_ = cmd.Run()
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		pods, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release})
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 pods Running after 90s: %s", running, kubectlOut(t, "", "get", "pods", "-n", ns, "-o", "wide"))
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, obj := range []string{"deployment/" + release + "-kubeevents", "serviceaccount/" + release + "-kubeevents", "configmap/" + release + "-kubeevents",
		"service/" + release + "-kubeevents-metrics", "poddisruptionbudget/" + release + "-kubeevents", "role/" + release + "-kubeevents", "rolebinding/" + release + "-kubeevents"} {
		kubectlOut(t, "", "get", "-n", ns, obj)
	}
	kubectlOut(t, "", "get", "clusterrole/"+release+"-kubeevents", "clusterrolebinding/"+release+"-kubeevents")

	// The Role lets the ServiceAccount get, update and delete the checkpoint's objects
	// and its Lease, by name, not the namespace's other Secrets (Helm's release Secret);
	// create cannot be limited to names.
	sa := "system:serviceaccount:" + ns + ":" + release + "-kubeevents"
	ckpt := release + "-kubeevents-checkpoint"
	for _, tc := range []struct {
		verb, object string
		want         string
	}{
		{"get", "secret/" + ckpt, "yes"},
		{"update", "secret/" + ckpt + "-0-a", "yes"},
		{"delete", "secret/" + ckpt + "-127-b", "yes"},
		{"get", "secret/" + ckpt + "-128-a", "no"},
		{"get", "secret/sh.helm.release.v1." + release + ".v1", "no"},
		{"update", "secret/sh.helm.release.v1." + release + ".v1", "no"},
		{"delete", "secret/sh.helm.release.v1." + release + ".v1", "no"},
		{"list", "secrets", "no"},
		{"create", "secrets", "yes"},
		{"update", "lease/" + release + "-kubeevents", "yes"},
		{"update", "lease/another", "no"},
	} {
		out, _ := exec.Command(filepath.Join(clusterBin, "kubectl"), "--kubeconfig", kubeconfig, "auth", "can-i", tc.verb, tc.object,
			"-n", ns, "--as", sa).Output()
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("can %s %s %s: %q, want %s", sa, tc.verb, tc.object, got, tc.want)
		}
	}
	dep, err := client.AppsV1().Deployments(ns).Get(context.Background(), release+"-kubeevents", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := dep.Spec.Template.Spec.Affinity; a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		len(dep.Spec.Template.Spec.TopologySpreadConstraints) != 1 {
		t.Errorf("the Deployment's replicas are not spread: affinity %+v, topology spread %+v", a, dep.Spec.Template.Spec.TopologySpreadConstraints)
	}
}

// With no kubeconfig at all, kubeevents uses the pod's ServiceAccount, as client-go's
// in-cluster config reads it: KUBERNETES_SERVICE_HOST and _PORT, and the token, CA and
// namespace under /var/run/secrets/kubernetes.io/serviceaccount. The test gives it
// those in a mount namespace of its own (unshare), where a tmpfs over /run holds the
// ServiceAccount's files, and the chart's RBAC: it watches, and the namespace of
// --resume secret:NAME is the ServiceAccount's.
func TestInClusterConfig(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare (util-linux) to give the process /var/run/secrets of its own")
	}
	ns := newNamespace(t)
	r := applyChartRBAC(t, ns)
	tok, err := client.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), r.fullname,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	host := strings.TrimPrefix(restConfig.Host, "https://")
	hostname, port, _ := strings.Cut(host, ":")
	for name, data := range map[string][]byte{"token": []byte(tok.Status.Token), "ca.crt": restConfig.CAData, "namespace": []byte(ns)} {
		if name == "ca.crt" && len(data) == 0 {
			if data, err = os.ReadFile(restConfig.CAFile); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	createLabelled(t, ns, "in-cluster")
	script := `set -e
mount -t tmpfs tmpfs /run
mkdir -p /run/secrets/kubernetes.io/serviceaccount
cp "$SA_DIR"/* /run/secrets/kubernetes.io/serviceaccount/
test -e /var/run/secrets/kubernetes.io/serviceaccount/token
exec "$@"`
	run := kubeevents(t).NoKubeconfig().Via("unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh").
		OnlyEnv("PATH="+os.Getenv("PATH"), "HOME="+dir, "SA_DIR="+dir,
			"KUBERNETES_SERVICE_HOST="+hostname, "KUBERNETES_SERVICE_PORT="+port).
		Run(90*time.Second, "watch", "configmaps", "-l", "sinks-act=yes", "-o", "json", "--max-events", "1", "--timeout", "60s",
			"--resume", "secret:"+r.checkpoint)
	if run.code != 0 || !strings.Contains(run.stdout, `"name":"in-cluster"`) {
		t.Fatalf("in-cluster: exit %d\nstdout:\n%s\nstderr:\n%s", run.code, run.stdout, run.stderr)
	}
	// The checkpoint went to the ServiceAccount's namespace.
	if _, err := client.CoreV1().Secrets(ns).Get(context.Background(), r.checkpoint, metav1.GetOptions{}); err != nil {
		t.Errorf("no checkpoint in the ServiceAccount's namespace %s: %v", ns, err)
	}
}
