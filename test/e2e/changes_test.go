package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func createDeployment(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	createLivingDeployment(t, ns, name, "nginx:1.27", replicas)
}

func scaleDeployment(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("scaling deployment: %v", err)
	}
}

// Scaling a Deployment shows the replicas change, in pretty output and in JSON.
func TestDiffOnScale(t *testing.T) {
	ns := newNamespace(t)
	createDeployment(t, ns, "web", 1)

	pretty := startKubeevents(t, "watch", "deploy", "-n", ns, "--color", "never")
	js := startKubeevents(t, "watch", "deployments.apps", "-n", ns, "-o", "json", "--show-old")
	pretty.waitFor(eventWait, "ADDED web", func(l string) bool { return strings.Contains(l, "ADDED") })
	js.waitJSON(eventWait, "ADDED web", func(ev envelope) bool { return ev.Type == "ADDED" })

	scaleDeployment(t, ns, "web", 3)
	// The controllers change the Deployment's status too (the cluster is living): the
	// scale is the MODIFIED event whose diff has spec.replicas.
	var header string
	pretty.waitFor(eventWait, "the replicas diff line", func(l string) bool {
		if strings.Contains(l, "MODIFIED") {
			header = l
		}
		// The line may end with its manager ("  by NAME") when the change has several.
		return strings.HasPrefix(strings.TrimSpace(l), "~ spec.replicas: 1 → 3")
	})
	if !strings.Contains(header, " web ") || strings.Contains(header, ns) || !regexp.MustCompile(`\s\d/3\s`).MatchString(header) {
		t.Errorf("MODIFIED line = %q, want the deployment (without the namespace -n names) with READY N/3", header)
	}

	ev := js.waitJSON(eventWait, "MODIFIED web with spec.replicas", func(ev envelope) bool {
		if ev.Type != "MODIFIED" {
			return false
		}
		for _, op := range ev.Diff {
			if op.Path == "/spec/replicas" {
				return true
			}
		}
		return false
	})
	var found bool
	for _, op := range ev.Diff {
		if op.Path == "/spec/replicas" {
			found = true
			if op.Op != "replace" || fmt.Sprint(op.Value) != "3" || fmt.Sprint(op.Old) != "1" {
				t.Errorf("replicas op = %+v, want replace 1 → 3", op)
			}
		}
		if strings.HasPrefix(op.Path, "/metadata/resourceVersion") || strings.HasPrefix(op.Path, "/metadata/managedFields") {
			t.Errorf("diff contains ignored path %s", op.Path)
		}
	}
	if !found {
		t.Errorf("diff %+v has no /spec/replicas operation", ev.Diff)
	}
	var old appsv1.Deployment
	if err := json.Unmarshal(ev.Old, &old); err != nil || old.Spec.Replicas == nil || *old.Spec.Replicas != 1 {
		t.Errorf("--show-old: old = %s (%v), want the deployment with 1 replica", ev.Old, err)
	}
}

