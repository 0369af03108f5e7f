package decode

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// protobufStream encodes events as the API server writes a protobuf watch stream.
func protobufStream(t testing.TB, events []watch.Event) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	var stream bytes.Buffer
	enc := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&stream), info.StreamSerializer.Serializer)
	for _, ev := range events {
		obj := ev.Object.DeepCopyObject()
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		raw, err := runtime.Encode(info.Serializer, obj)
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(&metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}}); err != nil {
			t.Fatal(err)
		}
	}
	return stream.Bytes()
}

// clientGoDecode decodes a stream as client-go's typed watch does.
func clientGoDecode(t testing.TB, stream []byte) []watch.Event {
	t.Helper()
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.WithoutConversion().SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	frames := info.StreamSerializer.Framer.NewFrameReader(nopCloser{bytes.NewReader(stream)})
	dec := restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer),
		runtime.WithoutVersionDecoder{Decoder: info.Serializer})
	var evs []watch.Event
	for {
		typ, obj, err := dec.Decode()
		if err != nil {
			return evs
		}
		evs = append(evs, watch.Event{Type: typ, Object: obj})
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func servePods(t *testing.T, stream []byte, contentType string, status int) (rest.Interface, <-chan *http.Request) {
	t.Helper()
	requests := make(chan *http.Request, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests <- r
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		w.Write(stream)
	}))
	t.Cleanup(srv.Close)
	return coreClient(t, srv.URL), requests
}

