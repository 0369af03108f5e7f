package informer

// These tests drive informer.New end to end through client-go's fake dynamic client
// (k8s.io/client-go/dynamic/fake), inside testing/synctest bubbles: client-go's reflector
// and resync timers use k8s.io/utils/clock's RealClock, which calls the time package, so
// in a bubble they run on fake time and resync periods can be checked exactly.
//
// The fake typed clientset (k8s.io/client-go/kubernetes/fake) cannot be used: New takes
// Clients.TypedREST, a factory of rest.Interface, and the fake clientset has none to
// give (its typed clients' RESTClient() returns a nil *rest.RESTClient). The typed-object
// half of the transform is therefore tested on the transform itself.

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/resource"
)

var (
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	podsRes = resource.Resource{GVR: podsGVR, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true}
)

// recorder is a Receiver that keeps every event it is given.
type recorder struct {
	mu     sync.Mutex
	events []*event.Event
}

func (r *recorder) Add(ev *event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) TryAdd(ev *event.Event) bool {
	r.Add(ev)
	return true
}

// Add2 is Add as a handler's take.
func (r *recorder) Add2(ev *event.Event) { r.Add(ev) }

func (r *recorder) all() []*event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// split separates SYNC events from changes (ADDED, MODIFIED, DELETED).
func (r *recorder) split() (changes, syncs []*event.Event) {
	for _, ev := range r.all() {
		if ev.Type == event.Sync {
			syncs = append(syncs, ev)
		} else {
			changes = append(changes, ev)
		}
	}
	return changes, syncs
}

// unstructuredPod is pod default/name at resourceVersion rv, as the dynamic client has
// it, with managedFields for the transform to drop.
func unstructuredPod(name, rv string) *unstructured.Unstructured {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: name, ResourceVersion: rv,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:" + rv}}},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func newClient(names ...string) *dynamicfake.FakeDynamicClient {
	var objs []runtime.Object
	for _, n := range names {
		objs = append(objs, unstructuredPod(n, "1"))
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{podsGVR: "PodList"}, objs...)
}

// receiver is one listener of a test: what it records, and its resync period.
type receiver struct {
	r      *recorder
	resync time.Duration
}

// start builds and starts an informer over client, feeding receivers through a pipeline
// that numbers the events and delivers them, as a run's does (from seq, when not nil),
// and waits for its initial list; it is stopped when the test ends.
func start(t *testing.T, client *dynamicfake.FakeDynamicClient, opts Options, receivers ...receiver) *Informer {
	t.Helper()
	return startWith(t, client, opts, pipeline.NewSequence(), receivers...)
}

func startWith(t *testing.T, client *dynamicfake.FakeDynamicClient, opts Options, seq *pipeline.Sequence, receivers ...receiver) *Informer {
	t.Helper()
	if opts.Fatal == nil {
		opts.Fatal = func(err error) { t.Errorf("fatal: %v", err) }
	}
	var rs []pipeline.Receiver
	var periods []time.Duration
	for _, r := range receivers {
		rs = append(rs, r.r)
		periods = append(periods, r.resync)
	}
	deliver := pipeline.NewDeliver(rs, periods, pipeline.KeepBacklog)
	opts.Resync = deliver.NewResync()
	p := pipeline.New(pipeline.Step{Name: "number", Stage: seq.Number(), Ordered: true},
		pipeline.Step{Name: "deliver", Stage: deliver, Sync: true})
	inf, err := New(podsRes, Clients{Dynamic: client}, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = inf.Run(ctx, p.Take)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		deliver.Drained()
	})
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	if !inf.WaitForSync(wctx) {
		t.Fatal("informer did not sync")
	}
	synctest.Wait() // the initial ADDED events have reached the receivers
	return inf
}

func pods(client *dynamicfake.FakeDynamicClient) interface {
	Create(context.Context, *unstructured.Unstructured, metav1.CreateOptions, ...string) (*unstructured.Unstructured, error)
	Update(context.Context, *unstructured.Unstructured, metav1.UpdateOptions, ...string) (*unstructured.Unstructured, error)
	Delete(context.Context, string, metav1.DeleteOptions, ...string) error
} {
	return client.Resource(podsGVR).Namespace("default")
}

