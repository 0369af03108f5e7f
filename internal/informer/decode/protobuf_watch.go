package decode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
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

// watchBufferSize is the watch stream reader's buffer; events up to this size (a pod is
// some 5 KB) are decoded from inside it.
const watchBufferSize = 32 << 10

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
	dec := &protobufEventDecoder{body: body, r: bufio.NewReaderSize(body, watchBufferSize), reuse: newPartReuse(decoding)}
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
	// ManagedFields, when set, is given each object's managedFields as protobuf instead
	// of the object (which is decoded without them): the occurrences of ObjectMeta's
	// managedFields field, tags included, valid only during the call, which runs on the
	// watch's decoding goroutine right after the object is decoded. Not called for an
	// object whose managedFields were not left out (it has none of the usual layout, or
	// no UID): they are then in the object.
	ManagedFields func(obj runtime.Object, managed []byte)
	// NoPartReuse decodes every part of every object: one of the fast paths off
	// (KUBEEVENTS_FAST_PATHS).
	NoPartReuse bool
}

// protobufEventDecoder is a watch.Decoder for a protobuf watch stream: each event is a
// 4-byte big-endian length and a metav1.WatchEvent whose object is protobufPrefix and a
// runtime.Unknown.
//
// The event is read in place: a frame that fits the reader's buffer is decoded from
// inside it (Peek), a larger one from frame, kept for the next; the WatchEvent and the
// Unknown around the object are parsed where they lie (watchEventFields, unknownFields)
// rather than copied out into their own structs. This is safe because nothing decoded
// refers to the bytes it came from: the generated decoders copy every string and byte
// slice they keep, and partReuse clones the parts it keeps (TestWatchTypedDecodesAsClientGo
// decodes events of every size one after the other, from the same buffers).
type protobufEventDecoder struct {
	body  io.ReadCloser
	r     *bufio.Reader
	frame []byte // events larger than r's buffer
	reuse *partReuse

	// The kind of the last event's object: most streams hold one kind.
	apiVersion, kind []byte
	gvk              schema.GroupVersionKind
}

type protoUnmarshaler interface {
	Unmarshal([]byte) error
}

func (d *protobufEventDecoder) Decode() (watch.EventType, runtime.Object, error) {
	frame, err := d.readFrame()
	if err != nil {
		return "", nil, err
	}
	typ, raw, err := watchEventFields(frame)
	if errors.Is(err, errInvalidEventType) {
		return "", nil, err // as client-go says it
	}
	if err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %w", err)
	}
	if !bytes.HasPrefix(raw, protobufPrefix) {
		return "", nil, fmt.Errorf("unable to decode watch event: the object is not protobuf")
	}
	apiVersion, kind, raw, err := unknownFields(raw[len(protobufPrefix):])
	if err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %w", err)
	}
	if !bytes.Equal(apiVersion, d.apiVersion) || !bytes.Equal(kind, d.kind) || d.kind == nil {
		d.gvk = schema.FromAPIVersionAndKind(string(apiVersion), string(kind))
		d.apiVersion, d.kind = append(d.apiVersion[:0], apiVersion...), append(d.kind[:0], kind...)
	}
	obj, err := scheme.Scheme.New(d.gvk)
	if err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %w", err)
	}
	u, ok := obj.(protoUnmarshaler)
	if !ok {
		return "", nil, fmt.Errorf("unable to decode watch event: %s has no protobuf encoding", d.gvk)
	}
	if err := d.reuse.unmarshal(typ, u, raw); err != nil {
		return "", nil, fmt.Errorf("unable to decode watch event: %w", err)
	}
	return typ, obj, nil
}

// readFrame returns the next event's bytes, valid until the next call: inside the reader's
// buffer when they fit it, else in d.frame.
func (d *protobufEventDecoder) readFrame() ([]byte, error) {
	var header [4]byte
	if _, err := io.ReadFull(d.r, header[:]); err != nil {
		return nil, err // io.EOF: the server ended the watch
	}
	n := int(binary.BigEndian.Uint32(header[:]))
	if n > maxWatchFrame {
		return nil, fmt.Errorf("unable to decode watch event: an event of %d bytes", n)
	}
	if n <= d.r.Size() {
		frame, err := d.r.Peek(n)
		if err != nil {
			return nil, unexpectedEOF(err)
		}
		_, _ = d.r.Discard(n) // cannot fail: n bytes are buffered; frame stays valid until the next read
		return frame, nil
	}
	if cap(d.frame) < n {
		d.frame = make([]byte, n)
	}
	d.frame = d.frame[:n]
	if _, err := io.ReadFull(d.r, d.frame); err != nil {
		return nil, unexpectedEOF(err)
	}
	return d.frame, nil
}

// unexpectedEOF: a stream that ends inside an event was cut, not ended.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// watchEventFields reads a metav1.WatchEvent message in place: its type, one of the watch
// event types, and its object's raw bytes (a runtime.RawExtension's raw), a slice of b.
func watchEventFields(b []byte) (watch.EventType, []byte, error) {
	const (
		typeField   = 1 // WatchEvent.type
		objectField = 2 // WatchEvent.object, a RawExtension
		rawField    = 1 // RawExtension.raw
	)
	var typ watch.EventType
	var raw []byte
	err := bytesFields(b, func(num protowire.Number, value []byte) error {
		switch num {
		case typeField:
			typ = eventType(value)
			if typ == "" {
				return fmt.Errorf("%w: %s", errInvalidEventType, value)
			}
		case objectField:
			return bytesFields(value, func(num protowire.Number, value []byte) error {
				if num == rawField {
					raw = value
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if typ == "" {
		return "", nil, fmt.Errorf("%w: %s", errInvalidEventType, "")
	}
	return typ, raw, nil
}

// errInvalidEventType starts client-go's error for an event of no known type.
var errInvalidEventType = errors.New("got invalid watch event type")

// eventType is the watch.EventType spelled by b, without allocating; "" for none.
func eventType(b []byte) watch.EventType {
	for _, t := range [...]watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error} {
		if string(b) == string(t) {
			return t
		}
	}
	return ""
}

func (d *protobufEventDecoder) Close() { d.body.Close() }
