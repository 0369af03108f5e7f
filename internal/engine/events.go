package engine

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// coreEvents is the resource --with-events watches besides the user's types.
var coreEvents = resource.Resource{
	GVR:        schema.GroupVersionResource{Version: "v1", Resource: "events"},
	GVK:        schema.GroupVersionKind{Version: "v1", Kind: "Event"},
	Namespaced: true,
}

// involvesWatched accepts the core Events whose involvedObject is in one of the watched
// informers' caches.
func involvesWatched(watched []*informer.Informer) func(obj any) bool {
	return func(obj any) bool {
		ev, ok := obj.(*corev1.Event)
		if !ok {
			return false
		}
		ref := ev.InvolvedObject
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return false
		}
		key := cache.NewObjectName(ref.Namespace, ref.Name).String()
		for _, inf := range watched {
			if inf.Resource.GVK.Kind != ref.Kind || inf.Resource.GVK.Group != gv.Group {
				continue
			}
			if _, exists, _ := inf.Store().GetByKey(key); exists {
				return true
			}
		}
		return false
	}
}
