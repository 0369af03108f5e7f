package partjson

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"

	"github.com/kubeevents/kubeevents/internal/event"
)

// The encoder writes exactly what json.Marshal writes, for every type of the scheme,
// over versions of one object in which random parts are the previous version's memory
// (as the protobuf watch hands them over) and the others are new, equal or not.
func TestPartEncoderSameAsEncodingJSON(t *testing.T) {
	var encoded, copied int
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		layout := objectLayoutOf(reflect.PointerTo(typ))
		if _, isObject := reflect.New(typ).Interface().(metav1.Object); layout == nil || !isObject {
			continue
		}
		for round := range 4 {
			rnd := rand.New(rand.NewSource(int64(round)))
			fill := randfill.New().NilChance(0.2).NumElements(0, 2).MaxDepth(6).RandSource(rnd)
			enc := NewEncoder()
			var prev reflect.Value
			for version := range 6 {
				v := reflect.New(typ)
				if !fillObject(fill, v.Interface()) {
					break
				}
				if version%2 == 1 {
					zeroCreationTimestamps(v) // before sharing: versions never change once encoded
				}
				shared := 0
				if prev.IsValid() {
					for _, f := range layout.fields {
						switch rnd.Intn(3) {
						case 0: // the previous version's memory
							v.Elem().Field(f.index).Set(prev.Elem().Field(f.index))
							shared++
						case 1: // equal, but new memory: a deep copy through JSON
							fillFrom(t, v.Elem().Field(f.index), prev.Elem().Field(f.index))
						}
					}
				}
				obj := v.Interface().(runtime.Object)
				obj.(metav1.Object).SetUID(types.UID("uid-1"))
				want, err := json.Marshal(obj)
				if err != nil {
					break // random raw bytes in a RawExtension: not an object a server sends
				}
				update := event.RecordVersion
				if version == 4 {
					update = event.ForgetObject
				}
				heldBefore := len(enc.last)
				got, err := enc.Marshal(obj, update)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%s round %d version %d: the encoder differs from json.Marshal (err %v)\n got %s\nwant %s", gvk, round, version, err, got, want)
				}
				encoded++
				if heldBefore > 0 {
					copied += shared
				}
				if update == event.ForgetObject && len(enc.last) != 0 {
					t.Fatalf("%s: a deleted object's parts are still kept", gvk)
				}
				prev = v
			}
		}
	}
	t.Logf("%d objects encoded, %d parts copied", encoded, copied)
	if encoded < 500 || copied < encoded/4 {
		t.Fatalf("%d objects encoded, %d parts from the previous version: too few to show anything", encoded, copied)
	}
}

// fillFrom sets dst to a deep copy of src, made through JSON.
func fillFrom(t *testing.T, dst, src reflect.Value) {
	raw, err := json.Marshal(src.Addr().Interface())
	if err != nil {
		return
	}
	fresh := reflect.New(dst.Type())
	if json.Unmarshal(raw, fresh.Interface()) == nil {
		dst.Set(fresh.Elem())
	}
}

