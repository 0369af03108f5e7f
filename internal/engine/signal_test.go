package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// onRecording keeps what transitions each event it was given says happened.
type onRecording struct {
	recording
	on [][]string
}

func (r *onRecording) Write(ev *event.Event) error {
	r.mu.Lock()
	r.on = append(r.on, ev.On)
	r.mu.Unlock()
	return r.recording.Write(ev)
}

// --on leaves out, before they are numbered, the events in which none of its transitions
// happened; the others say which did, in every sink.
func TestRunOnKeepsWhereATransitionHappened(t *testing.T) {
	catalog, err := transition.NewCatalog(map[string]string{
		"second": `.object.metadata.name == "c2"`,
		"third":  `.object.metadata.name == "c3"`,
	})
	if err != nil {
		t.Fatal(err)
	}
	set, err := catalog.Compile([]string{"second", "third"}, t.Errorf)
	if err != nil {
		t.Fatal(err)
	}
	a := &onRecording{}
	cfg := newConfig()
	cfg.listeners = append(cfg.listeners, listener.New(listener.Config{Name: "on"}, a, cfg.hooks.warn))
	cfg.cfg.Events.Transitions, cfg.cfg.Events.On, cfg.cfg.End.MaxEvents = set, []string{"second"}, 1
	res, err := runOn(context.Background(), fakeClients(t, "c1", "c2", "c3"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.got(); res.Made != 1 || !slices.Equal(got, []string{"ADDED ns/c2"}) || !slices.Equal(a.on[0], []string{"second"}) {
		t.Fatalf("made %d, sink got %v with on %q; want ns/c2 alone, numbered 1, on [second]", res.Made, got, a.on)
	}
}
