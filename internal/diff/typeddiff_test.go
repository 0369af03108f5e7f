package diff

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/wI2L/jsondiff"
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

// typedPatchIgnores are the ignore paths TestTypedPatchSameAsWholeDiff runs with, besides
// the defaults: exact ones, wildcards over keys and indices, a key with a slash.
var typedPatchIgnores = [][]string{
	nil,
	{"metadata.labels.*", "status.conditions.*.lastTransitionTime", "spec.containers.0.image"},
	{"spec.*", "/metadata/annotations/example.com~1note", "*.*.1"},
	{"status", "metadata.*"},
}

// wholePatch is the reference: jsondiff on the whole JSON of both objects as encoding/json
// writes it, decoded, with d's ignore paths.
func wholePatch(t *testing.T, d *Differ, old, object runtime.Object) jsondiff.Patch {
	t.Helper()
	patch, err := d.compare(decoded(t, old), decoded(t, object))
	if err != nil {
		t.Fatal(err)
	}
	return patch
}

// decoded is obj's JSON as encoding/json writes it, decoded.
func decoded(t *testing.T, obj runtime.Object) any {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	v, err := generic.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkTypedPatch compares typedPatch with the reference on one pair of objects and
// reports whether typedPatch applied.
func checkTypedPatch(t *testing.T, d *Differ, name string, old, object runtime.Object) bool {
	t.Helper()
	got, ok, err := d.typedPatch(&event.Event{Type: event.Modified, Object: object, Old: old})
	if err != nil || !ok {
		return false
	}
	want := wholePatch(t, d, old, object)
	if !reflect.DeepEqual(opsOf(got), opsOf(want)) {
		t.Fatalf("%s: typedPatch\n%s\nwant jsondiff on the whole objects\n%s", name, formatOps(got), formatOps(want))
	}
	// Pretty output's paths, read on the typed object, are those read on its JSON.
	changes := make([]Change, len(got))
	for i, op := range got {
		changes[i] = Change{Op: op.Type, Path: op.Path, Value: op.Value, Old: op.OldValue}
	}
	if got, want := readablePaths(changes, old), readablePaths(changes, decoded(t, old)); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: readable paths on the typed object %q, want those on its JSON %q", name, got, want)
	}
	return true
}

type op struct {
	Type, Path    string
	Value, OldVal any
}

func opsOf(patch jsondiff.Patch) []op {
	ops := make([]op, len(patch))
	for i, o := range patch {
		ops[i] = op{o.Type, o.Path, o.Value, o.OldValue}
	}
	return ops
}

func formatOps(patch jsondiff.Patch) string {
	s := ""
	for _, o := range patch {
		s += fmt.Sprintf("  %s %s %#v (was %#v)\n", o.Type, o.Path, o.Value, o.OldValue)
	}
	return s
}

// podMutations are updates of eventtest.RealisticPod, for the tests of typedPatch.
func podMutations() map[string]func(p *corev1.Pod) {
	return map[string]func(p *corev1.Pod){
		"kubelet report":     eventtest.KubeletReport,
		"label added":        func(p *corev1.Pod) { p.Labels["canary"] = "true" },
		"labels removed":     func(p *corev1.Pod) { p.Labels = nil },
		"labels emptied":     func(p *corev1.Pod) { p.Labels = map[string]string{} },
		"annotation with /":  func(p *corev1.Pod) { p.Annotations = map[string]string{"example.com/note": "x", "a~b": "y"} },
		"image changed":      func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" },
		"container added":    func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0]) },
		"container removed":  func(p *corev1.Pod) { p.Spec.Containers = p.Spec.Containers[:1] },
		"containers nil":     func(p *corev1.Pod) { p.Spec.Containers = nil },
		"env emptied":        func(p *corev1.Pod) { p.Spec.Containers[0].Env = []corev1.EnvVar{} },
		"deletion timestamp": func(p *corev1.Pod) { ts := metav1.NewTime(time.Unix(1e9, 0)); p.DeletionTimestamp = &ts },
		"same second":        func(p *corev1.Pod) { p.Status.StartTime = &metav1.Time{Time: p.Status.StartTime.Add(time.Millisecond)} },
		"grace period":       func(p *corev1.Pod) { g := int64(0); p.DeletionGracePeriodSeconds = &g },
		"status phase":       func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed },
		"restart count":      func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount += 3 },
		"condition inserted": func(p *corev1.Pod) {
			p.Status.Conditions = append([]corev1.PodCondition{{Type: "X"}}, p.Status.Conditions...)
		},
		"conditions shrunk": func(p *corev1.Pod) { p.Status.Conditions = p.Status.Conditions[2:] },
		"same quantity again": func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("0.5")}
		},
		"quantity changed": func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("2")}
		},
		"type meta":      func(p *corev1.Pod) { p.APIVersion, p.Kind = "v2", "" },
		"nothing but rv": func(p *corev1.Pod) {},
	}
}

