package conditions

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
)

// storeWatched is an informer's cache the test changes as an informer would: before the
// event of the change reaches the pipeline.
type storeWatched struct{ store cache.Store }

func (w storeWatched) Namespace() string  { return "shop" }
func (w storeWatched) Store() cache.Store { return w.store }

// --until-deleted: a named object the informer's cache already let go, while its DELETED
// is still on its way to the pipeline, is not deleted yet: neither the end of the initial
// list nor another object's DELETED ends the stream before it (else the stream ends with
// that event lost). Once every named object's DELETED came, it ends.
func TestUntilDeletedWaitsForEveryDeleted(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	c := New(Config{UntilDeleted: true, Names: []string{"web", "api"}})
	c.Watch(storeWatched{store})
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}}
	api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"}}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "shop"}}
	at := func(typ event.EventType, obj *corev1.ConfigMap) *event.Event {
		return &event.Event{Type: typ, Resource: widgets, Kind: "ConfigMap", Object: obj}
	}
	for _, obj := range []*corev1.ConfigMap{web, api, other} {
		if err := store.Add(obj); err != nil {
			t.Fatal(err)
		}
		if c.MetBy(at(event.Added, obj)) {
			t.Fatalf("met by %s's ADDED", obj.Name)
		}
	}
	// Both deleted; the informer's cache knows, their DELETED events are on their way.
	_ = store.Delete(web)
	_ = store.Delete(api)
	if c.Synced() {
		t.Fatal("met at the end of the initial list, before web's and api's DELETED")
	}
	if c.MetBy(at(event.Modified, other)) {
		t.Fatal("met by another object's change")
	}
	if c.MetBy(at(event.Deleted, web)) {
		t.Fatal("met by web's DELETED, before api's")
	}
	if !c.MetBy(at(event.Deleted, api)) {
		t.Fatal("not met once web's and api's DELETED came")
	}

	// Named objects that never existed: met at the end of the initial list.
	c = New(Config{UntilDeleted: true, Names: []string{"gone"}})
	c.Watch(storeWatched{cache.NewStore(cache.MetaNamespaceKeyFunc)})
	if !c.Synced() {
		t.Error("not met at the end of the initial list, the named object never there")
	}
}