// A part is copied only while it is the previous version's memory: an equal part in new
// memory is encoded, and so is a part of the previous version that changed under it.
func TestPartEncoderCopiesOnlySameMemory(t *testing.T) {
	enc := NewEncoder()
	v1 := podVersion("u1", "1", "a", corev1.PodPending)
	if _, err := enc.Marshal(v1, event.RecordVersion); err != nil {
		t.Fatal(err)
	}
	kept := enc.last["u1"]
	specJSON := kept.parts[specField(t)]
	if specJSON == nil || kept.parts[metadataField(t)] != nil {
		t.Fatalf("kept parts %q: want spec, not metadata", kept.parts)
	}

	v2 := v1.DeepCopy()
	v2.ResourceVersion, v2.Labels = "2", map[string]string{"round": "b"}
	v2.Spec = v1.Spec // the decoder's reuse: the same slices
	got, _ := enc.Marshal(v2, event.RecordVersion)
	if want, _ := json.Marshal(v2); !bytes.Equal(got, want) {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if p := enc.last["u1"].parts[specField(t)]; &p[0] != &specJSON[0] {
		t.Error("the spec, the same memory, was encoded again")
	}

	v3 := v2.DeepCopy() // equal, but new memory
	v3.ResourceVersion = "3"
	enc.Marshal(v3, event.RecordVersion)
	if p := enc.last["u1"].parts[specField(t)]; &p[0] == &specJSON[0] {
		t.Error("a spec in new memory was not encoded")
	}

	// Another object, or one without a UID, has nothing to copy from and records nothing.
	other := podVersion("u2", "4", "a", corev1.PodPending)
	other.Spec = v3.Spec
	if got, _ := enc.Marshal(other, event.KeepVersions); !bytes.Equal(got, mustJSON(t, other)) || len(enc.last) != 1 {
		t.Errorf("another object: %s, %d objects kept", got, len(enc.last))
	}
	noUID := podVersion("", "5", "a", corev1.PodPending)
	if got, _ := enc.Marshal(noUID, event.RecordVersion); !bytes.Equal(got, mustJSON(t, noUID)) || len(enc.last) != 1 {
		t.Errorf("no UID: %s, %d objects kept", got, len(enc.last))
	}

	// Beyond the budget nothing is kept; unstructured objects are encoded whole.
	small := NewEncoder()
	small.budget = 10
	small.Marshal(v1, event.RecordVersion)
	if len(small.last) != 0 || small.held != 0 {
		t.Errorf("beyond the budget: %d objects, %d bytes kept", len(small.last), small.held)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "x", "uid": "u9"}}}
	if got, _ := enc.Marshal(u, event.RecordVersion); !bytes.Equal(got, mustJSON(t, u)) || enc.last["u9"] != nil {
		t.Errorf("unstructured: %s", got)
	}
}

func specField(t *testing.T) int     { return layoutIndex(t, "spec") }
func metadataField(t *testing.T) int { return layoutIndex(t, "metadata") }

func layoutIndex(t *testing.T, name string) int {
	t.Helper()
	for i, f := range objectLayoutOf(reflect.TypeFor[*corev1.Pod]()).fields {
		if !f.inline && f.json.Name == name {
			return i
		}
	}
	t.Fatalf("Pod has no field %q", name)
	return -1
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Only event.RecordVersion keeps an object for its next version; event.ForgetObject drops what was
// kept, and event.KeepVersions leaves it as it was.
func TestPartEncoderRecordsOnlyOnRecordVersion(t *testing.T) {
	for _, c := range []struct {
		update event.Update
		kept   bool
	}{{event.RecordVersion, true}, {event.KeepVersions, false}, {event.ForgetObject, false}} {
		enc := NewEncoder()
		enc.Marshal(podVersion("u1", "1", "a", corev1.PodPending), event.RecordVersion)
		next := podVersion("u1", "2", "b", corev1.PodPending)
		got, err := enc.Marshal(next, c.update)
		if err != nil || !bytes.Equal(got, mustJSON(t, next)) {
			t.Errorf("update %d: %s, %v", c.update, got, err)
		}
		kept := enc.last["u1"]
		if recorded := kept != nil && kept.obj.Interface() == runtime.Object(next); recorded != c.kept {
			t.Errorf("update %d: recorded %v, want %v", c.update, recorded, c.kept)
		}
		if c.update == event.ForgetObject && kept != nil {
			t.Errorf("update %d: the object is still kept", c.update)
		}
	}
}

// Metadata alone changes with every version: such objects are encoded whole, and
// nothing is kept for them.
func TestPartEncoderKeepsNothingForMetadataOnly(t *testing.T) {
	if layout := objectLayoutOf(reflect.TypeFor[*metav1.PartialObjectMetadata]()); layout != nil {
		t.Errorf("PartialObjectMetadata has a layout: %+v", layout)
	}
	enc := NewEncoder()
	pom := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u1"}}
	if got, _ := enc.Marshal(pom, event.RecordVersion); !bytes.Equal(got, mustJSON(t, pom)) || len(enc.last) != 0 {
		t.Errorf("%s, %d objects kept", got, len(enc.last))
	}
}

func fillObject(fill *randfill.Filler, obj any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	fill.Fill(obj)
	return true
}

// zeroCreationTimestamps clears every creationTimestamp reachable through structs and
// pointers.
func zeroCreationTimestamps(v reflect.Value) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	if v.Type() == reflect.TypeFor[metav1.ObjectMeta]() {
		v.FieldByName("CreationTimestamp").Set(reflect.Zero(reflect.TypeFor[metav1.Time]()))
	}
	for i := range v.NumField() {
		if v.Field(i).CanSet() {
			zeroCreationTimestamps(v.Field(i))
		}
	}
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
