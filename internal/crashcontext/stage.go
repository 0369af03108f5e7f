package crashcontext

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Transitions are the transitions whose events carry their crash's context.
var Transitions = event.CrashTransitions

// Stage is the pipeline's crash context step: an event of a pod in which one of
// Transitions happened gets its crash's context (event.Event.Context), fetched while the
// event goes on to the sinks, which wait for it within the fetch's bound. A pod's
// context is fetched once per episode (package episode: the first event of the pod in
// the episode fetches it; the others of that episode carry the same), and once per crash
// for an event in no episode; an event that every sink leaves out within its episode
// fetches nothing.
type Stage struct {
	fetchers map[string]*Fetcher // by cluster name
	// plain says some sink takes every event it is given without episodes, so that an
	// event is shown whatever the episodes step decided.
	plain bool

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	ctx  *event.PendingContext
	when time.Time
}

// Bounds of the cache of contexts fetched: past maxCached, those older than cacheFor go.
const (
	maxCached = 1024
	cacheFor  = time.Hour
)

// NewStage is the step, fetching through each cluster's client (by name; nil: none for
// that cluster); notice says a missing right, once per cluster. plain says some sink has
// no episodes. Nil when no cluster has a client.
func NewStage(clients map[string]kubernetes.Interface, opts Options, plain bool, notice func(cluster, line string)) *Stage {
	s := &Stage{fetchers: map[string]*Fetcher{}, plain: plain, cache: map[string]cached{}}
	for name, client := range clients {
		if client == nil {
			continue
		}
		s.fetchers[name] = New(client, opts, func(line string) { notice(name, line) })
	}
	if len(s.fetchers) == 0 {
		return nil
	}
	return s
}

// Process gives ev its crash's context, if it tells of one.
func (s *Stage) Process(ev *event.Event) {
	if ev.Type != event.Added && ev.Type != event.Modified || ev.Related ||
		!slices.ContainsFunc(ev.On, func(t string) bool { return slices.Contains(Transitions, t) }) {
		return
	}
	f := s.fetchers[ev.Cluster]
	if f == nil {
		return
	}
	shown, episode := s.plain || ev.Episodes == nil, ""
	for _, d := range ev.Episodes {
		if d.Action == event.EpisodeOpen || d.Action == event.EpisodeUpdate {
			shown = true
		}
		if d.Episode != nil && episode == "" {
			episode = d.Episode.ID
		}
	}
	if !shown {
		return
	}
	pod, ok := PodFrom(ev.Object)
	if !ok {
		return
	}
	container := Culprit(pod)
	key := string(pod.UID) + "/" + container + "/"
	if episode != "" {
		key += episode
	} else if st := containerStatus(pod, container); st != nil {
		// No episode: one fetch per crash of the container.
		key += strconv.Itoa(int(st.RestartCount))
		for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
			if t != nil {
				key += "/" + t.FinishedAt.UTC().Format(time.RFC3339)
				break
			}
		}
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.cache[key]; ok {
		ev.Context = c.ctx
		return
	}
	if len(s.cache) >= maxCached {
		for k, c := range s.cache {
			if now.Sub(c.when) > cacheFor {
				delete(s.cache, k)
			}
		}
		if len(s.cache) >= maxCached {
			s.cache = map[string]cached{}
		}
	}
	p := f.Start(context.Background(), pod, container)
	s.cache[key] = cached{ctx: p, when: now}
	ev.Context = p
}
