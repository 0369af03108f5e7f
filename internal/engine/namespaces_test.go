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

// leftOutBy runs the filter step of a run of cfg on ev and says why it left it out.
func leftOutBy(cfg Config, ev *event.Event) event.LeftOut {
	stage := newRun(runConfig{Config: cfg}).filterStage()
	if stage == nil {
		return event.Kept
	}
	stage.Process(ev)
	return ev.LeftOut
}

func TestNamespaceFilterMatchesGlobs(t *testing.T) {
	if newRun(runConfig{Config: Config{Watch: plan.Request{ExcludeNamespaces: []string{"kube-system"}}}}).filterStage() != nil {
		t.Error("a plain name needs no client-side filter")
	}
	cfg := Config{Watch: plan.Request{ExcludeNamespaces: []string{"team-*", "x?"}}}
	for ns, want := range map[string]bool{"team-a": true, "team-": true, "xy": true, "xyz": false, "default": false, "": false} {
		ev := &event.Event{Type: event.Added, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}}}
		if got := leftOutBy(cfg, ev) == event.LeftOutNamespace; got != want {
			t.Errorf("namespace %q left out = %v, want %v", ns, got, want)
		}
	}
}

func TestFilterKeepsOnlyEventTypes(t *testing.T) {
	cfg := Config{EventTypes: []event.EventType{event.Added, event.Deleted}}
	for typ, want := range map[event.EventType]bool{event.Added: false, event.Modified: true, event.Deleted: false} {
		ev := &event.Event{Type: typ, Object: &corev1.Pod{}}
		if got := leftOutBy(cfg, ev) == event.LeftOutEventType; got != want {
			t.Errorf("%s left out = %v, want %v", typ, got, want)
		}
	}
	if newRun(runConfig{}).filterStage() != nil {
		t.Error("no filter set: no filter step")
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

// --by and --not-by are part of the filter step, before numbering: what they leave out is
// not counted as unchanged.
func TestFilterByManager(t *testing.T) {
	events := eventtest.AttributedEvents() // kube-controller-manager, default-scheduler, kwok, DELETED, ...
	r := newRun(runConfig{Config: Config{By: attribution.Filter{By: []string{"kwok", "default-*"}}, ChangesOnly: true}, Differ: diff.NewDiffer(nil)})
	filter := r.filterStage()
	var kept []string
	for _, ev := range events[:4] {
		if filter.Process(ev); ev.LeftOut == event.Kept {
			kept = append(kept, string(ev.Type)+" "+attribution.Mark(attribution.Of(ev, r.cfg.Differ).By, false))
		}
	}
	if want := []string{"MODIFIED default-scheduler (binding)", "MODIFIED kwok (status)"}; !slices.Equal(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	for _, ev := range events[:4] {
		if ev.LeftOut == event.LeftOutUnchanged {
			t.Errorf("an event left out by --by said to be unchanged")
		}
	}
}
