package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// Shell completion goes through cobra's `__complete` entry point, which the generated
// shell scripts (and kubectl, for the plugin) call with the words typed so far.

const gadgetCRDName = "gadgets.completion.kubeevents.dev"

const gadgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"gadgets.completion.kubeevents.dev"},
 "spec":{"group":"completion.kubeevents.dev","scope":"Namespaced",
  "names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","shortNames":["gdg"]},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

func parseCompletion(t *testing.T, args []string, stdout, stderr string) completed {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line != "" && !strings.HasPrefix(line, "Completion ended with directive:") && !strings.HasPrefix(line, "[Debug]") {
			t.Errorf("__complete %q printed %q on stderr", args, line)
		}
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	c := completed{directive: lines[len(lines)-1]}
	if !strings.HasPrefix(c.directive, ":") {
		t.Fatalf("__complete %q: no directive line:\n%s", args, stdout)
	}
	for _, l := range lines[:len(lines)-1] {
		c.values = append(c.values, strings.SplitN(l, "\t", 2)[0])
	}
	return c
}

func TestCompletion(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "alpha-1", map[string]string{"tier": "front"})
	createPod(t, ns, "alpha-2", map[string]string{"tier": "back"})
	createPod(t, ns, "beta-1", nil)
	complete := completer(t)

	// Start without the CRD (a failed earlier run may have left it), and fill the
	// discovery cache before it exists: completion must find it all the same.
	_ = exec.Command(filepath.Join(clusterBin, "kubectl"), "--kubeconfig", kubeconfig, "delete", "crd", gadgetCRDName,
		"--ignore-not-found", "--wait=true", "--timeout=30s").Run()
	if c := complete("watch", "gad"); slices.Contains(c.values, "gadgets") {
		t.Logf("%s could not be deleted before the test; the stale-cache case is not covered", gadgetCRDName)
	}
	applyJSON(t, "", gadgetCRD)
	t.Cleanup(func() {
		_ = exec.Command(filepath.Join(clusterBin, "kubectl"), "--kubeconfig", kubeconfig, "delete", "crd", gadgetCRDName, "--wait=false").Run()
	})
	waitForResource(t, gadgetCRDName)
	applyJSON(t, ns, `{"apiVersion":"completion.kubeevents.dev/v1","kind":"Gadget","metadata":{"name":"gizmo"}}`)

	t.Run("types", func(t *testing.T) {
		complete("watch", "gad").is(t, "gad (after the cache was filled without it)", "gadgets")
		all := complete("watch", "")
		all.has(t, "all types", "pods", "po", "configmaps", "cm", "deployments", "deploy", "namespaces", "ns", "gadgets", "gdg")
		for _, v := range all.values {
			if strings.Contains(v, "/") || v == "bindings" || v == "tokenreviews" {
				t.Errorf("%q offered: it cannot be listed and watched", v)
			}
		}
		complete("watch", "pods,gd").is(t, "pods,gd", "pods,gdg")
		complete("watch", "gadgets.").is(t, "gadgets.", "gadgets.completion.kubeevents.dev")
		complete("watch", "deployments.").is(t, "deployments.", "deployments.apps")
	})

	t.Run("names", func(t *testing.T) {
		complete("watch", "-n", ns, "pods", "").is(t, "pods", "alpha-1", "alpha-2", "beta-1")
		complete("watch", "-n", ns, "po", "alpha-1", "al").is(t, "po alpha-1 al", "alpha-2")
		complete("watch", "-n", ns, "-l", "tier=front", "pods", "").is(t, "pods -l tier=front", "alpha-1")
		complete("watch", "-n", ns, "pods,gdg", "").is(t, "pods,gdg", "alpha-1", "alpha-2", "beta-1", "gizmo")
		complete("watch", "--namespace="+ns, "gadgets.completion.kubeevents.dev", "").is(t, "gadgets", "gizmo")
		complete("watch", "-A", "pods", "").is(t, "-A pods (names cannot be used with -A)")
		complete("watch", "-A", "namespaces", ns[:len(ns)-4]).is(t, "-A namespaces (cluster-scoped: names work with -A)", ns)
		// No rights: nothing, and no error text in the shell.
		complete("watch", "--context", "nobody", "-n", ns, "pods", "").is(t, "--context nobody")
	})

	t.Run("namespaces", func(t *testing.T) {
		complete("watch", "-n", "").has(t, "-n", ns, "default", "kube-system")
		complete("watch", "-n", ns[:len(ns)-4]).is(t, "-n prefix", ns)
		complete("watch", "--namespace", ns[:len(ns)-4]).is(t, "--namespace prefix", ns)
	})

	t.Run("contexts", func(t *testing.T) {
		complete("watch", "--context", "").is(t, "--context", "admin", "nobody")
		complete("watch", "--context", "n").is(t, "--context n", "nobody")
	})
}

