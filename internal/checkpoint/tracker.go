package checkpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// Tracker follows events from the informers to the sinks and keeps, per object, the
// newest state every sink has been delivered (see the package comment).
type Tracker struct {
	sinks int // every numbered event goes to every sink

	mu      sync.Mutex
	objects map[objectKey]*entry
	changed bool // since the last snapshot
}

// objectKey is the informer cache's key (namespace/name) within one resource: the same
// object, whatever its UID, as the informer's first list compares them.
type objectKey struct {
	resource string
	name     string
}

type entry struct {
	seq uint64 // of the event that settled it; 0 for what the checkpoint held at start
	obj runtime.Object
	// managers are what obj's managedFields said (their managers and times, not their
	// fields), written with it: a resumed run tells from them who wrote since.
	managers managedfields.Managers
}

// NewTracker tracks delivery to sinks sinks.
func NewTracker(sinks int) *Tracker {
	return &Tracker{sinks: sinks, objects: map[objectKey]*entry{}}
}

// Seed records objects as delivered: what the checkpoint held at start, as it was put into
// the informer of resource, with their managers (managers[i] are objects[i]'s; nil or
// empty when not known).
func (t *Tracker) Seed(resource string, objects []runtime.Object, managers []managedfields.Managers) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, obj := range objects {
		if name, ok := keyOf(obj); ok {
			e := &entry{obj: obj}
			if i < len(managers) {
				e.managers = managers[i]
			}
			t.objects[objectKey{resource, name}] = e
		}
	}
}

// Adopt points the objects seeded from the checkpoint that did not change at the
// informer's cached ones (its first list replaced the seeded objects with equal ones):
// otherwise the tracker would keep a second copy of every unchanged object.
func (t *Tracker) Adopt(resource string, cached func(key string) (runtime.Object, bool)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, e := range t.objects {
		if k.resource != resource || e.seq != 0 {
			continue
		}
		obj, ok := cached(k.name)
		if !ok || resourceVersion(obj) != resourceVersion(e.obj) {
			continue
		}
		e.obj = obj
	}
}

func resourceVersion(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// Made is the informers' Made hook: it follows ev until every sink has written it.
// Events about other objects (core Events of --with-events) are not tracked.
func (t *Tracker) Made(ev *event.Event) {
	if ev.Related || ev.Type == event.Sync {
		return
	}
	if t.sinks == 0 {
		t.settle(ev)
		return
	}
	var left atomic.Int32
	left.Store(int32(t.sinks))
	ev.Written = func() {
		if left.Add(-1) == 0 {
			t.settle(ev)
		}
	}
}

func (t *Tracker) settle(ev *event.Event) {
	name, ok := keyOf(ev.Object)
	if !ok {
		return
	}
	k := objectKey{ResourceName(ev.Resource), name}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.objects[k]; e != nil && e.seq > ev.Seq {
		return // a newer state of the object has settled already
	}
	if ev.Type == event.Deleted {
		delete(t.objects, k)
	} else {
		t.objects[k] = &entry{seq: ev.Seq, obj: ev.Object, managers: ev.ManagedFields.Managers()}
	}
	t.changed = true
}

// ResourceName is how the file names a resource: RESOURCE.VERSION[.GROUP], as kubectl
// names a resource fully ("deployments.v1.apps", "pods.v1").
func ResourceName(gvr schema.GroupVersionResource) string {
	name := gvr.Resource + "." + gvr.Version
	if gvr.Group != "" {
		name += "." + gvr.Group
	}
	return name
}

func keyOf(obj runtime.Object) (string, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return cache.MetaObjectToName(m).String(), true
}

// snapshot is the tracked objects at one moment, with whether they changed since the
// previous snapshot.
func (t *Tracker) snapshot() (objects []snapshotEntry, changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	objects = make([]snapshotEntry, 0, len(t.objects))
	for k, e := range t.objects {
		objects = append(objects, snapshotEntry{resource: k.resource, name: k.name, obj: e.obj, managers: e.managers})
	}
	changed, t.changed = t.changed, false
	return objects, changed
}

func (t *Tracker) markChanged() {
	t.mu.Lock()
	t.changed = true
	t.mu.Unlock()
}

type snapshotEntry struct {
	resource string
	name     string // the informer cache's key, namespace/name
	obj      runtime.Object
	managers managedfields.Managers
}

// Len is the number of objects tracked.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.objects)
}

// Writer writes the checkpoint: one section per cluster, to its Store.
type Writer struct {
	// Store is where the checkpoint is kept; nil: the file at Path (FileStore).
	Store Store
	Path  string
	// Sections are the sections every write holds, in this order.
	Sections []*Section
	// Warn says a periodic write that failed (once, until one succeeds again).
	Warn func(format string, args ...any)

	took   time.Duration // the last write's duration
	failed bool
}

