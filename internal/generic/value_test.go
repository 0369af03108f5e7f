package generic_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// Of builds, for every field of a realistic pod in a kubelet's report (and the
// pod itself), the same generic JSON as encoding it and decoding it with json.Number.
func TestGenericOfSameAsEncoding(t *testing.T) {
	pod := eventtest.RealisticPod()
	eventtest.KubeletReport(pod)
	zero := int64(0)
	pod.DeletionGracePeriodSeconds = &zero
	// A time with nanoseconds, not in UTC: JSON has it in UTC, to the second.
	deleted := metav1.NewTime(time.Date(2026, 11, 23, 13, 4, 5, 123456789, time.FixedZone("CET", 3600)))
	pod.DeletionTimestamp = &deleted
	pod.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.25"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	pod.Spec.Containers[0].Args = []string{}
	var walk func(path string, v reflect.Value, depth int)
	walk = func(path string, v reflect.Value, depth int) {
		got, err := generic.Of(v)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		raw, err := json.Marshal(addressOf(v))
		if err != nil {
			t.Fatal(err)
		}
		want, err := generic.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Of gives %#v, encoding/json %#v", path, got, want)
		}
		if depth == 0 {
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem(), depth)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(path+"."+v.Type().Field(i).Name, v.Field(i), depth-1)
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i), depth-1)
			}
		}
	}
	walk("pod", reflect.ValueOf(pod), 8)
}

// Of gives the same generic JSON as encoding and decoding, for random objects of
// every type of client-go's scheme (strings of any runes, maps, numbers, times set and
// zero, quantities, inlined TypeMeta).
func TestGenericOfSameAsEncodingEveryType(t *testing.T) {
	compared := 0
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		for round := range 6 {
			obj, ok := reflect.New(typ).Interface().(runtime.Object)
			if !ok {
				continue
			}
			fill := randfill.New().NilChance(0.2).NumElements(0, 2).MaxDepth(7).RandSource(rand.NewSource(int64(round)))
			if !fillRandomly(fill, obj) {
				continue
			}
			raw, err := json.Marshal(obj)
			if err != nil {
				continue // random raw bytes in a RawExtension: not an object a server sends
			}
			want, err := generic.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := generic.Of(reflect.ValueOf(obj))
			if err != nil {
				t.Fatalf("%s (round %d): %v", gvk, round, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s (round %d): Of differs from encoding/json\n got %#v\nwant %#v", gvk, round, got, want)
			}
			compared++
		}
	}
	if compared < 500 {
		t.Fatalf("%d objects compared: too few", compared)
	}
}

func fillRandomly(fill *randfill.Filler, obj any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	fill.Fill(obj)
	return true
}

// The jq and template sinks' values of a typed object are built from its fields
// (Value): the same as decoding the JSON the event writes, for a pod in a kubelet
// report and for random objects of every type of client-go's scheme.
func TestTypedValueSameAsDecoding(t *testing.T) {
	pod := eventtest.RealisticPod()
	eventtest.KubeletReport(pod)
	objects := []runtime.Object{pod}
	for _, typ := range scheme.Scheme.AllKnownTypes() {
		obj, ok := reflect.New(typ).Interface().(runtime.Object)
		if !ok || !fillRandomly(randfill.New().NilChance(0.2).NumElements(0, 2).MaxDepth(7).RandSource(rand.NewSource(7)), obj) {
			continue
		}
		if _, err := json.Marshal(obj); err == nil {
			objects = append(objects, obj)
		}
	}
	built := 0
	for _, obj := range objects {
		kind := reflect.TypeOf(obj).Elem().Name()
		got, ok, err := generic.Value(obj)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if !ok {
			continue // left to decoding the JSON
		}
		built++
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		want, err := generic.Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: built values differ from the decoded JSON\n got %#v\nwant %#v", kind, got, want)
		}
	}
	if built < len(objects)/2 {
		t.Errorf("%d of %d objects built from their fields: the rest were decoded", built, len(objects))
	}
}

// addressOf is &v where v is addressable (fields of an object reached by pointer are),
// as encoding/json sees such a field, pointer methods included.
func addressOf(v reflect.Value) any {
	if v.CanAddr() {
		return v.Addr().Interface()
	}
	return v.Interface()
}

// BenchmarkObjectValue is the generic JSON values of a fresh event's pod, as a jq sink
// beside a JSON sink needs them (the event's JSON computed already): built from its
// fields (Value, as event.Event.ObjectValue does), and decoded from that JSON.
func BenchmarkObjectValue(b *testing.B) {
	pod := eventtest.RealisticPod()
	pod.Kind, pod.APIVersion = "Pod", "v1"
	for _, c := range []struct {
		name  string
		value func(ev *event.Event) (any, error)
	}{
		{"Built", func(ev *event.Event) (any, error) { return ev.ObjectValue() }},
		{"Decoded", func(ev *event.Event) (any, error) {
			raw, err := ev.ObjectJSON()
			if err != nil {
				return nil, err
			}
			return generic.Decode(raw)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				ev := &event.Event{Type: event.Modified, Time: eventtest.T0, Seq: 42, Resource: eventtest.Pods, Kind: "Pod", Object: pod}
				if _, err := ev.ObjectJSON(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := c.value(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
