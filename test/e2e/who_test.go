package e2e

// Who changed it: every change names the field manager(s) that made it, read from
// managedFields, with the real writers: kubectl scale (the scale subresource), kubectl
// apply --server-side, kubectl patch --field-manager, the Deployment and ReplicaSet
// controllers, the scheduler's binding, kwok's status reports, and two managers fighting
// over spec.replicas. And kubeevents top, ranking a writer in a tight loop first.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// managers is "by" as one string: "kubectl (scale)", "a, b", "a or b" when ambiguous.
func managers(by []byEntry, ambiguous bool) string {
	var names []string
	for _, e := range by {
		name := e.Manager
		if e.Subresource != "" {
			name += " (" + e.Subresource + ")"
		}
		names = append(names, name)
	}
	if ambiguous {
		return strings.Join(names, " or ")
	}
	return strings.Join(names, ", ")
}

func (e envelope) managers() string { return managers(e.By, e.ByAmbiguous) }

// changes reports whether the event's diff has an operation at path.
func (e envelope) changes(path string) bool {
	return slices.ContainsFunc(e.Diff, func(op diffOp) bool { return op.Path == path })
}

// kubectl's own writers, each named with its operation and subresource; the same in
// every format (pretty's mark, YAML, jq, a template), kept with --metadata-only, and
// absent with --no-by.
func TestByKubectlWriters(t *testing.T) {
	ns := newNamespace(t)
	js := startKubeevents(t, "watch", "deploy,cm", "-n", ns, "-o", "json", "--watch-only", "-v=1")
	pretty := startKubeevents(t, "watch", "deploy,cm", "-n", ns, "--color", "never", "--watch-only", "-v=1")
	yaml := startKubeevents(t, "watch", "cm", "-n", ns, "-o", "yaml", "--watch-only", "-v=1")
	jq := startKubeevents(t, "watch", "cm", "-n", ns, "--watch-only", "-v=1", "-r", "--jq", `select(.type == "MODIFIED") | "\(.by[0].manager) \(.by[0].operation)"`)
	columns := startKubeevents(t, "watch", "cm", "-n", ns, "--watch-only", "-v=1", "-o", "custom-columns=NAME:.metadata.name,BY:.by[*].manager")
	metadata := startKubeevents(t, "watch", "cm", "-n", ns, "-o", "json", "--watch-only", "-v=1", "--metadata-only")
	noBy := startKubeevents(t, "watch", "cm", "-n", ns, "-o", "json", "--watch-only", "-v=1", "--no-by")
	for _, p := range []*proc{js, pretty, yaml, jq, columns, metadata, noBy} {
		p.waitStderr(eventWait, literal("changes from here on are shown"))
	}

	kubectlOut(t, "", "-n", ns, "create", "deployment", "web", "--image=nginx:1.27")
	ev := js.waitJSON(eventWait, "ADDED web", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == "web" })
	if got := ev.managers(); got != "kubectl-create" || ev.By[0].Operation != "Update" || ev.By[0].Time == "" {
		t.Errorf("kubectl create: by %+v, want kubectl-create (Update, with its time)", ev.By)
	}
	kubectlOut(t, "", "-n", ns, "scale", "deployment", "web", "--replicas=3")
	ev = js.waitJSON(eventWait, "web scaled to 3", func(ev envelope) bool { return ev.changes("/spec/replicas") })
	if got := ev.managers(); got != "kubectl (scale)" {
		t.Errorf("kubectl scale: by %q, want kubectl (scale)", got)
	}
	// Again: the scale subresource's entry has no time, so nothing moves the second time.
	kubectlOut(t, "", "-n", ns, "scale", "deployment", "web", "--replicas=4")
	ev = js.waitJSON(eventWait, "web scaled to 4", func(ev envelope) bool { return ev.changes("/spec/replicas") })
	if got := ev.managers(); got != "kubectl (scale)" {
		t.Errorf("kubectl scale, again: by %q, want kubectl (scale)", got)
	}
	pretty.waitFor(eventWait, "the pretty mark of the scale", func(l string) bool {
		return strings.Contains(l, "MODIFIED") && strings.HasSuffix(l, "  by kubectl (scale)")
	})

	apply := func(mode string) {
		kubectlOut(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: %s}\n", mode),
			"-n", ns, "apply", "--server-side", "-f", "-")
	}
	apply("fast")
	ev = js.waitJSON(eventWait, "ADDED settings", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == "settings" })
	if got := ev.managers(); got != "kubectl" || ev.By[0].Operation != "Apply" {
		t.Errorf("apply --server-side: by %+v, want kubectl (Apply)", ev.By)
	}
	apply("safe")
	ev = js.waitJSON(eventWait, "settings applied again", func(ev envelope) bool { return ev.changes("/data/mode") })
	if got := ev.managers(); got != "kubectl" || ev.By[0].Operation != "Apply" {
		t.Errorf("apply --server-side again: by %+v, want kubectl (Apply)", ev.By)
	}
	kubectlOut(t, "", "-n", ns, "patch", "configmap", "settings", "--field-manager=painter", "-p", `{"data":{"color":"blue"}}`)
	ev = js.waitJSON(eventWait, "settings patched", func(ev envelope) bool { return ev.changes("/data/color") })
	if got := ev.managers(); got != "painter" || ev.By[0].Operation != "Update" {
		t.Errorf("kubectl patch --field-manager=painter: by %+v, want painter (Update)", ev.By)
	}

	// The same in the other formats.
	jq.waitFor(eventWait, "jq's .by of the apply", func(l string) bool { return l == "kubectl Apply" })
	jq.waitFor(eventWait, "jq's .by of the patch", func(l string) bool { return l == "painter Update" })
	yaml.waitFor(eventWait, "YAML's by of the patch", func(l string) bool { return l == "- manager: painter" })
	columns.waitFor(eventWait, "the template's .by", func(l string) bool {
		return strings.Join(strings.Fields(l), " ") == "settings painter" // a row as kubectl get -w prints it
	})
	ev = metadata.waitJSON(eventWait, "--metadata-only's patch", func(ev envelope) bool {
		return ev.Type == "MODIFIED" && ev.managers() == "painter"
	})
	if ev.changes("/data/color") {
		t.Errorf("--metadata-only has data in its diff: %+v", ev.Diff)
	}
	for _, ev := range noBy.collect(time.Second) {
		if ev.By != nil {
			t.Errorf("--no-by: %s %s has by %+v", ev.Type, ev.name(), ev.By)
		}
	}
}

