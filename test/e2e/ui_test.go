package e2e

// The full-screen view (watch --ui) as a person sees it: kubeevents runs in a real
// pseudo-terminal (stdin, stdout and stderr on it, as in a shell), whose output a
// terminal emulator (charmbracelet/x/vt) turns into a screen of cells the tests read,
// text and styles; keys are typed into the pseudo-terminal, and the emulator answers
// the view's queries as a terminal would.

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A rollout seen in the view, with a file sink recording meanwhile: rows appear,
// highlighted, reach Running; the old pods are struck, then gone; an object's history
// shows its diffs, its YAML; the filter, pause and resume, a resize; q quits with the
// summary, the terminal restored.
func TestUIRollout(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	createLivingDeployment(t, ns, "web", "nginx:1.27", 2)
	file := filepath.Join(t.TempDir(), "events.jsonl")
	u := kubeevents(t).Screen(130, 32).Start("watch", "pods,deploy", "-n", ns, "--ui", "--sink", "file="+file).screen

	podRow := regexp.MustCompile(`^pod/(web-\S+)\s+1/1\s+Running\s`)
	running := func() map[string]bool {
		names := map[string]bool{}
		for _, l := range u.lines() {
			if m := podRow.FindStringSubmatch(l); m != nil {
				names[m[1]] = true
			}
		}
		return names
	}
	u.waitScreen(livingWait, "two pods Running and the Deployment 2/2", func() bool {
		return len(running()) == 2 && u.has("deployment.apps/web", "2/2")
	})
	old := running()
	// The view shows each object's health (package health) after kubectl's columns.
	if l, _ := u.line("NAME"); !regexp.MustCompile(`^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+HEALTH$`).MatchString(l) {
		t.Errorf("the pods' header is %q", l)
	}
	for name := range old {
		if l, _ := u.line("pod/" + name); !strings.HasSuffix(strings.TrimSpace(l), " Current") {
			t.Errorf("a Running pod's row does not end with its health Current: %q", l)
		}
	}

	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}`
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("updating the image: %v", err)
	}
	highlighted, struck := map[string]bool{}, map[string]bool{}
	u.waitScreen(livingWait, "two new pods Running, both old pods gone", func() bool {
		for _, l := range u.lines() {
			f := strings.Fields(l)
			if len(f) == 0 || !strings.HasPrefix(f[0], "pod/web-") {
				continue
			}
			name := strings.TrimPrefix(f[0], "pod/")
			if st, ok := u.styleOf(f[0] + " "); ok {
				if !old[name] && st.Bg != nil {
					highlighted[name] = true
				}
				if old[name] && st.Attrs&uv.AttrStrikethrough != 0 {
					struck[name] = true
				}
			}
		}
		now := running()
		fresh := 0
		for name := range now {
			if !old[name] {
				fresh++
			}
		}
		for name := range old {
			if _, y := u.line("pod/" + name + " "); y >= 0 {
				return false
			}
		}
		return fresh == 2
	})
	if len(highlighted) == 0 {
		t.Errorf("no new pod was seen highlighted")
	}
	if len(struck) == 0 {
		t.Errorf("no old pod was seen struck before it went (highlighted: %v)", highlighted)
	}

	// A new pod's history: its changes and their diffs; then its YAML.
	var newPod string
	for name := range running() {
		newPod = name
	}
	u.send("/" + newPod)
	u.waitScreen(uiWait, "the filter typed", func() bool { return u.has("/" + newPod) })
	u.send(keyEnter)
	u.waitScreen(uiWait, "the filter applied", func() bool { return u.has("1 shown") })
	u.send(keyEnter)
	u.waitScreen(uiWait, "the history with a diff", func() bool {
		return u.has("history of pod/"+newPod) && u.has("MODIFIED", newPod) && u.has("~ status.phase: Pending → Running")
	})
	u.send("y")
	u.waitScreen(uiWait, "the YAML", func() bool { return u.has("YAML of pod/"+newPod) && u.has("kind: Pod") && u.has("image: nginx:1.28") })
	u.send(keyEsc)
	u.waitScreen(uiWait, "back to the history", func() bool { return u.has("history of pod/" + newPod) })
	u.send(keyEsc)
	u.waitScreen(uiWait, "back to the table", func() bool { return u.has("pod/"+newPod, "Running") })
	u.send(keyEsc)
	u.waitScreen(uiWait, "the filter cleared", func() bool { return u.has("deployment.apps/web") && !u.has("1 shown") })

	// A label selector: the pods have app=web, the Deployment has no labels.
	u.send("/app=web" + keyEnter)
	u.waitScreen(uiWait, "the label filter applied", func() bool { return u.has("2 shown") && !u.has("deployment.apps/web") })
	u.send(keyEsc)
	u.waitScreen(uiWait, "the filter cleared", func() bool { return u.has("deployment.apps/web") })

	// Paused: a scale-up is counted, not shown, until resumed.
	u.send("p")
	u.waitScreen(uiWait, "PAUSED", func() bool { return u.has("PAUSED (0 new)") })
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	u.waitScreen(livingWait, "changes counted while paused", func() bool { return regexp.MustCompile(`PAUSED \([1-9]\d* new\)`).MatchString(u.String()) })
	if len(running()) != 2 || !u.has("deployment.apps/web", "2/2") {
		t.Errorf("paused, yet the table changed:\n%s", u)
	}
	u.send("p")
	u.waitScreen(livingWait, "three pods Running after the resume", func() bool { return len(running()) == 3 && !u.has("PAUSED") })

	// A narrower terminal: every row fits, the counts still on top.
	u.resize(80, 20)
	u.waitScreen(uiWait, "the view laid out for 80 columns", func() bool {
		top := u.lines()[0]
		return strings.Contains(top, "3 objects") || strings.Contains(top, "4 objects")
	})
	for _, l := range u.lines() {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("a line of %d columns on an 80-column terminal: %q", n, l)
		}
	}

	u.send("q")
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("q: exit code %d, want 0", code)
	}
	u.checkRestored()
	// The file sink recorded while the view was shown, the new pods among it.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"name":"`+newPod+`"`) || strings.Count(string(data), "\n") < 10 {
		t.Errorf("the file sink holds %d lines, want the rollout's events with %s's", strings.Count(string(data), "\n"), newPod)
	}
}

