package episode

import (
	"slices"
	"sync"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Board follows the open episodes of a run from the events one sink is given (the
// decisions they carry for every sink, and the clock's resolutions), for a view that
// marks the objects in them: the live view's rows, top's. Safe for concurrent use.
type Board struct {
	mu       sync.Mutex
	episodes map[string]*boardEpisode
	byObject map[Object]map[string]bool // the episodes each object is in
}

// Object names one object of a cluster, by its API group and kind.
type Object struct {
	Cluster, Group, Kind, Namespace, Name string
}

type boardEpisode struct {
	transition string
	objects    []Object
}

// NewBoard is an empty board.
func NewBoard() *Board {
	return &Board{episodes: map[string]*boardEpisode{}, byObject: map[Object]map[string]bool{}}
}

// Follow takes what ev says of the episodes: its object is in those whose transition
// happened in it, and the episodes ev resolves are over. It returns the objects whose
// marks changed.
func (b *Board) Follow(ev *event.Event) []Object {
	if len(ev.Episodes) == 0 {
		return nil
	}
	var obj Object
	if m := ev.Meta(); m != nil {
		obj = Object{Cluster: ev.Cluster, Group: ev.Resource.Group, Kind: ev.Kind, Namespace: m.GetNamespace(), Name: m.GetName()}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var changed []Object
	change := func(o Object) {
		if !slices.Contains(changed, o) {
			changed = append(changed, o)
		}
	}
	for _, d := range ev.Episodes {
		e := d.Episode
		switch {
		case e == nil:
		case d.Action == event.EpisodeResolve:
			if be := b.episodes[e.ID]; be != nil {
				delete(b.episodes, e.ID)
				for _, o := range be.objects {
					delete(b.byObject[o], e.ID)
					if len(b.byObject[o]) == 0 {
						delete(b.byObject, o)
					}
					change(o)
				}
			}
		case obj.Name != "" && ev.Type != event.EpisodeStep:
			be := b.episodes[e.ID]
			if be == nil {
				be = &boardEpisode{transition: e.Transition}
				b.episodes[e.ID] = be
			}
			if !slices.Contains(be.objects, obj) {
				be.objects = append(be.objects, obj)
				if b.byObject[obj] == nil {
					b.byObject[obj] = map[string]bool{}
				}
				b.byObject[obj][e.ID] = true
				change(obj)
			}
		}
	}
	return changed
}

// Open is how many episodes are open.
func (b *Board) Open() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.episodes)
}

// Marks are the transitions of the open episodes o is in, sorted; nil when none.
func (b *Board) Marks(o Object) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for id := range b.byObject[o] {
		if be := b.episodes[id]; be != nil && !slices.Contains(out, be.transition) {
			out = append(out, be.transition)
		}
	}
	slices.Sort(out)
	return out
}
