package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/clusterstore"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/leader"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// resume reads the --resume checkpoint, if there is one, and checks that each cluster's
// section belongs to this watch (plan.Cluster.Checkpoint). A checkpoint that does not
// (or is not a whole one) is refused, never overwritten: it may be another watch's,
// whose next start would then replay everything. With several clusters each has its own
// section; one new to the file starts afresh, said in one line.
func (w *session) resume(ctx context.Context) (*Resume, error) {
	if w.cfg.Resume == "" {
		return nil, nil
	}
	store, err := w.resumeStore()
	if err != nil {
		return nil, err
	}
	var file *checkpoint.File
	if !w.cfg.ResumeReset {
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
	resume := &Resume{Path: store.Name(), Store: store, Clusters: map[string]ClusterResume{}}
	var used []*checkpoint.Saved
	for _, c := range w.plan.Clusters {
		saved, err := file.For(c.Name, c.Checkpoint)
		if err != nil {
			return nil, err
		}
		if slices.Contains(used, saved) {
			saved = nil // a run of one cluster's section, taken by another context of it
		}
		if saved == nil && file != nil {
			w.warnf("cluster %s: --resume %s has no checkpoint of this cluster yet; starting afresh for it", c.Name, store.Name())
		}
		if saved != nil {
			used = append(used, saved)
		}
		resume.Clusters[c.Name] = ClusterResume{Watch: c.Checkpoint, Saved: saved}
	}
	resume.Kept = file.Others(used)
	return resume, nil
}

// resumeStore is where --resume keeps the checkpoint: the file, or with secret:NAME or
// configmap:NAME objects in the cluster (the first cluster's, with several), in the
// pod's namespace unless NAMESPACE/ is given, fenced by --leader-elect's lease.
func (w *session) resumeStore() (checkpoint.Store, error) {
	ref, inCluster, err := clusterstore.ParseRef(w.cfg.Resume)
	if err != nil {
		return nil, diag.Usage(err)
	}
	if !inCluster {
		return checkpoint.FileStore{Path: w.cfg.Resume}, nil
	}
	if ref.Namespace == "" {
		ref.Namespace = leader.DefaultNamespace(w.sys.Kubeconfig.Default.ToRawKubeConfigLoader().RawConfig)
	}
	cfg := afterStopConfig(w.plan.Clusters[0].Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf" // the shards travel as bytes, not base64
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	opts := clusterstore.Options{Client: client, Ref: ref, Warn: w.warnf, Writer: leader.Identity()}
	if w.elector != nil {
		opts.Fence, opts.Writer = w.elector.Fence, w.elector.Identity()
	}
	return clusterstore.New(opts), nil
}

// checkpointRun is the run's checkpoint (--resume): every watched cluster's section,
// each following the events of its cluster to their delivery (its tracker), written at
// most once a second and at the end.
type checkpointRun struct {
	resume *Resume
	warn   func(format string, args ...any)
	sinks  int
	writer *checkpoint.Writer // its Sections are set once the clusters are known
	// stopWrites ends the periodic writes; writesDone is closed once they have ended.
	stopWrites, writesDone chan struct{}
	err                    error // the last write's, at shutdown
	// trackers are the clusters' trackers, by cluster name: the pipeline's checkpoint
	// step hands each its cluster's events.
	trackers map[string]*checkpoint.Tracker
	// seeded is, per informer, the resourceVersion of every object the checkpoint put
	// into its cache by key: what the first list is compared with, to say what changed.
	// Dropped once said.
	seeded map[*informer.Informer]map[string]string
}

func newCheckpointRun(cfg runConfig) *checkpointRun {
	return &checkpointRun{resume: cfg.Resume, warn: cfg.Warn, sinks: len(cfg.Listeners),
		writer:   &checkpoint.Writer{Store: cfg.Resume.Store, Path: cfg.Resume.Path, Warn: cfg.Warn},
		trackers: map[string]*checkpoint.Tracker{}, seeded: map[*informer.Informer]map[string]string{}}
}

// section makes c's section of the checkpoint: a section keeps its context; one of a run
// of one cluster takes the name of the cluster that resumes from it.
func (k *checkpointRun) section(c *clusterRun) {
	c.resume = k.resume.Clusters[c.Name]
	section := c.Name
	var key []byte
	if c.resume.Saved != nil {
		section = cmp.Or(c.resume.Saved.Context, c.Name)
		key = c.resume.Saved.RedactionKey
	}
	c.checkpoint = &checkpoint.Section{Context: section, Watch: c.resume.Watch, Tracker: checkpoint.NewTracker(k.sinks),
		RedactionKey: key}
	k.trackers[c.Name] = c.checkpoint.Tracker
}

// Process is the pipeline's checkpoint step: it follows each event of a watched type to
// its delivery by every sink (checkpoint.Tracker.Made).
func (k *checkpointRun) Process(ev *event.Event) {
	if t := k.trackers[ev.Cluster]; t != nil {
		t.Made(ev)
	}
}

// seed puts the objects the checkpoint holds for inf's resource into its cache, so that
// its first list emits only what changed since (informer.Seed), and tells the tracker
// they were delivered.
func (k *checkpointRun) seed(c *clusterRun, inf *informer.Informer) error {
	if key := inf.RedactionKey(); key != nil {
		c.checkpoint.RedactionKey = key
	}
	saved := c.resume.Saved
	if saved == nil {
		return nil
	}
	name := checkpoint.ResourceName(inf.Resource.GVR)
	objects, err := inf.Seed(saved.Objects[name])
	if err != nil {
		what := fmt.Sprintf("an object of %s cannot be read: %v", inf.Resource, err)
		if c.Name != "" {
			what = fmt.Sprintf("cluster %s: %s", c.Name, what)
		}
		return &checkpoint.CorruptError{Path: saved.Path, What: what}
	}
	c.checkpoint.Tracker.Seed(name, objects)
	versions := make(map[string]string, len(objects))
	for _, obj := range objects {
		if m, err := meta.Accessor(obj); err == nil {
			versions[cache.MetaObjectToName(m).String()] = m.GetResourceVersion()
		}
	}
	k.seeded[inf] = versions
	return nil
}

// start writes the checkpoint once before anything is printed (a file that cannot be
// written is found now, and a resumed checkpoint is a whole one from the start), then
// every second while the run goes on.
func (k *checkpointRun) start(all []*clusterRun) error {
	k.writer.Sections = k.sections(all)
	if err := k.writer.Write(); err != nil {
		return err
	}
	k.stopWrites, k.writesDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(k.writesDone)
		k.writer.Run(k.stopWrites)
	}()
	return nil
}

// stop ends the periodic writes and writes the checkpoint a last time.
func (k *checkpointRun) stop() {
	close(k.stopWrites)
	<-k.writesDone
	k.err = k.writer.Write()
}

// sections are the checkpoint file's sections: every watched cluster's tracker; for a
// cluster left out at start, its section as it was read (it was down this time, its
// checkpoint stays); and the sections of clusters not asked for, as they were.
func (k *checkpointRun) sections(all []*clusterRun) []*checkpoint.Section {
	var sections []*checkpoint.Section
	for _, c := range all {
		switch {
		case c.left == nil:
			sections = append(sections, c.checkpoint)
		case c.resume.Saved != nil:
			sections = append(sections, &checkpoint.Section{Context: c.checkpoint.Context, Kept: c.resume.Saved})
		}
	}
	for _, kept := range k.resume.Kept {
		sections = append(sections, &checkpoint.Section{Context: kept.Context, Kept: kept})
	}
	return sections
}

// synced tells, per resource of each cluster resumed, what the first list found changed
// since the checkpoint, as a re-list after an outage does ("re-synced ..."), and lets
// the tracker share the cache's unchanged objects.
func (k *checkpointRun) synced(clusters []*clusterRun) {
	for _, c := range clusters {
		saved := c.resume.Saved
		if saved == nil || c.isGone() {
			continue
		}
		for _, inf := range c.watched {
			store := inf.Store()
			c.checkpoint.Tracker.Adopt(checkpoint.ResourceName(inf.Resource.GVR), func(key string) (runtime.Object, bool) {
				obj, ok, _ := store.GetByKey(key)
				ro, isObject := obj.(runtime.Object)
				return ro, ok && isObject
			})
			seeded := k.seeded[inf]
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
			c.warn("resumed %s from %s (written %s): %s now, %d changed, %d created, %d deleted since",
				inf.Resource, saved.Path, saved.Written.Local().Format(time.RFC3339), diag.Count(len(keys)), changed, created, deleted)
		}
	}
	k.seeded = nil
}

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