// The diff computed on typed objects' structs (typedPatch) is jsondiff's on their whole
// JSON: same operations, order, paths and values, with and without ignore paths. It is
// the fence of typeddiff.go: it runs realistic pod updates and, for every type of
// client-go's scheme, random pairs of objects and random changes to one part of an
// object, and fails on any difference, or if typedPatch stops applying to most of them.
func TestTypedPatchSameAsWholeDiff(t *testing.T) {
	differs := make([]*Differ, len(typedPatchIgnores))
	for i, paths := range typedPatchIgnores {
		differs[i] = NewDiffer(mustParseIgnores(t, paths...))
	}

	for name, mutate := range podMutations() {
		old := eventtest.RealisticPod()
		old.Kind, old.APIVersion = "Pod", "v1"
		old.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("500m")}
		pod := old.DeepCopy()
		pod.ResourceVersion += "1"
		mutate(pod)
		for i, d := range differs {
			if !checkTypedPatch(t, d, fmt.Sprintf("pod, %s, ignores %v", name, typedPatchIgnores[i]), old, pod) {
				t.Fatalf("pod, %s: typedPatch did not apply", name)
			}
		}
	}

	// Every type of the scheme: two unrelated random objects, and an object with one of
	// its top-level parts filled again at random.
	types := make([]string, 0)
	for gvk := range scheme.Scheme.AllKnownTypes() {
		types = append(types, gvk.String())
	}
	sort.Strings(types)
	known := scheme.Scheme.AllKnownTypes()
	pairs, applied := 0, 0
	for _, gvkString := range types {
		var typ reflect.Type
		for gvk, tp := range known {
			if gvk.String() == gvkString {
				typ = tp
			}
		}
		for round := range 4 {
			rng := rand.New(rand.NewSource(int64(len(gvkString)*31 + round)))
			fill := func(seed int64, obj any) bool {
				f := randfill.New().NilChance(0.25).NumElements(0, 3).MaxDepth(6).RandSource(rand.NewSource(seed))
				return fillRandomly(f, obj)
			}
			old, ok := reflect.New(typ).Interface().(runtime.Object)
			if !ok || !fill(rng.Int63(), old) || !encodable(old) {
				continue
			}
			var object runtime.Object
			if round%2 == 0 {
				object = reflect.New(typ).Interface().(runtime.Object)
				if !fill(rng.Int63(), object) {
					continue
				}
			} else {
				object = old.DeepCopyObject()
				v := reflect.ValueOf(object).Elem()
				field := v.Field(rng.Intn(v.NumField()))
				if !field.CanSet() || !fill(rng.Int63(), field.Addr().Interface()) {
					continue
				}
			}
			if !encodable(object) {
				continue
			}
			pairs++
			if checkTypedPatch(t, differs[round%len(differs)], fmt.Sprintf("%s round %d", gvkString, round), old, object) {
				applied++
			}
		}
	}
	if pairs < 500 || applied < pairs*8/10 {
		t.Fatalf("typedPatch applied to %d of %d random pairs: want at least 500 pairs and 80%% applied", applied, pairs)
	}
	t.Logf("typedPatch applied to %d of %d random pairs", applied, pairs)
}

func encodable(obj runtime.Object) bool {
	_, err := (&event.Event{Type: event.Modified, Object: obj}).ObjectJSON()
	return err == nil
}

// Changes (keyed lists aligned, ignored values pruned) and pretty paths are the same
// whether the typed objects are compared on their structs or as generic parts.
func TestTypedPatchSameChanges(t *testing.T) {
	mutations := podMutations()
	mutations["container renamed"] = func(p *corev1.Pod) { p.Status.ContainerStatuses[1].Name = "proxy" }
	mutations["annotations added"] = func(p *corev1.Pod) { p.Annotations = map[string]string{"a": "1", "b": "2"} }
	withChanges := 0
	for name, mutate := range mutations {
		old := eventtest.RealisticPod()
		pod := old.DeepCopy()
		mutate(pod)
		typed := NewDiffer(mustParseIgnores(t, "metadata.annotations.a"))
		parts := NewDiffer(mustParseIgnores(t, "metadata.annotations.a"))
		parts.noTypedWalk = true
		got, gotPaths, err := typed.ReadableChanges(&event.Event{Type: event.Modified, Object: pod, Old: old})
		if err != nil {
			t.Fatal(err)
		}
		want, wantPaths, err := parts.ReadableChanges(&event.Event{Type: event.Modified, Object: pod, Old: old})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 {
			withChanges++
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotPaths, wantPaths) {
			t.Errorf("%s: changes %v %q, want %v %q", name, got, gotPaths, want, wantPaths)
		}
	}
	if withChanges < len(mutations)-2 {
		t.Errorf("only %d of %d updates had changes", withChanges, len(mutations))
	}
}

// appendGenericJSON writes what json.Marshal writes, for the generic values of random
// objects of every type of the scheme and for strings that need escaping.
func TestAppendGenericJSONSameAsMarshal(t *testing.T) {
	values := []any{nil, true, false, "", "plain", `a"b\c`, "<b>&amp;</b>", "tab\there", "ünï", "\u2028", string([]byte{0xff, 'a'}),
		json.Number("0"), json.Number("-12"), json.Number("1.5"), json.Number("1e3"), 2.5, map[string]any(nil), []any(nil),
		map[string]any{"b": 1.0, "a": []any{"x", nil, map[string]any{"<": ">"}}, "": json.Number("7")}, []any{}, map[string]any{}}
	for _, typ := range scheme.Scheme.AllKnownTypes() {
		obj, ok := reflect.New(typ).Interface().(runtime.Object)
		if !ok || !fillRandomly(randfill.New().NilChance(0.2).NumElements(0, 2).MaxDepth(6).RandSource(rand.NewSource(3)), obj) || !encodable(obj) {
			continue
		}
		v, err := generic.Of(reflect.ValueOf(obj))
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendGenericJSON([]byte("x"), v)
		if err != nil || string(got) != "x"+string(want) {
			t.Fatalf("appendGenericJSON(%#v) = %s, %v; want %s", v, got, err, want)
		}
	}
	if len(values) < 300 {
		t.Fatalf("%d values: too few", len(values))
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
