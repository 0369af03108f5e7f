package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/conditions"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/resume"
	"github.com/kubeevents/kubeevents/internal/watch"
)

// These tests run the engine against client-go's fake dynamic client: assembly, stop
// reasons and the result's figures without a cluster. The end-to-end tests run the same
// code against a real API server.

var configMaps = resource.Resource{
	GVR:        schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
	GVK:        schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
	Namespaced: true,
}

func fakeClients(t *testing.T, names ...string) informer.Clients {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	objs := make([]runtime.Object, 0, len(names))
	for _, n := range names {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns", ResourceVersion: "1"}})
	}
	return informer.Clients{Dynamic: dynamicfake.NewSimpleDynamicClient(scheme, objs...)}
}

// recording is a sink that keeps the names of the objects it was given.
type recording struct {
	mu    sync.Mutex
	names []string
}

func (r *recording) Write(ev *event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, fmt.Sprintf("%s %s", ev.Type, ev.Key()))
	return nil
}

func (r *recording) Close() error { return nil }

func (r *recording) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}

func newConfig(sinks ...*recording) runConfig {
	cfg := runConfig{cfg: &Config{End: End{Grace: time.Second}}, hooks: hooks{warn: func(string, ...any) {}}}
	for i, s := range sinks {
		cfg.listeners = append(cfg.listeners, listener.New(listener.Config{Name: fmt.Sprintf("sink-%d", i)}, s, cfg.hooks.warn))
	}
	return cfg
}

