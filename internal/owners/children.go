package owners

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ChildTypes are the types watched for the children of a followed object of a built-in
// kind, by default: what its controller creates, down to the pods (a Deployment's
// ReplicaSets and their Pods; a CronJob's Jobs and their Pods; a Service's
// EndpointSlices). A kind not listed owns nothing by default; --owned-types adds types.
var ChildTypes = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}:        {"replicasets.apps", "pods"},
	{Group: "apps", Kind: "ReplicaSet"}:        {"pods"},
	{Group: "apps", Kind: "StatefulSet"}:       {"pods"},
	{Group: "apps", Kind: "DaemonSet"}:         {"pods"},
	{Group: "batch", Kind: "Job"}:              {"pods"},
	{Group: "batch", Kind: "CronJob"}:          {"jobs.batch", "pods"},
	{Group: "", Kind: "Service"}:               {"endpointslices.discovery.k8s.io"},
	{Group: "", Kind: "ReplicationController"}: {"pods"},
}

// Selector is the label selector that every child of root carries, for the server to
// filter the children's lists and watches with: the workload's spec.selector (its pods,
// and a Deployment's ReplicaSets, which carry its pod template's labels), or for a
// Service the label its EndpointSlices carry. Empty when root's kind has none (CronJob,
// custom resources): then its children's types are watched whole in the namespace.
func Selector(kind schema.GroupKind, root *unstructured.Unstructured) (string, error) {
	switch kind {
	case schema.GroupKind{Group: "", Kind: "Service"}:
		return labels.SelectorFromSet(labels.Set{"kubernetes.io/service-name": root.GetName()}).String(), nil
	case schema.GroupKind{Group: "", Kind: "ReplicationController"}:
		set, _, err := unstructured.NestedStringMap(root.Object, "spec", "selector")
		if err != nil || len(set) == 0 {
			return "", err
		}
		return labels.SelectorFromSet(set).String(), nil
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"},
		schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, schema.GroupKind{Group: "apps", Kind: "DaemonSet"},
		schema.GroupKind{Group: "batch", Kind: "Job"}:
	default:
		return "", nil
	}
	raw, found, err := unstructured.NestedMap(root.Object, "spec", "selector")
	if err != nil || !found {
		return "", err
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return "", fmt.Errorf("reading the selector of %s %q: %w", kind.Kind, root.GetName(), err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return "", fmt.Errorf("reading the selector of %s %q: %w", kind.Kind, root.GetName(), err)
	}
	if sel.Empty() {
		return "", nil
	}
	return sel.String(), nil
}
