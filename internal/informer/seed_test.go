package informer

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/pipeline"
)

// A resumed first list (Seed) makes events of what changed since, and nothing of the
// unchanged for any listener but those that show every object (Unchanged): they get
// each unchanged object as a SYNC, once; a later re-delivery of it does not.
func TestSeededUnchangedGoToTheViewOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := newClient("same", "added")
		if _, err := pods(client).Create(context.Background(), unstructuredPod("changed", "2"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var saved [][]byte
		for _, name := range []string{"same", "changed", "gone"} {
			raw, err := unstructuredPod(name, "1").MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			saved = append(saved, raw)
		}
		view, other := &recorder{}, &recorder{}
		inf, err := New(podsRes, Clients{Dynamic: client}, Options{Unchanged: []int{0}, Fatal: func(err error) { t.Errorf("fatal: %v", err) }})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := inf.Seed(saved); err != nil {
			t.Fatal(err)
		}
		deliver := pipeline.NewDeliver([]pipeline.Receiver{view, other}, nil, pipeline.KeepBacklog)
		p := pipeline.New(pipeline.Step{Name: "deliver", Stage: deliver, Sync: true})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = inf.Run(ctx, p.Take)
		}()
		defer func() {
			cancel()
			<-done
		}()
		if !inf.WaitForSync(ctx) {
			t.Fatal("no sync")
		}
		synctest.Wait()
		changes := []string{"ADDED default/added", "DELETED default/gone", "MODIFIED default/changed"}
		got := func(r *recorder) []string {
			out := names(r.all())
			slices.Sort(out)
			return out
		}
		if g := got(other); !slices.Equal(g, changes) {
			t.Errorf("another listener got %v, want the changes alone: %v", g, changes)
		}
		if g, want := got(view), append(slices.Clone(changes), "SYNC default/same"); !slices.Equal(g, want) {
			t.Errorf("the view got %v, want the changes and the unchanged object: %v", g, want)
		}
		if _, syncs := view.split(); len(syncs) == 1 && (syncs[0].SyncTo == nil || syncs[0].Seq != 0 || syncs[0].Object == nil) {
			t.Errorf("the unchanged object's SYNC: to %v, seq %d, object %v", syncs[0].SyncTo, syncs[0].Seq, syncs[0].Object)
		}
		if inf.handler.seeded != nil {
			t.Errorf("the seeded keys are kept after the first list: %v", inf.handler.seeded)
		}
		// The unchanged object, handed over again (as a re-list would): nothing more.
		inf.handler.OnUpdate(unstructuredPod("same", "1"), unstructuredPod("same", "1"))
		synctest.Wait()
		if _, syncs := view.split(); len(syncs) != 1 {
			t.Errorf("the view got %d SYNC events, want the one of the first list", len(syncs))
		}
	})
}