func names(evs []*event.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = string(ev.Type) + " " + ev.Key()
	}
	return out
}

// syncRounds groups SYNC events by their time (a resync hands every object over at one
// instant of fake time) and returns the times and the keys resynced at each.
func syncRounds(syncs []*event.Event) (times []time.Time, keys [][]string) {
	for _, ev := range syncs {
		if n := len(times); n == 0 || !times[n-1].Equal(ev.Time) {
			times = append(times, ev.Time)
			keys = append(keys, nil)
		}
		keys[len(keys)-1] = append(keys[len(keys)-1], ev.Key())
	}
	for _, k := range keys {
		slices.Sort(k)
	}
	return times, keys
}

// TestPerListenerResync: one informer, three receivers with resync 0, 2s and 10s. The
// informer resyncs at the smallest period, and hands every object as a SYNC event only to
// the receivers whose own period is due.
func TestPerListenerResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient("a", "b", "c")
		r0, r2, r10 := &recorder{}, &recorder{}, &recorder{}
		t0 := time.Now()
		start(t, client, Options{},
			receiver{r0, 0}, receiver{r2, 2 * time.Second}, receiver{r10, 10 * time.Second})
		time.Sleep(21*time.Second - time.Since(t0))
		synctest.Wait()

		for name, r := range map[string]*recorder{"resync 0": r0, "resync 2s": r2, "resync 10s": r10} {
			changes, _ := r.split()
			if got := names(changes); !slices.Equal(got, []string{"ADDED default/a", "ADDED default/b", "ADDED default/c"}) {
				t.Errorf("%s: changes %v, want the three initial ADDED", name, got)
			}
		}
		if _, syncs := r0.split(); len(syncs) != 0 {
			t.Errorf("the resync-0 receiver got %d SYNC events", len(syncs))
		}
		check := func(name string, r *recorder, period time.Duration, rounds int) []*event.Event {
			t.Helper()
			_, syncs := r.split()
			times, keys := syncRounds(syncs)
			if len(times) != rounds {
				t.Errorf("%s: %d resync rounds in 21s, want %d (at %v)", name, len(times), rounds, times)
			}
			for i, at := range times {
				if want := t0.Add(time.Duration(i+1) * period); !at.Equal(want) {
					t.Errorf("%s: round %d at %v after start, want %v", name, i+1, at.Sub(t0), want.Sub(t0))
				}
				if !slices.Equal(keys[i], []string{"default/a", "default/b", "default/c"}) {
					t.Errorf("%s: round %d resynced %v, want every pod once", name, i+1, keys[i])
				}
			}
			for _, ev := range syncs {
				if ev.Seq != 0 || ev.Old == nil || ev.Kind != "Pod" || ev.Resource != podsGVR {
					t.Fatalf("%s: SYNC event seq %d old %v kind %q: want Seq 0, an Old, kind Pod", name, ev.Seq, ev.Old, ev.Kind)
				}
			}
			return syncs
		}
		syncs2 := check("resync 2s", r2, 2*time.Second, 10)
		syncs10 := check("resync 10s", r10, 10*time.Second, 2)
		// At 10s and 20s both are due: they share each object's SYNC event, made once.
		for _, a := range syncs10 {
			if !slices.Contains(syncs2, a) {
				t.Fatalf("SYNC event for %s at %v not shared between the receivers due", a.Key(), a.Time.Sub(t0))
			}
		}
		// Resyncs take no sequence numbers: the changes are still 1..3.
		changes, _ := r2.split()
		for i, ev := range changes {
			if ev.Seq != uint64(i+1) {
				t.Errorf("change %d has seq %d", i, ev.Seq)
			}
		}
	})
}

