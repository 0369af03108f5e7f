package episode

import (
	"context"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Lookup gets an owner's metadata from the server, by what an ownerReference names of it
// (its apiVersion and kind) and the namespace of the object that names it.
type Lookup func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (metav1.Object, error)

// MetadataLookup is a Lookup through a cluster's metadata client. The resource of a
// kind is the usual one for the controllers Kubernetes ships, else the kind's lower-case
// plural (Rollout: rollouts), as custom resources are mostly named.
func MetadataLookup(client metadata.Interface) Lookup {
	if client == nil {
		return nil
	}
	return func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (metav1.Object, error) {
		return client.Resource(gvk.GroupVersion().WithResource(resourceOf(gvk.Kind))).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	}
}

// resourceOf is the resource a kind is most likely served as.
func resourceOf(kind string) string {
	lower := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(lower, "s"), strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "sh"):
		return lower + "es"
	case strings.HasSuffix(lower, "y") && !strings.HasSuffix(lower, "ay") && !strings.HasSuffix(lower, "ey"):
		return lower[:len(lower)-1] + "ies"
	}
	return lower + "s"
}

// lookupTimeout bounds one owner's lookup: past it, the chain ends at the owner named.
const lookupTimeout = 2 * time.Second

// maxChain bounds how far a controller chain is followed (a cycle ends it too).
const maxChain = 8

// controllers finds the top of objects' controller chains, following controller
// ownerReferences (a Pod's ReplicaSet's Deployment), each owner looked up once and
// cached by its UID: a pod of a Deployment costs one lookup per ReplicaSet.
type controllers struct {
	lookups map[string]Lookup // by cluster; nil: the chain ends at the first owner named
	warn    func(format string, args ...any)

	mu     sync.Mutex
	owners map[types.UID]*metav1.OwnerReference // an owner's own controller (nil: none)
	denied sync.Once
}

// maxCached bounds the cache: past it, it starts afresh.
const maxCached = 10000

func newControllers(lookups map[string]Lookup, warn func(string, ...any)) *controllers {
	return &controllers{lookups: lookups, warn: warn, owners: map[types.UID]*metav1.OwnerReference{}}
}

// top is the object at the top of obj's controller chain: obj itself (kind) when it has
// no controller.
func (c *controllers) top(cluster, kind string, obj metav1.Object) event.Owner {
	top := event.Owner{Kind: kind, Name: obj.GetName()}
	ref := metav1.GetControllerOfNoCopy(obj)
	namespace := obj.GetNamespace()
	seen := map[types.UID]bool{obj.GetUID(): true}
	for i := 0; ref != nil && i < maxChain && !seen[ref.UID]; i++ {
		seen[ref.UID] = true
		top = event.Owner{Kind: ref.Kind, Name: ref.Name}
		next, ok := c.controllerOf(cluster, namespace, ref)
		if !ok {
			break
		}
		ref = next
	}
	return top
}

// controllerOf is the controller of the owner ref names, from the cache or the server;
// false when it cannot be told (no lookup, the owner is gone, the lookup failed).
func (c *controllers) controllerOf(cluster, namespace string, ref *metav1.OwnerReference) (*metav1.OwnerReference, bool) {
	c.mu.Lock()
	next, cached := c.owners[ref.UID]
	c.mu.Unlock()
	if cached {
		return next, true
	}
	lookup := c.lookups[cluster]
	if lookup == nil {
		return nil, false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	owner, err := lookup(ctx, gv.WithKind(ref.Kind), namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		c.keep(ref.UID, nil) // gone (or not served so): the chain ends there
		return nil, false
	}
	if err != nil {
		if apierrors.IsForbidden(err) {
			c.denied.Do(func() {
				c.warn("episodes: not allowed to get %s %s/%s (%v): episodes are grouped by the controllers the objects name, not the ones above them (grant get on them)",
					ref.Kind, namespace, ref.Name, err)
			})
		}
		return nil, false
	}
	if owner.GetUID() != ref.UID {
		return nil, false // another object of that name now
	}
	if own := metav1.GetControllerOfNoCopy(owner); own != nil {
		cp := *own
		next = &cp
	}
	c.keep(ref.UID, next)
	return next, true
}

// keep caches an owner's controller (nil: none).
func (c *controllers) keep(uid types.UID, controller *metav1.OwnerReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.owners) >= maxCached {
		c.owners = map[types.UID]*metav1.OwnerReference{}
	}
	c.owners[uid] = controller
}
