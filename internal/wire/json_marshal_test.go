package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"
)

// Marshal writes exactly what json.Marshal writes, for random objects of every type
// of client-go's scheme: strings of any runes (escaping), maps (key order), numbers,
// times, quantities, and creationTimestamps set and zero (omitzero), at the top and in
// templates. And it does so with its own encoders: only what json_encoder.go says it
// hands to encoding/json is handed to it.
func TestMarshalJSONSameAsEncodingJSON(t *testing.T) {
	var compared int
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		for round := range 12 {
			obj, ok := reflect.New(typ).Interface().(runtime.Object)
			if !ok {
				continue
			}
			fill := randfill.New().NilChance(0.2).NumElements(0, 2).MaxDepth(7).RandSource(rand.NewSource(int64(round)))
			if !fillObject(fill, obj) {
				continue
			}
			if round%2 == 1 {
				zeroCreationTimestamps(reflect.ValueOf(obj))
			}
			want, err := json.Marshal(obj)
			if err != nil {
				continue // random raw bytes in a RawExtension: not an object a server sends
			}
			got, err := Marshal(obj)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s (round %d): Marshal differs from json.Marshal (err %v)\n got %s\nwant %s", gvk, round, err, got, want)
			}
			compared++
		}
	}
	if compared < 1000 {
		t.Fatalf("%d objects compared: too few", compared)
	}
	delegatedTypes.Range(func(key, _ any) bool {
		typ := key.(reflect.Type)
		switch {
		case typ.PkgPath() == reflect.TypeFor[everyCase]().PkgPath(): // TestEncoderEdgeCases's
		case typ.Kind() == reflect.Float32, typ.Kind() == reflect.Float64, typ.Kind() == reflect.Interface, typ == numberType:
		case typ.Kind() == reflect.Map && typ.Key().Kind() != reflect.String:
		case typ.Implements(marshalerType), reflect.PointerTo(typ).Implements(marshalerType):
		default:
			t.Errorf("%s is encoded by encoding/json", typ)
		}
		return true
	})
}

// The values and types of client-go's scheme do not hold every case encoding/json
// handles; these do.
type (
	pointerMarshaler struct{ N int }
	valueMarshaler   struct{ N int }
	textMarshaler    struct{ S string }
	pointerZeroer    struct{ N int }
	valueZeroer      struct{ N int }
	Embedded         struct{ E string }
	embeddedHidden   struct{ H string }
	colliding        struct {
		Embedded
		E string
	}
	quoted struct {
		N int `json:"n,string"`
	}
	byteName  byte
	namedKey  string
	everyCase struct {
		*Embedded
		embeddedHidden
		Plain   string
		Skipped string `json:"-"`
		//lint:ignore SA5008 "-," is encoding/json's documented way to name a field "-", and what this case checks
		Dash         string `json:"-,"`
		unexported   string
		Odd          string `json:"odd€"`
		HTML         string `json:"html"`
		Invalid      string
		Empty        string            `json:",omitempty"`
		EmptyList    []int             `json:",omitempty"`
		EmptyMap     map[string]string `json:",omitempty"`
		EmptyPtr     *int              `json:",omitempty"`
		EmptyBool    bool              `json:",omitempty"`
		EmptyFloat   float64           `json:",omitempty"`
		EmptyIface   any               `json:",omitempty"`
		EmptyStruct  struct{}          `json:",omitempty"`
		EmptyArray   [0]int            `json:",omitempty"`
		ZeroValue    valueZeroer       `json:",omitzero"`
		ZeroPointer  pointerZeroer     `json:",omitzero"`
		ZeroPtrField *pointerZeroer    `json:",omitzero"`
		ZeroPlain    struct{ A int }   `json:",omitzero"`
		ZeroTime     metav1.Time       `json:",omitempty,omitzero"`
		Time         metav1.Time
		NilTime      *metav1.Time
		TimePtr      *metav1.Time
		Micro        metav1.MicroTime
		Quantity     resource.Quantity
		QuantityPtr  *resource.Quantity
		Int          intstr.IntOrString
		Str          intstr.IntOrString
		IntPtr       *intstr.IntOrString
		Raw          runtime.RawExtension
		Bytes        []byte
		NilBytes     []byte
		NamedBytes   []byteName
		Array        [2]int8
		Floats       []float64
		Ints         []int64
		Uints        map[string]uint16
		Named        map[namedKey]namedKey
		IntKeys      map[int]string
		NilMap       map[string]string
		Structs      map[string]pointerMarshaler
		PointerM     pointerMarshaler
		PointerMs    []pointerMarshaler
		ValueM       valueMarshaler
		ValueMs      map[string]valueMarshaler
		Text         textMarshaler
		Texts        map[string]textMarshaler
		Iface        any
		Number       json.Number
		Numbers      map[string]json.Number
		Collide      colliding
		Quoted       quoted
		Recursive    *everyCase
	}
)

