package replay

import (
	"encoding/json"
	"errors"
	"unsafe"

	"github.com/tidwall/gjson"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// decoder turns recorded objects into the objects a watch hands over: built-in types
// into client-go's typed objects (kubectl's columns, the typed diffs and jq's values are
// made from those), the rest (custom resources, Secrets whose values were redacted)
// into unstructured ones, as the informers do.
type decoder struct {
	// kinds are the kind of every resource read so far: read from the first object of
	// each, it is the same for all.
	kinds map[schema.GroupVersionResource]schema.GroupVersionKind
}

func newDecoder() *decoder {
	return &decoder{kinds: map[schema.GroupVersionResource]schema.GroupVersionKind{}}
}

// kindOf is the kind of resource gvr, read from raw, one of its objects, if it is not
// known yet.
func (d *decoder) kindOf(gvr schema.GroupVersionResource, raw []byte) (schema.GroupVersionKind, error) {
	if gvk, ok := d.kinds[gvr]; ok {
		return gvk, nil
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return schema.GroupVersionKind{}, err
	}
	gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	if gvk.Kind == "" {
		return gvk, errors.New(`its "object" has no "kind"`)
	}
	d.kinds[gvr] = gvk
	return gvk, nil
}

// decode makes the object of raw, of kind gvk.
func (d *decoder) decode(gvk schema.GroupVersionKind, raw []byte) (runtime.Object, error) {
	if scheme.Scheme.Recognizes(gvk) {
		if obj, err := scheme.Scheme.New(gvk); err == nil {
			// A Secret whose values were redacted is not a typed one: it falls to
			// unstructured below.
			if json.Unmarshal(raw, obj) == nil {
				obj.GetObjectKind().SetGroupVersionKind(gvk)
				return obj, nil
			}
		}
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return u, nil
}

// metadataOnly makes the object of raw, of kind gvk, with its metadata alone: enough to
// select it, name it and key it, for sinks that write its JSON as recorded.
func metadataOnly(gvk schema.GroupVersionKind, raw []byte) (runtime.Object, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	m := gjson.Get(unsafe.String(unsafe.SliceData(raw), len(raw)), "metadata")
	if !m.IsObject() {
		return nil, errors.New(`no "metadata"`)
	}
	if err := json.Unmarshal(raw[m.Index:m.Index+len(m.Raw)], &obj.ObjectMeta); err != nil {
		return nil, err
	}
	return obj, nil
}
