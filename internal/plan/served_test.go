package plan

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// --all-types watches what can be listed and watched, ConfigMaps and custom resources
// too, the core Events once, no subresource.
func TestServedTypes(t *testing.T) {
	watchable := metav1.Verbs{"get", "list", "watch"}
	disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: watchable},
			{Name: "pods/log", Kind: "Pod", Namespaced: true, Verbs: metav1.Verbs{"get"}},
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: watchable},
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: watchable},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: metav1.Verbs{"create"}},
			{Name: "nodes", Kind: "Node", Verbs: watchable},
		}},
		{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "events", Kind: "Event", Namespaced: true, Verbs: watchable}}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "lamps", Kind: "Lamp", Namespaced: true, Verbs: watchable}}},
	}}}
	got, err := ServedTypes(disco)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		names = append(names, r.String()+"/"+r.GVK.Kind)
	}
	slices.Sort(names)
	want := []string{"configmaps/ConfigMap", "events/Event", "lamps.example.com/Lamp", "nodes/Node", "pods/Pod"}
	if !slices.Equal(names, want) {
		t.Errorf("ServedTypes = %q, want %q", names, want)
	}
}
