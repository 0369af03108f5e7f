// Package resume is --resume, a part of a run: it reads the checkpoint (package
// checkpoint) before anything is printed, puts what it holds into the informers' caches
// so that their first lists emit only what changed while kubeevents was down, follows
// every event to its delivery by every sink (the pipeline's checkpoint step), and writes
// the checkpoint at most once a second and at the end. Each cluster of a run has its own
// section of the checkpoint.
package resume

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/clusterstore"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// Cluster is one cluster as the checkpoint knows it: its name ("" for the one cluster
// of a plain watch) and the watch its section belongs to.
type Cluster struct {
	Name  string
	Watch checkpoint.Watch
}

// Resume is the run's checkpoint: what it held at start, and each watched cluster's
// section following that cluster's events.
type Resume struct {
	store    checkpoint.Store
	warn     func(format string, args ...any)
	sinks    int
	sections map[string]*section // by cluster name
	kept     []*checkpoint.Saved // sections of clusters not asked for: written back as read
	order    []string            // the clusters, in the run's order
	writer   *checkpoint.Writer
	// episodes gives each cluster's episodes to write (KeepEpisodes; nil: none).
	episodes func(cluster string) (json.RawMessage, bool)
	// stopWrites ends the periodic writes; writesDone is closed once they have ended.
	stopWrites, writesDone chan struct{}
}

// section is one cluster's part: what the checkpoint held for it at start (nil: none
// yet), and its section as it is written.
type section struct {
	saved  *checkpoint.Saved
	out    *checkpoint.Section
	left   bool // the cluster was left out at start: its section is kept as read
	gone   func() bool
	warn   func(format string, args ...any)
	seeded map[seededKey]map[string]string // per informer: the seeded objects' versions, by key
	// watched are the informers seeded, for what the first lists found changed; objects
	// what they were seeded with, for the tracker made at Start.
	watched []Informer
	objects []seededObjects
}

type seededKey struct {
	gvr       schema.GroupVersionResource
	namespace string
}

// Informer is one informer of a watched type, as the checkpoint seeds and reads it.
type Informer interface {
	GVR() schema.GroupVersionResource
	Namespace() string
	Describe() string
	Seed(objects [][]byte) ([]runtime.Object, []managedfields.Managers, error)
	RedactionKey() []byte
	Store() cache.Store
}

// Options say where the checkpoint is and what it is of.
type Options struct {
	Store checkpoint.Store
	// Reset starts afresh, replacing whatever the checkpoint holds (--resume-reset).
	Reset    bool
	Clusters []Cluster
	// Sinks is how many sinks every event goes to: an object's state is delivered once
	// every one has written it.
	Sinks int
	Warn  func(format string, args ...any)
}

// Open reads the checkpoint of store (unless reset) and checks that each cluster's
// section belongs to this watch. One that does not (or is not a whole one) is refused,
// never overwritten: it may be another watch's, whose next start would then replay
// everything. With several clusters each has its own section; one new to the file
// starts afresh, said in one line.
func Open(ctx context.Context, o Options) (*Resume, error) {
	store, warn := o.Store, o.Warn
	var file *checkpoint.File
	var err error
	if !o.Reset {
		if file, err = store.Load(ctx); err != nil {
			var corrupt *checkpoint.CorruptError
			var notOurs *clusterstore.NotOursError
			_, inCluster := store.(*clusterstore.Store)
			if errors.As(err, &corrupt) || inCluster && !errors.As(err, &notOurs) {
				return nil, err // corrupt (exit 2), or the API server's answer (exit 1)
			}
			return nil, diag.Usage(err) // a directory, a file that cannot be read
		}
	}
	r := &Resume{store: store, warn: warn, sinks: o.Sinks, sections: map[string]*section{}}
	var used []*checkpoint.Saved
	for _, c := range o.Clusters {
		saved, err := file.For(c.Name, c.Watch)
		if err != nil {
			return nil, err
		}
		if slices.Contains(used, saved) {
			saved = nil // a run of one cluster's section, taken by another context of it
		}
		if saved == nil && file != nil {
			warn("cluster %s: --resume %s has no checkpoint of this cluster yet; starting afresh for it", c.Name, store.Name())
		}
		if saved != nil {
			used = append(used, saved)
		}
		// A section keeps its context; one of a run of one cluster takes the name of the
		// cluster that resumes from it.
		context, key := c.Name, []byte(nil)
		if saved != nil {
			context, key = cmp.Or(saved.Context, c.Name), saved.RedactionKey
		}
		r.sections[c.Name] = &section{saved: saved, seeded: map[seededKey]map[string]string{},
			out: &checkpoint.Section{Context: context, Watch: c.Watch, RedactionKey: key}}
		r.order = append(r.order, c.Name)
	}
	r.kept = file.Others(used)
	return r, nil
}

