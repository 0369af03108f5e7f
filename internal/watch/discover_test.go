package watch

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A definition is watched once established, in its storage version if served.
func TestDefinedResource(t *testing.T) {
	crd := func(established string, scope string, versions ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"spec": map[string]any{"group": "example.com", "scope": scope, "names": map[string]any{"plural": "lamps", "kind": "Lamp"}, "versions": versions},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "NamesAccepted", "status": "True"},
				map[string]any{"type": "Established", "status": established}}},
		}}
	}
	v := func(name string, served, storage bool) any {
		return map[string]any{"name": name, "served": served, "storage": storage}
	}
	res, ok := definedResource(crd("True", "Namespaced", v("v1", true, false), v("v2", true, true)))
	if !ok || res.GVR.String() != "example.com/v2, Resource=lamps" || res.GVK.Kind != "Lamp" || !res.Namespaced {
		t.Errorf("storage version served: %+v %v", res, ok)
	}
	res, ok = definedResource(crd("True", "Cluster", v("v1", true, false), v("v2", false, true)))
	if !ok || res.GVR.Version != "v1" || res.Namespaced {
		t.Errorf("storage version not served: %+v %v", res, ok)
	}
	if res, ok := definedResource(crd("False", "Namespaced", v("v1", true, true))); ok {
		t.Errorf("not established yet: %+v", res)
	}
	if res, ok := definedResource(crd("True", "Namespaced", v("v1", false, true))); ok {
		t.Errorf("no version served: %+v", res)
	}
}