// TestResyncBelowMinimum: client-go raises a resync period below one second to one
// second; that is the period the receiver gets.
func TestResyncBelowMinimum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		t0 := time.Now()
		start(t, newClient("a"), Options{}, receiver{r, 100 * time.Millisecond})
		time.Sleep(3*time.Second + 500*time.Millisecond - time.Since(t0))
		synctest.Wait()
		_, syncs := r.split()
		times, _ := syncRounds(syncs)
		if len(times) != 3 {
			t.Fatalf("%d resyncs in 3.5s with a 100ms period raised to 1s, want 3: %v", len(times), times)
		}
		for i, at := range times {
			if d := at.Sub(t0); d != time.Duration(i+1)*time.Second {
				t.Errorf("resync %d at %v", i+1, d)
			}
		}
	})
}

// TestEventsAreShared: every receiver gets the same *Event for the same change, and
// Seq counts changes one by one, in order, from the run's sequence.
func TestEventsAreShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient("a", "b", "c")
		seq := pipeline.NewSequence()
		for range 100 { // as if another informer of the same run had made 100 events
			seq.Number().Process(&event.Event{})
		}
		rs := []*recorder{{}, {}, {}}
		inf := startWith(t, client, Options{}, seq, receiver{r: rs[0]}, receiver{r: rs[1]}, receiver{r: rs[2]})
		if inf.Typed {
			t.Error("an informer over the dynamic client says it is typed")
		}

		ctx := context.Background()
		oldA := inf.Store().List() // the cached objects before the update
		if _, err := pods(client).Update(ctx, unstructuredPod("a", "2"), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods(client).Create(ctx, unstructuredPod("d", "3"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods(client).Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods(client).Update(ctx, unstructuredPod("c", "4"), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		want := []string{"ADDED default/a", "ADDED default/b", "ADDED default/c",
			"MODIFIED default/a", "ADDED default/d", "DELETED default/b", "MODIFIED default/c"}
		evs := rs[0].all()
		if got := names(evs); !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		for i, r := range rs[1:] {
			other := r.all()
			if len(other) != len(evs) {
				t.Fatalf("receiver %d got %d events, receiver 0 %d", i+1, len(other), len(evs))
			}
			for j := range evs {
				if other[j] != evs[j] {
					t.Fatalf("receiver %d event %d (%s) is not the same *Event as receiver 0's", i+1, j, names(other[j:j+1]))
				}
			}
		}
		for i, ev := range evs {
			if ev.Seq != uint64(101+i) {
				t.Errorf("event %d (%s) has seq %d, want %d", i, names(evs[i:i+1]), ev.Seq, 101+i)
			}
			if initial := i < 3; ev.InInitialList != initial {
				t.Errorf("event %d InInitialList = %v", i, ev.InInitialList)
			}
		}
		if got := seq.Numbered(); got != 107 {
			t.Errorf("shared counter at %d, want 107", got)
		}
		// MODIFIED carries the cached state before the change; ADDED and DELETED none.
		modA := evs[3]
		if modA.Old == nil || resourceVersion(modA.Old) != "1" || resourceVersion(modA.Object) != "2" {
			t.Errorf("MODIFIED a: old rv %q new rv %q, want 1 → 2", resourceVersion(modA.Old), resourceVersion(modA.Object))
		}
		if !slices.ContainsFunc(oldA, func(o any) bool { return o == modA.Old }) {
			t.Error("MODIFIED a: Old is not the object that was in the cache")
		}
		for _, i := range []int{0, 4, 5} {
			if evs[i].Old != nil {
				t.Errorf("%s has an Old", names(evs[i:i+1]))
			}
		}
		if del := evs[5]; del.FinalStateUnknown || resourceVersion(del.Object) != "1" {
			t.Errorf("DELETED b: final state unknown %v, rv %q", del.FinalStateUnknown, resourceVersion(del.Object))
		}
	})
}

// TestNamesFilter: several names are filtered in the informer, for changes and resyncs.
func TestNamesFilter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient("a", "b", "c", "d")
		plain, resyncing := &recorder{}, &recorder{}
		start(t, client, Options{Names: []string{"c", "a", "x"}},
			receiver{r: plain}, receiver{resyncing, 2 * time.Second})
		ctx := context.Background()
		for i, n := range []string{"b", "a", "d", "c"} {
			if _, err := pods(client).Update(ctx, unstructuredPod(n, fmt.Sprint(10+i)), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := pods(client).Create(ctx, unstructuredPod("x", "20"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods(client).Create(ctx, unstructuredPod("y", "21"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods(client).Delete(ctx, "d", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods(client).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(5 * time.Second)
		synctest.Wait()

		want := []string{"ADDED default/a", "ADDED default/c", "MODIFIED default/a", "MODIFIED default/c", "ADDED default/x", "DELETED default/a"}
		for name, r := range map[string]*recorder{"plain": plain, "resyncing": resyncing} {
			changes, syncs := r.split()
			if got := names(changes); !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", name, got, want)
			}
			for i, ev := range changes {
				if ev.Seq != uint64(i+1) {
					t.Errorf("%s: %s seq %d: filtered-out changes must not take sequence numbers", name, names(changes[i:i+1]), ev.Seq)
				}
			}
			if name == "plain" && len(syncs) != 0 {
				t.Errorf("plain receiver got SYNCs")
			}
			if name == "resyncing" {
				_, keys := syncRounds(syncs)
				if len(keys) != 2 {
					t.Errorf("%d resync rounds in 5s at 2s, want 2", len(keys))
				}
				for _, k := range keys {
					if !slices.Equal(k, []string{"default/c", "default/x"}) {
						t.Errorf("resynced %v, want only the named pods still there", k)
					}
				}
			}
		}
	})
}

// TestOneNameIsAFieldSelector: a single name is left to the server, as a field selector
// (the fake client does not apply field selectors, so the requests are checked).
func TestOneNameIsAFieldSelector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient("a", "b")
		inf := start(t, client, Options{Names: []string{"b"}, FieldSelector: "status.phase=Running", LabelSelector: "app=web"},
			receiver{r: &recorder{}})
		if inf == nil {
			return
		}
		var verbs []string
		for _, a := range client.Actions() {
			var fieldSel, labels string
			switch a := a.(type) {
			case k8stesting.ListActionImpl:
				fieldSel, labels = a.GetListRestrictions().Fields.String(), a.GetListRestrictions().Labels.String()
			case k8stesting.WatchActionImpl:
				fieldSel, labels = a.GetWatchRestrictions().Fields.String(), a.GetWatchRestrictions().Labels.String()
			default:
				continue
			}
			verbs = append(verbs, a.GetVerb())
			// The selector as the server would parse it (fields.Selector sorts its terms).
			if want := fields.ParseSelectorOrDie("status.phase=Running,metadata.name=b").String(); fieldSel != want {
				t.Errorf("%s field selector %q, want %q", a.GetVerb(), fieldSel, want)
			}
			if labels != "app=web" {
				t.Errorf("%s label selector %q", a.GetVerb(), labels)
			}
		}
		if !slices.Equal(verbs, []string{"list", "watch"}) {
			t.Errorf("requests %v, want list then watch", verbs)
		}
	})
}

func TestWatchOnlySkipsInitialList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient("a", "b")
		r := &recorder{}
		start(t, client, Options{WatchOnly: true}, receiver{r: r}, receiver{r: &recorder{}})
		if evs := r.all(); len(evs) != 0 {
			t.Fatalf("watch-only got %v from the initial list", names(evs))
		}
		if _, err := pods(client).Create(context.Background(), unstructuredPod("c", "5"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := pods(client).Update(context.Background(), unstructuredPod("a", "6"), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		evs := r.all()
		if got := names(evs); !slices.Equal(got, []string{"ADDED default/c", "MODIFIED default/a"}) {
			t.Fatalf("events %v", got)
		}
		if evs[0].Seq != 1 || evs[1].Seq != 2 || evs[0].InInitialList {
			t.Errorf("seqs %d %d, initial %v", evs[0].Seq, evs[1].Seq, evs[0].InInitialList)
		}
	})
}

// TestTransformEndToEnd: objects reaching receivers carry apiVersion and kind and no
// managedFields, in the events and in the cache.
func TestTransformEndToEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient("a")
		r := &recorder{}
		inf := start(t, client, Options{}, receiver{r: r})
		if _, err := pods(client).Update(context.Background(), unstructuredPod("a", "2"), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		evs := r.all()
		if len(evs) != 2 {
			t.Fatalf("events %v", names(evs))
		}
		objs := []runtime.Object{evs[0].Object, evs[1].Object, evs[1].Old}
		for _, o := range inf.Store().List() {
			objs = append(objs, o.(runtime.Object))
		}
		for _, o := range objs {
			u := o.(*unstructured.Unstructured)
			if u.GetAPIVersion() != "v1" || u.GetKind() != "Pod" {
				t.Errorf("object %s has apiVersion %q kind %q", u.GetName(), u.GetAPIVersion(), u.GetKind())
			}
			if mf := u.GetManagedFields(); mf != nil {
				t.Errorf("object %s still has managedFields %v", u.GetName(), mf)
			}
			if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields"); found {
				t.Errorf("object %s still has a managedFields key", u.GetName())
			}
		}
		raw, err := evs[1].ObjectJSON()
		if err != nil {
			t.Fatal(err)
		}
		if s := string(raw); !strings.HasPrefix(s, `{"apiVersion":"v1","kind":"Pod",`) || strings.Contains(s, "managedFields") {
			t.Errorf("JSON %s", s)
		}
	})
}