// An update that changes nothing but ignored fields (here: only managedFields, by a
// server-side apply of the same content under another field manager) is hidden by
// --changes-only and shown without it.
func TestChangesOnly(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "steady", map[string]string{"app": "web"})
	all := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json")
	changed := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--changes-only")
	all.waitJSON(eventWait, "ADDED", func(ev envelope) bool { return ev.Type == "ADDED" })
	changed.waitJSON(eventWait, "ADDED", func(ev envelope) bool { return ev.Type == "ADDED" })

	manifest := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"steady","namespace":%q,"labels":{"app":"web"}}}`, ns)
	cmd := exec.Command(clusterBin+"/kubectl", "--kubeconfig", kubeconfig, "apply", "--server-side", "--field-manager", "other-manager", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("server-side apply: %v\n%s", err, out)
	}
	noop := all.waitJSON(eventWait, "the managedFields-only MODIFIED", func(ev envelope) bool { return ev.Type == "MODIFIED" })
	if len(noop.Diff) != 0 {
		t.Errorf("a managedFields-only update has diff %+v, want none", noop.Diff)
	}
	labelPod(t, ns, "steady", "tier", "front")
	ev := changed.waitJSON(eventWait, "the next MODIFIED", func(ev envelope) bool { return ev.Type == "MODIFIED" })
	if ev.meta().Metadata.Labels["tier"] != "front" {
		t.Errorf("--changes-only printed %s first; want the label change (the no-op update hidden)", ev.Object)
	}
}

func TestWatchOnlySkipsExisting(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "old-1", nil)
	createPod(t, ns, "old-2", nil)
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "name", "--watch-only", "-v=1")
	// Said once the initial list is in: a pod created after it is an event.
	s.waitStderr(30*time.Second, regexp.MustCompile(`kubeevents: pods in `+ns+` listed \(not shown: --watch-only\); changes from here on are shown`))
	createPod(t, ns, "new-1", nil)
	first := s.waitFor(eventWait, "an event", func(string) bool { return true })
	if first != "ADDED pod/new-1" {
		t.Errorf("first event with --watch-only = %q, want ADDED pod/new-1", first)
	}
}

func TestUntilDeletedAndUntil(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "doomed", nil)
	createPod(t, ns, "other", nil)

	until := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "name", "--until", `.type == "DELETED" and .object.metadata.name == "doomed"`)
	untilDeleted := startKubeevents(t, "watch", "pods", "doomed", "-n", ns, "-o", "name", "--until-deleted", "--timeout", "60s")
	until.waitFor(eventWait, "ADDED doomed", func(l string) bool { return l == "ADDED pod/doomed" })
	untilDeleted.waitFor(eventWait, "ADDED doomed", func(l string) bool { return l == "ADDED pod/doomed" })
	deletePod(t, ns, "doomed")
	for name, s := range map[string]*proc{"--until": until, "--until-deleted": untilDeleted} {
		rest, code := s.wait(eventWait)
		if code != 0 {
			t.Errorf("%s: exit %d, want 0; stderr %s", name, code, s.Stderr())
		}
		if len(rest) == 0 || rest[len(rest)-1] != "DELETED pod/doomed" {
			t.Errorf("%s: last lines %q, want the deletion printed last", name, rest)
		}
	}

	// Named objects that do not exist count as deleted already, as with kubectl wait.
	r := runKubeevents(t, 30*time.Second, "watch", "pods", "never-existed", "-n", ns, "-o", "name", "--until-deleted")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("--until-deleted of a missing pod: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestTimeoutExitCodes(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "stays", nil)
	start := time.Now()
	r := runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "-o", "name", "--until", `.type == "DELETED"`, "--timeout", "2s")
	if r.code != 3 {
		t.Errorf("--until not met within --timeout: exit %d, want 3; stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "timed out after 2s") {
		t.Errorf("stderr %q does not say it timed out", r.stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s to time out after 2s", d)
	}
	r = runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "-o", "name", "--timeout", "2s")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "ADDED pod/stays" {
		t.Errorf("plain --timeout: exit %d, stdout %q; want 0 and the one pod", r.code, r.stdout)
	}
}

func TestMaxEvents(t *testing.T) {
	ns := newNamespace(t)
	for i := range 5 {
		createPod(t, ns, fmt.Sprintf("p-%d", i), nil)
	}
	file := t.TempDir() + "/events.jsonl"
	r := runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "-o", "name", "--max-events", "3", "--sink", "file="+file)
	if r.code != 0 || strings.Count(r.stdout, "\n") != 3 {
		t.Errorf("--max-events 3: exit %d, stdout %q", r.code, r.stdout)
	}
	if n := len(readLines(t, file, true)); n < 3 {
		t.Errorf("the file sink got %d events; every sink must get the events up to the last one counted", n)
	}
}

// Several types at once: one informer each, one stream, the kind leading each name.
func TestSeveralTypes(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "web-1", nil)
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createDeployment(t, ns, "api", 2)
	s := startKubeevents(t, "watch", "pods,deploy,cm", "-n", ns, "--color", "never")
	seen := map[string]bool{}
	for len(seen) < 3 {
		line := s.waitFor(eventWait, "one event per type", func(string) bool { return true })
		// -n says the namespace, so names leave it out.
		for _, want := range []string{"pod/web-1", "deployment.apps/api", "configmap/settings"} {
			if strings.Contains(line, " "+want+" ") {
				seen[want] = true
			}
		}
	}
}

// --metadata-only: events carry the object's metadata, not its spec or status.
func TestMetadataOnly(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "meta", map[string]string{"app": "web"})
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--metadata-only")
	ev := s.waitJSON(eventWait, "ADDED meta", func(ev envelope) bool { return ev.Type == "ADDED" })
	var obj map[string]any
	_ = json.Unmarshal(ev.Object, &obj)
	if _, ok := obj["spec"]; ok {
		t.Errorf("--metadata-only object has a spec: %s", ev.Object)
	}
	if m := ev.meta(); m.Kind != "Pod" || m.Metadata.Labels["app"] != "web" {
		t.Errorf("--metadata-only object = %s; want kind Pod with its labels", ev.Object)
	}
}

// Secret values never reach any sink: not in JSON, not in diffs, not in jq.
func TestSecretsRedacted(t *testing.T) {
	ns := newNamespace(t)
	const value, changed = "hunter2-very-secret", "hunter3-also-secret"
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, StringData: map[string]string{"password": value}}
	if _, err := client.CoreV1().Secrets(ns).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/secrets.jsonl"
	s := startKubeevents(t, "watch", "secrets", "-n", ns, "-o", "json", "--sink", "file(format=pretty)="+file)
	s.waitJSON(eventWait, "ADDED creds", func(ev envelope) bool { return ev.Type == "ADDED" })
	patch := fmt.Sprintf(`{"stringData":{"password":%q}}`, changed)
	if _, err := client.CoreV1().Secrets(ns).Patch(context.Background(), "creds", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	mod := s.waitJSON(eventWait, "MODIFIED creds", func(ev envelope) bool { return ev.Type == "MODIFIED" })
	if len(mod.Diff) == 0 || mod.Diff[0].Path != "/data/password" || mod.Diff[0].Old == mod.Diff[0].Value {
		t.Errorf("the changed value must still show as a change: diff %+v", mod.Diff)
	}
	s.interrupt(10 * time.Second)
	all := strings.Join(s.Seen(), "\n") + strings.Join(readLines(t, file, false), "\n") + s.Stderr()
	for _, secret := range []string{value, changed, "aHVudGVyMi", "aHVudGVyMy"} {
		if strings.Contains(all, secret) {
			t.Errorf("secret %q leaked into the output", secret)
		}
	}
	if !strings.Contains(all, "<redacted: 19 bytes #") {
		t.Errorf("no redaction placeholder in the output:\n%s", all)
	}
}

// --with-events interleaves core Events about watched objects, marked, warnings apart.
func TestWithEvents(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "web-1", map[string]string{"app": "web"})
	createPod(t, ns, "db-1", map[string]string{"app": "db"})
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-l", "app=web", "--with-events", "--color", "never")
	s.waitFor(eventWait, "ADDED web-1", func(l string) bool { return strings.Contains(l, "ADDED") })
	// An Event recorded before the Events informer has its list is in that list, which
	// is not shown: record new ones until one is.
	var line string
	for i := 0; line == ""; i++ {
		if i == 10 {
			t.Fatalf("no WARNING line for 10 Events recorded 2 s apart; output:\n%s\nstderr:\n%s", strings.Join(s.Seen(), "\n"), s.Stderr())
		}
		recordEvent(t, ns, fmt.Sprintf("about-db-%d", i), "db-1", corev1.EventTypeWarning, "Unwatched", "not about a watched pod")
		recordEvent(t, ns, fmt.Sprintf("about-web-%d", i), "web-1", corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container")
		line, _ = s.tryFor(2*time.Second, "the WARNING line", func(l string) bool { return strings.Contains(l, "WARNING") })
	}
	if !strings.Contains(line, " pod/web-1 ") || !strings.Contains(line, "BackOff: Back-off restarting failed container") {
		t.Errorf("WARNING line = %q; want the pod it is about, the reason and the message", line)
	}
	labelPod(t, ns, "web-1", "x", "1")
	s.waitFor(eventWait, "MODIFIED web-1", func(l string) bool { return strings.Contains(l, "MODIFIED") })
	rest, _ := s.interrupt(10 * time.Second)
	for _, l := range append(s.Seen(), rest...) {
		if strings.Contains(l, "Unwatched") {
			t.Errorf("an event about an unwatched pod was shown: %q", l)
		}
	}
}

// The protobuf watch takes the parts an event brings unchanged from the previous version,
// and the encoder copies their JSON: every object printed is still exactly the one the
// API server returned, and each diff shows the change just made, as the spec changes
// between label changes.
func TestObjectsExactAcrossPartChanges(t *testing.T) {
	ns := newNamespace(t)
	js := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--show-old")
	pods := client.CoreV1().Pods(ns)
	ctx := context.Background()

	step := func(what string, change func() (*corev1.Pod, error), wantPaths ...string) envelope {
		t.Helper()
		want, err := change()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		ev := js.waitJSON(eventWait, what, func(ev envelope) bool { return ev.meta().Metadata.ResourceVersion == want.ResourceVersion })
		want.ManagedFields = nil
		want.Kind, want.APIVersion = "Pod", "v1"
		if !sameJSON(t, ev.Object, want) {
			t.Errorf("%s: printed object\n%s\nwant (from the API server)\n%s", what, ev.Object, mustMarshal(t, want))
		}
		var paths []string
		for _, op := range ev.Diff {
			paths = append(paths, op.Op+" "+op.Path)
		}
		if strings.Join(paths, ", ") != strings.Join(wantPaths, ", ") {
			t.Errorf("%s: diff %v, want %v", what, paths, wantPaths)
		}
		return ev
	}
	patch := func(body string) func() (*corev1.Pod, error) {
		return func() (*corev1.Pod, error) {
			return pods.Patch(ctx, "web", types.MergePatchType, []byte(body), metav1.PatchOptions{})
		}
	}

	step("create", func() (*corev1.Pod, error) {
		return pods.Create(ctx, pod("web", map[string]string{"app": "web"}), metav1.CreateOptions{})
	})
	step("first label change", patch(`{"metadata":{"labels":{"round":"1"}}}`), "add /metadata/labels/round")
	// A change to the spec is also a new generation.
	image := step("image change", patch(`{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}`),
		"replace /metadata/generation", "replace /spec/containers/0/image")
	if op := image.Diff[len(image.Diff)-1]; op.Value != "nginx:1.28" || op.Old != "nginx:1.27" {
		t.Errorf("image change: %+v", op)
	}
	next := step("label change after the image change", patch(`{"metadata":{"labels":{"round":"2"}}}`), "replace /metadata/labels/round")
	var old corev1.Pod
	if err := json.Unmarshal(next.Old, &old); err != nil || old.Spec.Containers[0].Image != "nginx:1.28" || old.Labels["round"] != "1" {
		t.Errorf("--show-old after the image change: %s (%v)", next.Old, err)
	}
	step("deadline", patch(`{"spec":{"activeDeadlineSeconds":600}}`), "replace /metadata/generation", "add /spec/activeDeadlineSeconds")
	step("label change after the deadline", patch(`{"metadata":{"labels":{"round":"3"}}}`), "replace /metadata/labels/round")
}

func sameJSON(t *testing.T, raw json.RawMessage, want any) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("printed object %s: %v", raw, err)
	}
	if err := json.Unmarshal(mustMarshal(t, want), &b); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(a, b)
}