// kubectl runs kubeevents as the plugin `kubectl tail-resources` when it is on PATH as
// kubectl-tail_resources, and completes it through kubectl_complete-tail_resources.
func TestCompletionKubectlPlugin(t *testing.T) {
	if clusterBin == "" {
		t.Fatal("KUBEEVENTS_CLUSTER_BIN is not set; run the tests with 'make test-e2e'")
	}
	ns := newNamespace(t)
	createPod(t, ns, "plugged", nil)
	dir := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(dir, "kubectl-tail_resources")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repoRoot, "completions", "kubectl_complete-tail_resources"), filepath.Join(dir, "kubectl_complete-tail_resources")); err != nil {
		t.Fatal(err)
	}
	kubectlPlugin := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(clusterBin, "kubectl"), args...)
		cmd.Env = append(cleanEnv(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}

	help, _ := kubectlPlugin("tail-resources", "watch", "--help")
	if !strings.Contains(help, "Usage:\n  kubectl tail-resources watch TYPE") || !strings.Contains(help, "  kubectl tail-resources watch pods\n") {
		t.Errorf("help of the plugin does not say kubectl tail-resources:\n%s", help)
	}
	args := []string{"__complete", "tail-resources", "watch", "--kubeconfig", kubeconfig, "-n", ns, "pods", ""}
	stdout, stderr := kubectlPlugin(args...)
	c := parseCompletion(t, args, stdout, stderr)
	c.is(t, "kubectl tail-resources watch pods", "plugged")
}

func TestVersionServer(t *testing.T) {
	// As kubectl version: the server's version unless --client; -s/--server is the
	// server's address, as everywhere else.
	for _, args := range [][]string{{"version"}, {"version", "-s", restConfig.Host}, {"version", "--server=" + restConfig.Host, "-o", "yaml"}} {
		r := runKubeevents(t, 20*time.Second, args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		wants := []string{"version:    ", "client-go:  v0.", "server:     v1."}
		if args[len(args)-1] == "yaml" {
			wants = []string{"clientGoVersion: v0.", "serverVersion:\n", "  gitVersion: v1."}
		}
		for _, want := range wants {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s lacks %q:\n%s", strings.Join(args, " "), want, r.stdout)
			}
		}
	}
	// The API server is told which kubeevents asks (audit logs show it), not client-go's
	// placeholder "kubeevents/v0.0.0 (linux/amd64) kubernetes/$Format".
	client := runKubeevents(t, 20*time.Second, "version", "--client", "-o", "json")
	var v struct{ Version, Commit string }
	if err := json.Unmarshal([]byte(client.stdout), &v); err != nil || v.Version == "" {
		t.Fatalf("version --client -o json: %v\n%s", err, client.stdout)
	}
	r := runKubeevents(t, 20*time.Second, "version", "-v=9")
	want := "kubeevents/" + v.Version + " (" + runtime.GOOS + "/" + runtime.GOARCH + ") kubeevents/"
	agents := regexp.MustCompile(`User-Agent: ([^"]*)"`).FindAllStringSubmatch(r.stderr, -1)
	if len(agents) == 0 {
		t.Errorf("-v=9 shows no request headers:\n%s", r.stderr)
	}
	for _, a := range agents {
		if !strings.HasPrefix(a[1], want) || strings.Contains(a[1], "$Format") {
			t.Errorf("User-Agent %q, want %q followed by the commit", a[1], want)
		}
	}
}