// TestTransformTypedObjects: typed objects decoded by an informer lack apiVersion and
// kind; the transform fills them in from the resource and drops managedFields.
func TestTransformTypedObjects(t *testing.T) {
	inf := &Informer{Resource: podsRes}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "a", Namespace: "default",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
	}}
	if !pod.GetObjectKind().GroupVersionKind().Empty() {
		t.Fatal("fixture already has a kind")
	}
	out, err := inf.transform(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.APIVersion != "v1" || got.Kind != "Pod" {
		t.Errorf("apiVersion %q kind %q, want v1 Pod", got.APIVersion, got.Kind)
	}
	if got.ManagedFields != nil {
		t.Errorf("managedFields kept: %v", got.ManagedFields)
	}
	raw, err := (&event.Event{Object: got}).ObjectJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), `{"kind":"Pod","apiVersion":"v1",`) {
		t.Errorf("typed JSON %s lacks kind/apiVersion", raw)
	}

	// A kind that is already set is left alone.
	deploy := &unstructured.Unstructured{}
	deploy.SetAPIVersion("apps/v1")
	deploy.SetKind("Deployment")
	deploy.SetName("d")
	if out, _ := inf.transform(deploy); out.(*unstructured.Unstructured).GetKind() != "Deployment" {
		t.Error("transform overwrote a set kind")
	}
	// Tombstones pass through untouched: their object was transformed on the way in.
	tomb := cache.DeletedFinalStateUnknown{Key: "default/a", Obj: got}
	if out, err := inf.transform(tomb); err != nil || out != any(tomb) {
		t.Errorf("tombstone: %v, %v", out, err)
	}
	// Metadata-only objects are named by their real kind.
	pom := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}}
	if out, _ := inf.transform(pom); out.(*metav1.PartialObjectMetadata).Kind != "Pod" || out.(*metav1.PartialObjectMetadata).APIVersion != "v1" {
		t.Errorf("PartialObjectMetadata kind %v", out.(*metav1.PartialObjectMetadata).TypeMeta)
	}
}

