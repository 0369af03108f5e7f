package informer

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// WatchNamespace says on stderr when the watched namespace is deleted, or created (again,
// or at last: that it did not exist at the start is said by the command, which checks it
// before the run and tells it as missing). The watch itself goes on through all of it: the API server lists
// and watches a namespace that does not exist as an empty one, so without this the
// stream would only go quiet. It needs the right to list and watch that namespace
// object, which a user confined to the namespace may lack: then it says nothing. It runs
// until ctx ends.
func WatchNamespace(ctx context.Context, client dynamic.Interface, ns string, missing bool, warn func(string, ...any)) {
	byName := fields.OneTermEqualSelector("metadata.name", ns).String()
	nsClient := client.Resource(namespaces)
	first, err := nsClient.List(ctx, metav1.ListOptions{FieldSelector: byName})
	if err != nil {
		return // no right to see it, or the server went away: the watch says the latter
	}
	state := &namespaceState{name: ns, warn: warn, absent: missing || len(first.Items) == 0}
	if len(first.Items) > 0 {
		state.OnAdd(nil, true) // created since the command looked, if it was missing then
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return nsClient.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return nsClient.Watch(ctx, o)
		},
	}
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: listThenWatch{lw}, Handler: state})
	ctrl.RunWithContext(ctx)
}

// listThenWatch makes the reflector list and then watch, as the informers of package
// informer do, rather than stream the list through a watch.
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// namespaceState is the watched namespace as last said.
type namespaceState struct {
	name string
	warn func(string, ...any)

	mu     sync.Mutex
	absent bool // said not to exist, or to be deleted
}

func (s *namespaceState) OnAdd(_ any, _ bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.absent {
		s.absent = false
		s.warn("namespace %s was created; watching it", s.name)
	}
}

func (s *namespaceState) OnUpdate(_, _ any) {}

func (s *namespaceState) OnDelete(_ any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.absent {
		s.absent = true
		s.warn("namespace %s was deleted; waiting for it to be created again", s.name)
	}
}
