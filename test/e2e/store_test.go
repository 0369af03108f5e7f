package e2e

// The history store (kubeevents store import, store info, get --at, history --store) on a
// recording kubeevents made of the living cluster: what get prints at a time against what
// kubectl get printed then, the version of a ConfigMap deleted since, and bad input.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestStoreGetAtMatchesKubectl: during a Deployment's rollout, kubectl get deploy,pods
// (and -o wide) is captured at a time T; the recording a file sink made meanwhile is
// imported into a store, and kubeevents get --at T prints what kubectl printed, cell for
// cell (AGE-like cells within a second). A ConfigMap deleted afterwards is still there at
// T, and history --at prints it as kubectl get -o yaml did.
func TestStoreGetAtMatchesKubectl(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.jsonl")
	db := filepath.Join(dir, "events.db")
	recorder := startKubeevents(t, "watch", "deployments,replicasets,pods,configmaps", "-n", ns, "-o", "json",
		"--sink", "file="+path, "-v=1")
	recorder.waitStderr(20*time.Second, literal("watching"))

	at, table, wide, cmYAML := rolloutStory(t, recorder, ns, path)
	waitRecorded(t, recorder, path, "the ConfigMap's deletion", func(line string) bool {
		var ev envelope
		return json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "DELETED" && ev.meta().Kind == "ConfigMap"
	})
	recorder.interrupt(10 * time.Second)

	imported := runKubeevents(t, 60*time.Second, "store", "import", path, "--store", db)
	if imported.code != 0 || !strings.Contains(imported.stderr, "imported") {
		t.Fatalf("store import: exit %d, stderr:\n%s", imported.code, imported.stderr)
	}
	atArg := at.Format(time.RFC3339Nano)
	for _, c := range []struct {
		args []string
		want string
	}{{nil, table}, {[]string{"-o", "wide"}, wide}} {
		got := runKubeevents(t, 30*time.Second, append([]string{"get", "deploy,pods", "-n", ns, "--at", atArg, "--store", db}, c.args...)...)
		if got.code != 0 {
			t.Fatalf("get --at %v: exit %d, stderr:\n%s", c.args, got.code, got.stderr)
		}
		if diff := compareTables(got.stdout, c.want); diff != "" {
			t.Errorf("get deploy,pods --at %s %v: %s\nkubeevents printed:\n%s\nkubectl printed:\n%s", atArg, c.args, diff, got.stdout, c.want)
		}
	}

	now := runKubeevents(t, 30*time.Second, "get", "cm", "-n", ns, "--store", db)
	if now.code != 0 || strings.Contains(now.stdout, "settings") || !strings.Contains(now.stdout, "kube-root-ca.crt") {
		t.Errorf("get cm now: exit %d, the deleted ConfigMap should be gone:\n%s%s", now.code, now.stdout, now.stderr)
	}
	history := runKubeevents(t, 30*time.Second, "history", "cm/settings", "-n", ns, "--store", db, "--at", atArg)
	if history.code != 0 || history.stdout != cmYAML {
		t.Errorf("history cm/settings --at %s: exit %d, stderr %s\ngot:\n%s\nkubectl printed:\n%s", atArg, history.code, history.stderr, history.stdout, cmYAML)
	}
	versions := runKubeevents(t, 30*time.Second, "history", "cm/settings", "-n", ns, "--store", db)
	if versions.code != 0 || !regexp.MustCompile(`(?m)^\S+\s+ADDED\s+settings\s`).MatchString(versions.stdout) ||
		!regexp.MustCompile(`(?m)^\S+\s+DELETED\s+settings\s`).MatchString(versions.stdout) {
		t.Errorf("history cm/settings --store: exit %d, stderr %s, stdout:\n%s", versions.code, versions.stderr, versions.stdout)
	}
	gone := runKubeevents(t, 30*time.Second, "history", "cm/settings", "-n", ns, "--store", db, "--at", "0s")
	if gone.code == 0 || !strings.Contains(gone.stderr, "deleted at") {
		t.Errorf("history of the deleted ConfigMap now: exit %d, stderr %s", gone.code, gone.stderr)
	}

	info := runKubeevents(t, 30*time.Second, "store", "info", db)
	for _, want := range []string{"deployments.apps", "replicasets.apps", "pods", "configmaps", "Versions:"} {
		if info.code != 0 || !strings.Contains(info.stdout, want) {
			t.Errorf("store info: exit %d, no %q in:\n%s%s", info.code, want, info.stdout, info.stderr)
		}
	}
}

