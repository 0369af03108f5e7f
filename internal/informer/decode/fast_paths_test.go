package decode_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer/decode"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/render/partjson"
)

// KUBEEVENTS_FAST_PATHS=off must print the same bytes as the fast paths: a sequence of random
// versions of a pod (each changing its labels, spec, status, or several at once) is
// decoded by the protobuf watch with and without part reuse, encoded with and without
// the part encoder, diffed with and without the same-memory shortcut, and printed as JSON
// lines and in pretty form with diffs: the two ways print the same lines.
func TestFastPathsOffPrintsTheSame(t *testing.T) {
	versions := randomVersions(rand.New(rand.NewPCG(20, 1)), 60)
	stream := protobufStream(t, versions)
	differ := diff.NewDiffer(nil)
	fastPods, slowPods := decodeAll(t, stream, decode.TypedDecoding{}), decodeAll(t, stream, decode.TypedDecoding{NoPartReuse: true})
	// The fast paths were taken one way and not the other.
	if shared := sharedSpecs(fastPods); shared == 0 {
		t.Error("with part reuse, no version shares its spec with the one before: the test compares nothing")
	}
	if shared := sharedSpecs(slowPods); shared != 0 {
		t.Errorf("without part reuse, %d versions share their spec with the one before", shared)
	}
	for _, format := range []render.Format{render.FormatJSON, render.FormatPretty} {
		fast := printAll(t, fastPods, partjson.NewEncoder(), differ, format)
		slow := printAll(t, slowPods, nil, differ.WithoutFastPaths(), format)
		if len(fast) != len(versions) || len(slow) != len(versions) {
			t.Fatalf("%s: %d and %d lines, want %d", format, len(fast), len(slow), len(versions))
		}
		for i := range fast {
			if fast[i] != slow[i] {
				t.Errorf("%s, version %d:\nfast paths: %s\noff:        %s", format, i, fast[i], slow[i])
			}
		}
	}
}

// sharedSpecs counts the versions whose containers are the previous version's memory.
func sharedSpecs(pods []*corev1.Pod) int {
	shared := 0
	for i := 1; i < len(pods); i++ {
		if &pods[i].Spec.Containers[0] == &pods[i-1].Spec.Containers[0] {
			shared++
		}
	}
	return shared
}

// randomVersions are n versions of one pod, each a random change of the previous one.
func randomVersions(r *rand.Rand, n int) []*corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", UID: types.UID("u1"), Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "web", Image: "nginx:1", Args: []string{"-g"}},
			{Name: "sidecar", Image: "envoy:1", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	var versions []*corev1.Pod
	for i := range n {
		next := pod.DeepCopy()
		next.ResourceVersion = fmt.Sprint(i + 1)
		change := r.IntN(8) // bits: labels, spec, status; 0 changes only the resourceVersion
		if change&1 != 0 {
			next.Labels[fmt.Sprintf("k%d", r.IntN(4))] = fmt.Sprint(r.IntN(3))
		}
		if change&2 != 0 {
			c := &next.Spec.Containers[r.IntN(2)]
			c.Image = fmt.Sprintf("%s:%d", strings.Split(c.Image, ":")[0], r.IntN(4))
			if r.IntN(2) == 0 {
				c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("E%d", i), Value: fmt.Sprint(r.IntN(9))})
			}
		}
		if change&4 != 0 {
			next.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodFailed}[r.IntN(3)]
			next.Status.Conditions = append(next.Status.Conditions, corev1.PodCondition{
				Type: corev1.PodConditionType(fmt.Sprintf("C%d", r.IntN(3))), Status: corev1.ConditionTrue})
		}
		versions = append(versions, next)
		pod = next
	}
	return versions
}

// protobufStream encodes pods as MODIFIED events of a protobuf watch stream.
func protobufStream(t *testing.T, pods []*corev1.Pod) []byte {
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
	return stream.Bytes()
}

// decodeAll decodes the stream with WatchTyped, as the informer does.
func decodeAll(t *testing.T, stream []byte, decoding decode.TypedDecoding) []*corev1.Pod {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;stream=watch")
		w.Write(stream)
	}))
	defer srv.Close()
	client, err := rest.RESTClientFor(&rest.Config{Host: srv.URL, APIPath: "/api", ContentConfig: rest.ContentConfig{
		GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	w, ok := decode.WatchTyped(context.Background(), client, "pods", "default", metav1.ListOptions{}, decoding)
	if !ok {
		t.Fatal("the protobuf watch did not open")
	}
	defer w.Stop()
	var pods []*corev1.Pod
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			t.Fatalf("event %s of %T", ev.Type, ev.Object)
		}
		pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod")) // as the transform does
		pods = append(pods, pod)
	}
	return pods
}

// printAll prints each version as a MODIFIED event from the one before (the first as
// ADDED), with the given encoder and differ.
func printAll(t *testing.T, pods []*corev1.Pod, encoder event.Encoder, differ *diff.Differ, format render.Format) []string {
	t.Helper()
	printer, err := render.NewPrinter(render.Options{Format: format, Diff: differ})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i, pod := range pods {
		ev := &event.Event{Type: event.Added, Seq: uint64(i + 1), Resource: corev1.SchemeGroupVersion.WithResource("pods"), Kind: "Pod", Object: pod, Encoder: encoder}
		if i > 0 {
			ev.Type, ev.Old = event.Modified, pods[i-1]
		}
		out, err := printer.Append(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(out))
	}
	return lines
}