// Two managers fighting over spec.replicas, as an HPA and a person would, several writes
// a second: each change names the one that made it, also when it wrote twice within
// one second (its time did not move; its fields decide). --by keeps only one's changes,
// numbered without gaps; --not-by leaves the controllers' out.
func TestByFightOverReplicas(t *testing.T) {
	ns := newNamespace(t)
	kubectlOut(t, "", "-n", ns, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=0")
	js := startKubeevents(t, "watch", "deploy", "-n", ns, "-o", "json", "--watch-only", "-v=1")
	onlyB := startKubeevents(t, "watch", "deploy", "-n", ns, "-o", "json", "--watch-only", "-v=1", "--by", "fighter-b")
	noControllers := startKubeevents(t, "watch", "deploy", "-n", ns, "-o", "json", "--watch-only", "-v=1", "--not-by", "kube-*")
	for _, p := range []*proc{js, onlyB, noControllers} {
		p.waitStderr(eventWait, literal("changes from here on are shown"))
	}

	const rounds = 8
	wrote := map[float64]string{}
	for i := range rounds {
		manager := []string{"fighter-a", "fighter-b"}[i%2]
		replicas := 10 + i
		wrote[float64(replicas)] = manager
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
		if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", types.MergePatchType, []byte(patch),
			metav1.PatchOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[float64]string{}
	js.waitJSON(eventWait, fmt.Sprintf("%d changes of spec.replicas", rounds), func(ev envelope) bool {
		for _, op := range ev.Diff {
			if op.Path == "/spec/replicas" {
				seen[op.Value.(float64)] = ev.managers()
			}
		}
		return len(seen) == rounds
	})
	for replicas, manager := range wrote {
		if seen[replicas] != manager {
			t.Errorf("spec.replicas → %v: by %q, want %q", replicas, seen[replicas], manager)
		}
	}

	var seqs []uint64
	onlyB.waitJSON(eventWait, "fighter-b's changes", func(ev envelope) bool {
		if got := ev.managers(); got != "fighter-b" {
			t.Errorf("--by fighter-b printed a change by %q", got)
		}
		seqs = append(seqs, ev.Seq)
		return len(seqs) == rounds/2
	})
	for i, seq := range seqs {
		if seq != uint64(i+1) {
			t.Errorf("--by: seq %v, want 1, 2, 3, ...: left out before they are numbered", seqs)
			break
		}
	}
	noControllers.waitJSON(eventWait, "the last fighter's change", func(ev envelope) bool {
		if strings.HasPrefix(ev.managers(), "kube-") {
			t.Errorf("--not-by kube-*: printed a change by %q", ev.managers())
		}
		return ev.changes("/spec/replicas") && ev.Diff[slices.IndexFunc(ev.Diff, func(op diffOp) bool { return op.Path == "/spec/replicas" })].Value == float64(10+rounds-1)
	})
}

// The living cluster's writers: the Deployment and ReplicaSet controllers (creating the
// ReplicaSet and its pods, writing their status), the scheduler's binding, kwok's status
// reports, and a rollout started by a manager of the test's.
func TestByLivingRollout(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	js := startKubeevents(t, "watch", "pods,rs,deploy", "-n", ns, "-o", "json")
	createLivingDeployment(t, ns, "web", "nginx:1.27", 1)

	want := map[string]func(ev envelope) bool{
		"kube-controller-manager": func(ev envelope) bool { return ev.Type == "ADDED" && ev.Resource["resource"] == "pods" },
		"default-scheduler (binding)": func(ev envelope) bool {
			return ev.Type == "MODIFIED" && ev.Resource["resource"] == "pods" && ev.changes("/spec/nodeName")
		},
		"kwok (status)": func(ev envelope) bool {
			return ev.Type == "MODIFIED" && ev.Resource["resource"] == "pods" && ev.changes("/status/phase")
		},
		"kube-controller-manager (status)": func(ev envelope) bool {
			return ev.Type == "MODIFIED" && ev.Resource["resource"] == "deployments" && slices.ContainsFunc(ev.Diff, func(op diffOp) bool {
				return strings.HasPrefix(op.Path, "/status/")
			})
		},
		"rollout-e2e": func(ev envelope) bool {
			return ev.Type == "MODIFIED" && ev.Resource["resource"] == "deployments" && ev.changes("/spec/template/spec/containers/0/image")
		},
	}
	// The test's own client created the Deployment: the API server names a manager that
	// gives no name after its user agent, client-go's binary name.
	creator := filepath.Base(os.Args[0])
	got := map[string]string{}
	rolled := false
	js.waitJSON(livingWait, "every writer of a Deployment's life", func(ev envelope) bool {
		if ev.Type == "ADDED" && ev.Resource["resource"] == "deployments" {
			got["creator"] = ev.managers()
		}
		for name, is := range want {
			if is(ev) {
				if _, ok := got[name]; !ok {
					got[name] = ev.managers()
				}
			}
		}
		if !rolled && got["kwok (status)"] != "" {
			rolled = true
			patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}`
			if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", types.StrategicMergePatchType, []byte(patch),
				metav1.PatchOptions{FieldManager: "rollout-e2e"}); err != nil {
				t.Fatalf("rolling out: %v", err)
			}
		}
		return len(got) == len(want)+1
	})
	if got["creator"] != creator {
		t.Errorf("the Deployment's ADDED: by %q, want the test's client, %q", got["creator"], creator)
	}
	for name := range want {
		if got[name] != name {
			t.Errorf("%s's change: by %q", name, got[name])
		}
	}
}

// topSnapshot is what kubeevents top -o json writes per interval.
type topSnapshot struct {
	Changes int `json:"changes"`
	Objects []struct {
		Name     string `json:"name"`
		Changes  int    `json:"changes"`
		Managers []struct {
			Name string `json:"name"`
		} `json:"managers"`
	} `json:"objects"`
	Fields []struct {
		Path string `json:"path"`
	} `json:"fields"`
	Managers []struct {
		Manager string `json:"manager"`
	} `json:"managers"`
}

// A writer patching one pod in a tight loop among quiet ones tops every list, named;
// on a terminal the ranking is redrawn in place.
func TestTopRanksATightLoop(t *testing.T) {
	ns := newNamespace(t)
	for _, name := range []string{"hot", "quiet-a", "quiet-b", "quiet-c"} {
		createPod(t, ns, name, nil)
	}
	js := startKubeevents(t, "top", "pods", "-n", ns, "-o", "json", "--interval", "500ms", "-v=1")
	tty := kubeevents(t).Terminal(100, 50).Start("top", "pods", "-n", ns, "--interval", "500ms", "--color", "never")
	js.waitStderr(eventWait, literal("changes from here on are shown"))

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			patch := fmt.Sprintf(`{"metadata":{"labels":{"round":"r%d"}}}`, i)
			_, _ = client.CoreV1().Pods(ns).Patch(ctx, "hot", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "hammer"})
		}
	})
	for i, name := range []string{"quiet-a", "quiet-b"} {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"note":"n%d"}}}`, i)
		if _, err := client.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "gardener"}); err != nil {
			t.Fatal(err)
		}
	}

	js.waitFor(eventWait, "a snapshot with the hot pod first, by hammer", func(line string) bool {
		var s topSnapshot
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("top -o json wrote %q: %v", line, err)
		}
		return len(s.Objects) >= 3 && s.Objects[0].Name == "hot" && s.Objects[0].Changes >= 20 &&
			len(s.Objects[0].Managers) > 0 && s.Objects[0].Managers[0].Name == "hammer" &&
			s.Objects[1].Changes == 1 && len(s.Fields) > 0 && s.Fields[0].Path == "metadata.labels.round" &&
			len(s.Managers) == 2 && s.Managers[0].Manager == "hammer" && s.Managers[1].Manager == "gardener"
	})
	tty.waitFor(eventWait, "the hot pod's row, by hammer, on the terminal", func(l string) bool {
		return strings.Contains(l, "pod/"+ns+"/hot ") && strings.HasSuffix(strings.TrimSuffix(strings.TrimRight(l, " "), "\x1b[K"), "hammer")
	})
	if !slices.ContainsFunc(tty.Seen(), func(l string) bool { return strings.Contains(l, "\x1b[H") }) {
		t.Error("top on a terminal does not redraw in place (no cursor home)")
	}
	stop()
	wg.Wait()
	if _, code := js.interrupt(eventWait); code != 0 {
		t.Errorf("top exited %d on Ctrl-C; stderr:\n%s", code, js.Stderr())
	}
}

