package decode

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"
)

type protoMarshaler interface {
	Marshal() ([]byte, error)
}

// Decoding with reuse gives exactly what a full decode gives, for every type of the
// scheme: a series of versions of one object in which random parts change and the others
// keep their bytes, then its deletion and a new object of the same name.
func TestPartReuseDecodesAsFullDecode(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("dropManagedFields=%v", drop), func(t *testing.T) { testPartReuseDecodesAsFullDecode(t, drop) })
	}
}

func testPartReuseDecodesAsFullDecode(t *testing.T, dropManagedFields bool) {
	var decoded, reusedParts, dropped int
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if protoLayoutOf(reflect.PointerTo(typ)) == nil {
			continue
		}
		if _, ok := reflect.New(typ).Interface().(protoMarshaler); !ok {
			continue
		}
		for round := range 4 {
			rnd := rand.New(rand.NewSource(int64(round)))
			fill := randfill.New().NilChance(0.2).NumElements(0, 2).MaxDepth(6).RandSource(rnd)
			uid := types.UID("uid-1")
			versions := []reflect.Value{}
			for range 6 {
				v := reflect.New(typ)
				if !fillObject(fill, v.Interface()) {
					break
				}
				if len(versions) > 0 {
					// Keep each part of the previous version with probability 1/2.
					prev := versions[len(versions)-1]
					for _, part := range protoLayoutOf(v.Type()).parts {
						if rnd.Intn(2) == 0 {
							v.Elem().Field(part.field).Set(prev.Elem().Field(part.field))
						}
					}
				}
				v.Interface().(metav1.Object).SetUID(uid)
				versions = append(versions, v)
			}
			raws := make([][]byte, 0, len(versions))
			for _, v := range versions {
				raw, err := v.Interface().(protoMarshaler).Marshal()
				if err != nil {
					break
				}
				raws = append(raws, raw)
			}
			reuse := newPartReuse(TypedDecoding{DropManagedFields: dropManagedFields})
			var last reflect.Value
			for i, raw := range raws {
				typ := watch.Modified
				switch {
				case i == len(raws)-2:
					typ = watch.Deleted
				case i == len(raws)-1:
					typ = watch.Added // a new object with the old UID's bytes: nothing kept
				}
				want := reflect.New(versions[i].Type().Elem())
				if err := want.Interface().(protoUnmarshaler).Unmarshal(raw); err != nil {
					break // random bytes in a RawExtension and the like
				}
				if m, ok := want.Interface().(metav1.Object); ok && dropManagedFields && m.GetUID() != "" {
					if m.GetManagedFields() != nil {
						dropped++
					}
					m.SetManagedFields(nil)
				}
				got := reflect.New(versions[i].Type().Elem())
				if err := reuse.unmarshal(typ, got.Interface().(protoUnmarshaler), raw); err != nil {
					t.Fatalf("%s round %d version %d: %v", gvk, round, i, err)
				}
				if !reflect.DeepEqual(got.Interface(), want.Interface()) {
					t.Fatalf("%s round %d version %d: decoded with reuse\n%#v\nwant\n%#v", gvk, round, i, got.Interface(), want.Interface())
				}
				decoded++
				if i > 0 && typ != watch.Added {
					reusedParts += sharedParts(versions[i].Type(), got, last)
				}
				last = got
				if typ == watch.Deleted && len(reuse.seen) != 0 {
					t.Fatalf("%s: a deleted object is still remembered", gvk)
				}
			}
		}
	}
	t.Logf("%d objects decoded, %d parts reused, %d objects' managedFields left out", decoded, reusedParts, dropped)
	if decoded < 500 || reusedParts < decoded/4 || dropManagedFields && dropped < decoded/4 {
		t.Fatalf("%d objects decoded, %d parts reused, %d managedFields left out: too few to show anything", decoded, reusedParts, dropped)
	}
}

// sharedParts counts the parts of a that are the very same memory as b's (the same
// slices, maps or pointers), to show that reuse took place.
func sharedParts(t reflect.Type, a, b reflect.Value) int {
	if !b.IsValid() || a.Type() != b.Type() {
		return 0
	}
	n := 0
	for _, part := range protoLayoutOf(t).parts {
		fa, fb := a.Elem().Field(part.field), b.Elem().Field(part.field)
		if sharesMemory(fa, fb) {
			n++
		}
	}
	return n
}

func sharesMemory(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer:
		return !a.IsNil() && a.UnsafePointer() == b.UnsafePointer()
	case reflect.Struct:
		for i := range a.NumField() {
			if sharesMemory(a.Field(i), b.Field(i)) {
				return true
			}
		}
	}
	return false
}

func podVersion(uid, rv, label string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: types.UID(uid), ResourceVersion: rv,
			Labels: map[string]string{"round": label}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx",
			Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}}},
		Status: corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}}},
	}
}

func decodePod(t *testing.T, reuse *partReuse, typ watch.EventType, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	raw, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got := &corev1.Pod{}
	if err := reuse.unmarshal(typ, got, raw); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, pod) {
		t.Fatalf("decoded %#v\nwant %#v", got, pod)
	}
	return got
}

