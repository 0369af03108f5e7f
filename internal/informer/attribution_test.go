package informer

import (
	"context"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
)

// managedPod is pod default/name at rv with a UID and managedFields: each manager wrote
// its label at its second after created.
func managedPod(name, rv string, writes map[string]int) *unstructured.Unstructured {
	created := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(created), Labels: map[string]string{}},
	}
	for _, manager := range slices.Sorted(maps.Keys(writes)) {
		ts := metav1.NewTime(created.Add(time.Duration(writes[manager]) * time.Second))
		pod.Labels[manager] = rv
		pod.ManagedFields = append(pod.ManagedFields, metav1.ManagedFieldsEntry{Manager: manager, Operation: "Update",
			APIVersion: "v1", Time: &ts, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:` + manager + `":{}}}}`)})
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func writers(ev *event.Event) []string {
	if ev.ManagedFields == nil {
		return nil
	}
	a, ok := ev.ManagedFields.Decided(ev.Type == event.Added)
	if !ok {
		return []string{"undecided"}
	}
	var out []string
	for _, e := range a.By {
		out = append(out, e.Manager)
	}
	return out
}

// Each event takes its object's managedFields record, whichever handler makes it, and
// every way out of the handlers lets go of the rest: nothing is kept but the summary of
// each object in the cache.
func TestEventsCarryTheirManagers(t *testing.T) {
	for _, receivers := range []int{1, 2} {
		for name, opts := range map[string]Options{"all": {}, "watch-only": {WatchOnly: true}, "names": {Names: []string{"a", "b", "gone"}}} {
			synctest.Test(t, func(t *testing.T) {
				client := newClient()
				ctx := context.Background()
				for _, n := range []string{"a", "b", "quiet"} {
					if _, err := pods(client).Create(ctx, managedPod(n, "1", map[string]int{"creator": 0}), metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				r := &recorder{}
				regs := []receiver{{r: r}}
				for range receivers - 1 {
					regs = append(regs, receiver{r: &recorder{}})
				}
				inf := start(t, client, opts, regs...)
				for _, step := range []func() error{
					func() error {
						_, err := pods(client).Update(ctx, managedPod("a", "2", map[string]int{"creator": 0, "hpa": 5}), metav1.UpdateOptions{})
						return err
					},
					func() error {
						_, err := pods(client).Update(ctx, managedPod("quiet", "3", map[string]int{"creator": 0, "other": 6}), metav1.UpdateOptions{})
						return err
					},
					func() error {
						_, err := pods(client).Create(ctx, managedPod("gone", "4", map[string]int{"maker": 0}), metav1.CreateOptions{})
						return err
					},
					func() error { return pods(client).Delete(ctx, "gone", metav1.DeleteOptions{}) },
					func() error { return pods(client).Delete(ctx, "b", metav1.DeleteOptions{}) },
				} {
					if err := step(); err != nil {
						t.Fatal(err)
					}
				}
				synctest.Wait()

				for _, ev := range r.all() {
					var want []string
					switch {
					case ev.Type == event.Deleted:
					case ev.Type == event.Added && ev.Key() == "default/gone":
						want = []string{"maker"}
					case ev.Type == event.Added:
						want = []string{"creator"}
					case ev.Key() == "default/a":
						want = []string{"hpa"}
					default:
						want = []string{"other"}
					}
					if got := writers(ev); !slices.Equal(got, want) {
						t.Errorf("%d receivers, %s: %s %s by %v, want %v", receivers, name, ev.Type, ev.Key(), got, want)
					}
					if ev.Type == event.Deleted && ev.ManagedFields != nil {
						t.Errorf("DELETED %s has a managedFields record", ev.Key())
					}
				}
				if n := len(inf.managers.Pending()); n != 0 {
					t.Errorf("%d receivers, %s: %d records left that no event took", receivers, name, n)
				}
				if n := inf.managers.Objects(); n != 2 {
					t.Errorf("%d receivers, %s: summaries of %d objects, want the 2 left (a, quiet)", receivers, name, n)
				}
			})
		}
	}
}

// Without attribution nothing is read or kept.
func TestNoAttribution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient()
		if _, err := pods(client).Create(context.Background(), managedPod("a", "1", map[string]int{"creator": 0}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r := &recorder{}
		inf := start(t, client, Options{NoAttribution: true}, receiver{r: r})
		if inf.managers != nil || len(r.all()) != 1 || r.all()[0].ManagedFields != nil {
			t.Errorf("attribution off: tracker %v, events %v with record %v", inf.managers, names(r.all()), r.all()[0].ManagedFields)
		}
	})
}

// A resumed start (--resume): the checkpoint's object keeps its managers and their
// times; the first list's newer version is compared with them, so every manager that
// wrote while kubeevents was stopped is named, each change its own.
func TestSeededManagersTellWhoWroteSince(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient()
		now := managedPod("a", "9", map[string]int{"creator": 0, "alice": 3, "bob": 4})
		_ = unstructured.SetNestedField(now.Object, "5", "metadata", "labels", "creator") // the creator wrote nothing since
		if _, err := pods(client).Create(context.Background(), now, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		saved, err := managedPod("a", "5", map[string]int{"creator": 0, "alice": 1}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		r := &recorder{}
		inf, err := New(podsRes, Clients{Dynamic: client}, Options{Fatal: func(err error) { t.Errorf("fatal: %v", err) }})
		if err != nil {
			t.Fatal(err)
		}
		seeded, managers, err := inf.Seed([][]byte{saved})
		if err != nil || len(seeded) != 1 || len(managers) != 1 || managers[0].Empty() {
			t.Fatalf("Seed: %v objects, managers %+v, %v", len(seeded), managers, err)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(seeded[0].(*unstructured.Unstructured).Object, "metadata", "managedFields"); found {
			t.Error("the seeded object keeps its managedFields in the cache")
		}
		runInto(t, inf, r)
		if !inf.WaitForSync(context.Background()) {
			t.Fatal("no sync")
		}
		synctest.Wait()
		evs := r.all()
		if len(evs) != 1 || evs[0].Type != event.Modified {
			t.Fatalf("events %v, want one MODIFIED", names(evs))
		}
		d := diff.NewDiffer(nil)
		a := attribution.Of(evs[0], d)
		changes, _ := d.Changes(evs[0])
		got := map[string]string{}
		for i, c := range changes {
			got[c.Path] = attribution.Mark(a.ChangeBy(i), false)
		}
		want := map[string]string{"/metadata/labels/alice": "alice", "/metadata/labels/bob": "bob"}
		if !maps.Equal(got, want) || attribution.Mark(a.By, a.Ambiguous) != "alice, bob" {
			t.Errorf("by %s, per change %v; want alice, bob, %v", attribution.Mark(a.By, a.Ambiguous), got, want)
		}
	})
}
