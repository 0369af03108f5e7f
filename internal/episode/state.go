package episode

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// The episodes' part of the checkpoint: per cluster, the open episodes as their sinks
// were delivered them (a record each), in the header of the cluster's section
// (checkpoint.Section.Episodes).

// record is one episode as the checkpoint keeps it.
type record struct {
	Sink        string    `json:"sink"`
	ID          string    `json:"id"`
	Key         string    `json:"key"`
	Transition  string    `json:"transition"`
	Controller  ownerRef  `json:"controller"`
	Namespace   string    `json:"namespace,omitempty"`
	Opened      time.Time `json:"opened"`
	Last        time.Time `json:"last"`
	LastSent    time.Time `json:"lastSent"`
	LastNews    time.Time `json:"lastNews"`
	Count       int       `json:"count"`
	Since       int       `json:"since,omitempty"`
	Digested    int       `json:"digested,omitempty"`
	Recovering  time.Time `json:"recovering,omitzero"`
	RecoveredBy string    `json:"recoveredBy,omitempty"`
	Members     []member  `json:"members"`
	Object      objectRef `json:"object"`
	Ref         string    `json:"ref,omitempty"`

	cluster  string
	resolved bool
	version  uint64
	ref      *event.EpisodeRef
}

type ownerRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// member is one of an episode's objects.
type member struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Troubled  bool   `json:"troubled,omitempty"`
}

// objectRef names an episode's last object: what its resolution shows of it when it
// was resumed and nothing was heard of it since.
type objectRef struct {
	APIVersion string                      `json:"apiVersion"`
	Kind       string                      `json:"kind"`
	Namespace  string                      `json:"namespace,omitempty"`
	Name       string                      `json:"name"`
	Resource   schema.GroupVersionResource `json:"resource"`
}

// Bounds of what the checkpoint keeps: an episode's objects (those in trouble first) and
// a cluster's episodes (the latest).
const (
	maxMembers  = 64
	maxEpisodes = 1000
)

