package storesink

import (
	"bytes"
	"slices"
	"testing"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/recording"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/store"
)

// The sink gives the store each event as it is, not its line parsed back: what it gives
// must be what the line says, as store import reads it from a recording, for every
// sort of event (attributed or not, several clusters, SYNC without a seq), with diffs
// and without (--no-diff).
func TestEventIsWhatItsLineSays(t *testing.T) {
	var events []*event.Event
	events = append(events, eventtest.Events()...)
	events = append(events, eventtest.DiffEvents()...)
	events = append(events, eventtest.AttributedEvents()...)
	owned := eventtest.RealisticPod() // owned by its ReplicaSet
	notReady := owned.DeepCopy()
	eventtest.KubeletReport(notReady)
	events = append(events, eventtest.Modified(7, eventtest.Pods, "Pod", owned, notReady))
	for _, ev := range eventtest.AttributedEvents() {
		ev.Cluster = "prod-eu"
		events = append(events, ev)
	}
	attributed, withOwners := 0, 0
	for _, d := range []*diff.Differ{diff.NewDiffer(nil), nil} {
		s := &storeSink{differ: d}
		for _, ev := range events {
			switch ev.Type {
			case event.Added, event.Modified, event.Deleted, event.Sync:
			default:
				continue // not stored
			}
			line, err := render.AppendEnvelopeWithDiff(nil, ev, d, false)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := recording.Parse(line)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			want, got := store.EventOf(rec), s.eventOf(ev, line)
			if got.Type != want.Type || !got.Time.Equal(want.Time) || got.Seq != want.Seq || got.Cluster != want.Cluster ||
				got.Resource != want.Resource || !bytes.Equal(got.Object, want.Object) || !slices.Equal(got.Managers, want.Managers) ||
				!bytes.Equal(got.Line, want.Line) {
				t.Errorf("%s %s (diff %v):\ngot  %+v\nwant %+v", ev.Type, ev.Key(), d != nil, got, want)
			}
			wantMeta, err := store.MetaOf(want.Object)
			if err != nil || got.Meta == nil || got.Meta.Kind != wantMeta.Kind || got.Meta.Namespace != wantMeta.Namespace ||
				got.Meta.Name != wantMeta.Name || got.Meta.UID != wantMeta.UID || got.Meta.ResourceVersion != wantMeta.ResourceVersion ||
				!got.Meta.Created.Equal(wantMeta.Created) || got.Meta.Owners != wantMeta.Owners {
				t.Errorf("%s %s: metadata\ngot  %+v\nwant %+v (%v)", ev.Type, ev.Key(), got.Meta, wantMeta, err)
			}
			if wantMeta.Owners != "" {
				withOwners++
			}
			if len(want.Managers) > 0 {
				attributed++
			}
		}
	}
	if attributed == 0 {
		t.Error("no event said who made it: the managers were not compared")
	}
	if withOwners == 0 {
		t.Error("no object had owners: they were not compared")
	}
}
