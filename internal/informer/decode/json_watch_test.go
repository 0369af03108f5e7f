package decode

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// A JSON watch stream as the API server writes it: one object per line.
var widgetStream = []string{
	`{"type":"ADDED","object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns","resourceVersion":"10","generation":1,"labels":{"x":"1"}},"spec":{"size":3,"ratio":0.5,"big":9223372036854775807,"huge":18446744073709551616,"exp":1e3,"tags":["p","q"],"none":null,"on":true,"text":"caf\u00e9 \"quoted\""}}}`,
	`{"type":"MODIFIED","object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns","resourceVersion":"11","generation":2},"spec":{"size":-4,"nested":{"list":[{"k":1},{"k":2.25}]}}}}`,
	`{"type":"BOOKMARK","object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"resourceVersion":"12"}}}`,
	`{"type":"DELETED","object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns","resourceVersion":"13"}}}`,
	`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (10)","reason":"Expired","code":410}}`,
}

// watchServer serves frames on the widgets watch and records the request.
func watchServer(t *testing.T, frames []string) (*rest.Config, <-chan *http.Request) {
	t.Helper()
	requests := make(chan *http.Request, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests <- r
		w.Header().Set("Content-Type", "application/json")
		for _, f := range frames {
			io.WriteString(w, f+"\n")
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}, requests
}

func dynamicREST(t *testing.T, cfg *rest.Config) rest.Interface {
	t.Helper()
	dynCfg := dynamic.ConfigFor(cfg)
	dynCfg.GroupVersion = nil
	c, err := rest.UnversionedRESTClientFor(dynCfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func collect(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	var evs []watch.Event
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatal("the watch did not end")
		}
	}
}

// Each event decodes to what client-go's unstructured JSON decoding gives for its object
// (int64 integers, float64 other numbers, nested maps and lists), and the error event to
// the Status the reflector reads as "410 Gone". The request is the dynamic client's.
func TestWatchUnstructuredDecodesAsClientGo(t *testing.T) {
	cfg, requests := watchServer(t, widgetStream)
	w, ok := WatchUnstructured(context.Background(), dynamicREST(t, cfg), widgetsGVR, "ns",
		metav1.ListOptions{ResourceVersion: "9", LabelSelector: "x=1", AllowWatchBookmarks: true})
	if !ok {
		t.Fatal("watch not opened")
	}
	evs := collect(t, w)
	req := <-requests
	if req.URL.Path != "/apis/example.com/v1/namespaces/ns/widgets" {
		t.Errorf("path %q", req.URL.Path)
	}
	q := req.URL.Query()
	if q.Get("watch") != "true" || q.Get("resourceVersion") != "9" || q.Get("labelSelector") != "x=1" || q.Get("allowWatchBookmarks") != "true" {
		t.Errorf("query %q", req.URL.RawQuery)
	}
	if accept := req.Header.Get("Accept"); accept != "application/json" {
		t.Errorf("Accept %q", accept)
	}
	if len(evs) != len(widgetStream) {
		t.Fatalf("%d events, want %d: %v", len(evs), len(widgetStream), evs)
	}
	for i, frame := range widgetStream[:4] {
		var raw struct {
			Type   string
			Object runtime.RawExtension
		}
		if err := json.Unmarshal([]byte(frame), &raw); err != nil {
			t.Fatal(err)
		}
		want, _, err := unstructured.UnstructuredJSONScheme.Decode(raw.Object.Raw, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(evs[i].Type) != raw.Type || !reflect.DeepEqual(evs[i].Object, want) {
			t.Errorf("event %d: %s %#v\nwant %s %#v", i, evs[i].Type, evs[i].Object, raw.Type, want)
		}
	}
	if evs[4].Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(evs[4].Object)) {
		t.Errorf("error event %s %#v, want a 410 Expired status", evs[4].Type, evs[4].Object)
	}
}

// A broken stream ends the watch with an error event naming the problem, never a panic
// or a half-decoded object.
func TestWatchUnstructuredBrokenStreams(t *testing.T) {
	for name, frame := range map[string]string{
		"unknown type":     `{"type":"RENAMED","object":{"kind":"Widget"}}`,
		"no object":        `{"type":"ADDED"}`,
		"no kind":          `{"type":"ADDED","object":{"metadata":{"name":"a"}}}`,
		"not JSON":         `<html>proxy error</html>`,
		"object not a map": `{"type":"ADDED","object":[1,2]}`,
	} {
		t.Run(name, func(t *testing.T) {
			cfg, _ := watchServer(t, []string{widgetStream[0], frame, widgetStream[1]})
			w, ok := WatchUnstructured(context.Background(), dynamicREST(t, cfg), widgetsGVR, "", metav1.ListOptions{})
			if !ok {
				t.Fatal("watch not opened")
			}
			evs := collect(t, w)
			if len(evs) != 2 || evs[0].Type != watch.Added || evs[1].Type != watch.Error {
				t.Fatalf("events %v, want ADDED then an error", evs)
			}
			if msg := apierrors.FromObject(evs[1].Object).Error(); !strings.Contains(msg, "unable to decode") {
				t.Errorf("error %q", msg)
			}
		})
	}
}

// A stream cut in the middle of an event ends the watch without an event: the reflector
// opens it again.
func TestWatchUnstructuredTruncatedStream(t *testing.T) {
	cut := strings.Index(widgetStream[1], `"spec"`)
	cfg, _ := watchServer(t, []string{widgetStream[0], widgetStream[1][:cut]})
	w, ok := WatchUnstructured(context.Background(), dynamicREST(t, cfg), widgetsGVR, "", metav1.ListOptions{})
	if !ok {
		t.Fatal("watch not opened")
	}
	if evs := collect(t, w); len(evs) != 1 || evs[0].Type != watch.Added {
		t.Fatalf("events %v, want the one complete ADDED", evs)
	}
}

// A watch that cannot be opened (an error status, a closed port) is left to the dynamic
// client, whose errors and retries the reflector knows.
func TestWatchUnstructuredFallsBack(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`)
	}))
	defer srv.Close()
	if w, ok := WatchUnstructured(context.Background(), dynamicREST(t, &rest.Config{Host: srv.URL}), widgetsGVR, "", metav1.ListOptions{}); ok {
		w.Stop()
		t.Fatal("a 403 did not fall back to the dynamic client's watch")
	}
	srv.Close()
	if w, ok := WatchUnstructured(context.Background(), dynamicREST(t, &rest.Config{Host: srv.URL}), widgetsGVR, "", metav1.ListOptions{}); ok {
		w.Stop()
		t.Fatal("a closed port did not fall back to the dynamic client's watch")
	}
}
