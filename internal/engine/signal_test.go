package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/filesink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/httpsink"
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

// Each sink names in its events the transitions it asked for: its on=, else --on's, else
// none (never every one that happened); with no transition named anywhere, there is
// nothing to leave out.
func TestSinksShowTheirOwnTransitions(t *testing.T) {
	set := func(names ...string) *transition.Set {
		s, err := transition.Shipped().Compile(names, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		on    []string
		sink  string
		shows []string
	}{
		{nil, "crashloop", []string{"crashloop"}},
		{nil, "", []string{}},
		{[]string{"deleted"}, "", []string{"deleted"}},
		{[]string{"deleted"}, "crashloop|oomkilled", []string{"crashloop", "oomkilled"}},
	} {
		w := &session{cfg: &Config{Events: Events{On: tc.on, Transitions: set("crashloop", "deleted", "not-ready", "oomkilled")},
			Output: Output{Sinks: []sinkkind.Spec{{Name: "a", Kind: filesink.Kind, On: tc.sink}, {Name: "b", Kind: httpsink.Kind, On: "not-ready"}}}}}
		got := w.filter(w.cfg.Output.Sinks[0]).Shows
		if got == nil || !slices.Equal(got, tc.shows) {
			t.Errorf("--on %q, on=%q: the sink shows %#v, want %q", tc.on, tc.sink, got, tc.shows)
		}
	}
	w := &session{cfg: &Config{Output: Output{Sinks: []sinkkind.Spec{{Name: "a", Kind: filesink.Kind}}}}}
	if got := w.filter(w.cfg.Output.Sinks[0]).Shows; got != nil {
		t.Errorf("no transition named anywhere: the sink shows %q", got)
	}
}
