package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/jsonw"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// Store is where a checkpoint is kept between runs: a file (FileStore, --resume FILE) or
// objects in the cluster (package clusterstore, --resume secret:NAME), which any replica
// of a highly available kubeevents can read. What a checkpoint holds, and how a run
// decides that one is its own (Watch, File.For), does not depend on the store.
type Store interface {
	// Name names the checkpoint in messages (--resume NAME: ...) and in File.Path and
	// Saved.Path: the file's path, or the store's reference (secret:NAMESPACE/NAME).
	Name() string
	// Load reads the checkpoint: (nil, nil) if there is none yet; a *CorruptError if
	// what is there is not a whole checkpoint. It never changes what it reads.
	Load(ctx context.Context) (*File, error)
	// Save replaces the checkpoint with snap, atomically: a Load, in this process or in
	// another, reads the checkpoint before or the one after, whole, never a mix, even
	// if the process dies during Save or ctx ends. Save is called from one goroutine at
	// a time (a Writer's), at most about once a second; it bounds its own time, and
	// returns soon once ctx ends.
	Save(ctx context.Context, snap *Snapshot) error
}

// Snapshot is what one write of the checkpoint holds: its sections in order, each as
// the file's format has it (a header line, a line per object, an end line).
type Snapshot struct {
	Sections []SnapshotSection
}

// SnapshotSection is one cluster's section of a Snapshot.
type SnapshotSection struct {
	Context string // the header's context: "" in a run of one cluster
	// Header is the section's header line (JSON, without the newline), as the file
	// holds it: a Store keeps it as it is, and hands it back to Read.
	Header  []byte
	Objects []SnapshotObject
}

// SnapshotObject is one object of a section.
type SnapshotObject struct {
	Resource string // ResourceName: pods.v1
	// Key is the object's namespace/name, unique within Resource and stable across
	// writes (a store may shard by it); "" for the objects of a section kept as it was
	// read (a cluster not watched this time), which never change.
	Key string
	obj runtime.Object
	raw []byte // a kept section's object, as read
	// managers go into the object's metadata.managedFields as it is written (their
	// managers and times, without fields): the informer dropped them, and a resumed
	// run compares the object's current managedFields with them (managedfields.Seed).
	managers managedfields.Managers
}

// Version is the object's resourceVersion: with its Resource and Key, what says that
// its line is the one of an earlier write (a store may skip encoding it). "" for a kept
// section's objects.
func (o *SnapshotObject) Version() string {
	if o.obj == nil {
		return ""
	}
	return resourceVersion(o.obj)
}

// AppendLine appends the object's line in the file's format ({"resource":...,"object":
// {...}} and a newline) to dst. The object is encoded now: a snapshot holds pointers to
// the objects the sinks were given, not their JSON. Its managers go into its metadata as
// managedFields as it is written, where that is found before any nested value (a typed
// object's kind and apiVersion come first), else from a shallow copy that has them.
func (o *SnapshotObject) AppendLine(dst []byte) ([]byte, error) {
	raw, at, splice := o.raw, 0, false
	if raw == nil {
		var err error
		if raw, err = json.Marshal(o.obj); err == nil && !o.managers.Empty() {
			if at, splice = metadataAt(raw); !splice {
				raw, err = json.Marshal(withManagedFields(o.obj, o.managers.Entries()))
			}
		}
		if err != nil {
			return dst, fmt.Errorf("encoding an object: %w", err)
		}
	}
	dst = jsonw.AppendJSONField(dst, `{"resource":`, o.Resource)
	dst = append(dst, `,"object":`...)
	if splice {
		dst = o.managers.AppendJSON(append(append(dst, raw[:at]...), `"managedFields":`...))
		if raw[skipSpace(raw, at)] != '}' {
			dst = append(dst, ',')
		}
		raw = raw[at:]
	}
	return append(append(dst, raw...), "}\n"...), nil
}

// metadataAt is the index in raw (an object's JSON) just after the opening brace of its
// metadata; false if a member before it has an object or list for value (not scanned),
// or there is none.
func metadataAt(raw []byte) (int, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return 0, false
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '"'; i = skipSpace(raw, i+1) {
		end, ok := stringEnd(raw, i)
		if !ok {
			return 0, false
		}
		key := raw[i+1 : end-1]
		if i = skipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return 0, false
		}
		if i = skipSpace(raw, i+1); i >= len(raw) {
			return 0, false
		}
		if string(key) == "metadata" {
			return i + 1, raw[i] == '{'
		}
		switch raw[i] {
		case '"':
			if i, ok = stringEnd(raw, i); !ok {
				return 0, false
			}
		case '{', '[':
			return 0, false
		default: // a number, true, false or null
			for i < len(raw) && raw[i] != ',' && raw[i] != '}' {
				i++
			}
		}
		if i = skipSpace(raw, i); i >= len(raw) || raw[i] != ',' {
			return 0, false
		}
	}
	return 0, false
}

