package checkpoint

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeevents/kubeevents/internal/event"
)

var pods = corev1.SchemeGroupVersion.WithResource("pods")

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, UID: types.UID("uid-" + name)},
	}
}

func ev(typ event.EventType, obj runtime.Object, seq uint64) *event.Event {
	return &event.Event{Type: typ, Resource: pods, Object: obj, Seq: seq}
}

// tracked is what the tracker holds: "name@resourceVersion", sorted.
func tracked(t *testing.T, tr *Tracker) []string {
	t.Helper()
	objects, _ := tr.snapshot()
	var out []string
	for _, o := range objects {
		m := o.obj.(metav1.Object)
		out = append(out, m.GetName()+"@"+m.GetResourceVersion())
	}
	slices.Sort(out)
	return out
}

func TestTrackerSettlesOnceEverySinkWrote(t *testing.T) {
	tr := NewTracker(2)
	e := ev(event.Added, pod("a", "1"), 1)
	tr.Made(e)
	if e.Written == nil {
		t.Fatal("Made did not hook the event")
	}
	e.Written()
	if got := tracked(t, tr); len(got) != 0 {
		t.Fatalf("settled after one of two sinks wrote it: %v", got)
	}
	e.Written()
	if got := tracked(t, tr); !slices.Equal(got, []string{"a@1"}) {
		t.Fatalf("tracked %v, want [a@1]", got)
	}
}

func TestTrackerKeepsNewestAndForgetsDeleted(t *testing.T) {
	tr := NewTracker(1)
	tr.Seed(ResourceName(pods), []runtime.Object{pod("seeded", "5"), pod("gone", "6")}, nil)
	e1, e2 := ev(event.Modified, pod("a", "1"), 1), ev(event.Modified, pod("a", "2"), 2)
	tr.Made(e1)
	tr.Made(e2)
	e2.Written() // a newer state settled first (another sink dropped e1's turn, say)
	e1.Written()
	del := ev(event.Deleted, pod("gone", "6"), 3)
	tr.Made(del)
	del.Written()
	if got := tracked(t, tr); !slices.Equal(got, []string{"a@2", "seeded@5"}) {
		t.Fatalf("tracked %v, want [a@2 seeded@5]", got)
	}
	// A state never written by every sink does not settle.
	tr.Made(ev(event.Modified, pod("a", "3"), 4))
	if got := tracked(t, tr); !slices.Equal(got, []string{"a@2", "seeded@5"}) {
		t.Fatalf("tracked %v after an unwritten event", got)
	}
}

func TestTrackerIgnoresRelatedAndSync(t *testing.T) {
	tr := NewTracker(1)
	related := ev(event.Added, pod("x", "1"), 1)
	related.Related = true
	sync := ev(event.Sync, pod("y", "1"), 0)
	tr.Made(related)
	tr.Made(sync)
	if related.Written != nil || sync.Written != nil {
		t.Fatal("core Events and SYNC events are not the watched objects' delivered states")
	}
}

func testWatch() Watch {
	return Watch{Server: "https://127.0.0.1:6443", Cluster: "c-1", Resources: []string{"pods.v1"}, Namespace: "ns"}
}

func TestWriteThenLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt")
	tr := NewTracker(1)
	for i, name := range []string{"a", "b"} {
		e := ev(event.Added, pod(name, "1"), uint64(i+1))
		tr.Made(e)
		e.Written()
	}
	w := &Writer{Path: path, Sections: oneSection(testWatch(), tr)}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %o, want 600", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files in the directory: %v, want the checkpoint alone", entries)
	}
	saved := loadOne(t, path)
	if err := saved.Check(testWatch()); err != nil {
		t.Fatalf("its own watch: %v", err)
	}
	objs := saved.Objects["pods.v1"]
	if len(objs) != 2 {
		t.Fatalf("%d objects read back, want 2", len(objs))
	}
	var names []string
	for _, raw := range objs {
		var p corev1.Pod
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name+"@"+p.ResourceVersion+"/"+p.Kind)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"a@1/Pod", "b@1/Pod"}) {
		t.Errorf("read back %v", names)
	}
}

func TestLoadMissingIsNoCheckpoint(t *testing.T) {
	file, err := Load(filepath.Join(t.TempDir(), "none"))
	if file != nil || err != nil {
		t.Fatalf("Load of a missing file = %v, %v; want nil, nil", file, err)
	}
}

// oneSection is the file of a run of one cluster.
func oneSection(w Watch, tr *Tracker) []*Section {
	return []*Section{{Watch: w, Tracker: tr}}
}

// loadOne loads the checkpoint at path, which must have one section, and returns it.
func loadOne(t *testing.T, path string) *Saved {
	t.Helper()
	file, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if file == nil || len(file.Sections) != 1 {
		t.Fatalf("%s: %+v, want one section", path, file)
	}
	return file.Sections[0]
}

