package informer

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/informer/decode"
)

// TestTransformLeavesReusedPartsAlone is the test of package decode's invariant: the
// protobuf watch hands over versions of an object that share the parts that did not
// change (spec, status) with the previous version, and the transform then runs on each.
// It must change nothing but their metadata (metadata, apiVersion, kind): anything else
// would change the previous version too, and the diff and the copied JSON would be wrong.
func TestTransformLeavesReusedPartsAlone(t *testing.T) {
	v1 := invariantPod()
	v2 := v1.DeepCopy()
	v2.ResourceVersion, v2.Labels["tier"] = "2", "web"
	decoded := decodeWatched(t, v1, v2)
	if len(decoded) != 2 {
		t.Fatalf("%d objects decoded, want 2", len(decoded))
	}
	// The second version reuses the first one's parts: the test is about such objects.
	if unsafe.SliceData(decoded[0].Spec.Containers) != unsafe.SliceData(decoded[1].Spec.Containers) {
		t.Fatal("the protobuf watch did not reuse the unchanged spec: the test checks nothing")
	}

	inf := &Informer{Resource: podsRes}
	for i, pod := range decoded {
		want := pod.DeepCopy()
		out, err := inf.transform(pod)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*corev1.Pod)
		// Metadata may change; nothing else may.
		want.TypeMeta, want.ObjectMeta = got.TypeMeta, got.ObjectMeta
		if !apiequality.Semantic.DeepEqual(want, got) {
			t.Errorf("version %d: the transform changed more than metadata:\nbefore %s\nafter  %s", i+1, asJSON(want), asJSON(got))
		}
	}
	// And so the first version, transformed before the second came, is still as decoded.
	if first := decodeWatched(t, v1)[0]; !apiequality.Semantic.DeepEqual(first.Spec, decoded[0].Spec) || !apiequality.Semantic.DeepEqual(first.Status, decoded[0].Status) {
		t.Errorf("the first version changed after the second was transformed:\nas decoded %s\nnow        %s", asJSON(first), asJSON(decoded[0]))
	}
}

// invariantPod has a part of every shape the protobuf decoders share between versions:
// nested structs, slices, maps, pointers, quantities.
func invariantPod() *corev1.Pod {
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "default", UID: "uid-1", ResourceVersion: "1",
			Labels:        map[string]string{"app": "web"},
			Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{}}`},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
		},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{"disk": "ssd"},
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "web", Image: "nginx:1.27", Args: []string{"-g", "daemon off;"},
				Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
					corev1.ResourceCPU: apiresource.MustParse("500m"), corev1.ResourceMemory: apiresource.MustParse("128Mi"),
				}},
			}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}

// decodeWatched sends pods as MODIFIED events of a protobuf watch and decodes them as the
// informer does: through decode.WatchTyped on the typed client NewClients builds.
func decodeWatched(t *testing.T, pods ...*corev1.Pod) []*corev1.Pod {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	var stream bytes.Buffer
	enc := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&stream), info.StreamSerializer.Serializer)
	for _, pod := range pods {
		obj := pod.DeepCopy()
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		raw, err := runtime.Encode(info.Serializer, obj)
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(&metav1.WatchEvent{Type: string(watch.Modified), Object: runtime.RawExtension{Raw: raw}}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
		w.Write(stream.Bytes())
	}))
	defer srv.Close()
	clients, err := NewClients(&rest.Config{Host: srv.URL}, Recovery{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := clients.TypedREST(schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	w, ok := decode.WatchTyped(context.Background(), client, "pods", "default", metav1.ListOptions{}, decode.TypedDecoding{})
	if !ok {
		t.Fatal("the protobuf watch did not open")
	}
	defer w.Stop()
	var out []*corev1.Pod
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			t.Fatalf("event %s of %T", ev.Type, ev.Object)
		}
		if out = append(out, pod); len(out) == len(pods) {
			break
		}
	}
	return out
}

func asJSON(pod *corev1.Pod) string {
	raw, _ := json.Marshal(struct {
		Spec   corev1.PodSpec
		Status corev1.PodStatus
	}{pod.Spec, pod.Status})
	return string(raw)
}