// withResume gives cfg the checkpoint at path, of clusters (the one of a plain watch
// when none is given), read as a run reads it.
func withResume(t *testing.T, cfg *runConfig, path string, clusters ...resume.Cluster) {
	t.Helper()
	if len(clusters) == 0 {
		clusters = []resume.Cluster{{Watch: testWatch}}
	}
	r, err := resume.Open(context.Background(), resume.Options{Store: checkpoint.FileStore{Path: path}, Clusters: clusters,
		Sinks: len(cfg.listeners), Warn: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.resume = r
	cfg.parts = append(cfg.parts, r)
}

var testWatch = checkpoint.Watch{Server: "https://fake", Resources: []string{"configmaps.v1"}, Namespaces: []string{"ns"}}

func TestRunStopsAfterMaxEvents(t *testing.T) {
	a, b := &recording{}, &recording{}
	cfg := newConfig(a, b)
	cfg.cfg.End.MaxEvents = 2
	var started bool
	cfg.hooks.started = func([]*listener.Listener, int) { started = true }
	res, err := runOn(context.Background(), fakeClients(t, "c1", "c2", "c3"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !started || !res.Started || res.Reason != StopLimit || res.Made != 2 {
		t.Fatalf("started %v, result %+v; want started, StopLimit after 2 events", started, res)
	}
	for i, s := range []*recording{a, b} {
		if got := s.got(); len(got) != 2 {
			t.Errorf("sink %d got %v, want exactly the 2 events made", i, got)
		}
	}
}

func TestRunUntilMetInTheInitialList(t *testing.T) {
	a := &recording{}
	cfg := newConfig(a)
	until, err := jq.Compile(`.object.metadata.name == "c2"`)
	if err != nil {
		t.Fatal(err)
	}
	cfg.cfg.End.Until = until
	res, err := runOn(context.Background(), fakeClients(t, "c1", "c2", "c3"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := a.got()
	if res.Reason != StopCondition || len(got) == 0 || got[len(got)-1] != "ADDED ns/c2" {
		t.Fatalf("result %+v, sink got %v; want StopCondition with ns/c2 the last event", res, got)
	}
}

func TestRunMaxEventsBeforeCondition(t *testing.T) {
	cfg := newConfig(&recording{})
	until, _ := jq.Compile(`false`)
	cfg.cfg.End.Until, cfg.cfg.End.MaxEvents = until, 1
	res, err := runOn(context.Background(), fakeClients(t, "c1", "c2"), cfg)
	var notMet *conditions.NotMetError
	if !errors.As(err, &notMet) || res.Reason != StopLimit {
		t.Fatalf("result %+v, error %v; want StopLimit and a NotMetError", res, err)
	}
}

func TestRunTimeoutBeforeCondition(t *testing.T) {
	cfg := newConfig(&recording{})
	until, _ := jq.Compile(`false`)
	cfg.cfg.End.Until, cfg.cfg.End.Timeout = until, 50*time.Millisecond
	res, err := runOn(context.Background(), fakeClients(t, "c1"), cfg)
	var timeout *conditions.TimeoutError
	if !errors.As(err, &timeout) || res.Reason != StopTimeout {
		t.Fatalf("result %+v, error %v; want StopTimeout and a TimeoutError", res, err)
	}
}

func TestRunInterrupted(t *testing.T) {
	a := &recording{}
	cfg := newConfig(a)
	ctx, cancel := context.WithCancel(context.Background())
	cfg.hooks.started = func([]*listener.Listener, int) { time.AfterFunc(100*time.Millisecond, cancel) }
	res, err := runOn(ctx, fakeClients(t, "c1"), cfg)
	if err != nil || !res.Started || res.Reason != StopInterrupted || res.Made != 1 {
		t.Fatalf("result %+v, error %v; want a clean StopInterrupted after the one listed object", res, err)
	}
	if got := a.got(); len(got) != 1 {
		t.Errorf("sink got %v, want the one listed object", got)
	}
}

func TestRunInterruptedBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := newConfig(&recording{})
	cfg.hooks.started = func([]*listener.Listener, int) { t.Error("Started called for a run interrupted before it started") }
	res, err := runOn(ctx, fakeClients(t, "c1"), cfg)
	if err != nil || res.Started {
		t.Fatalf("result %+v, error %v; want a run that never started, and no error", res, err)
	}
}

// Config.Synced is called once the initial list is in, and what it returns when the run
// ends: the command's process-wide tuning never outlives the run.
func TestRunSyncedHookUndoneAtTheEnd(t *testing.T) {
	cfg := newConfig(&recording{})
	var calls, undone int
	synced := make(chan struct{})
	cfg.hooks.synced = func() func() {
		calls++
		close(synced)
		return func() { undone++ }
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-synced; cancel() }()
	res, err := runOn(ctx, fakeClients(t, "c1", "c2"), cfg)
	if err != nil || res.Reason != StopInterrupted {
		t.Fatalf("result %+v, error %v", res, err)
	}
	if calls != 1 || undone != 1 {
		t.Errorf("Synced called %d times, undone %d times; want once each", calls, undone)
	}
}

func fakeClientsAt(t *testing.T, versions map[string]string) informer.Clients {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for n, rv := range versions {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns", ResourceVersion: rv}})
	}
	return informer.Clients{Dynamic: dynamicfake.NewSimpleDynamicClient(scheme, objs...)}
}

// A run with Resume writes the checkpoint at exit; the next run from it emits only what
// differs from it, to every sink.
func TestRunResumesFromCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt")
	a, b := &recording{}, &recording{}
	cfg := newConfig(a, b)
	cfg.cfg.End.Timeout = 300 * time.Millisecond
	withResume(t, &cfg, path)
	if _, err := runOn(context.Background(), fakeClientsAt(t, map[string]string{"same": "1", "changed": "1", "gone": "1"}), cfg); err != nil {
		t.Fatal(err)
	}
	file, err := checkpoint.Load(path)
	if err != nil || file == nil || len(file.Sections) != 1 || file.Sections[0].Count() != 3 {
		t.Fatalf("checkpoint after the first run: %v, %v; want one section of 3 objects", file, err)
	}

	a, b = &recording{}, &recording{}
	cfg = newConfig(a, b)
	cfg.cfg.End.Timeout = 300 * time.Millisecond
	withResume(t, &cfg, path)
	if _, err := runOn(context.Background(), fakeClientsAt(t, map[string]string{"same": "1", "changed": "2", "new": "1"}), cfg); err != nil {
		t.Fatal(err)
	}
	want := []string{"ADDED ns/new", "DELETED ns/gone", "MODIFIED ns/changed"}
	for i, s := range []*recording{a, b} {
		got := s.got()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("sink %d got %v, want %v", i, got, want)
		}
	}
	file, err = checkpoint.Load(path)
	if err != nil || file.Sections[0].Count() != 3 {
		t.Fatalf("checkpoint after the resumed run: %v, %v; want 3 objects (same, changed, new)", file, err)
	}
}

// runOn streams cfg on one cluster of clients, watching configmaps in ns, unless cfg
// names its clusters.
func runOn(ctx context.Context, clients informer.Clients, cfg runConfig) (Result, error) {
	if len(cfg.clusters) == 0 {
		cfg.clusters = []watch.Cluster{{Clients: clients, Resources: []resource.Resource{configMaps}, Namespaces: []string{"ns"}}}
	}
	return stream(ctx, cfg)
}
