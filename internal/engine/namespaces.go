package engine

import (
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubeevents/kubeevents/internal/filter"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// resourceInformer is one informer to build: a type, in one namespace (or all), with its
// field selector.
type resourceInformer struct {
	res           resource.Resource
	namespace     string
	fieldSelector string
}

// resourceInformers says which informers the watch of cluster c needs: one per type, or,
// with namespaces named (-n a,b,c), one per namespace for each namespaced type. The
// server filters each informer's namespace, so a namespace not asked for costs nothing,
// whatever the size of the cluster; each informer costs a list and a watch connection.
// Excluded namespaces given by name are left out by the server too (a field selector
// metadata.namespace!=NAME, which every namespaced type supports); patterns are left out
// by namespaceFilter.
func (r *run) resourceInformers(c *clusterRun) []resourceInformer {
	var out []resourceInformer
	for _, res := range c.Resources {
		if !res.Namespaced {
			out = append(out, resourceInformer{res: res, fieldSelector: r.cfg.Watch.FieldSelector})
			continue
		}
		selector := withExcludedNamespaces(r.cfg.Watch.FieldSelector, r.cfg.Watch.ExcludeNamespaces)
		if len(c.Namespaces) == 0 {
			out = append(out, resourceInformer{res: res, fieldSelector: selector})
			continue
		}
		for _, ns := range c.Namespaces {
			out = append(out, resourceInformer{res: res, namespace: ns, fieldSelector: selector})
		}
	}
	return out
}

// withExcludedNamespaces adds metadata.namespace!=NAME for every excluded name.
func withExcludedNamespaces(selector string, excluded []string) string {
	for _, ns := range excluded {
		if filter.IsPattern(ns) {
			continue
		}
		term := fields.OneTermNotEqualSelector("metadata.namespace", ns).String()
		if selector == "" {
			selector = term
		} else {
			selector += "," + term
		}
	}
	return selector
}