// createSlowDeployment creates a Deployment whose pods count as available only after
// minReadySeconds: its rollouts go one pod at a time, with quiet moments in between.
func createSlowDeployment(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	grace := int64(3)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas, MinReadySeconds: 6,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}
}

// captureDuringRollout captures kubectl get deploy,pods (and -o wide) at a moment T when
// the recording holds exactly the versions kubectl printed: every one of them recorded
// at or before T, and no later change of a Deployment or pod recorded by T. It retries
// while the cluster moves under it.
// rolloutStory is what the store's tests record: a Deployment rolled out, a ConfigMap
// "settings" created, the Deployment rolled out again and, once done, the ConfigMap
// deleted. It returns a moment during the second rollout (its pods wait
// minReadySeconds each) that the recording at path and kubectl agree on, with what
// kubectl get printed then (plain and -o wide), and the ConfigMap's YAML before its
// deletion.
func rolloutStory(t *testing.T, recorder *proc, ns, path string) (at time.Time, table, wide, cmYAML string) {
	t.Helper()
	createSlowDeployment(t, ns, "web", 3)
	kubectlOut(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout", "80s")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "a"}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}`
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	at, table, wide = captureDuringRollout(t, recorder, ns, path)
	cmYAML = kubectlOut(t, "", "get", "configmap/settings", "-n", ns, "-o", "yaml")
	kubectlOut(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout", "120s")
	if err := client.CoreV1().ConfigMaps(ns).Delete(context.Background(), "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return at, table, wide, cmYAML
}

func captureDuringRollout(t *testing.T, recorder *proc, ns, path string) (at time.Time, table, wide string) {
	t.Helper()
	deadline := time.Now().Add(livingWait)
	for attempt := 1; time.Now().Before(deadline); attempt++ {
		before := listedVersions(t, ns)
		at = time.Now()
		table = kubectlOut(t, "", "get", "deploy,pods", "-n", ns)
		wide = kubectlOut(t, "", "get", "deploy,pods", "-n", ns, "-o", "wide")
		if after := listedVersions(t, ns); !sameVersions(before, after) || !strings.Contains(table, "pod/web-") {
			continue
		}
		var highest int64
		for key, rv := range before {
			highest = max(highest, rv)
			waitRecorded(t, recorder, path, key+" at resourceVersion "+strconv.FormatInt(rv, 10), func(line string) bool {
				var ev envelope
				return json.Unmarshal([]byte(line), &ev) == nil && ev.meta().Kind+"/"+ev.name() == key && ev.meta().Metadata.ResourceVersion == strconv.FormatInt(rv, 10)
			})
		}
		if recordedAgree(t, path, before, highest, at) {
			t.Logf("captured at %s (attempt %d)", at.Format(time.RFC3339Nano), attempt)
			return at, table, wide
		}
	}
	t.Fatal("no moment during the rollout when the recording agreed with kubectl")
	return
}

// listedVersions are the resourceVersions of the Deployments and pods of ns, by
// KIND/NAME.
func listedVersions(t *testing.T, ns string) map[string]int64 {
	t.Helper()
	var list struct {
		Items []objectMeta `json:"items"`
	}
	if err := json.Unmarshal([]byte(kubectlOut(t, "", "get", "deploy,pods", "-n", ns, "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, item := range list.Items {
		rv, _ := strconv.ParseInt(item.Metadata.ResourceVersion, 10, 64)
		out[item.Kind+"/"+item.Metadata.Name] = rv
	}
	return out
}

func sameVersions(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// recordedAgree reports whether the recording's Deployments and pods at at are those of
// listed: each listed version recorded at or before at, nothing later recorded by then.
func recordedAgree(t *testing.T, path string, listed map[string]int64, highest int64, at time.Time) bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		var ev envelope
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		kind := ev.meta().Kind
		if kind != "Deployment" && kind != "Pod" {
			continue
		}
		when, _ := time.Parse(time.RFC3339Nano, ev.Time)
		rv, _ := strconv.ParseInt(ev.meta().Metadata.ResourceVersion, 10, 64)
		key := kind + "/" + ev.name()
		switch {
		case listed[key] == rv && when.After(at):
			return false // kubectl saw it before kubeevents had it
		case rv > highest && !when.After(at):
			return false // a change after what kubectl saw, recorded by then
		}
	}
	return true
}

// compareTables compares kubectl get's output with kubeevents get's, cell by cell
// (cells are separated by two spaces or more); cells that are durations (AGE, the
// restarts' "(5s ago)") may differ by a second. It returns what differs ("" if nothing).
func compareTables(got, want string) string {
	gotLines, wantLines := strings.Split(strings.TrimRight(got, "\n"), "\n"), strings.Split(strings.TrimRight(want, "\n"), "\n")
	if len(gotLines) != len(wantLines) {
		return fmt.Sprintf("%d lines, want %d", len(gotLines), len(wantLines))
	}
	cell := regexp.MustCompile(`\s{2,}`)
	for i := range wantLines {
		g, w := cell.Split(strings.TrimSpace(gotLines[i]), -1), cell.Split(strings.TrimSpace(wantLines[i]), -1)
		if len(g) != len(w) {
			return fmt.Sprintf("line %d: %d cells, want %d", i+1, len(g), len(w))
		}
		for j := range w {
			if g[j] != w[j] && !closeDurations(g[j], w[j]) {
				return fmt.Sprintf("line %d, cell %d: %q, want %q", i+1, j+1, g[j], w[j])
			}
		}
	}
	return ""
}

var durationCell = regexp.MustCompile(`^(.*?)(\d+[dhms](?:\d+[hms])?)(\)?)$`)

// closeDurations reports whether two cells are the same but for a duration (kubectl's
// human-readable: 9s, 5m12s, 3h) that differs by a second at most.
func closeDurations(a, b string) bool {
	ma, mb := durationCell.FindStringSubmatch(a), durationCell.FindStringSubmatch(b)
	if ma == nil || mb == nil || ma[1] != mb[1] || ma[3] != mb[3] {
		return false
	}
	da, errA := time.ParseDuration(strings.ReplaceAll(ma[2], "d", "h"))
	db, errB := time.ParseDuration(strings.ReplaceAll(mb[2], "d", "h"))
	diff := da - db
	return errA == nil && errB == nil && diff <= time.Second && diff >= -time.Second
}

// TestStoreBadInput: a bad time, a file that is not a store, a missing store and a type
// the store does not hold are each one line and exit 2.
func TestStoreBadInput(t *testing.T) {
	dir := t.TempDir()
	recording := filepath.Join(dir, "rec.jsonl")
	line := `{"type":"ADDED","time":"2026-11-23T10:00:00Z","seq":1,"resource":{"group":"","version":"v1","resource":"configmaps"},` +
		`"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"shop","uid":"u1","resourceVersion":"5","creationTimestamp":"2026-11-23T09:00:00Z"},"data":{"mode":"a"}}}`
	if err := os.WriteFile(recording, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "events.db")
	if got := runKubeevents(t, 30*time.Second, "store", "import", recording, "--store", db); got.code != 0 {
		t.Fatalf("store import: exit %d, stderr %s", got.code, got.stderr)
	}
	if got := runKubeevents(t, 30*time.Second, "get", "cm", "-n", "shop", "--at", "2026-11-23T10:00:01Z", "--store", db); got.code != 0 ||
		!regexp.MustCompile(`(?m)^settings\s+1\s+60m$`).MatchString(got.stdout) {
		t.Errorf("get cm: exit %d, stdout:\n%s\nstderr: %s", got.code, got.stdout, got.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "cm", "--at", "yesterday", "--store", db}, `--at "yesterday": give an RFC 3339 time`},
		{[]string{"get", "cm", "--store", recording}, "not a kubeevents store (not an SQLite database)"},
		{[]string{"store", "info", filepath.Join(dir, "none.db")}, "none.db: no such file"},
		{[]string{"get", "widgets", "--store", db}, "widgets: the store " + db + " holds no such type (it holds configmaps)"},
		{[]string{"get", "cm", "-o", "table", "--store", db}, "-o table: give wide, json, yaml, name"},
		{[]string{"history", "cm/settings", "--store", db, "--file", recording}, "--file and --store both say what to read"},
		{[]string{"store", "import", filepath.Join(dir, "none.jsonl"), "--store", db}, "none.jsonl: no such file"},
		{[]string{"store", "import", recording, "--store", recording}, "not a kubeevents store"},
	} {
		got := runKubeevents(t, 30*time.Second, c.args...)
		if got.code != 2 || !strings.Contains(got.stderr, c.want) || strings.Count(strings.TrimSpace(got.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, got.code, got.stderr, c.want)
		}
	}
}