// TestHandler drives the handler directly, as client-go's informer does: each change
// becomes one raw event, unnumbered (the pipeline numbers it); a resync of an unchanged
// object goes, with every cached object, to the receivers the schedule says are due; a
// tombstone is a DELETED whose final state is unknown.
func TestHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		inf := &Informer{Resource: podsRes, store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
		deliver := pipeline.NewDeliver([]pipeline.Receiver{&recorder{}, &recorder{}}, []time.Duration{0, time.Second}, pipeline.KeepBacklog)
		h := &handler{inf: inf, resync: deliver.NewResync(), take: r.Add2}
		a1, a2 := unstructuredPod("a", "1"), unstructuredPod("a", "2")
		_ = inf.store.Add(a1)
		h.OnAdd(a1, true)
		_ = inf.store.Update(a2)
		h.OnUpdate(a1, a2)
		h.OnUpdate(a2, a2) // a resync before the period: nobody is due
		time.Sleep(time.Second)
		h.OnUpdate(a2, a2) // due: the cache's objects, as SYNC, for receiver 1
		tomb := cache.DeletedFinalStateUnknown{Key: "default/a", Obj: a2}
		h.OnDelete(tomb)
		h.OnDelete(cache.DeletedFinalStateUnknown{Key: "default/gone"}) // no object: ignored
		evs := r.all()
		if got := names(evs); !slices.Equal(got, []string{"ADDED default/a", "MODIFIED default/a", "SYNC default/a", "DELETED default/a"}) {
			t.Fatalf("events %v", got)
		}
		for _, ev := range evs {
			if ev.Seq != 0 {
				t.Errorf("%s numbered %d by the informer", names([]*event.Event{ev}), ev.Seq)
			}
		}
		if !evs[0].InInitialList || evs[1].Old != a1 || evs[1].Object != a2 {
			t.Errorf("ADDED initial %v; MODIFIED old %v", evs[0].InInitialList, evs[1].Old)
		}
		if s := evs[2]; !slices.Equal(s.SyncTo, []int{1}) || s.Object != a2 {
			t.Errorf("SYNC to %v, want [1]", s.SyncTo)
		}
		if d := evs[3]; !d.FinalStateUnknown || d.Object != a2 {
			t.Errorf("tombstone DELETED: unknown %v", d.FinalStateUnknown)
		}
	})
}