func (m *pointerMarshaler) MarshalJSON() ([]byte, error) {
	return []byte(`{ "pointer" : [1, 2, "<&>"] }`), nil
}
func (m valueMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"value"`), nil }
func (m *textMarshaler) MarshalText() ([]byte, error) { return []byte("<" + m.S + ">"), nil }
func (z *pointerZeroer) IsZero() bool                 { return z.N == 7 }
func (z valueZeroer) IsZero() bool                    { return z.N == 7 }

func TestEncoderEdgeCases(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 25, 16, 4, 5, 123, time.FixedZone("x", 3600)))
	full := func() *everyCase {
		return &everyCase{
			Embedded: &Embedded{E: "e"}, embeddedHidden: embeddedHidden{H: "h"},
			Plain: "plain", Skipped: "no", Dash: "dash", unexported: "no", Odd: "odd",
			HTML: "<a href=\"x\">&amp;</a>\u2028", Invalid: "bad \xff\xfe byte\x01\n\t\u007f",
			ZeroValue: valueZeroer{N: 7}, ZeroPointer: pointerZeroer{N: 7}, ZeroPtrField: &pointerZeroer{N: 7},
			Time: now, TimePtr: &now, Micro: metav1.NewMicroTime(now.Time),
			Quantity: resource.MustParse("1.5Gi"), QuantityPtr: resource.NewMilliQuantity(1500, resource.DecimalSI),
			Int: intstr.FromInt32(8080), Str: intstr.FromString("http<"), IntPtr: new(intstr.FromInt32(-1)),
			Raw:   runtime.RawExtension{Raw: []byte(` {"a" : 1} `)},
			Bytes: []byte("hello\x00"), NamedBytes: []byteName{1, 2}, Array: [2]int8{-1, 1},
			Floats: []float64{0, 1.5, 1e21, 1e-7, math.Copysign(0, -1)}, Ints: []int64{-1 << 63}, Uints: map[string]uint16{"b": 1, "a": 65535},
			Named: map[namedKey]namedKey{"z": "<", "a": "b"}, IntKeys: map[int]string{10: "x", 9: "y"},
			Structs: map[string]pointerMarshaler{"k": {N: 1}}, PointerMs: []pointerMarshaler{{N: 1}},
			ValueMs: map[string]valueMarshaler{"v": {}}, Texts: map[string]textMarshaler{"t": {S: "s"}},
			Iface: map[string]any{"x": []any{1, "<"}}, Collide: colliding{Embedded{"inner"}, "outer"},
			Number: "1.5e3", Numbers: map[string]json.Number{"n": "", "m": "-2"}, Quoted: quoted{N: 5}, Recursive: &everyCase{Plain: "inner"},
		}
	}
	for name, v := range map[string]any{
		"full": full(),
		"zero": &everyCase{},
		"not omitted": func() *everyCase {
			c := full()
			c.ZeroValue.N, c.ZeroPointer.N, c.ZeroPtrField.N, c.ZeroPlain.A = 1, 1, 1, 1
			return c
		}(),
		"empty not nil":   &everyCase{EmptyList: []int{}, EmptyMap: map[string]string{}, Bytes: []byte{}, Floats: []float64{}, NilMap: map[string]string{}},
		"a list of them":  &[]everyCase{*full(), {}},
		"a map of them":   &map[string]everyCase{"a": *full(), "b": {}},
		"a nil pointer":   (*everyCase)(nil),
		"a pod":           benchPod(),
		"an odd pointer":  new(*everyCase),
		"a time pointer":  &now,
		"a marshaler":     &pointerMarshaler{},
		"a text in a map": &map[string]*textMarshaler{"a": {S: "x"}, "nil": nil},
	} {
		want, wantErr := json.Marshal(v)
		got, err := appendJSON(nil, reflect.ValueOf(v))
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%s: appendJSON differs from json.Marshal (err %v, want err %v)\n got %s\nwant %s", name, err, wantErr, got, want)
		}
	}
	// What encoding/json fails on fails here too.
	for name, v := range map[string]any{
		"NaN":          &everyCase{Floats: []float64{math.NaN()}},
		"IntOrString":  &everyCase{Int: intstr.IntOrString{Type: 9}},
		"invalid JSON": &everyCase{Raw: runtime.RawExtension{Raw: []byte("{")}},
		"a channel":    &everyCase{Iface: make(chan int)},
		"a bad number": &everyCase{Number: "1x"},
	} {
		if _, err := json.Marshal(v); err == nil {
			t.Fatalf("%s: encoding/json does not fail", name)
		}
		if got, err := appendJSON(nil, reflect.ValueOf(v)); err == nil {
			t.Errorf("%s: no error, wrote %s", name, got)
		}
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

// BenchmarkMarshalJSON is the JSON encoding of an application pod (3 containers with
// env, ports, resources and probes, full status): encoding/json, and marshalJSON, which
// writes the same bytes.
func BenchmarkMarshalJSON(b *testing.B) {
	pod := benchPod()
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(pod); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(pod); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchPod() *corev1.Pod {
	t0 := metav1.NewTime(time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "web-7d9f8b6c5-abc12", Namespace: "shop", UID: "0b6c7f3e-2d4a-4e8b-9c1f-5a7d3e9b2c4f", ResourceVersion: "88123412",
		CreationTimestamp: t0, Labels: map[string]string{"app.kubernetes.io/name": "web", "pod-template-hash": "7d9f8b6c5"},
		Annotations: map[string]string{"prometheus.io/scrape": "true"},
	}}
	for _, name := range []string{"app", "sidecar", "proxy"} {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: name, Image: "registry.example.com/" + name + ":2.14.1",
			Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "PORT", Value: "8080"}},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}},
		})
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: name, Image: "registry.example.com/" + name + ":2.14.1", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t0}},
		})
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t0}}
	return pod
}

// BenchmarkLabelChange is one label change of the application pod, as the protobuf watch
// hands it over: decoding it, then encoding it as JSON. The baseline decodes and encodes
// the whole pod; with reuse, spec and status come from the previous version, decoded and
// encoded before. The last case is reuse's worst: a change to every part, where it only
// adds its comparisons. Each reports the time per event and the ratio to the baseline.
func BenchmarkLabelChange(b *testing.B) {
	prev, next := benchPod(), benchPod()
	next.ResourceVersion, next.Labels = "88123413", map[string]string{"app.kubernetes.io/name": "web", "round": "2"}
	prevRaw, err := prev.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	nextRaw, err := next.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	everything := next.DeepCopy()
	everything.Spec.Containers[0].Image += "-2"
	everything.Status.Phase = corev1.PodSucceeded
	everythingRaw, err := everything.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	var baseline float64
	for _, mode := range []string{"whole", "reuse", "reuse-every-part-changed"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			reuse, enc := newPartReuse(TypedDecoding{}), NewPartEncoder()
			if mode == "whole" {
				reuse, enc = nil, nil
			}
			nextRaw := nextRaw
			if mode == "reuse-every-part-changed" {
				nextRaw = everythingRaw
			}
			first := &corev1.Pod{}
			if err := decodeWith(reuse, first, prevRaw); err != nil {
				b.Fatal(err)
			}
			if _, err := enc.Marshal(first, RecordVersion); err != nil {
				b.Fatal(err)
			}
			var kept decodedParts
			if reuse != nil {
				kept = *reuse.seen[string(first.UID)]
				kept.parts = slices.Clone(kept.parts)
			}
			for b.Loop() {
				pod := &corev1.Pod{}
				if err := decodeWith(reuse, pod, nextRaw); err != nil {
					b.Fatal(err)
				}
				if _, err := enc.Marshal(pod, KeepVersions); err != nil {
					b.Fatal(err)
				}
				if reuse != nil { // the next event is compared with the first version again
					*reuse.seen[string(first.UID)] = decodedParts{obj: kept.obj, parts: slices.Clone(kept.parts), size: kept.size}
				}
			}
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if mode == "whole" {
				baseline = perOp
			} else if baseline > 0 {
				b.ReportMetric(perOp/baseline, "ratio-to-whole")
			}
		})
	}
}

func decodeWith(reuse *partReuse, pod *corev1.Pod, raw []byte) error {
	if reuse == nil {
		return pod.Unmarshal(raw)
	}
	return reuse.unmarshal(watch.Modified, pod, raw)
}