// --owned with --with-events: the owner tree with the rollout's state on top; the
// Deployment's history has its Events; Ctrl-C quits, the terminal restored.
func TestUIOwnedTree(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	createLivingDeployment(t, ns, "web", "nginx:1.27", 1)
	u := kubeevents(t).Screen(140, 30).Start("watch", "deployment/web", "-n", ns, "--owned", "--with-events", "--ui").screen
	u.waitScreen(livingWait, "the tree, rolled out", func() bool {
		lines := u.lines()
		return len(lines) > 4 && strings.Contains(lines[1], `✓ deployment "web" successfully rolled out`) &&
			strings.HasPrefix(lines[2], "deploy/web ") && strings.HasPrefix(lines[3], "└─ rs/web-") &&
			regexp.MustCompile(`^   └─ pod/web-\S+\s+1/1\s+Running`).MatchString(lines[4])
	})
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	u.waitScreen(livingWait, "two pods under the ReplicaSet", func() bool {
		lines := u.lines()
		return len(lines) > 5 && strings.HasPrefix(lines[4], "   ├─ pod/web-") && strings.HasPrefix(lines[5], "   └─ pod/web-")
	})
	u.send(keyEnter) // the followed object is selected first
	u.waitScreen(livingWait, "the Deployment's history with its ScalingReplicaSet Event", func() bool {
		return u.has("history of deploy/web") && u.has("EVENT", "ScalingReplicaSet")
	})
	u.send(keyCtrlC)
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("Ctrl-C: exit code %d, want 0", code)
	}
	u.checkRestored()
}

// Several clusters: a CLUSTER column, each cluster's objects.
func TestUISeveralClusters(t *testing.T) {
	second, kubeconfig := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	for _, c := range []struct {
		name   string
		create func(context.Context, *corev1.ConfigMap, metav1.CreateOptions) (*corev1.ConfigMap, error)
	}{{"in-one", client.CoreV1().ConfigMaps(ns).Create}, {"in-two", second.client.CoreV1().ConfigMaps(ns).Create}} {
		if _, err := c.create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: c.name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	u := kubeevents(t).Screen(160, 20).Start("--kubeconfig", kubeconfig, "watch", "configmaps", "-n", ns, "--context", "one,two", "--ui").screen
	u.waitScreen(eventWait, "both clusters' ConfigMaps", func() bool {
		return u.has("CLUSTER", "NAME", "DATA", "AGE") && u.has("one", "in-one") && u.has("two", "in-two")
	})
	if !strings.Contains(u.lines()[0], "in clusters one, two") {
		t.Errorf("the top line %q does not name the clusters", u.lines()[0])
	}
	u.send("q")
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("q: exit code %d, want 0", code)
	}
	u.checkRestored()
}

// Without a terminal --ui is refused with one line, before anything connects.
func TestUIRefusesAPipe(t *testing.T) {
	r := runKubeevents(t, eventWait, "watch", "pods", "--ui")
	if r.code != 2 || r.stdout != "" {
		t.Errorf("exit code %d, stdout %q; want 2 and nothing", r.code, r.stdout)
	}
	checkOneLine(t, r.stderr, literal("kubeevents: --ui needs a terminal, and the standard output is not one"))
}

// A custom resource followed with --owned in the view: its rollout line on top is its
// health (a MyApp has no rollout of its own), and every row has a HEALTH, down to its
// Deployment's pod.
func TestUIOwnedCustomResource(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	startMyApps(t, ns)
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("health:\n  MyApp.example.com:\n    owns: [deployments.apps, replicasets.apps, pods]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	createMyApp(t, ns, "shop", "deploy", map[string]any{"replicas": 1})
	u := kubeevents(t).Screen(140, 30).Start("watch", "myapps.example.com/shop", "-n", ns, "--owned", "--config", config, "--ui").screen
	u.waitScreen(livingWait, "the MyApp Current, its tree Current to the pod", func() bool {
		lines := u.lines()
		if len(lines) < 6 || !strings.Contains(lines[1], "✓ Current:") {
			return false
		}
		for _, l := range lines[2:6] {
			if !strings.HasSuffix(strings.TrimSpace(l), " Current") {
				return false
			}
		}
		return strings.Contains(lines[3], "deploy/shop") && strings.Contains(lines[5], "pod/shop-")
	})
	u.send(keyCtrlC)
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("Ctrl-C: exit code %d, want 0", code)
	}
	u.checkRestored()
}
