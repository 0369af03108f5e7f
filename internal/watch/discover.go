package watch

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// crds are the CustomResourceDefinitions, which --all-types follows to watch the custom
// resources defined after the start.
var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// discover follows c's CustomResourceDefinitions until ctx ends, and watches the custom
// resources of each one established that c does not watch yet, as it watches the types
// it started with (one informer per namespace given), handing their events to take.
func (s *Set) discover(ctx context.Context, c *clusterWatch, take func(*event.Event) bool) {
	if _, err := c.Clients.Dynamic.Resource(crds).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		if ctx.Err() == nil {
			c.warn("--all-types: custom resources defined after the start will not be watched: %v", informer.APIError(err, "list", resource.Resource{GVR: crds}))
		}
		return
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(c.Clients.Dynamic, crds, "", 0, cache.Indexers{}, nil).Informer()
	seen := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if res, ok := definedResource(u); ok {
				s.addType(ctx, c, res, take)
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) }, // established after its creation
	})
	inf.RunWithContext(ctx)
}

// definedResource is the resource a CustomResourceDefinition serves once established:
// its storage version if served, else its first served version.
func definedResource(u *unstructured.Unstructured) (resource.Resource, bool) {
	established := false
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cond := range conditions {
		m, _ := cond.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			established = true
		}
	}
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	version := ""
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); !served {
			continue
		}
		if storage, _ := m["storage"].(bool); storage || version == "" {
			version = name
		}
	}
	if !established || version == "" || plural == "" || kind == "" {
		return resource.Resource{}, false
	}
	gv := schema.GroupVersion{Group: group, Version: version}
	return resource.Resource{GVR: gv.WithResource(plural), GVK: gv.WithKind(kind), Namespaced: scope == "Namespaced"}, true
}

// addType watches res in c, unless c watches its group and resource already (in any
// version), with the options of the types it started with. A type whose rights are
// missing is said once and left out.
func (s *Set) addType(ctx context.Context, c *clusterWatch, res resource.Resource, take func(*event.Event) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil || s.stopped {
		return
	}
	gr := res.GVR.GroupResource()
	if slices.ContainsFunc(c.Resources, func(r resource.Resource) bool { return r.GVR.GroupResource() == gr }) ||
		slices.ContainsFunc(c.added, func(r resource.Resource) bool { return r.GVR.GroupResource() == gr }) {
		return
	}
	c.added = append(c.added, res)
	one := &clusterWatch{Cluster: c.Cluster, warn: c.warn}
	one.Resources = []resource.Resource{res}
	base := c.base
	for _, sp := range one.specs(base.FieldSelector, s.opts.ExcludeNamespaces) {
		opts := base
		opts.Namespace, opts.FieldSelector, opts.Resync = sp.namespace, sp.fieldSelector, s.opts.Resync()
		inf, err := newInformer(sp.res, c.Clients, opts)
		if err == nil {
			err = inf.CheckAccess(ctx)
		}
		if err != nil {
			if ctx.Err() == nil {
				c.warn("%s, defined after the start: %v; watching the other types without it", res, err)
			}
			return
		}
		s.running.Add(1)
		go func() {
			defer s.running.Done()
			_ = inf.Run(ctx, take)
		}()
	}
	c.warn("watching %s too: its definition appeared after the start", res)
}