// records are the changed episodes as the checkpoint is to keep them once the event that
// changed them is delivered.
func (s *Step) records(changed []*episode) []*record {
	if !s.cfg.Persist || len(changed) == 0 {
		return nil
	}
	var out []*record
	for _, e := range changed {
		if slices.ContainsFunc(out, func(r *record) bool { return r.ID == e.ep.ID }) {
			continue
		}
		s.version++
		e.version = s.version
		r := &record{Sink: s.cfg.Sinks[e.sink].Name, ID: e.ep.ID, Key: e.ep.Key, Transition: e.ep.Transition,
			Controller: ownerRef(e.ep.Controller), Namespace: e.ep.Namespace, Opened: e.ep.Opened, Last: e.ep.Last,
			LastSent: e.lastSent, LastNews: e.lastNews, Count: e.ep.Count, Since: e.ep.Since, Digested: e.digested,
			Recovering: e.recovering, RecoveredBy: e.recoveredBy,
			cluster: e.ep.Cluster, resolved: !e.ep.Resolved.IsZero(), version: e.version, ref: e.ep.Ref}
		for obj, troubled := range e.members {
			r.Members = append(r.Members, member{Kind: obj.kind, Namespace: obj.namespace, Name: obj.name, Troubled: troubled})
		}
		slices.SortFunc(r.Members, func(a, b member) int {
			if a.Troubled != b.Troubled {
				if a.Troubled {
					return -1
				}
				return 1
			}
			return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		if len(r.Members) > maxMembers {
			r.Members = r.Members[:maxMembers]
		}
		if e.last.obj != nil {
			if m, err := meta.Accessor(e.last.obj); err == nil {
				gvk := e.last.obj.GetObjectKind().GroupVersionKind()
				r.Object = objectRef{APIVersion: gvk.GroupVersion().String(), Kind: e.last.kind, Namespace: m.GetNamespace(),
					Name: m.GetName(), Resource: e.last.resource}
			}
		}
		out = append(out, r)
	}
	return out
}

// settle commits what ev's decisions changed once every sink has been delivered ev
// (event.Event.Written): the checkpoint's episodes are those delivered, as its objects
// are.
func (s *Step) settle(ev *event.Event, commit []*record) {
	if len(commit) == 0 {
		return
	}
	if s.cfg.Listeners == 0 {
		s.commit(commit)
		return
	}
	prev := ev.Written
	var left atomic.Int32
	left.Store(int32(s.cfg.Listeners))
	ev.Written = func() {
		if prev != nil {
			prev()
		}
		if left.Add(-1) == 0 {
			s.commit(commit)
		}
	}
}

// commit keeps records as the checkpoint's, each unless a later one of its episode was
// committed already.
func (s *Step) commit(records []*record) {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	for _, r := range records {
		byID := s.committed[r.cluster]
		if byID == nil {
			byID = map[string]*record{}
			s.committed[r.cluster] = byID
		}
		if old := byID[r.ID]; old != nil && old.version > r.version {
			continue
		}
		if r.resolved {
			delete(byID, r.ID)
		} else {
			byID[r.ID] = r
		}
		s.changed[r.cluster] = true
	}
}

// Save is what the checkpoint keeps of cluster's episodes (nil: none open), and whether
// it changed since the last call (resume.Resume.KeepEpisodes).
func (s *Step) Save(cluster string) (json.RawMessage, bool) {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	changed := s.changed[cluster]
	s.changed[cluster] = false
	byID := s.committed[cluster]
	if len(byID) == 0 {
		return nil, changed
	}
	list := make([]record, 0, len(byID))
	for _, r := range byID {
		c := *r
		c.Ref = r.ref.Get()
		list = append(list, c)
	}
	slices.SortFunc(list, func(a, b record) int { return cmp.Or(a.Opened.Compare(b.Opened), cmp.Compare(a.ID, b.ID)) })
	if len(list) > maxEpisodes {
		list = list[len(list)-maxEpisodes:]
		s.droppedOnce.Do(func() {
			s.cfg.Warn("episodes: more than %d open in cluster %q; the checkpoint keeps the %d latest", maxEpisodes, cluster, maxEpisodes)
		})
	}
	raw, err := json.Marshal(list)
	if err != nil {
		return nil, changed
	}
	return raw, changed
}

// Restore takes back what the checkpoint kept of cluster's episodes, before the run
// starts: those of sinks that still exist with the same transition go on as they were
// delivered; the others are left (said once).
func (s *Step) Restore(cluster string, saved json.RawMessage) error {
	if len(saved) == 0 {
		return nil
	}
	var list []record
	if err := json.Unmarshal(saved, &list); err != nil {
		return fmt.Errorf("its episodes cannot be read: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cmu.Lock()
	defer s.cmu.Unlock()
	left := 0
	for i := range list {
		r := &list[i]
		sink := slices.IndexFunc(s.cfg.Sinks, func(set *Settings) bool {
			return set != nil && set.Name == r.Sink && slices.Contains(set.On, r.Transition)
		})
		if sink < 0 {
			left++
			continue
		}
		r.cluster, r.ref = cluster, event.NewEpisodeRef(r.Ref)
		e := &episode{sink: sink, lastSent: r.LastSent, lastNews: r.LastNews, members: map[objectKey]bool{},
			recovering: r.Recovering, recoveredBy: r.RecoveredBy, digested: r.Digested,
			ep: event.Episode{ID: r.ID, Key: r.Key, Transition: r.Transition, Controller: event.Owner(r.Controller),
				Namespace: r.Namespace, Cluster: cluster, Opened: r.Opened, Last: r.Last, Count: r.Count, Since: r.Since, Ref: r.ref}}
		e.last = object{cluster: cluster, resource: r.Object.Resource, kind: r.Object.Kind, obj: &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: r.Object.APIVersion, Kind: r.Object.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: r.Object.Name, Namespace: r.Object.Namespace}}}
		s.open[openKey{sink, r.Key}] = e
		for _, m := range r.Members {
			obj := objectKey{cluster: cluster, kind: m.Kind, namespace: m.Namespace, name: m.Name}
			e.members[obj] = m.Troubled
			s.byObject[obj] = append(s.byObject[obj], e)
		}
		byID := s.committed[cluster]
		if byID == nil {
			byID = map[string]*record{}
			s.committed[cluster] = byID
		}
		byID[r.ID] = r
	}
	if left > 0 {
		what := "cluster " + cluster
		if cluster == "" {
			what = "the checkpoint"
		}
		s.cfg.Warn("episodes: %s kept %d open episodes of sinks this run has not, or not with that transition; they are dropped (their sinks will not be told they resolved)", what, left)
		s.changed[cluster] = true
	}
	return nil
}