// With selectors, a DELETED notification of an object that still exists (same UID) is
// marked as leaving the selection, whether asked about alone (a GET) or with others (a
// LIST); a deleted one, a re-created one (another UID) and one whose last state was being
// deleted (not asked about) are not.
func TestLeftSelector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient()
		live := unstructuredPod("relabelled", "1")
		live.SetUID("uid-1")
		if _, err := pods(client).Create(context.Background(), live, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		recreated := live.DeepCopy()
		recreated.SetUID("uid-0")
		terminating := live.DeepCopy()
		terminating.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
		gone := unstructuredPod("deleted", "1")
		gone.SetUID("uid-2")
		cases := []struct {
			what string
			obj  *unstructured.Unstructured
			want bool
		}{{"still there", live, true}, {"re-created", recreated, false}, {"gone", gone, false}}
		checks := newSelectorChecks(context.Background(), newObjectLookup(Clients{Dynamic: client}, podsGVR))
		if checks.ask(terminating) != nil {
			t.Error("an object being deleted is asked about")
		}
		for _, tc := range cases {
			if got := checks.ask(tc.obj).wait(context.Background()); got != tc.want {
				t.Errorf("%s, asked alone: left = %v, want %v", tc.what, got, tc.want)
			}
		}
		var round []*selectorAnswer
		for _, tc := range cases {
			round = append(round, checks.ask(tc.obj))
		}
		for i, tc := range cases {
			if got := round[i].wait(context.Background()); got != tc.want {
				t.Errorf("%s, asked with others: left = %v, want %v", tc.what, got, tc.want)
			}
		}
		// (That questions asked while a round runs are answered together, by one LIST, is
		// TestSelectorChecksAskTogether's: here the checks' goroutine may take the first
		// question before the others are asked.)

		// The handler asks about each DELETED and hands it on, in order, with its reason.
		r := &recorder{}
		h := &handler{inf: &Informer{Resource: podsRes}, take: r.Add2, checks: checks}
		h.ordered = newInOrder(context.Background(), h.take)
		h.OnDelete(live)
		h.OnDelete(cache.DeletedFinalStateUnknown{Key: "default/deleted", Obj: gone})
		h.ordered.wait()
		evs := r.all()
		if len(evs) != 2 || evs[0].Reason != event.ReasonSelector || evs[1].Reason != "" {
			t.Errorf("reasons of %v: want selector, then none", names(evs))
		}
	})
}

// runInto runs inf, built by the test, into r until the test ends.
func runInto(t *testing.T, inf *Informer, r *recorder) {
	t.Helper()
	deliver := pipeline.NewDeliver([]pipeline.Receiver{r}, nil, pipeline.KeepBacklog)
	p := pipeline.New(pipeline.Step{Name: "deliver", Stage: deliver})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = inf.Run(ctx, p.Take)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}
