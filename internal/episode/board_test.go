package episode

import (
	"slices"
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
)

// The board marks the objects of open episodes from the decisions events carry, and
// forgets an episode at its resolution.
func TestBoard(t *testing.T) {
	b := NewBoard()
	a, c := podEvent("a", "", t0, "crashloop"), podEvent("c", "", t0, "crashloop")
	e1, e2 := &event.Episode{ID: "e1", Transition: "crashloop"}, &event.Episode{ID: "e2", Transition: "not-ready"}
	a.Episodes = []event.EpisodeDecision{{Action: event.EpisodeOpen, Episode: e1}, {Action: event.EpisodeHeld, Episode: e2}}
	c.Episodes = []event.EpisodeDecision{{Action: event.EpisodeHeld, Episode: e1}}
	objA := Object{Kind: "Pod", Namespace: "shop", Name: "a"}
	if changed := b.Follow(a); len(changed) != 1 || changed[0] != objA {
		t.Fatalf("changed %+v", changed)
	}
	b.Follow(c)
	if marks := b.Marks(objA); !slices.Equal(marks, []string{"crashloop", "not-ready"}) || b.Open() != 2 {
		t.Fatalf("marks %q, %d open", marks, b.Open())
	}
	res := &event.Event{Type: event.EpisodeStep, Object: a.Object, Kind: "Pod",
		Episodes: []event.EpisodeDecision{{Action: event.EpisodeResolve, Episode: e1}}}
	if changed := b.Follow(res); len(changed) != 2 {
		t.Errorf("resolution changed %+v, want a and c", changed)
	}
	if marks := b.Marks(objA); !slices.Equal(marks, []string{"not-ready"}) || b.Open() != 1 || b.Marks(Object{Kind: "Pod", Namespace: "shop", Name: "c"}) != nil {
		t.Errorf("marks %q, %d open", marks, b.Open())
	}
}
