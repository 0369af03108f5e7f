package engine

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/resource"
)

func TestResourceInformersPerNamespace(t *testing.T) {
	pods := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	nodes := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}
	r := newRun(runConfig{cfg: &Config{Watch: plan.Request{FieldSelector: "status.phase=Running"}}})
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
	r = newRun(runConfig{cfg: &Config{Watch: plan.Request{ExcludeNamespaces: []string{"kube-system", "team-*"}}}})
	got = r.resourceInformers(&clusterRun{Cluster: Cluster{Resources: []resource.Resource{pods, nodes}}})
	if got[0].fieldSelector != "metadata.namespace!=kube-system" || got[0].namespace != "" || got[1].fieldSelector != "" {
		t.Errorf("informers with exclusions = %+v", got)
	}
}

// --event-types without SYNC turns the listeners' resync off: SYNC is a type of its own.
func TestEventTypesWithoutSyncNoResync(t *testing.T) {
	for _, c := range []struct {
		types []event.EventType
		want  bool
	}{{nil, true}, {[]event.EventType{event.Added}, false}, {[]event.EventType{event.Added, event.Sync}, true}} {
		if got := (&Config{Events: Events{Types: c.types}}).resyncs(); got != c.want {
			t.Errorf("--event-types %v: resyncs %v, want %v", c.types, got, c.want)
		}
	}
}