// byOf is who made a diff operation: its own "by", else the event's.
func (e envelope) byOf(op diffOp) string {
	if op.By != nil {
		return managers(op.By, e.ByAmbiguous)
	}
	return e.managers()
}

// A binding records no managedFields entry: the change that sets spec.nodeName is the
// binding's, whose maker cannot be known (the pod's scheduler, or another client allowed
// to bind pods), said as ambiguous and never as another manager's. Here the living
// cluster's scheduler binds a pod it first found unschedulable (kube-scheduler wrote its
// PodScheduled condition) once a node is labelled to match its nodeSelector; with and
// without diffs shown.
func TestByBindingAfterUnschedulable(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("no kwok node to label: %v", err)
	}
	node := nodes.Items[0].Name
	label := "kubeevents-e2e/" + ns // no node has it yet: the pod is unschedulable until then
	js := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--watch-only", "-v=1")
	noDiff := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--watch-only", "-v=1", "--no-diff")
	pretty := startKubeevents(t, "watch", "pods", "-n", ns, "--color", "never", "--watch-only", "-v=1")
	for _, p := range []*proc{js, noDiff, pretty} {
		p.waitStderr(eventWait, literal("changes from here on are shown"))
	}

	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "picky"}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{label: "yes"},
		Containers:   []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	js.waitJSON(livingWait, "the scheduler finding the pod unschedulable", func(ev envelope) bool {
		return ev.Type == "MODIFIED" && strings.Contains(string(ev.Object), `"reason":"Unschedulable"`)
	})
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"yes"}}}`, label)
	if _, err := client.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unlabel := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, label)
		_, _ = client.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, []byte(unlabel), metav1.PatchOptions{})
	})

	bound := js.waitJSON(livingWait, "the binding", func(ev envelope) bool { return ev.changes("/spec/nodeName") })
	checkBinding(t, "the scheduler's binding", bound, "default-scheduler")
	for _, op := range bound.Diff {
		if got := bound.byOf(op); got != "default-scheduler (binding)" {
			t.Errorf("the scheduler's binding: %s %s by %q, want the binding's", op.Op, op.Path, got)
		}
	}
	withoutDiff := noDiff.waitJSON(eventWait, "the binding, without diffs", func(ev envelope) bool {
		return ev.Type == "MODIFIED" && ev.pod(t).Spec.NodeName != "" && len(ev.By) > 0 && ev.By[0].Subresource == "binding"
	})
	checkBinding(t, "--no-diff", withoutDiff, "default-scheduler")
	pretty.waitFor(eventWait, "the pretty mark of the binding", func(l string) bool {
		return strings.Contains(l, "MODIFIED") && strings.HasSuffix(l, "  by default-scheduler (binding) or another client")
	})
}

// checkBinding checks that ev is attributed to the binding of the pod's scheduler, as a
// guess (ambiguous), and to no one else.
func checkBinding(t *testing.T, what string, ev envelope, scheduler string) {
	t.Helper()
	if len(ev.By) != 1 || ev.By[0] != (byEntry{Manager: scheduler, Subresource: "binding"}) || !ev.ByAmbiguous {
		t.Errorf("%s: by %+v (ambiguous %v), want only %s (binding), ambiguous", what, ev.By, ev.ByAmbiguous, scheduler)
	}
}

// A pod bound by hand through pods/binding (client-go's Bind), by a client that is not
// the scheduler the pod names (none of that name runs): the binding is not credited to
// any manager of the pod's managedFields, and its maker is said to be unknown.
func TestByManualBinding(t *testing.T) {
	ns := newNamespace(t)
	node := "kubeevents-e2e-node" // a binding does not check that the node exists
	if nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "type=kwok"}); err == nil && len(nodes.Items) > 0 {
		node = nodes.Items[0].Name
	}
	js := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--watch-only", "-v=1")
	noDiff := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--watch-only", "-v=1", "--no-diff")
	for _, p := range []*proc{js, noDiff} {
		p.waitStderr(eventWait, literal("changes from here on are shown"))
	}
	createPod(t, ns, "by-hand", nil) // spec.schedulerName: kubeevents-none
	// The pod's status, as a scheduler would write it: an entry that owns the condition
	// the binding then changes.
	status := `{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"waiting"}]}}`
	if _, err := client.CoreV1().Pods(ns).Patch(context.Background(), "by-hand", types.StrategicMergePatchType, []byte(status),
		metav1.PatchOptions{FieldManager: "status-writer"}, "status"); err != nil {
		t.Fatal(err)
	}
	js.waitJSON(eventWait, "the status written", func(ev envelope) bool { return ev.managers() == "status-writer (status)" })
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "by-hand"}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := client.CoreV1().Pods(ns).Bind(context.Background(), binding, metav1.CreateOptions{FieldManager: "hand-binder"}); err != nil {
		t.Fatal(err)
	}
	bound := js.waitJSON(eventWait, "the binding", func(ev envelope) bool { return ev.changes("/spec/nodeName") })
	checkBinding(t, "bound by hand", bound, unscheduled)
	for _, op := range bound.Diff {
		if got := bound.byOf(op); got != unscheduled+" (binding)" {
			t.Errorf("bound by hand: %s %s by %q, want the binding's", op.Op, op.Path, got)
		}
	}
	withoutDiff := noDiff.waitJSON(eventWait, "the binding, without diffs", func(ev envelope) bool {
		return ev.Type == "MODIFIED" && ev.pod(t).Spec.NodeName != ""
	})
	checkBinding(t, "bound by hand, --no-diff", withoutDiff, unscheduled)
}

// A sink that coalesces (a slow exec hook, buffer=1, on-full=coalesce) delivers changes
// of several writers as one: it names them all, and each diff operation the one that
// made it.
func TestByCoalesced(t *testing.T) {
	ns := newNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{"x": "1"}, Annotations: map[string]string{"x": "1"}},
		Data: map[string]string{"x": "1"}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir, hook, release := heldHook(t)
	p := startKubeevents(t, "watch", "cm", "-n", ns, "--field-selector", "metadata.name=settings", "--watch-only", "-v=1", "-o", "name",
		"--sink", "exec(buffer=1,on-full=coalesce)="+hook)
	p.waitStderr(eventWait, literal("changes from here on are shown"))

	patch := func(manager, body string) {
		t.Helper()
		if _, err := client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "settings", types.MergePatchType, []byte(body),
			metav1.PatchOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}
	patch("starter", `{"data":{"start":"1"}}`)
	waitUntil(t, p, eventWait, "the hook holding the first change", func() bool {
		_, err := os.Stat(filepath.Join(dir, "event-1.json"))
		return err == nil
	})
	// While the hook holds it: five writers, one after the other.
	writes := map[string]string{ // the diff's path: who wrote it
		"/data/a": "alice", "/metadata/labels/bob": "bob", "/metadata/annotations/carol": "carol",
		"/data/d": "dave", "/metadata/labels/erin": "erin",
	}
	patch("alice", `{"data":{"a":"1"}}`)
	patch("bob", `{"metadata":{"labels":{"bob":"1"}}}`)
	patch("carol", `{"metadata":{"annotations":{"carol":"1"}}}`)
	patch("dave", `{"data":{"d":"1"}}`)
	patch("erin", `{"metadata":{"labels":{"erin":"1"}}}`)
	modified := 0 // on the screen, which does not coalesce: every change is in the hook's buffer
	p.waitFor(eventWait, "all six changes on the screen", func(l string) bool {
		if l == "MODIFIED configmap/settings" {
			modified++
		}
		return modified == 6
	})
	release()

	// Every change reaches the hook, several of them in one event.
	seen := map[string]bool{}
	var merged int
	waitUntil(t, p, eventWait, "every change delivered to the hook", func() bool {
		given, complete := hookGiven(t, dir)
		if !complete {
			return false
		}
		clear(seen)
		merged = 0
		for f, raw := range given {
			var ev envelope
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			writers := map[string]bool{}
			for _, op := range ev.Diff {
				want := writes[op.Path]
				if want == "" {
					want = "starter"
				}
				if got := ev.byOf(op); got != want {
					t.Fatalf("%s: %s %s by %q, want %q; by %+v", f, op.Op, op.Path, got, want, ev.By)
				}
				writers[want] = true
				seen[op.Path] = true
			}
			var by []string
			for _, e := range ev.By {
				by = append(by, e.Manager)
			}
			for w := range writers {
				if !slices.Contains(by, w) {
					t.Fatalf("%s: by %v lacks %s, who made one of its changes", f, by, w)
				}
			}
			if len(writers) > 1 {
				merged++
			}
		}
		return len(seen) == len(writes)+1
	})
	if merged == 0 {
		t.Errorf("no change of several writers was delivered: nothing was coalesced")
	}
}

// Changes made while kubeevents was stopped, by two writers (alice again, bob for the
// first time, in a later second): the resumed MODIFIED names both, each change its own,
// as the "several moved" rule says.
func TestByResumed(t *testing.T) {
	ns := newNamespace(t)
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "0"}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// patch writes as manager and waits until the clock is past the second of that write,
	// so that the next one is in a later second (the API server's clock is this machine's).
	patch := func(manager, body string) {
		t.Helper()
		out, err := client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "settings", types.MergePatchType, []byte(body),
			metav1.PatchOptions{FieldManager: manager})
		if err != nil {
			t.Fatal(err)
		}
		var at time.Time
		for _, e := range out.ManagedFields {
			if e.Manager == manager && e.Time != nil {
				at = e.Time.Time
			}
		}
		waitUntil(t, nil, 5*time.Second, "the next second", func() bool { return time.Now().After(at.Add(time.Second)) })
	}
	patch("alice", `{"data":{"a":"1"}}`)
	args := []string{"watch", "cm", "-n", ns, "--field-selector", "metadata.name=settings", "-o", "json", "--resume", ckpt}
	first := startKubeevents(t, args...)
	first.waitJSON(eventWait, "ADDED settings", func(ev envelope) bool { return ev.Type == "ADDED" })
	if _, code := first.interrupt(15 * time.Second); code != 0 {
		t.Fatalf("first run: exit %d; stderr:\n%s", code, first.Stderr())
	}

	// While it is stopped: alice writes again (her time moves), then bob, a second later.
	patch("alice", `{"data":{"a":"2"}}`)
	patch("bob", `{"metadata":{"labels":{"bob":"1"}}}`)

	second := startKubeevents(t, args...)
	ev := second.waitJSON(eventWait, "the resumed MODIFIED", func(ev envelope) bool { return ev.Type == "MODIFIED" })
	if got := ev.managers(); got != "alice, bob" {
		t.Errorf("resumed: by %q, want alice, bob", got)
	}
	want := map[string]string{"/data/a": "alice", "/metadata/labels": "bob"}
	for _, op := range ev.Diff {
		if got := ev.byOf(op); got != want[op.Path] {
			t.Errorf("resumed: %s %s by %q, want %q", op.Op, op.Path, got, want[op.Path])
		}
	}
	if len(ev.Diff) != len(want) {
		t.Errorf("resumed diff %+v, want data.a and the label", ev.Diff)
	}
}
