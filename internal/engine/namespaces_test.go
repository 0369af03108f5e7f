package engine

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/resource"
)

func TestResourceInformersPerNamespace(t *testing.T) {
	pods := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	nodes := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}
	r := newRun(runConfig{Config: Config{Watch: plan.Request{FieldSelector: "status.phase=Running"}}})
	got := r.resourceInformers(&clusterRun{Cluster: Cluster{Resources: []resource.Resource{pods, nodes}, Namespaces: []string{"a", "b"}}})
	want := []resourceInformer{
		{res: pods, namespace: "a", fieldSelector: "status.phase=Running"},
		{res: pods, namespace: "b", fieldSelector: "status.phase=Running"},
		{res: nodes, fieldSelector: "status.phase=Running"},
	}
	if len(got) != len(want) {
		t.Fatalf("informers = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("informer %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	// Excluded names go to the server; patterns do not, and nodes get neither.
	r = newRun(runConfig{Config: Config{Watch: plan.Request{ExcludeNamespaces: []string{"kube-system", "team-*"}}}})
	got = r.resourceInformers(&clusterRun{Cluster: Cluster{Resources: []resource.Resource{pods, nodes}}})
	if got[0].fieldSelector != "metadata.namespace!=kube-system" || got[0].namespace != "" || got[1].fieldSelector != "" {
		t.Errorf("informers with exclusions = %+v", got)
	}
}

func TestNamespaceFilterMatchesGlobs(t *testing.T) {
	if namespaceFilter([]string{"kube-system"}) != nil {
		t.Error("a plain name needs no client-side filter")
	}
	skip := namespaceFilter([]string{"team-*", "x?"})
	for ns, want := range map[string]bool{"team-a": true, "team-": true, "xy": true, "xyz": false, "default": false, "": false} {
		ev := &event.Event{Type: event.Added, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}}}
		if got := skip(ev); got != want {
			t.Errorf("namespace %q skipped = %v, want %v", ns, got, want)
		}
	}
}

func TestSkipKeepsOnlyEventTypes(t *testing.T) {
	r := newRun(runConfig{Config: Config{EventTypes: []event.EventType{event.Added, event.Deleted}}})
	skip := r.skip()
	for typ, want := range map[event.EventType]bool{event.Added: false, event.Modified: true, event.Deleted: false} {
		ev := &event.Event{Type: typ, Object: &corev1.Pod{}}
		if got := skip(ev); got != want {
			t.Errorf("%s skipped = %v, want %v", typ, got, want)
		}
	}
	if newRun(runConfig{}).skip() != nil {
		t.Error("no filter set: Skip should be nil")
	}
}

// --event-types without SYNC turns the listeners' resync off: SYNC is a type of its own.
func TestEventTypesWithoutSyncNoResync(t *testing.T) {
	for _, c := range []struct {
		types []event.EventType
		want  bool
	}{{nil, true}, {[]event.EventType{event.Added}, false}, {[]event.EventType{event.Added, event.Sync}, true}} {
		if got := (runConfig{Config: Config{EventTypes: c.types}}).resyncs(); got != c.want {
			t.Errorf("--event-types %v: resyncs %v, want %v", c.types, got, c.want)
		}
	}
}

// --by and --not-by are part of Skip, before numbering, and count nothing as unchanged.
func TestSkipByManager(t *testing.T) {
	events := eventtest.AttributedEvents() // kube-controller-manager, default-scheduler, kwok, DELETED, ...
	r := newRun(runConfig{Config: Config{By: attribution.Filter{By: []string{"kwok", "default-*"}}, ChangesOnly: true}, Differ: diff.NewDiffer(nil)})
	skip := r.skip()
	var kept []string
	for _, ev := range events[:4] {
		if !skip(ev) {
			kept = append(kept, string(ev.Type)+" "+attribution.Mark(attribution.Of(ev, r.cfg.Differ).By, false))
		}
	}
	if want := []string{"MODIFIED default-scheduler (binding)", "MODIFIED kwok (status)"}; !slices.Equal(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	if n := r.unchanged.Load(); n != 0 {
		t.Errorf("%d events left out by --by counted as unchanged", n)
	}
}
