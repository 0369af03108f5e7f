// Package resource turns the resource types users type (pods, po, deployments.apps, a
// custom resource's short name) into watchable Resources, through the RESTMapper and
// discovery as kubectl does, with a "did you mean" for a mistyped one.
package resource

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/kubeevents/kubeevents/internal/suggest"
)

// Resource is a resolved, watchable resource type.
type Resource struct {
	GVR        schema.GroupVersionResource
	GVK        schema.GroupVersionKind
	Namespaced bool
}

// String is the resource as kubectl names it: "pods", "deployments.apps".
func (r Resource) String() string {
	if r.GVR.Group == "" {
		return r.GVR.Resource
	}
	return r.GVR.Resource + "." + r.GVR.Group
}

// UnknownTypeError is a resource type the server does not serve.
type UnknownTypeError struct {
	Arg        string
	Suggestion string
}

func (e *UnknownTypeError) Error() string {
	msg := fmt.Sprintf("unknown resource type %q", e.Arg)
	if e.Suggestion != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.Suggestion)
	}
	return msg + " (list types with: kubectl api-resources)"
}

// NotWatchableError is a resource the server serves but cannot watch.
type NotWatchableError struct{ Resource Resource }

func (e *NotWatchableError) Error() string {
	return fmt.Sprintf("resource %q cannot be watched: the server does not offer the watch verb for it", e.Resource.String())
}

// Resolve turns what a user typed (pods, po, pod, Pod, deployments.apps,
// deployments.v1.apps, a custom resource's plural or short name) into a Resource, using
// the discovery-backed RESTMapper that kubectl uses (short names are expanded by it).
func Resolve(arg string, mapper meta.RESTMapper, disco discovery.DiscoveryInterface) (Resource, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return Resource{}, errors.New("no resource type given")
	}
	var gvr schema.GroupVersionResource
	var err error
	full, gr := schema.ParseResourceArg(strings.ToLower(arg))
	if full != nil {
		gvr, err = mapper.ResourceFor(*full)
	}
	if full == nil || err != nil {
		gvr, err = mapper.ResourceFor(gr.WithVersion(""))
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return Resource{}, &UnknownTypeError{Arg: arg, Suggestion: suggestType(arg, disco)}
		}
		return Resource{}, err
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return Resource{}, err
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return Resource{}, err
	}
	res := Resource{GVR: gvr, GVK: gvk, Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace}
	if verbs, ok := resourceVerbs(disco, gvr); ok && !slices.Contains(verbs, "watch") {
		return Resource{}, &NotWatchableError{Resource: res}
	}
	return res, nil
}

// resourceVerbs reads the verbs discovery lists for gvr; ok is false when discovery
// cannot say (the RESTMapper then already knew the type, so we let the server decide).
func resourceVerbs(disco discovery.DiscoveryInterface, gvr schema.GroupVersionResource) ([]string, bool) {
	if disco == nil {
		return nil, false
	}
	list, err := disco.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return nil, false
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource {
			return r.Verbs, true
		}
	}
	return nil, false
}

// suggestType finds the served name closest to a mistyped one (plural, singular, kind or
// short name), if one is close enough to be a typo.
func suggestType(arg string, disco discovery.DiscoveryInterface) string {
	if disco == nil {
		return ""
	}
	lists, _ := disco.ServerPreferredResources() // partial results are fine for a hint
	return closestName(strings.ToLower(arg), lists)
}

func closestName(arg string, lists []*metav1.APIResourceList) string {
	// Every name a type answers to, each leading to the plural that is suggested.
	var candidates []string
	plurals := map[string]string{}
	for _, list := range lists {
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // subresources are not watchable types
			}
			for _, c := range append([]string{r.Name, r.SingularName, strings.ToLower(r.Kind)}, r.ShortNames...) {
				if _, seen := plurals[c]; c != "" && !seen {
					plurals[c] = r.Name
					candidates = append(candidates, c)
				}
			}
		}
	}
	return plurals[suggest.Closest(arg, candidates)]
}
