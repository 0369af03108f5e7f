package resource

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClosestTypeName(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", SingularName: "pod", Kind: "Pod", ShortNames: []string{"po"}},
			{Name: "pods/log", Kind: "Pod"},
			{Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", ShortNames: []string{"cm"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Kind: "Deployment", ShortNames: []string{"deploy"}},
		}},
	}
	for typed, want := range map[string]string{
		"podz":       "pods",
		"deploymnt":  "deployments",
		"deploi":     "deployments",
		"ConfigMaps": "configmaps",
		"configmapz": "configmaps",
		"xyzzy":      "",
		"p":          "",
	} {
		if got := closestName(typed, lists); got != want {
			t.Errorf("closestName(%q) = %q, want %q", typed, got, want)
		}
	}
}
