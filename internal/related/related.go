// Package related follows the core Events about the objects a run watches
// (--with-events): one informer of core Events per namespace watched, whose Events are
// kept when what they are about is in a watched type's cache (or in --owned's tree), and
// interleaved with the changes. Those that happened before the start (--since, or while
// kubeevents was down, --resume) are listed too, once the watched types have their own
// first lists, marked past with the time they last happened, and kept from then on.
package related

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Resource is core Events, watched besides the user's types.
var Resource = resource.Resource{
	GVR:        schema.GroupVersionResource{Version: "v1", Resource: "events"},
	GVK:        schema.GroupVersionKind{Version: "v1", Kind: "Event"},
	Namespaced: true,
}

// Watched is one informer of a watched type, as an Event's object is looked up in it.
type Watched interface {
	Kind() schema.GroupKind
	Store() cache.Store
	WaitForSync(ctx context.Context) bool
}

// Cluster is what the stage knows of one cluster's watch.
type Cluster struct {
	Name string
	// Watched are the informers of the watched types (and --owned's children).
	Watched []Watched
	// Since is from when past Events are kept (zero: none is listed, only those from the
	// start on).
	Since time.Time
}

// Stage keeps the core Events about the objects watched (pipeline.Stage): those of
// --owned's tree (Follow, when set), else those whose object is in a watched type's
// cache. Other events pass untouched.
type Stage struct {
	clusters map[string]*clusterState
	follow   Follow
	stopping <-chan struct{}
}

// Follow is --owned's tree, as the stage asks it: whether an Event is about an object
// of the tree, and its owner chain.
type Follow interface {
	AcceptEvent(obj any) bool
	Annotate(ev *event.Event)
}

type clusterState struct {
	Cluster
	listed <-chan struct{} // closed once the watched types have their first lists
}

// NewStage makes the stage for clusters; follow is --owned's tree (nil without), and
// stopping is closed when the run stops (a past Event then waits no more).
func NewStage(clusters []Cluster, follow Follow, stopping <-chan struct{}) *Stage {
	s := &Stage{clusters: map[string]*clusterState{}, follow: follow, stopping: stopping}
	for _, c := range clusters {
		st := &clusterState{Cluster: c}
		if !c.Since.IsZero() {
			st.listed = listed(c.Watched, stopping)
		}
		s.clusters[c.Name] = st
	}
	return s
}

// Process keeps ev if it is a core Event about a watched object, and marks a past one.
func (s *Stage) Process(ev *event.Event) {
	if !ev.Related {
		return
	}
	c := s.clusters[ev.Cluster]
	if c == nil {
		ev.LeftOut = event.LeftOutUnfollowed
		return
	}
	if ev.InInitialList {
		// A past Event: what it is about must be known first.
		select {
		case <-c.listed:
		case <-s.stopping:
			ev.LeftOut = event.LeftOutOver
			return
		}
	}
	if !s.about(c, ev.Object) {
		ev.LeftOut = event.LeftOutUnfollowed
		return
	}
	if s.follow != nil {
		s.follow.Annotate(ev)
	}
	if ev.InInitialList {
		ev.Past = true
		if core, ok := ev.Object.(*corev1.Event); ok {
			ev.Time = lastHappened(core)
		}
		if ev.Time.Before(c.Since) {
			ev.LeftOut = event.LeftOutPast
		}
	}
}

// about reports whether a core Event is about an object of --owned's tree, or in one of
// the watched types' caches.
func (s *Stage) about(c *clusterState, obj any) bool {
	if s.follow != nil {
		return s.follow.AcceptEvent(obj)
	}
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return false
	}
	ref := ev.InvolvedObject
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false
	}
	key := cache.NewObjectName(ref.Namespace, ref.Name).String()
	for _, w := range c.Watched {
		if w.Kind() != (schema.GroupKind{Group: gv.Group, Kind: ref.Kind}) {
			continue
		}
		if _, exists, _ := w.Store().GetByKey(key); exists {
			return true
		}
	}
	return false
}

// listed is closed once every watched informer has its initial list (or stop is
// closed).
func listed(watched []Watched, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		for _, w := range watched {
			if !w.WaitForSync(ctx) {
				return
			}
		}
	}()
	return done
}

// lastHappened is when a core Event last happened, as kubectl get events reads it: its
// series' last observation, else its lastTimestamp, eventTime, firstTimestamp, and at
// least its creation.
func lastHappened(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}

// Since is from when the past core Events of a run are shown: those since the
// checkpoint it resumes from was written (to the second: at least once), else those of
// the last since before now (--since); zero: none.
func Since(checkpointWritten time.Time, since time.Duration) time.Time {
	if !checkpointWritten.IsZero() {
		return checkpointWritten.Truncate(time.Second)
	}
	if since > 0 {
		return time.Now().Add(-since)
	}
	return time.Time{}
}
