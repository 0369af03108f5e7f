package informer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/resource"
)

func configMap(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: rv}}
}

// recordingHandler notes what client-go's informer hands its handler.
type recordingHandler struct {
	mu       sync.Mutex
	seen     []string
	vanished func(obj any) bool
}

func (h *recordingHandler) note(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, s)
}

func (h *recordingHandler) OnAdd(obj any, _ bool) {
	h.note("add " + obj.(*corev1.ConfigMap).Name + "@" + obj.(*corev1.ConfigMap).ResourceVersion)
}
func (h *recordingHandler) OnUpdate(_, obj any) {
	h.note("update " + obj.(*corev1.ConfigMap).Name + "@" + obj.(*corev1.ConfigMap).ResourceVersion)
}
func (h *recordingHandler) OnDelete(obj any) {
	h.note(fmt.Sprintf("delete %s vanished=%v", obj.(*corev1.ConfigMap).Name, h.vanished(obj)))
}

func (h *recordingHandler) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

// When a watch ends with 410 Gone, the informer re-lists at once, inside the watch, and
// client-go's informer takes in what changed as events: the changed object updated, the
// new one added, the vanished one deleted (and marked so), the unchanged one left alone;
// the next watch starts from the re-list's resourceVersion, without the reflector's
// backoff before a re-list of its own.
func TestRelistInPlaceOfAGoneWatch(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	var mu sync.Mutex
	lists := [][]corev1.ConfigMap{
		{*configMap("a", "1"), *configMap("b", "1"), *configMap("c", "1")},
		{*configMap("a", "7"), *configMap("b", "1"), *configMap("d", "8")},
	}
	listRVs := []string{"5", "10"}
	var listOptions, watchOptions []metav1.ListOptions
	first := watch.NewFake()
	watches := []watch.Interface{first, watch.NewFake()}
	watched := make(chan time.Time, 2)
	var said []string
	w := &watchReporter{
		inner: &cache.ListWatch{
			ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
				mu.Lock()
				defer mu.Unlock()
				listOptions = append(listOptions, o)
				if len(lists) == 0 {
					return nil, fmt.Errorf("listed a third time")
				}
				l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: listRVs[0]}, Items: lists[0]}
				lists, listRVs = lists[1:], listRVs[1:]
				return l, nil
			},
			WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
				mu.Lock()
				defer mu.Unlock()
				watchOptions = append(watchOptions, o)
				watched <- time.Now()
				if len(watches) == 0 {
					return nil, fmt.Errorf("watched a third time")
				}
				wi := watches[0]
				watches = watches[1:]
				return wi, nil
			},
		},
		resource: resource.Resource{GVR: cms, Namespaced: true},
		warn: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			said = append(said, fmt.Sprintf(format, args...))
		},
		fatal:   func(err error) { t.Errorf("fatal: %v", err) },
		example: &corev1.ConfigMap{},
	}
	h := &recordingHandler{vanished: w.vanished.has}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: w, ObjectType: &corev1.ConfigMap{}, Handler: h})
	w.store = func() cache.Store { return store }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ctrl.RunWithContext(ctx)

	<-watched
	if !cache.WaitForCacheSync(ctx.Done(), ctrl.HasSynced) {
		t.Fatal("no initial sync")
	}
	gone := time.Now()
	first.Error(&apierrors.NewResourceExpired("too old resource version: 5 (9)").ErrStatus)
	var rewatched time.Time
	select {
	case rewatched = <-watched:
	case <-time.After(5 * time.Second):
		t.Fatal("no watch after the 410")
	}
	if d := rewatched.Sub(gone); d > 500*time.Millisecond {
		t.Errorf("the next watch came %v after the 410, want at once (client-go's reflector waits 0.8 s or more)", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(h.events()) < 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	want := []string{"add a@1", "add b@1", "add c@1", "update a@7", "add d@8", "delete c vanished=true"}
	if got := h.events(); !slices.Equal(got, want) {
		t.Errorf("handler saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(watchOptions) != 2 || watchOptions[1].ResourceVersion != "10" {
		t.Errorf("watches opened with %+v, want the second at the re-list's resourceVersion 10", watchOptions)
	}
	if len(listOptions) != 2 || listOptions[1].ResourceVersion != "" || listOptions[1].Limit != relistPageSize {
		t.Errorf("lists made with %+v, want the re-list a consistent read in pages", listOptions)
	}
	wantSaid := []string{"watch of configmaps lost; re-listing…", "re-synced 3 configmaps (1 changed, 1 created, 1 deleted while disconnected)"}
	if !slices.Equal(said, wantSaid) {
		t.Errorf("said %q, want %q", said, wantSaid)
	}
}

// A watched type the server stops serving (its CustomResourceDefinition deleted) is
// said once, in those words, and asked for again every second, not after the
// reflector's backoff: the watch resumes within a second of the type coming back.
func TestTypeGoneIsWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gizmos := resource.Resource{GVR: schema.GroupVersionResource{Group: "e2e.kubeevents.dev", Version: "v1", Resource: "gizmos"}, Namespaced: true}
		notFound := apierrors.NewNotFound(schema.GroupResource{Group: "e2e.kubeevents.dev", Resource: "gizmos"}, "")
		var calls []time.Duration
		start := time.Now()
		var mu sync.Mutex // the resume timer says its line from a goroutine of its own
		var said []string
		w := &watchReporter{
			inner: &cache.ListWatch{
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
					calls = append(calls, time.Since(start))
					if len(calls) <= 3 {
						return nil, notFound
					}
					return watch.NewFake(), nil
				},
			},
			resource: gizmos,
			warn: func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				said = append(said, fmt.Sprintf(format, args...))
			},
			fatal:      func(err error) { t.Errorf("fatal: %v", err) },
			watching:   true,
			crdDeleted: func(context.Context) bool { return true },
		}
		wi, err := w.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "5"})
		if err != nil {
			t.Fatal(err)
		}
		defer wi.Stop()
		time.Sleep(3 * time.Second) // the outage is declared over after resumeQuiet
		want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}
		if fmt.Sprint(calls) != fmt.Sprint(want) {
			t.Errorf("watch calls at %v, want %v", calls, want)
		}
		wantSaid := []string{
			"watch of gizmos.e2e.kubeevents.dev lost: customresourcedefinition gizmos.e2e.kubeevents.dev was deleted; waiting for it to come back",
			"watch of gizmos.e2e.kubeevents.dev resumed; no events were missed",
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(said, wantSaid) {
			t.Errorf("said %q, want %q", said, wantSaid)
		}
	})
}

