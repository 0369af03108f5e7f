package informer

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/resource"
)

// The informer's first list asks the server for the most recent state in pages of
// listPageSize (not for resourceVersion "0", which the watch cache answers with every
// object at once), and every page reaches the cache.
func TestInitialListComesInPages(t *testing.T) {
	const objects = 2*listPageSize + 7
	var mu sync.Mutex
	var asked []metav1.ListOptions
	w := &watchReporter{
		inner: &cache.ListWatch{
			ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, o)
				from := 0
				if o.Continue != "" {
					from, _ = strconv.Atoi(o.Continue)
				}
				to := objects
				if o.Limit > 0 {
					to = min(objects, from+int(o.Limit))
				}
				l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}}
				for i := from; i < to; i++ {
					l.Items = append(l.Items, *configMap(fmt.Sprintf("cm-%05d", i), "1"))
				}
				if to < objects {
					l.Continue = strconv.Itoa(to)
				}
				return l, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return watch.NewFake(), nil
			},
		},
		resource: resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true},
		warn:     func(string, ...any) {},
		fatal:    func(err error) { t.Errorf("fatal: %v", err) },
		example:  &corev1.ConfigMap{},
	}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: w, ObjectType: &corev1.ConfigMap{}, Handler: cache.ResourceEventHandlerFuncs{}})
	w.store = func() cache.Store { return store }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ctrl.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), ctrl.HasSynced) {
		t.Fatal("no initial sync")
	}
	if n := len(store.ListKeys()); n != objects {
		t.Errorf("the cache holds %d objects, want all %d", n, objects)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []metav1.ListOptions{
		{Limit: listPageSize},
		{Limit: listPageSize, Continue: strconv.Itoa(listPageSize)},
		{Limit: listPageSize, Continue: strconv.Itoa(2 * listPageSize)},
	}
	if len(asked) != len(want) {
		t.Fatalf("listed %d times (%+v), want %d pages", len(asked), asked, len(want))
	}
	for i := range want {
		if asked[i] != want[i] {
			t.Errorf("list %d asked for %+v, want %+v", i, asked[i], want[i])
		}
	}
}

func TestMostRecentPages(t *testing.T) {
	for _, c := range []struct {
		name     string
		in, want metav1.ListOptions
	}{
		{"first list, from the cache", metav1.ListOptions{ResourceVersion: "0", Limit: 500},
			metav1.ListOptions{Limit: listPageSize}},
		{"first page of a re-list at a version", metav1.ListOptions{ResourceVersion: "77", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 500},
			metav1.ListOptions{Limit: listPageSize}},
		{"a later page keeps its token", metav1.ListOptions{Continue: "tok", Limit: 500},
			metav1.ListOptions{Continue: "tok", Limit: listPageSize}},
		{"larger pages stay", metav1.ListOptions{Limit: 2 * listPageSize},
			metav1.ListOptions{Limit: 2 * listPageSize}},
		// The pager's fallback after an expired continue token must get everything at once.
		{"a whole list stays whole", metav1.ListOptions{ResourceVersion: "0"},
			metav1.ListOptions{ResourceVersion: "0"}},
		{"a whole re-list at a version stays", metav1.ListOptions{ResourceVersion: "77"},
			metav1.ListOptions{ResourceVersion: "77"}},
	} {
		if got := mostRecentPages(c.in); got != c.want {
			t.Errorf("%s: mostRecentPages(%+v) = %+v, want %+v", c.name, c.in, got, c.want)
		}
	}
}