// coreClient is a client of the core group at host, set up as the informer's typed
// clients are (informer.NewClients).
func coreClient(t *testing.T, host string) rest.Interface {
	t.Helper()
	client, err := rest.RESTClientFor(&rest.Config{Host: host, APIPath: "/api", ContentConfig: rest.ContentConfig{
		GroupVersion:         &schema.GroupVersion{Version: "v1"},
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		ContentType:          runtime.ContentTypeProtobuf,
		AcceptContentTypes:   runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func watchPods(t *testing.T, client rest.Interface) (watch.Interface, bool) {
	t.Helper()
	return WatchTyped(context.Background(), client, "pods", "ns", metav1.ListOptions{ResourceVersion: "9", LabelSelector: "a=b"}, TypedDecoding{})
}

// Every event decodes to what client-go's typed watch gives for the same bytes, from the
// reader's buffer and the frame kept for events larger than it, reused across events of
// different sizes. The stream is several times the reader's buffer, and the events are
// compared only once all are decoded: an object that kept a slice of either buffer would
// have been overwritten by later events.
func TestWatchTypedDecodesAsClientGo(t *testing.T) {
	big := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: "ns", ResourceVersion: "11",
		Labels: map[string]string{"app": "web", "tier": "backend"}, Annotations: map[string]string{"note": strings.Repeat("x", 5000)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	small := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: "ns", ResourceVersion: "12"}}
	events := []watch.Event{
		{Type: watch.Added, Object: big},
		{Type: watch.Modified, Object: small},
		{Type: watch.Bookmark, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "13"}}},
		{Type: watch.Deleted, Object: big},
	}
	for i := range 12 { // some larger than the reader's buffer, each followed by one that fits it
		pod := big.DeepCopy()
		pod.Name = fmt.Sprintf("pod-%d", i)
		pod.Annotations["note"] = strings.Repeat(string(rune('a'+i)), 3000*(i+1))
		events = append(events, watch.Event{Type: watch.Modified, Object: pod})
	}
	events = append(events, watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"}})
	stream := protobufStream(t, events)
	if len(stream) < 4*watchBufferSize {
		t.Fatalf("a stream of %d bytes does not go through the reader's buffer several times", len(stream))
	}
	want := clientGoDecode(t, stream)
	if len(want) != len(events) {
		t.Fatalf("client-go decoded %d events", len(want))
	}
	client, requests := servePods(t, stream, "application/vnd.kubernetes.protobuf;stream=watch", http.StatusOK)
	w, ok := watchPods(t, client)
	if !ok {
		t.Fatal("watch not opened")
	}
	got := collect(t, w)
	req := <-requests
	if q := req.URL.Query(); req.URL.Path != "/api/v1/namespaces/ns/pods" || q.Get("watch") != "true" || q.Get("resourceVersion") != "9" || q.Get("labelSelector") != "a=b" {
		t.Errorf("request %s", req.URL)
	}
	if accept := req.Header.Get("Accept"); accept != runtime.ContentTypeProtobuf {
		t.Errorf("Accept %q", accept)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%#v\nwant (client-go)\n%#v", got, want)
	}
	if last := got[len(got)-1].Object; !apierrors.IsResourceExpired(apierrors.FromObject(last)) {
		t.Errorf("the error event is not a 410: %#v", last)
	}
}

// A server that answers anything but a watch (406 for a resource without protobuf, an
// error status) leaves the watch to client-go.
func TestWatchTypedFallsBack(t *testing.T) {
	client, _ := servePods(t, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":406}`), "application/json", http.StatusNotAcceptable)
	if w, ok := watchPods(t, client); ok {
		w.Stop()
		t.Fatal("a 406 did not fall back to client-go's watch")
	}
}

// A broken or cut stream ends the watch with an error event, or quietly when it was cut
// between events' bytes, as client-go does.
func TestWatchTypedBrokenStreams(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "10"}}
	good := protobufStream(t, []watch.Event{{Type: watch.Added, Object: pod}})
	badType := protobufStream(t, []watch.Event{{Type: "RENAMED", Object: pod}})
	for name, c := range map[string]struct {
		stream    []byte
		wantError bool
	}{
		"invalid type":  {append(append([]byte{}, good...), badType...), true},
		"huge frame":    {append(append([]byte{}, good...), 0xff, 0xff, 0xff, 0xff), true},
		"garbage frame": {append(append([]byte{}, good...), 0, 0, 0, 3, 1, 2, 3), true},
		"cut in event":  {append(append([]byte{}, good...), good[:len(good)-5]...), false},
	} {
		t.Run(name, func(t *testing.T) {
			client, _ := servePods(t, c.stream, "application/vnd.kubernetes.protobuf;stream=watch", http.StatusOK)
			w, ok := watchPods(t, client)
			if !ok {
				t.Fatal("watch not opened")
			}
			evs := collect(t, w)
			if len(evs) == 0 || evs[0].Type != watch.Added {
				t.Fatalf("events %v, want the good ADDED first", evs)
			}
			if gotError := len(evs) == 2 && evs[1].Type == watch.Error; gotError != c.wantError || len(evs) > 2 {
				t.Fatalf("events %v, error event wanted: %v", evs, c.wantError)
			}
			if name == "invalid type" {
				if msg := apierrors.FromObject(evs[1].Object).Error(); !strings.Contains(msg, "got invalid watch event type: RENAMED") || strings.Contains(msg, "unable to decode watch event") {
					t.Errorf("error %q, want client-go's", msg)
				}
			}
		})
	}
}

// A watch opened with an error hook in its context calls it before it hands on an ERROR
// event (the reporter then knows the outage is not over), needs no errorSpy, and says so
// by its type.
func TestWatchTypedCallsErrorHook(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "10"}}
	stream := protobufStream(t, []watch.Event{
		{Type: watch.Added, Object: pod},
		{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired}},
	})
	client, _ := servePods(t, stream, "application/vnd.kubernetes.protobuf;stream=watch", http.StatusOK)
	var calls atomic.Int32
	hook := ErrorHook(func(status runtime.Object) ([]watch.Event, bool) {
		if s, ok := status.(*metav1.Status); !ok || s.Code != 410 {
			t.Errorf("hook called with %#v, want the 410 Status", status)
		}
		calls.Add(1)
		return nil, false
	})
	w, ok := WatchTyped(WithErrorHook(context.Background(), hook), client, "pods", "ns", metav1.ListOptions{}, TypedDecoding{})
	if !ok {
		t.Fatal("watch not opened")
	}
	if _, hooked := w.(HookedWatch); !hooked {
		t.Errorf("watch of type %T, want HookedWatch", w)
	}
	var errors int
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			errors++
			if got := calls.Load(); got != 1 {
				t.Fatalf("ERROR event received with the hook called %d times, want 1", got)
			}
		}
	}
	if errors != 1 || calls.Load() != 1 {
		t.Fatalf("%d ERROR events, hook called %d times; want 1 and 1", errors, calls.Load())
	}
	if w, _ := WatchTyped(context.Background(), client, "pods", "ns", metav1.ListOptions{}, TypedDecoding{}); w != nil {
		if _, hooked := w.(HookedWatch); hooked {
			t.Error("a watch without a hook claims to call one")
		}
		w.Stop()
	}
}