func TestCheckSaysEveryDifference(t *testing.T) {
	saved := &Saved{Path: "/x/ckpt", Watch: testWatch()}
	now := testWatch()
	now.Namespace, now.LabelSelector, now.MetadataOnly = "other", "app=web", true
	now.Resources = []string{"pods.v1", "deployments.v1.apps"}
	err := saved.Check(now)
	var mismatch *MismatchError
	if !errors.As(err, &mismatch) {
		t.Fatalf("Check = %v, want a MismatchError", err)
	}
	msg := err.Error()
	for _, want := range []string{"/x/ckpt", `namespace "ns" in the checkpoint, "other" now`,
		`label selector (none) in the checkpoint, "app=web" now`, "resources pods.v1 in the checkpoint, pods.v1,deployments.v1.apps now",
		"--metadata-only false in the checkpoint, true now", "--resume-reset"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message does not say %q: %s", want, msg)
		}
	}
	// An unknown cluster identity (no right to read it) compares by the URL alone; a
	// known, different one is another cluster.
	now = testWatch()
	now.Cluster = ""
	if err := saved.Check(now); err != nil {
		t.Errorf("unknown identity: %v", err)
	}
	now.Cluster = "c-2"
	if err := saved.Check(now); err == nil || !strings.Contains(err.Error(), "cluster") {
		t.Errorf("another cluster: %v", err)
	}
	// Order does not matter.
	saved.Watch.Resources = []string{"b.v1", "a.v1"}
	now = testWatch()
	now.Resources = []string{"a.v1", "b.v1"}
	if err := saved.Check(now); err != nil {
		t.Errorf("same resources in another order: %v", err)
	}
}

// The periodic writer writes at most once a second, only when something settled.
func TestWriterRunWritesOnlyChanges(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(dir, "ckpt")
		tr := NewTracker(1)
		w := &Writer{Path: path, Sections: oneSection(testWatch(), tr)}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.Run(stop)
		}()
		settle := func(name, rv string, seq uint64) {
			e := ev(event.Modified, pod(name, rv), seq)
			tr.Made(e)
			e.Written()
		}
		objects := func() int {
			file, err := Load(path)
			if err != nil || file == nil {
				return -1
			}
			return file.Sections[0].Count()
		}
		settle("a", "1", 1)
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if n := objects(); n != -1 {
			t.Fatalf("written after 0.5s (%d objects): at most once a second", n)
		}
		time.Sleep(600 * time.Millisecond)
		synctest.Wait()
		if n := objects(); n != 1 {
			t.Fatalf("%d objects after 1.1s, want 1", n)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if n := objects(); n != -1 {
			t.Fatal("written again though nothing settled")
		}
		settle("b", "1", 2)
		time.Sleep(1100 * time.Millisecond)
		synctest.Wait()
		if n := objects(); n != 2 {
			t.Fatalf("%d objects after a second settle, want 2", n)
		}
		close(stop)
		<-done
	})
}

func TestWriteErrorNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-dir", "ckpt")
	w := &Writer{Path: path, Sections: oneSection(testWatch(), NewTracker(1))}
	err := w.Write()
	var werr *WriteError
	if !errors.As(err, &werr) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Write into a missing directory = %v, want a WriteError naming %s", err, path)
	}
}

// Adopt shares the cache's object for a seeded one that did not change, and keeps the
// seeded one where the cache moved on (its change is still to be delivered).
func TestTrackerAdoptsUnchangedCachedObjects(t *testing.T) {
	tr := NewTracker(1)
	same, changed := pod("same", "1"), pod("changed", "1")
	tr.Seed(ResourceName(pods), []runtime.Object{same, changed}, nil)
	cache := map[string]runtime.Object{"ns/same": pod("same", "1"), "ns/changed": pod("changed", "2")}
	tr.Adopt(ResourceName(pods), func(key string) (runtime.Object, bool) { o, ok := cache[key]; return o, ok })
	objects, _ := tr.snapshot()
	for _, o := range objects {
		name := o.obj.(metav1.Object).GetName()
		if want := map[string]runtime.Object{"same": cache["ns/same"], "changed": changed}[name]; o.obj != want {
			t.Errorf("%s: tracker holds %p, want %p", name, o.obj, want)
		}
	}
}

// Namespaces of a watch of several, and the namespaces excluded from all, are part of
// what a checkpoint belongs to.
func TestCheckNamespacesAndExclusions(t *testing.T) {
	saved := &Saved{Path: "/x/ckpt", Watch: testWatch()}
	saved.Watch.Namespace, saved.Watch.Namespaces = "", []string{"a", "b"}
	now := saved.Watch
	now.Namespaces = []string{"a"}
	if err := saved.Check(now); err == nil || !strings.Contains(err.Error(), "namespaces a,b in the checkpoint, a now") {
		t.Errorf("other namespaces: %v", err)
	}
	now = saved.Watch
	now.ExcludeNamespaces = []string{"r1"}
	if err := saved.Check(now); err == nil || !strings.Contains(err.Error(), "excluded namespaces (none) in the checkpoint, r1 now") {
		t.Errorf("an excluded namespace: %v", err)
	}
}

// A run of one cluster with a file of several, whose section of this server has another
// cluster UID, says the cluster was re-created rather than that no section is of this
// server.
func TestForSaysTheClusterWasRecreated(t *testing.T) {
	w := testWatch()
	f := &File{Path: "/x/ckpt", Sections: []*Saved{{Path: "/x/ckpt", Context: "one", Watch: w}, {Path: "/x/ckpt", Context: "two", Watch: Watch{Server: "https://elsewhere"}}}}
	now := w
	now.Cluster = "new-uid"
	_, err := f.For("", now)
	if err == nil || !strings.Contains(err.Error(), "was re-created: kube-system namespace UID") || strings.Contains(err.Error(), "none of them server") {
		t.Errorf("For = %v; want it to say the cluster was re-created", err)
	}
}
