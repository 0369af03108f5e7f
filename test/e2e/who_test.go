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
	tty := startInTerminal(t, 100, "top", "pods", "-n", ns, "--interval", "500ms", "--color", "never")
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
