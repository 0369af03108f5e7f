package store

import (
	"context"
	"errors"
	"strings"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"
)

// ObjectMeta is what the store indexes of a recorded object: its kind and metadata.
type ObjectMeta struct {
	Kind, Namespace, Name, UID, ResourceVersion string
	Created                                     time.Time
	Owners                                      string // metadata.ownerReferences as JSON; "" for none
}

// MetaOf reads the metadata of a recorded object's JSON. Its strings are copies: they
// outlive object's memory (map keys, a caller's reused buffer).
func MetaOf(object []byte) (ObjectMeta, error) {
	r := gjson.GetMany(view(object), "kind", "metadata.namespace", "metadata.name", "metadata.uid", "metadata.resourceVersion",
		"metadata.creationTimestamp", "metadata.ownerReferences")
	for i := range r {
		r[i].Str, r[i].Raw = strings.Clone(r[i].Str), strings.Clone(r[i].Raw)
	}
	m := ObjectMeta{Kind: r[0].Str, Namespace: r[1].Str, Name: r[2].Str, UID: r[3].Str, ResourceVersion: r[4].Str}
	if err := m.check(); err != nil {
		return m, err
	}
	m.Created, _ = time.Parse(time.RFC3339, r[5].Str)
	if r[6].IsArray() && len(r[6].Array()) > 0 {
		m.Owners = r[6].Raw
	}
	return m, nil
}

func (m *ObjectMeta) check() error {
	if m.Kind == "" || m.Name == "" {
		return errors.New(`its "object" has no kind or no name`)
	}
	return nil
}

// view is b as a string, without a copy, for gjson: b must not change while it is used.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// storeCoreEvent indexes a core Event (v1 or events.k8s.io/v1) by the object it is
// about, so that a user's query finds what happened to an object without decoding
// versions.
func (w *Writer) storeCoreEvent(ctx context.Context, object int64, ev Event) error {
	doc := view(ev.Object)
	about := gjson.Get(doc, "involvedObject")
	if !about.Exists() {
		about = gjson.Get(doc, "regarding")
	}
	r := gjson.GetMany(doc, "type", "reason", "message", "note", "series.count", "count", "deprecatedCount",
		"series.lastObservedTime", "lastTimestamp", "deprecatedLastTimestamp", "eventTime")
	message := r[2].Str
	if message == "" {
		message = r[3].Str
	}
	count := max(r[4].Int(), r[5].Int(), r[6].Int(), 1)
	last := ev.Time
	for _, t := range r[7:] {
		if parsed, err := time.Parse(time.RFC3339Nano, t.Str); err == nil {
			last = parsed
			break
		}
	}
	_, err := w.stmt.upsertEvent.stmt(w.tx).ExecContext(ctx, object, about.Get("kind").Str, about.Get("namespace").Str,
		about.Get("name").Str, about.Get("uid").Str, r[0].Str, r[1].Str, message, count, last.UnixNano())
	return err
}