// A server that throttles the informer's calls (429 from API Priority and Fairness) is
// said once, in words a user understands, and asked again only after the Retry-After it
// gave.
func TestThrottledCallsWaitForRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cms := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
		throttled := apierrors.NewTooManyRequests("too many requests, please try again later", 3)
		var calls []time.Duration
		start := time.Now()
		var said []string
		w := &watchReporter{
			inner: &cache.ListWatch{
				ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
					calls = append(calls, time.Since(start))
					if len(calls) <= 2 {
						return nil, throttled
					}
					return &corev1.ConfigMapList{}, nil
				},
			},
			resource: cms,
			warn:     func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) },
			fatal:    func(err error) { t.Errorf("fatal: %v", err) },
			watching: true,
			store:    func() cache.Store { return cache.NewStore(cache.MetaNamespaceKeyFunc) },
			probe:    &serverProbe{check: func(context.Context) (bool, time.Duration) { return true, 0 }, interval: probeInterval, ready: make(chan struct{})},
		}
		if _, err := w.ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		want := []time.Duration{0, 3 * time.Second, 6 * time.Second}
		if fmt.Sprint(calls) != fmt.Sprint(want) {
			t.Errorf("list calls at %v, want %v (3 s apart, as Retry-After asks)", calls, want)
		}
		wantSaid := []string{
			"watch of configmaps lost; re-listing…",
			"watch of configmaps still lost, now throttled by the API server: 429 Too Many Requests; retrying…",
			"re-synced 0 configmaps (0 changed, 0 created, 0 deleted while disconnected)",
		}
		if !slices.Equal(said, wantSaid) {
			t.Errorf("said %q, want %q", said, wantSaid)
		}
	})
}

// The re-list in place, on and off (KUBEEVENTS_RELIST_IN_PLACE): on, a watch's 410 Gone
// is answered by a list the watchReporter makes at once and the next watch opens at that
// list's resourceVersion at the same instant; off, client-go's reflector waits its backoff
// and re-lists itself, at the resourceVersion it had. Either way the re-sync is said.
func TestRelistInPlaceSwitch(t *testing.T) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("off=%v", off), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var store cache.Store
				listed := make(chan struct{}) // closed once the first list is in the cache
				lw := newScriptedLW(func(n int, _ metav1.ListOptions) (runtime.Object, error) {
					if n == 0 {
						return configMapList("5", *configMap("a", "5")), nil
					}
					return configMapList("10", *configMap("a", "7")), nil
				}, func(n int, _ metav1.ListOptions) (watch.Interface, error) {
					if n == 0 {
						// The 410 comes once the first list is in the cache (the informer's
						// processing goroutine puts it there), so that the re-list has
						// something to compare with; no time passes in the bubble.
						<-listed
						return newScriptedWatch(-1, goneEvent), nil
					}
					return newScriptedWatch(-1), nil
				})
				var said []string
				var mu sync.Mutex
				w := &watchReporter{
					inner: &cache.ListWatch{
						ListWithContextFunc:  func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) { return lw.List(o) },
						WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) { return lw.Watch(o) },
					},
					resource: resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true},
					warn: func(format string, args ...any) {
						mu.Lock()
						defer mu.Unlock()
						said = append(said, fmt.Sprintf(format, args...))
					},
					fatal:    func(err error) { t.Errorf("fatal: %v", err) },
					example:  &corev1.ConfigMap{},
					recovery: Recovery{NoRelistInPlace: off},
				}
				var ctrl cache.Controller
				var once sync.Once
				store, ctrl = cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: w, ObjectType: &corev1.ConfigMap{},
					Handler: cache.ResourceEventHandlerFuncs{AddFunc: func(any) { once.Do(func() { close(listed) }) }}})
				w.store = func() cache.Store { return store }
				stop := started(ctrl.RunWithContext)
				defer stop()
				calls := lw.waitCalls(t, 4)
				relist, rewatch := calls[2], calls[3]
				if off {
					if relist.opts.ResourceVersion != "5" {
						t.Errorf("off: the re-list was at resourceVersion %q, want the reflector's, 5", relist.opts.ResourceVersion)
					}
					checkWaited(t, "off: before the re-list", relist.at-calls[1].at, 1)
				} else if relist.at != calls[1].at || rewatch.at != calls[1].at {
					t.Errorf("on: the re-list came %s and the next watch %s after the 410, want both at once", relist.at-calls[1].at, rewatch.at-calls[1].at)
				}
				if rewatch.op != "watch" || rewatch.opts.ResourceVersion != "10" {
					t.Errorf("after the re-list came a %s at %q, want a watch at 10", rewatch.op, rewatch.opts.ResourceVersion)
				}
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				want := []string{"watch of configmaps lost; re-listing…", "re-synced 1 configmaps (1 changed, 0 created, 0 deleted while disconnected)"}
				if !slices.Equal(said, want) {
					t.Errorf("said %q, want %q", said, want)
				}
			})
		})
	}
}
