package informer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// The watched namespace's deletion and creation are said, once each, also the creation of
// one that did not exist at the start.
func TestWatchNamespaceSaysDeletionAndCreation(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, existsAtStart := range []bool{true, false} {
		t.Run(fmt.Sprintf("exists at start %v", existsAtStart), func(t *testing.T) {
			var objs []runtime.Object
			if existsAtStart {
				objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
			}
			client := dynamicfake.NewSimpleDynamicClient(scheme, objs...)
			// The fake's watch sees only what happens after it opened (a change between the
			// informer's list and its watch is lost), so the test waits for it to open.
			watching := make(chan struct{}, 1)
			client.PrependWatchReactor("namespaces", func(action clienttesting.Action) (bool, watch.Interface, error) {
				w, err := client.Tracker().Watch(action.GetResource(), action.GetNamespace())
				select {
				case watching <- struct{}{}:
				default:
				}
				return true, w, err
			})
			waitWatching := func() {
				t.Helper()
				select {
				case <-watching:
				case <-time.After(10 * time.Second):
					t.Fatal("the informer did not open its watch")
				}
			}
			var mu sync.Mutex
			var said []string
			warn := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				said = append(said, fmt.Sprintf(format, args...))
			}
			saidNow := func() []string {
				mu.Lock()
				defer mu.Unlock()
				return slices.Clone(said)
			}
			waitSaid := func(n int) {
				t.Helper()
				deadline := time.Now().Add(5 * time.Second)
				for len(saidNow()) < n && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); WatchNamespace(ctx, client, "shop", !existsAtStart, warn) }()
			defer func() { cancel(); <-done }()

			ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop"}}}
			var want []string
			waitWatching()
			if !existsAtStart {
				if _, err := client.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				want = append(want, "namespace shop was created; watching it")
				waitSaid(len(want))
			}
			if err := client.Resource(namespaces).Delete(ctx, "shop", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			want = append(want, "namespace shop was deleted; waiting for it to be created again")
			waitSaid(len(want))
			if _, err := client.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			want = append(want, "namespace shop was created; watching it")
			waitSaid(len(want))
			if got := saidNow(); !slices.Equal(got, want) {
				t.Errorf("said %q, want %q", got, want)
			}
		})
	}
}

// A namespace the command found missing, created before the run's first look, is said
// to be created all the same.
func TestWatchNamespaceCreatedBeforeTheFirstLook(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	client := dynamicfake.NewSimpleDynamicClient(scheme, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	said := make(chan string, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		WatchNamespace(ctx, client, "shop", true, func(format string, args ...any) { said <- fmt.Sprintf(format, args...) })
	}()
	defer func() { cancel(); <-done }()
	select {
	case got := <-said:
		if got != "namespace shop was created; watching it" {
			t.Errorf("said %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the creation was not said")
	}
}