// A label change takes spec and status from the previous version; a status change takes
// only the spec; another object, a deleted one, or one beyond the budget takes nothing.
func TestPartReuseSharesUnchangedParts(t *testing.T) {
	reuse := newPartReuse(TypedDecoding{})
	v1 := decodePod(t, reuse, watch.Added, podVersion("u1", "1", "a", corev1.PodPending))
	v2 := decodePod(t, reuse, watch.Modified, podVersion("u1", "2", "b", corev1.PodPending))
	if &v2.Spec.Containers[0] != &v1.Spec.Containers[0] || &v2.Status.Conditions[0] != &v1.Status.Conditions[0] {
		t.Error("a label change decoded spec and status again")
	}
	if reflect.ValueOf(v2.Labels).UnsafePointer() == reflect.ValueOf(v1.Labels).UnsafePointer() {
		t.Error("metadata shared")
	}
	v3 := decodePod(t, reuse, watch.Modified, podVersion("u1", "3", "b", corev1.PodRunning))
	if &v3.Spec.Containers[0] != &v1.Spec.Containers[0] {
		t.Error("a status change decoded the spec again")
	}
	if &v3.Status.Conditions[0] == &v2.Status.Conditions[0] {
		t.Error("a changed status was taken from the previous version")
	}

	other := decodePod(t, reuse, watch.Added, podVersion("u2", "4", "b", corev1.PodRunning))
	if &other.Spec.Containers[0] == &v3.Spec.Containers[0] {
		t.Error("another object (another UID) took the spec of the first")
	}

	decodePod(t, reuse, watch.Deleted, podVersion("u1", "5", "b", corev1.PodRunning))
	if _, kept := reuse.seen["u1"]; kept {
		t.Error("a deleted object is still remembered")
	}
	if reuse.held != reuse.seen["u2"].size || reuse.held == 0 {
		t.Errorf("%d bytes held, want those of the one remaining object (%d)", reuse.held, reuse.seen["u2"].size)
	}

	// An object of another type under a UID already seen replaces what was kept.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "u2"}, Data: map[string]string{"k": "v"}}
	raw, _ := cm.Marshal()
	if err := reuse.unmarshal(watch.Modified, &corev1.ConfigMap{}, raw); err != nil {
		t.Fatal(err)
	}
	if reuse.held != reuse.seen["u2"].size || reuse.seen["u2"].obj.Type() != reflect.TypeFor[*corev1.ConfigMap]() {
		t.Errorf("%d bytes held, want those of the ConfigMap (%d)", reuse.held, reuse.seen["u2"].size)
	}

	small := newPartReuse(TypedDecoding{})
	small.budget = 10
	w1 := decodePod(t, small, watch.Added, podVersion("u1", "1", "a", corev1.PodPending))
	w2 := decodePod(t, small, watch.Modified, podVersion("u1", "2", "b", corev1.PodPending))
	if &w2.Spec.Containers[0] == &w1.Spec.Containers[0] || small.held != 0 || len(small.seen) != 0 {
		t.Errorf("beyond the budget: %d bytes held for %d objects", small.held, len(small.seen))
	}

	// Without a UID (bookmarks), nothing is kept.
	decodePod(t, reuse, watch.Bookmark, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9"}})
	if len(reuse.seen) != 1 {
		t.Errorf("%d objects remembered, want 1", len(reuse.seen))
	}
}

// Messages the API server never writes are decoded whole: a part written twice, apart.
func TestSplitMessageRejectsScatteredFields(t *testing.T) {
	pod := podVersion("u1", "1", "a", corev1.PodPending)
	raw, _ := pod.Marshal()
	spans, ok := splitMessage(raw, nil)
	if !ok || len(spans) != 3 || spans[0].num != 1 || spans[1].num != 2 || spans[2].num != 3 {
		t.Fatalf("spans %+v ok %v", spans, ok)
	}
	scattered := append(append([]byte{}, raw...), raw[spans[1].start:spans[1].end]...) // spec again after status
	if _, ok := splitMessage(scattered, nil); ok {
		t.Error("a field written twice, apart, was split")
	}
	if _, ok := splitMessage(raw[:len(raw)-1], nil); ok {
		t.Error("a cut message was split")
	}
}

// managedFields written apart (not as the API server writes them) are decoded as they are,
// and kept: only adjacent ones are left out.
func TestPartReuseKeepsScatteredManagedFields(t *testing.T) {
	entry := metav1.ManagedFieldsEntry{Manager: "m", Operation: metav1.ManagedFieldsOperationApply}
	entryRaw, _ := entry.Marshal()
	var meta []byte
	meta = protowire.AppendTag(meta, objectMetaManagedFields, protowire.BytesType)
	meta = protowire.AppendBytes(meta, entryRaw)
	meta = protowire.AppendTag(meta, objectMetaUID, protowire.BytesType)
	meta = protowire.AppendString(meta, "u1")
	meta = protowire.AppendTag(meta, objectMetaManagedFields, protowire.BytesType)
	meta = protowire.AppendBytes(meta, entryRaw)
	var raw []byte
	raw = protowire.AppendTag(raw, 1, protowire.BytesType) // Pod.metadata
	raw = protowire.AppendBytes(raw, meta)

	got := &corev1.Pod{}
	if err := newPartReuse(TypedDecoding{DropManagedFields: true}).unmarshal(watch.Added, got, raw); err != nil {
		t.Fatal(err)
	}
	if got.UID != "u1" || len(got.ManagedFields) != 2 {
		t.Errorf("decoded %+v, want uid u1 and both managedFields entries", got.ObjectMeta)
	}

	adjacent := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u2", Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{entry, entry}}}
	raw, _ = adjacent.Marshal()
	got = &corev1.Pod{}
	if err := newPartReuse(TypedDecoding{DropManagedFields: true}).unmarshal(watch.Added, got, raw); err != nil {
		t.Fatal(err)
	}
	if got.UID != "u2" || got.Name != "p" || got.ManagedFields != nil {
		t.Errorf("decoded %+v, want uid u2, name p and no managedFields", got.ObjectMeta)
	}
}