// Section is one cluster's part of the file: its tracker's objects, or, for a cluster
// not watched this time (not asked for, or left out at start), what the file held for
// it, written back as it was read.
type Section struct {
	Context string // "" for the one cluster of a run of one: then the file is version 1
	Watch   Watch
	Tracker *Tracker
	// RedactionKey goes into the header (see header); set before Run.
	RedactionKey []byte
	// Episodes, when not nil, gives the header's episodes at each write (nil: none), and
	// whether they changed since it was last asked: a change is written as objects'
	// are. Set before Run.
	Episodes func() (json.RawMessage, bool)
	// Kept, when not nil, is written instead of Tracker's objects, with its own header.
	Kept *Saved
}

// MinInterval is the least time between two periodic writes.
const MinInterval = time.Second

// Run writes the checkpoint at most every MinInterval while objects settle, and at
// least ten times the last write's duration apart, until stop is closed; a write in
// progress then is given up (the store's checkpoint stays whole). It does not write at
// the end: the caller does, once the sinks are drained (WriteWithin).
func (w *Writer) Run(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	for {
		timer := time.NewTimer(max(MinInterval, 10*w.took))
		select {
		case <-stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		objects, changed := w.snapshot()
		if !changed {
			continue
		}
		if err := w.write(ctx, objects); err != nil {
			w.markChanged() // try again next time
			if ctx.Err() != nil {
				return // stopped: the caller writes the last one
			}
			if !w.failed && w.Warn != nil {
				w.Warn("%v; trying again", err)
			}
			w.failed = true
			continue
		}
		w.failed = false
	}
}

// Write writes the checkpoint now.
func (w *Writer) Write() error {
	return w.WriteContext(context.Background())
}

// WriteContext writes the checkpoint now, giving up once ctx ends (the store's
// checkpoint then stays as it was).
func (w *Writer) WriteContext(ctx context.Context) error {
	objects, _ := w.snapshot()
	return w.write(ctx, objects)
}

// snapshot is every tracked section's objects and episodes (nil for a kept one), and
// whether any changed since the last snapshot.
func (w *Writer) snapshot() (objects []sectionSnapshot, changed bool) {
	objects = make([]sectionSnapshot, len(w.Sections))
	for i, sec := range w.Sections {
		if sec.Kept != nil {
			continue
		}
		var c bool
		objects[i].objects, c = sec.Tracker.snapshot()
		changed = changed || c
		if sec.Episodes != nil {
			objects[i].episodes, c = sec.Episodes()
			changed = changed || c
		}
	}
	return objects, changed
}

// sectionSnapshot is one tracked section at one moment.
type sectionSnapshot struct {
	objects  []snapshotEntry
	episodes json.RawMessage
}

func (w *Writer) markChanged() {
	for _, sec := range w.Sections {
		if sec.Kept == nil {
			sec.Tracker.markChanged()
		}
	}
}

func (w *Writer) store() Store {
	if w.Store != nil {
		return w.Store
	}
	return FileStore{Path: w.Path}
}

// WriteError says the checkpoint could not be written.
type WriteError struct {
	Path string // the store's Name: the file's path
	Err  error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("--resume %s: the checkpoint cannot be written: %v", e.Path, e.Err)
}
func (e *WriteError) Unwrap() error { return e.Err }

// write hands the sections to the store, which replaces the checkpoint atomically.
func (w *Writer) write(ctx context.Context, objects []sectionSnapshot) (err error) {
	start := time.Now()
	store := w.store()
	defer func() {
		w.took = time.Since(start)
		if err != nil {
			err = &WriteError{Path: store.Name(), Err: err}
		}
	}()
	version := Version
	if len(w.Sections) == 1 && w.Sections[0].Context == "" {
		version = VersionOneWatch // what a run of one cluster always wrote
	}
	now := time.Now().UTC()
	snap := &Snapshot{Sections: make([]SnapshotSection, len(w.Sections))}
	for i, sec := range w.Sections {
		var h header
		var objs []SnapshotObject
		if s := sec.Kept; s != nil {
			h = header{Format: Format, Version: version, Context: s.Context, Written: s.Written, Watch: s.Watch, RedactionKey: s.RedactionKey,
				Episodes: s.Episodes}
			objs = make([]SnapshotObject, 0, s.Count())
			for _, resource := range slices.Sorted(maps.Keys(s.Objects)) {
				for _, raw := range s.Objects[resource] {
					objs = append(objs, SnapshotObject{Resource: resource, raw: raw})
				}
			}
		} else {
			h = header{Format: Format, Version: version, Context: sec.Context, Written: now, Watch: sec.Watch, RedactionKey: sec.RedactionKey,
				Episodes: objects[i].episodes}
			objs = make([]SnapshotObject, len(objects[i].objects))
			for j, o := range objects[i].objects {
				objs[j] = SnapshotObject{Resource: o.resource, Key: o.name, obj: o.obj, managers: o.managers}
			}
		}
		raw, err := json.Marshal(h)
		if err != nil {
			return err
		}
		snap.Sections[i] = SnapshotSection{Context: h.Context, Header: raw, Objects: objs}
	}
	return store.Save(ctx, snap)
}
