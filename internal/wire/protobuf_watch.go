package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// protobufPrefix starts every protobuf-encoded object: "k8s" and encoding 0, a
// runtime.Unknown around the object's own bytes.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// maxWatchFrame bounds one event of a watch stream (objects are at most 1.5 MB in etcd).
const maxWatchFrame = 64 << 20

// WatchTyped opens a watch of resource (in ns, or all namespaces) in protobuf and decodes
// each event into a typed object of client-go's scheme, reusing its buffers from one
// event to the next. It returns ok=false when the server does not serve the resource in
// protobuf, or the watch could not be opened: the caller then opens client-go's watch,
// which retries or reports the error as the reflector expects (an empty watch here would
// look like a watch that closed at once, and make the reflector re-list).
//
// Why not client-go's watch: for every event it allocates a buffer for the frame, one
// for the object's bytes in the watch event and one more for them in the
// runtime.Unknown around them, before decoding the object. Here those three buffers are
// kept from one event to the next (the generated decoders copy what they keep). And the
// parts of an object that an event brings unchanged are taken from its previous version
// rather than decoded again (partReuse), unless decoding.NoPartReuse. With
// decoding.DropManagedFields, objects are decoded without their metadata.managedFields.
func WatchTyped(ctx context.Context, client rest.Interface, resource, ns string, opts metav1.ListOptions, decoding TypedDecoding) (w watch.Interface, ok bool) {
	opts.Watch = true
	body, err := client.Get().Namespace(ns).Resource(resource).
		VersionedParams(&opts, metav1.ParameterCodec).
		SetHeader("Accept", runtime.ContentTypeProtobuf).
		MaxRetries(notRetried).
		Stream(ctx)
	if err != nil {
		// client-go's Watch retries a dropped connection, and says what went wrong as the
		// reflector expects: let it open the watch.
		return nil, false
	}
	dec := &protobufEventDecoder{body: body, r: bufio.NewReaderSize(body, 32<<10), reuse: newPartReuse(decoding)}
	hookedDec, hooked := withErrorHook(ctx, dec)
	w = watch.NewStreamWatcher(hookedDec, streamErrorReporter)
	if hooked {
		w = HookedWatch{w}
	}
	return w, true
}

// notRetried: the watches of this package are opened with MaxRetries(0). When one cannot
// be opened the caller opens client-go's watch instead, which retries a 429 or a dropped
// connection ten times, each after the server's Retry-After; had this package's request
// retried too, a server that throttles kubeevents would be asked twenty times, and the
// user told of it after some 20 s rather than 10 (TestWatchTypedFallsBackAtOnce).
const notRetried = 0

// TypedDecoding is how WatchTyped decodes objects. The zero value decodes them with their
// managedFields, reusing unchanged parts.
type TypedDecoding struct {
	// DropManagedFields leaves metadata.managedFields out, for an informer whose
	// transform drops them anyway.
	DropManagedFields bool
	// NoPartReuse decodes every part of every object: one of the fast paths off
	// (FastPathsEnv).
	NoPartReuse bool
}

// protobufEventDecoder is a watch.Decoder for a protobuf watch stream: each event is a
// 4-byte big-endian length and a metav1.WatchEvent whose object is protobufPrefix and a
// runtime.Unknown.
type protobufEventDecoder struct {
	body    io.ReadCloser
	r       *bufio.Reader
	frame   []byte
	event   metav1.WatchEvent
	unknown runtime.Unknown
	reuse   *partReuse
}

type protoUnmarshaler interface {
	Unmarshal([]byte) error
}

func (d *protobufEventDecoder) Decode() (watch.EventType, runtime.Object, error) {
	var header [4]byte
	if _, err := io.ReadFull(d.r, header[:]); err != nil {
		return "", nil, err // io.EOF: the server ended the watch
	}
	n := binary.BigEndian.Uint32(header[:])
	if n > maxWatchFrame {
		return "", nil, fmt.Errorf("unable to decode watch event: an event of %d bytes", n)
	}
	if cap(d.frame) < int(n) {
		d.frame = make([]byte, n)
	}
	d.frame = d.frame[:n]
	if _, err := io.ReadFull(d.r, d.frame); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return "", nil, err
	}
	// Unmarshal fills fields without clearing them; keep the buffers, drop the values.
	d.event.Type, d.event.Object.Raw, d.event.Object.Object = "", d.event.Object.Raw[:0], nil
	if err := d.event.Unmarshal(d.frame); err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %w", err)
	}
	typ := watch.EventType(d.event.Type)
	switch typ {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
	case watch.Error:
	default:
		return "", nil, fmt.Errorf("got invalid watch event type: %v", typ)
	}
	raw := d.event.Object.Raw
	if !bytes.HasPrefix(raw, protobufPrefix) {
		return "", nil, fmt.Errorf("unable to decode watch event: the object is not protobuf")
	}
	d.unknown.TypeMeta, d.unknown.Raw, d.unknown.ContentEncoding, d.unknown.ContentType = runtime.TypeMeta{}, d.unknown.Raw[:0], "", ""
	if err := d.unknown.Unmarshal(raw[len(protobufPrefix):]); err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %w", err)
	}
	if d.unknown.ContentEncoding != "" || (d.unknown.ContentType != "" && d.unknown.ContentType != runtime.ContentTypeProtobuf) {
		return "", nil, fmt.Errorf("unable to decode watch event: unsupported encoding %q %q", d.unknown.ContentEncoding, d.unknown.ContentType)
	}
	gvk := schema.FromAPIVersionAndKind(d.unknown.APIVersion, d.unknown.Kind)
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %w", err)
	}
	u, ok := obj.(protoUnmarshaler)
	if !ok {
		return "", nil, fmt.Errorf("unable to decode watch event: %s has no protobuf encoding", gvk)
	}
	if err := d.reuse.unmarshal(typ, u, d.unknown.Raw); err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %w", err)
	}
	return typ, obj, nil
}

func (d *protobufEventDecoder) Close() { d.body.Close() }