// RedactionKey is the key of cluster's redacted Secret values that the checkpoint holds
// (nil: none yet: the informers draw one, and Seed keeps it).
func (r *Resume) RedactionKey(cluster string) []byte { return r.sections[cluster].out.RedactionKey }

// Written is when the checkpoint of cluster was written (zero: none was).
func (r *Resume) Written(cluster string) time.Time {
	if s := r.sections[cluster]; s.saved != nil {
		return s.saved.Written
	}
	return time.Time{}
}

// Episodes is what the checkpoint held of cluster's episodes (package episode; nil:
// none).
func (r *Resume) Episodes(cluster string) json.RawMessage {
	if s := r.sections[cluster]; s != nil && s.saved != nil {
		return s.saved.Episodes
	}
	return nil
}

// KeepEpisodes has every write of the checkpoint keep each cluster's episodes as save
// gives them (with whether they changed since it was last asked): call it before Start.
func (r *Resume) KeepEpisodes(save func(cluster string) (json.RawMessage, bool)) {
	r.episodes = save
}

// Seed puts the objects the checkpoint holds for inf's resource into its cache before it
// starts, so that its first list emits only what changed since (informer.Seed); warn is
// the cluster's and gone says whether it was left out since.
func (r *Resume) Seed(cluster string, inf Informer, warn func(string, ...any), gone func() bool) error {
	s := r.sections[cluster]
	s.warn, s.gone = warn, gone
	if key := inf.RedactionKey(); key != nil {
		s.out.RedactionKey = key
	}
	if s.saved == nil {
		return nil
	}
	name := checkpoint.ResourceName(inf.GVR())
	objects, managers, err := inf.Seed(s.saved.Objects[name])
	if err != nil {
		what := fmt.Sprintf("an object of %s cannot be read: %v", inf.Describe(), err)
		if cluster != "" {
			what = fmt.Sprintf("cluster %s: %s", cluster, what)
		}
		return &checkpoint.CorruptError{Path: s.saved.Path, What: what}
	}
	versions := make(map[string]string, len(objects))
	for _, obj := range objects {
		if m, err := meta.Accessor(obj); err == nil {
			versions[cache.MetaObjectToName(m).String()] = m.GetResourceVersion()
		}
	}
	s.seeded[seededKey{inf.GVR(), inf.Namespace()}] = versions
	s.watched = append(s.watched, inf)
	s.objects = append(s.objects, seededObjects{name, objects, managers})
	return nil
}

// seededObjects are the objects of one resource the checkpoint put into an informer.
type seededObjects struct {
	resource string
	objects  []runtime.Object
	managers []managedfields.Managers
}

// Leave says that cluster was left out at start (its rights were missing): its section
// is written back as it was read.
func (r *Resume) Leave(cluster string) { r.sections[cluster].left = true }

// Start makes each cluster's tracker, writes the checkpoint once before anything is
// printed (a file that cannot be written is found now, and a resumed checkpoint is a
// whole one from the start), then every second while the run goes on.
func (r *Resume) Start(context.Context) error {
	var sections []*checkpoint.Section
	for _, name := range r.order {
		s := r.sections[name]
		s.out.Tracker = checkpoint.NewTracker(r.sinks)
		if r.episodes != nil {
			s.out.Episodes = func() (json.RawMessage, bool) { return r.episodes(name) }
		}
		for _, seeded := range s.objects {
			s.out.Tracker.Seed(seeded.resource, seeded.objects, seeded.managers)
		}
		s.objects = nil
		switch {
		case !s.left:
			sections = append(sections, s.out)
		case s.saved != nil:
			sections = append(sections, &checkpoint.Section{Context: s.out.Context, Kept: s.saved})
		}
	}
	for _, kept := range r.kept {
		sections = append(sections, &checkpoint.Section{Context: kept.Context, Kept: kept})
	}
	r.writer = &checkpoint.Writer{Store: r.store, Path: r.store.Name(), Warn: r.warn, Sections: sections}
	if err := r.writer.Write(); err != nil {
		return err
	}
	r.stopWrites, r.writesDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.writesDone)
		r.writer.Run(r.stopWrites)
	}()
	return nil
}