// An error hook that returns events replaces the ERROR event with them, and the watch
// ends after them even though the server's stream goes on.
func TestWatchErrorHookReplacesTheError(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "10"}}
	later := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "ns", ResourceVersion: "30"}}
	stream := protobufStream(t, []watch.Event{
		{Type: watch.Added, Object: pod},
		{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired}},
		{Type: watch.Added, Object: later},
	})
	client, _ := servePods(t, stream, "application/vnd.kubernetes.protobuf;stream=watch", http.StatusOK)
	replacement := []watch.Event{
		{Type: watch.Modified, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "20"}}},
		{Type: watch.Bookmark, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "21"}}},
	}
	hook := ErrorHook(func(runtime.Object) ([]watch.Event, bool) { return replacement, true })
	w, ok := WatchTyped(WithErrorHook(context.Background(), hook), client, "pods", "ns", metav1.ListOptions{}, TypedDecoding{})
	if !ok {
		t.Fatal("watch not opened")
	}
	var got []string
	for ev := range w.ResultChan() {
		m, _ := meta.Accessor(ev.Object)
		got = append(got, fmt.Sprintf("%s %s@%s", ev.Type, m.GetName(), m.GetResourceVersion()))
	}
	want := []string{"ADDED a@10", "MODIFIED a@20", "BOOKMARK @21"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// For an informer that drops managedFields, the watch decodes objects without them and
// otherwise as client-go does.
func TestWatchTypedDropsManagedFields(t *testing.T) {
	mf := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}}}`)}}
	v1 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", UID: "u1", ResourceVersion: "10", ManagedFields: mf},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
	v2 := v1.DeepCopy()
	v2.ResourceVersion, v2.Labels = "11", map[string]string{"a": "b"}
	stream := protobufStream(t, []watch.Event{{Type: watch.Added, Object: v1}, {Type: watch.Modified, Object: v2}})
	want := clientGoDecode(t, stream)
	for _, ev := range want {
		ev.Object.(*corev1.Pod).ManagedFields = nil
	}
	client, _ := servePods(t, stream, "application/vnd.kubernetes.protobuf;stream=watch", http.StatusOK)
	w, ok := WatchTyped(context.Background(), client, "pods", "ns", metav1.ListOptions{}, TypedDecoding{DropManagedFields: true})
	if !ok {
		t.Fatal("watch not opened")
	}
	if got := collect(t, w); !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%#v\nwant\n%#v", got, want)
	}
}

// A server that turns the watch away with 429 and a Retry-After is asked once: the watch
// falls back to client-go's at once, whose own retries are the only ones (notRetried).
func TestWatchTypedFallsBackAtOnce(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`)
	}))
	defer srv.Close()
	client, err := rest.RESTClientFor(&rest.Config{Host: srv.URL, APIPath: "/api", ContentConfig: rest.ContentConfig{
		GroupVersion:         &schema.GroupVersion{Version: "v1"},
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := watchPods(t, client); ok {
		w.Stop()
		t.Fatal("a 429 did not fall back to client-go's watch")
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1: the fast watch retried what client-go's watch will retry again", n)
	}
	requests.Store(0)
	if w, ok := WatchUnstructured(context.Background(), dynamicREST(t, &rest.Config{Host: srv.URL}), widgetsGVR, "", metav1.ListOptions{}); ok {
		w.Stop()
		t.Fatal("a 429 did not fall back to the dynamic client's watch")
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1: the fast JSON watch retried what the dynamic client's watch will retry again", n)
	}
}

// BenchmarkWatchDecode decodes a protobuf watch stream of 1,000 application pods, each
// new (ADDED: nothing for part reuse to take), with client-go's typed watch decoder and
// with protobufEventDecoder, and reports the time per event and the ratio to client-go's.
func BenchmarkWatchDecode(b *testing.B) {
	var events []watch.Event
	for i := range 1000 {
		pod := benchPod()
		pod.Name, pod.UID = fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
		events = append(events, watch.Event{Type: watch.Added, Object: pod})
	}
	stream := protobufStream(b, events)
	var baseline float64
	for _, decoder := range []string{"client-go", "kubeevents"} {
		b.Run(decoder, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				if decoder == "client-go" {
					if n := len(clientGoDecode(b, stream)); n != len(events) {
						b.Fatalf("%d events", n)
					}
					continue
				}
				body := nopCloser{bytes.NewReader(stream)}
				dec := &protobufEventDecoder{body: body, r: bufio.NewReaderSize(body, watchBufferSize), reuse: newPartReuse(TypedDecoding{})}
				for range events {
					if _, _, err := dec.Decode(); err != nil {
						b.Fatal(err)
					}
				}
			}
			perEvent := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(len(events))
			b.ReportMetric(perEvent, "ns/event")
			if decoder == "client-go" {
				baseline = perEvent
			} else if baseline > 0 {
				b.ReportMetric(perEvent/baseline, "ratio-to-client-go")
			}
		})
	}
}
