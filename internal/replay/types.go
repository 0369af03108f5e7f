package replay

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// shortNames are the short names the API server lists for the built-in types (kubectl
// api-resources), by plural: a recording is replayed without a server to ask. A custom
// resource answers to its plural, its kind and its singular, not to its short names.
var shortNames = map[string][]string{
	"pods": {"po"}, "services": {"svc"}, "deployments": {"deploy"}, "replicasets": {"rs"},
	"statefulsets": {"sts"}, "daemonsets": {"ds"}, "cronjobs": {"cj"}, "configmaps": {"cm"},
	"namespaces": {"ns"}, "nodes": {"no"}, "persistentvolumes": {"pv"},
	"persistentvolumeclaims": {"pvc"}, "serviceaccounts": {"sa"}, "events": {"ev"},
	"endpoints": {"ep"}, "ingresses": {"ing"}, "horizontalpodautoscalers": {"hpa"},
	"replicationcontrollers": {"rc"}, "networkpolicies": {"netpol"},
	"poddisruptionbudgets": {"pdb"}, "customresourcedefinitions": {"crd", "crds"},
	"certificatesigningrequests": {"csr"}, "limitranges": {"limits"},
	"resourcequotas": {"quota"}, "priorityclasses": {"pc"}, "storageclasses": {"sc"},
	"componentstatuses": {"cs"},
}

// allCategory is what `all` stands for, as kubectl get all: the types of the "all"
// category of the API server's discovery.
var allCategory = []string{"pods", "services", "deployments.apps", "replicasets.apps", "statefulsets.apps",
	"daemonsets.apps", "jobs.batch", "cronjobs.batch", "horizontalpodautoscalers.autoscaling", "replicationcontrollers"}

// typeArg is one resource type as the user typed it: pods, po, pod, Pod,
// deployments.apps, deployments.v1.apps, a custom resource's plural or kind.
type typeArg struct {
	given string
	full  *schema.GroupVersionResource // resource.version.group
	gr    schema.GroupResource
}

func parseTypes(args []string) []typeArg {
	var types []typeArg
	for _, arg := range args {
		if strings.EqualFold(arg, "all") {
			for _, t := range allCategory {
				types = append(types, parseType(t, arg))
			}
			continue
		}
		types = append(types, parseType(arg, arg))
	}
	return types
}

func parseType(arg, given string) typeArg {
	full, gr := schema.ParseResourceArg(strings.ToLower(strings.TrimSpace(arg)))
	return typeArg{given: given, full: full, gr: gr}
}

// matches reports whether the records of resource gvr, whose objects are of kind, are of
// this type: by its plural, singular (the kind in lower case), kind or short name, and
// the group (and version) when given.
func (t typeArg) matches(gvr schema.GroupVersionResource, kind string) bool {
	if t.full != nil && t.full.Group == gvr.Group && t.full.Version == gvr.Version && namedBy(t.full.Resource, gvr, kind) {
		return true
	}
	return (t.gr.Group == "" || t.gr.Group == gvr.Group) && namedBy(t.gr.Resource, gvr, kind)
}

func namedBy(name string, gvr schema.GroupVersionResource, kind string) bool {
	return name == gvr.Resource || name == strings.ToLower(kind) ||
		isBuiltinGroup(gvr.Group) && slices.Contains(shortNames[gvr.Resource], name)
}

// isBuiltinGroup reports whether group is one of Kubernetes' own (whose short names
// shortNames lists), not a custom resource's.
func isBuiltinGroup(group string) bool {
	return group == "" || !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io")
}

// MatchType reports whether arg, a resource type as typed (see Selection.Types: pods,
// po, Pod, deployments.apps, a custom resource's plural or kind, all), names resource
// gvr, whose objects are of kind.
func MatchType(arg string, gvr schema.GroupVersionResource, kind string) bool {
	return slices.ContainsFunc(parseTypes([]string{arg}), func(t typeArg) bool { return t.matches(gvr, kind) })
}
