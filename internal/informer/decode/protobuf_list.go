package decode

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// TypedLister lists one resource of client-go's scheme (in ns, or all namespaces) in
// protobuf, as client-go's typed list does, but reads each page of a list into one buffer
// kept for the next page of the same list, and decodes the object from inside the
// runtime.Unknown around it without copying it out first.
//
// Why: client-go reads a response with io.ReadAll, which grows its buffer a quarter at a
// time from 512 bytes, so a page of 5,000 pods (about 45 MB) is allocated, zeroed and
// copied some twenty times over, then copied once more into the Unknown: a fifth of the
// CPU of a list of 100,000 pods, and garbage the collector must keep up with
// (bench/README.md). The generated decoders copy every string and byte slice they keep,
// so nothing decoded refers to the buffer.
type TypedLister struct {
	client   rest.Interface
	resource string
	ns       string

	mu sync.Mutex
	// page holds the last page's response while its list goes on (it had a continue
	// token); nil between lists, so that no list's largest page stays allocated.
	page []byte
}

// NewTypedLister lists resource in ns ("" for every namespace) through client, a REST
// client of the resource's group and version.
func NewTypedLister(client rest.Interface, resource, ns string) *TypedLister {
	return &TypedLister{client: client, resource: resource, ns: ns}
}

// List returns one page of the list opts asks for, a typed list object of client-go's
// scheme without its apiVersion and kind (as client-go's typed list returns it).
func (l *TypedLister) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	body, err := l.client.Get().Namespace(l.ns).Resource(l.resource).
		VersionedParams(&opts, metav1.ParameterCodec).
		SetHeader("Accept", runtime.ContentTypeProtobuf+","+runtime.ContentTypeJSON).
		Stream(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	buf := bytes.NewBuffer(l.page[:0])
	l.page = nil
	if err != nil {
		return nil, err // an API error as client-go's list returns it (e.g. 410 Expired)
	}
	defer body.Close()
	if _, err := buf.ReadFrom(body); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	obj, err := decodeList(data)
	if err != nil {
		return nil, fmt.Errorf("decoding the list of %s: %w", l.resource, err)
	}
	if lm, err := meta.ListAccessor(obj); err == nil && lm.GetContinue() != "" {
		l.page = data // more pages to come
	}
	return obj, nil
}

// decodeList decodes a list response: protobuf (protobufPrefix and a runtime.Unknown), or
// JSON from a server that does not serve the type in protobuf.
func decodeList(data []byte) (runtime.Object, error) {
	if !bytes.HasPrefix(data, protobufPrefix) {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
		if err != nil {
			return nil, err
		}
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		return obj, nil
	}
	apiVersion, kind, raw, err := unknownFields(data[len(protobufPrefix):])
	if err != nil {
		return nil, err
	}
	gvk := schema.FromAPIVersionAndKind(string(apiVersion), string(kind))
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	u, ok := obj.(protoUnmarshaler)
	if !ok {
		return nil, fmt.Errorf("%s has no protobuf encoding", gvk)
	}
	if err := u.Unmarshal(raw); err != nil {
		return nil, err
	}
	return obj, nil
}

// unknownFields reads a runtime.Unknown message in place: its typeMeta's apiVersion and
// kind, and raw, all slices of b. An encoding other than plain protobuf is an error.
func unknownFields(b []byte) (apiVersion, kind, raw []byte, err error) {
	const (
		typeMetaField        = 1
		rawField             = 2
		contentEncodingField = 3
		contentTypeField     = 4
		apiVersionField      = 1 // TypeMeta.apiVersion
		kindField            = 2 // TypeMeta.kind
	)
	err = bytesFields(b, func(num protowire.Number, value []byte) error {
		switch num {
		case typeMetaField:
			return bytesFields(value, func(num protowire.Number, value []byte) error {
				switch num {
				case apiVersionField:
					apiVersion = value
				case kindField:
					kind = value
				}
				return nil
			})
		case rawField:
			raw = value
		case contentEncodingField:
			if len(value) > 0 {
				return fmt.Errorf("unsupported content encoding %q", value)
			}
		case contentTypeField:
			if len(value) > 0 && string(value) != runtime.ContentTypeProtobuf {
				return fmt.Errorf("unsupported content type %q", value)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return apiVersion, kind, raw, nil
}

// bytesFields calls field with the number and value of each length-delimited field of the
// protobuf message b, in order, and skips fields of other wire types. A later field of
// the same number overrides an earlier one, as proto3 says for scalars and strings.
func bytesFields(b []byte, field func(num protowire.Number, value []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		value, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := field(num, value); err != nil {
			return err
		}
	}
	return nil
}
