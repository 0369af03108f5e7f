package decode

import (
	"context"
	"fmt"
	"io"
	"path"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	kjson "sigs.k8s.io/json"
)

// WatchUnstructured opens a watch of gvr (in ns, or all namespaces) in JSON and decodes
// each event straight into an unstructured object, in one pass over its bytes.
//
// Why not the dynamic client's Watch: client-go frames each event (scanning it once),
// reads its apiVersion and kind (a second full parse), decodes the watch event with its
// object as raw bytes (a third), then decodes the object into maps (a fourth, itself a
// validation scan and a decode). On custom resources that was a large part of
// kubeevents' CPU per event (bench/README.md). The result is the same: the maps of unstructured.Unstructured with integers as
// int64 and other numbers as float64 (sigs.k8s.io/json, as client-go decodes them).
//
// When the watch cannot be opened it returns ok=false: the caller then opens the dynamic
// client's watch, which retries a dropped connection and reports errors as the reflector
// expects (an empty watch here would look like a watch that closed at once, and make the
// reflector re-list).
func WatchUnstructured(ctx context.Context, client rest.Interface, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (w watch.Interface, ok bool) {
	opts.Watch = true
	body, err := client.Get().AbsPath(resourcePath(gvr, ns)).
		SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion).
		SetHeader("Accept", runtime.ContentTypeJSON).
		MaxRetries(notRetried).
		Stream(ctx)
	if err != nil {
		return nil, false
	}
	dec := &unstructuredEventDecoder{body: body, decoder: kjson.NewDecoderCaseSensitivePreserveInts(body)}
	hookedDec, hooked := withErrorHook(ctx, dec)
	w = watch.NewStreamWatcher(hookedDec, streamErrorReporter)
	if hooked {
		w = HookedWatch{w}
	}
	return w, true
}

// resourcePath is the URL path of a resource, as the dynamic client builds it.
func resourcePath(gvr schema.GroupVersionResource, ns string) string {
	p := path.Join("/apis", gvr.Group, gvr.Version)
	if gvr.Group == "" {
		p = path.Join("/api", gvr.Version)
	}
	if ns != "" {
		p = path.Join(p, "namespaces", ns)
	}
	return path.Join(p, gvr.Resource)
}

// unstructuredEventDecoder is a watch.Decoder for a JSON watch stream.
type unstructuredEventDecoder struct {
	body    io.ReadCloser
	decoder kjson.Decoder
}

// watchFrame is one event of a JSON watch stream.
type watchFrame struct {
	Type   watch.EventType `json:"type"`
	Object map[string]any  `json:"object"`
}

func (d *unstructuredEventDecoder) Decode() (watch.EventType, runtime.Object, error) {
	var frame watchFrame
	if err := d.decoder.Decode(&frame); err != nil {
		return "", nil, err // io.EOF: the server ended the watch
	}
	switch frame.Type {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
	case watch.Error:
		// A Status, for the reflector to read (410 Gone: the resourceVersion is too old).
		status := &metav1.Status{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(frame.Object, status); err != nil {
			return "", nil, fmt.Errorf("unable to decode an error event of the watch stream: %w", err)
		}
		return frame.Type, status, nil
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %v", frame.Type)
	}
	if frame.Object == nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %s event without an object", frame.Type)
	}
	if kind, _ := frame.Object["kind"].(string); kind == "" {
		return "", nil, fmt.Errorf("unable to decode watch event: %s event of an object without a kind", frame.Type)
	}
	return frame.Type, &unstructured.Unstructured{Object: frame.Object}, nil
}

func (d *unstructuredEventDecoder) Close() { d.body.Close() }
