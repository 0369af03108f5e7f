package listener

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// TestCoalesceDecidesEveryField checks what a merged event says of each of Event's
// exported fields, and fails for a field added to Event without a decision here: a
// merged event that forgot one (its cluster, owner chain, health, Written) reads, in a
// coalescing sink, as another object's or as nobody's.
func TestCoalesceDecidesEveryField(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var written []string
	queued := newEv(event.Modified, "a", 1)
	queued.Time, queued.Cluster, queued.Old = t0, "one", podObj("a", "0")
	queued.Child, queued.Reason, queued.Related, queued.Past = false, "queued", false, false
	queued.Owners = []event.Owner{{Kind: "Deployment", Name: "old"}}
	queued.RecordedBy = &managedfields.Attribution{}
	queued.Rollout = &event.Rollout{State: event.RolloutProgressing}
	queued.Health = &event.Health{Status: event.HealthInProgress, Previous: event.HealthFailed, Message: "queued"}
	queued.On = []string{"degraded", "ready"}
	queued.Folded, queued.EndsStream = true, true
	queued.Context = &event.PendingContext{}
	queued.Written = func() { written = append(written, "queued") }

	next := newEv(event.Modified, "a", 2)
	next.Time, next.Cluster, next.Old = t0.Add(time.Second), "one", podObj("a", "1")
	next.Child, next.Reason, next.Related, next.Past = true, "next", true, true
	next.Owners = []event.Owner{{Kind: "Deployment", Name: "web"}, {Kind: "ReplicaSet", Name: "web-1"}}
	next.Rollout = &event.Rollout{State: event.RolloutComplete}
	next.Health = &event.Health{Status: event.HealthCurrent, Previous: event.HealthInProgress, Message: "next"}
	next.On = []string{"ready", "scaled"}
	next.UnfoldedSeq = 9
	next.SyncTo = []int{3}
	next.Written = func() { written = append(written, "next") }

	m := coalesce(queued, next, true)
	checks := map[string]func() bool{
		"Type":              func() bool { return m.Type == event.Modified },
		"Time":              func() bool { return m.Time.Equal(next.Time) },
		"Seq":               func() bool { return m.Seq == 2 },
		"Cluster":           func() bool { return m.Cluster == "one" },
		"Resource":          func() bool { return m.Resource == next.Resource },
		"Kind":              func() bool { return m.Kind == next.Kind },
		"Object":            func() bool { return m.Object == next.Object },
		"Old":               func() bool { return m.Old == queued.Old },
		"InInitialList":     func() bool { return !m.InInitialList }, // ADDED only: TestCoalesceMergeTable
		"Related":           func() bool { return m.Related },
		"Child":             func() bool { return m.Child },
		"Past":              func() bool { return m.Past },
		"FinalStateUnknown": func() bool { return !m.FinalStateUnknown },
		"Reason":            func() bool { return m.Reason == "next" },
		"Owners":            func() bool { return len(m.Owners) == 2 && m.Owners[1].Name == "web-1" },
		"ManagedFields":     func() bool { return m.ManagedFields == nil }, // managedfields.Merge: TestCoalesceNamesEveryWriter
		"RecordedBy":        func() bool { return m.RecordedBy == queued.RecordedBy },
		"Rollout":           func() bool { return m.Rollout == next.Rollout },
		"Health": func() bool {
			return m.Health != nil && m.Health.Status == event.HealthCurrent && m.Health.Message == "next" &&
				m.Health.Previous == event.HealthFailed && next.Health.Previous == event.HealthInProgress
		},
		"On":           func() bool { return slices.Equal(m.On, []string{"degraded", "ready", "scaled"}) },
		"LeftOut":      func() bool { return m.LeftOut == event.Kept },
		"EndsStream":   func() bool { return m.EndsStream },
		"SyncTo":       func() bool { return slices.Equal(m.SyncTo, []int{3}) },
		"Folded":       func() bool { return !m.Folded },
		"FoldedEvents": func() bool { return m.FoldedEvents == 0 }, // rollout steps do not merge
		"UnfoldedSeq":  func() bool { return m.UnfoldedSeq == 9 },
		"Episodes":     func() bool { return m.Episodes == nil }, // events with episodes do not merge
		"Episode":      func() bool { return m.Episode == nil },
		"Context":      func() bool { return m.Context == queued.Context },
		"Encoder":      func() bool { return m.Encoder == nil }, // encoding/json: Old and Object come from two events
		"Written": func() bool {
			m.Written()
			return slices.Equal(written, []string{"queued", "next"})
		},
		"RecordedDiff": func() bool { return m.RecordedDiff == nil }, // next's diff is from next.Old, not from m.Old
	}
	for f := range reflect.TypeFor[event.Event]().Fields() {
		if !f.IsExported() {
			continue
		}
		check, ok := checks[f.Name]
		switch {
		case !ok:
			t.Errorf("coalesce: no decision for Event.%s: say in coalesce what a merged event carries, and check it here", f.Name)
		case !check():
			t.Errorf("coalesce: Event.%s is not what a merged event should carry", f.Name)
		}
	}
}

// Events of two clusters about objects of one name never merge: each is its own
// cluster's.
func TestCoalesceKeepsClustersApart(t *testing.T) {
	r := newRing(4, Coalesce)
	one, two := newEv(event.Modified, "a", 1), newEv(event.Modified, "a", 2)
	one.Cluster, two.Cluster = "one", "two"
	for _, ev := range []*event.Event{one, two} {
		if res := r.put(ev); res != queued {
			t.Fatalf("put %s: %v, want queued", ev.Cluster, res)
		}
	}
	if got := drain(r); len(got) != 2 || got[0] != one || got[1] != two {
		t.Fatalf("got %v, want both clusters' events in order", seqs(got))
	}
}

// An event that is news of its own (a rollout's step, a STALLED event, one an episode
// decided about) is never merged, nor merged into; and a later change of its
// object does not merge into one queued before it, which would put it first.
func TestCoalesceLeavesNewsAlone(t *testing.T) {
	news := map[string]func(*event.Event){
		"rollout step":   func(ev *event.Event) { ev.Type, ev.Seq = event.RolloutStep, 0 },
		"stalled":        func(ev *event.Event) { ev.Type, ev.Seq = event.Stalled, 0 },
		"episode":        func(ev *event.Event) { ev.Episodes = []event.EpisodeDecision{{Action: event.EpisodeOpen}} },
		"episode digest": func(ev *event.Event) { ev.Type, ev.Seq = event.DigestStep, 0 },
	}
	for name, make := range news {
		t.Run(name, func(t *testing.T) {
			r := newRing(4, Coalesce)
			first, special, last := newEv(event.Modified, "a", 1), newEv(event.Modified, "a", 2), newEv(event.Modified, "a", 3)
			make(special)
			for i, ev := range []*event.Event{first, special, last} {
				if res := r.put(ev); res != queued {
					t.Fatalf("put %d: %v, want queued", i, res)
				}
			}
			if got := drain(r); len(got) != 3 || got[0] != first || got[1] != special || got[2] != last {
				t.Fatalf("got %d events, want the three in order, none merged", len(got))
			}
		})
	}
	// After the news is delivered, changes merge again.
	r := newRing(4, Coalesce)
	special := newEv(event.Stalled, "a", 0)
	r.put(special)
	r.pop()
	if r.put(newEv(event.Modified, "a", 2)) != queued || r.put(newEv(event.Modified, "a", 3)) != coalesced {
		t.Fatal("changes after the news was delivered do not merge")
	}
}
