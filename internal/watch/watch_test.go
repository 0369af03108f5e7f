package watch

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/resource"
)

func TestInformersPerNamespace(t *testing.T) {
	pods := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	nodes := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}
	c := &clusterWatch{Cluster: Cluster{Resources: []resource.Resource{pods, nodes}, Namespaces: []string{"a", "b"}}}
	got := c.specs("status.phase=Running", nil)
	want := []spec{
		{res: pods, namespace: "a", fieldSelector: "status.phase=Running"},
		{res: pods, namespace: "b", fieldSelector: "status.phase=Running"},
		{res: nodes, fieldSelector: "status.phase=Running"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("informers = %+v, want %+v", got, want)
	}
	// Excluded names go to the server; patterns do not, and nodes get neither.
	c = &clusterWatch{Cluster: Cluster{Resources: []resource.Resource{pods, nodes}}}
	got = c.specs("", []string{"kube-system", "team-*"})
	if got[0].fieldSelector != "metadata.namespace!=kube-system" || got[0].namespace != "" || got[1].fieldSelector != "" {
		t.Errorf("informers with exclusions = %+v", got)
	}
}

// One cluster's fatal error (a first list that failed) leaves it out and ends the run
// only with the last one; each cluster's notices start with its name.
func TestClusterFatalLeavesItOut(t *testing.T) {
	var warned []string
	var fatal []error
	s, err := New([]Cluster{{Name: "a"}, {Name: "b"}}, Options{Several: true,
		Warn:  func(f string, args ...any) { warned = append(warned, fmt.Sprintf(f, args...)) },
		Fatal: func(err error) { fatal = append(fatal, err) }})
	if err != nil {
		t.Fatal(err)
	}
	s.live.Store(2)
	a, b := s.all[0], s.all[1]
	b.warn("watch of %s lost", "configmaps")
	if last := warned[len(warned)-1]; last != "cluster b: watch of configmaps lost" {
		t.Errorf("notice %q, want it to name the cluster", last)
	}
	warned = nil
	s.fatalOf(a)(fmt.Errorf("forbidden"))
	s.fatalOf(a)(fmt.Errorf("again")) // said once
	if len(fatal) != 0 {
		t.Fatalf("the run ended (%v) with cluster b still watched", fatal)
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], "cluster a: forbidden; watching the other clusters without it") {
		t.Errorf("warnings %q", warned)
	}
	s.fatalOf(b)(fmt.Errorf("gone"))
	if len(fatal) != 1 || fatal[0].Error() != "gone" {
		t.Errorf("fatal %v, want the last cluster's error", fatal)
	}
	if res := s.Results(); res[0].Left == nil || res[1].Left == nil {
		t.Errorf("results %+v: both left", res)
	}
}