// Process is the pipeline's checkpoint step: it follows each event of a watched type to
// its delivery by every sink (checkpoint.Tracker.Made).
func (r *Resume) Process(ev *event.Event) {
	if s := r.sections[ev.Cluster]; s != nil && s.out.Tracker != nil {
		s.out.Tracker.Made(ev)
	}
}

// Synced tells, per resource of each cluster resumed, what the first list found changed
// since the checkpoint, as a re-list after an outage does ("re-synced ..."), and lets
// the tracker share the cache's unchanged objects.
func (r *Resume) Synced() {
	for _, name := range r.order {
		s := r.sections[name]
		if s.saved == nil || s.left || s.gone != nil && s.gone() {
			continue
		}
		for _, inf := range s.watched {
			store := inf.Store()
			s.out.Tracker.Adopt(checkpoint.ResourceName(inf.GVR()), func(key string) (runtime.Object, bool) {
				obj, ok, _ := store.GetByKey(key)
				ro, isObject := obj.(runtime.Object)
				return ro, ok && isObject
			})
			seeded := s.seeded[seededKey{inf.GVR(), inf.Namespace()}]
			var changed, created int
			keys := store.ListKeys()
			for _, key := range keys {
				rv, ok := seeded[key]
				switch {
				case !ok:
					created++
				case rv != storedVersion(store, key):
					changed++
				}
			}
			deleted := len(seeded) - (len(keys) - created)
			s.warn("resumed %s from %s (written %s): %s now, %d changed, %d created, %d deleted since",
				inf.Describe(), s.saved.Path, s.saved.Written.Local().Format(time.RFC3339), diag.Count(len(keys)), changed, created, deleted)
		}
		s.seeded, s.watched = nil, nil
	}
}

// Stop ends the periodic writes (giving up one in progress) and writes the checkpoint a
// last time, within FinalWriteTimeout: its error is the run's (a checkpoint that could
// not be written).
func (r *Resume) Stop() error {
	if r.writer == nil {
		return nil
	}
	close(r.stopWrites)
	<-r.writesDone
	ctx, cancel := context.WithTimeout(context.Background(), FinalWriteTimeout)
	defer cancel()
	return r.writer.WriteContext(ctx)
}

// FinalWriteTimeout bounds the checkpoint's last write, once the sinks are drained: the
// whole stop (--grace for the sinks, this, and the lease's release, within its renew
// deadline) fits in the chart's termination grace period of 30 s, whatever the state of
// the checkpoint. A write not done by then leaves the checkpoint before it, whole.
const FinalWriteTimeout = 10 * time.Second

func storedVersion(store cache.Store, key string) string {
	obj, ok, _ := store.GetByKey(key)
	if !ok {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// NewStore is where --resume keeps the checkpoint: the file ref names, or, for
// secret:[NAMESPACE/]NAME or configmap:..., objects in the cluster client reaches (in
// namespace unless ref names one), written by writer and fenced by fence (--leader-elect's
// lease; nil: none).
func NewStore(ref string, client kubernetes.Interface, namespace, writer string, fence func() error, warn func(string, ...any)) (checkpoint.Store, error) {
	parsed, inCluster, err := clusterstore.ParseRef(ref)
	if err != nil {
		return nil, diag.Usage(err)
	}
	if !inCluster {
		return checkpoint.FileStore{Path: ref}, nil
	}
	if parsed.Namespace == "" {
		parsed.Namespace = namespace
	}
	return clusterstore.New(clusterstore.Options{Client: client, Ref: parsed, Warn: warn, Writer: writer, Fence: fence}), nil
}