// stringEnd is the index after the JSON string starting at raw[i].
func stringEnd(raw []byte, i int) (int, bool) {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// withManagedFields is obj with entries as its managedFields, a shallow copy of it (obj
// is shared with the informer's cache and the sinks); obj itself without entries.
func withManagedFields(obj runtime.Object, entries []metav1.ManagedFieldsEntry) runtime.Object {
	if len(entries) == 0 {
		return obj
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		list := make([]any, len(entries))
		for i, e := range entries {
			m := map[string]any{"manager": e.Manager, "operation": string(e.Operation), "apiVersion": e.APIVersion}
			if e.Subresource != "" {
				m["subresource"] = e.Subresource
			}
			if e.Time != nil {
				m["time"] = e.Time.UTC().Format(time.RFC3339)
			}
			list[i] = m
		}
		metadata, _ := u.Object["metadata"].(map[string]any)
		metadata = maps.Clone(metadata)
		if metadata == nil {
			metadata = map[string]any{}
		}
		metadata["managedFields"] = list
		object := maps.Clone(u.Object)
		object["metadata"] = metadata
		return &unstructured.Unstructured{Object: object}
	}
	// A typed object (or PartialObjectMetadata): a copy of its struct, whose ObjectMeta
	// (a value in it) is the copy's own; what it points to stays shared, unchanged.
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return obj
	}
	copied := reflect.New(v.Elem().Type())
	copied.Elem().Set(v.Elem())
	out, ok := copied.Interface().(runtime.Object)
	if !ok {
		return obj
	}
	m, err := meta.Accessor(out)
	if err != nil {
		return obj
	}
	m.SetManagedFields(entries)
	return out
}

// StubAnnotation marks an object that a checkpoint keeps by its metadata only
// (AppendStubLine); its value says why.
const StubAnnotation = "kubeevents.io/checkpoint"

// AppendStubLine appends, in place of the object's line, the line of its metadata only:
// its apiVersion, kind, name, namespace, UID, resourceVersion, generation, times,
// labels and owners, and StubAnnotation with why; not its annotations, managedFields,
// spec, data or status. It is what a store keeps of an object too big for it: a resumed
// run compares its resourceVersion as any other's (unchanged, nothing is emitted;
// changed, it is emitted once), but its first change is told against the metadata only.
func (o *SnapshotObject) AppendStubLine(dst []byte, why string) ([]byte, error) {
	var tm metav1.TypeMeta
	var m metav1.ObjectMeta
	if o.obj != nil {
		acc, err := meta.Accessor(o.obj)
		if err != nil {
			return dst, fmt.Errorf("encoding an object: %w", err)
		}
		gvk := o.obj.GetObjectKind().GroupVersionKind()
		tm.APIVersion, tm.Kind = gvk.GroupVersion().String(), gvk.Kind
		if gvk.Empty() {
			tm.APIVersion = ""
		}
		m = metav1.ObjectMeta{Name: acc.GetName(), Namespace: acc.GetNamespace(), UID: acc.GetUID(),
			ResourceVersion: acc.GetResourceVersion(), Generation: acc.GetGeneration(),
			CreationTimestamp: acc.GetCreationTimestamp(), DeletionTimestamp: acc.GetDeletionTimestamp(),
			Labels: acc.GetLabels(), OwnerReferences: acc.GetOwnerReferences()}
	} else {
		var whole struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(o.raw, &whole); err != nil {
			return dst, fmt.Errorf("reading an object: %w", err)
		}
		tm, m = whole.TypeMeta, whole.Metadata
		m.Annotations, m.ManagedFields = nil, nil
	}
	m.Annotations = map[string]string{StubAnnotation: why}
	raw, err := json.Marshal(metav1.PartialObjectMetadata{TypeMeta: tm, ObjectMeta: m})
	if err != nil {
		return dst, err
	}
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(line{Resource: o.Resource, Object: raw}); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// EndLine is a section's last line (with its newline): the count of its objects,
// without which the section reads as truncated.
func EndLine(objects int) []byte {
	raw, _ := json.Marshal(line{End: &struct {
		Objects int `json:"objects"`
	}{objects}})
	return append(raw, '\n')
}

// FileStore keeps the checkpoint in a file: JSON Lines, replaced atomically (a temporary
// file in the same directory, fsynced, renamed over the old one, the directory
// fsynced), mode 0600.
type FileStore struct {
	Path string
}

// Name is the file's path.
func (s FileStore) Name() string { return s.Path }

// Load reads the file; one that does not exist is no checkpoint.
func (s FileStore) Load(context.Context) (*File, error) { return Load(s.Path) }

// Save replaces the file atomically: a temporary file in the same directory, fsynced,
// renamed over it, and the directory fsynced so that the rename survives a crash.
func (s FileStore) Save(_ context.Context, snap *Snapshot) (err error) {
	dir, base := filepath.Split(s.Path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err // the temporary file's name would only confuse
		}
		return fmt.Errorf("creating a file in %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	out := bufio.NewWriterSize(tmp, 256<<10)
	if err := WriteSnapshot(out, snap); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteSnapshot writes snap in the file's format, which Read reads back.
func WriteSnapshot(w io.Writer, snap *Snapshot) error {
	var buf []byte
	for _, sec := range snap.Sections {
		buf = append(append(buf[:0], sec.Header...), '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
		for i := range sec.Objects {
			var err error
			if buf, err = sec.Objects[i].AppendLine(buf[:0]); err != nil {
				return err
			}
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		if _, err := w.Write(EndLine(len(sec.Objects))); err != nil {
			return err
		}
	}
	return nil
}
