package sink

import (
	"errors"
	"slices"
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
)

type recordingSink struct{ got []event.EventType }

func (r *recordingSink) Write(ev *event.Event) error { r.got = append(r.got, ev.Type); return nil }
func (r *recordingSink) Close() error                { return nil }

func TestFilterEventTypes(t *testing.T) {
	rec := &recordingSink{}
	if WithFilter(rec, Filter{}) != listener.Sink(rec) {
		t.Error("no filter: the sink itself")
	}
	// SYNC is a type like the others: left out unless listed.
	for types, want := range map[string][]event.EventType{
		"ADDED|DELETED":      {event.Added, event.Deleted},
		"ADDED|DELETED|SYNC": {event.Added, event.Deleted, event.Sync},
	} {
		rec.got = nil
		s := WithFilter(rec, Filter{EventTypes: types})
		for _, typ := range []event.EventType{event.Added, event.Modified, event.Deleted, event.Sync} {
			err := s.Write(&event.Event{Type: typ})
			if filtered := errors.Is(err, listener.ErrFiltered); filtered != !slices.Contains(want, typ) {
				t.Errorf("%s, %s: Write = %v", types, typ, err)
			}
		}
		if !slices.Equal(rec.got, want) {
			t.Errorf("%s: written %v, want %v", types, rec.got, want)
		}
	}
}

// holdingSink holds events after Write and can abort them, as exec and http sinks do.
type holdingSink struct {
	recordingSink
	held    bool
	aborted bool
}

func (h *holdingSink) Hold(func(*event.Event, error)) { h.held = true }
func (h *holdingSink) Abort()                         { h.aborted = true }

// The filter answers the listener's questions as the sink it wraps: a sink that holds
// events (exec, http) is still one behind its event types, and one that does not is not.
func TestFilterKeepsHolding(t *testing.T) {
	h := &holdingSink{}
	s := WithFilter(h, Filter{EventTypes: "ADDED"})
	holder, ok := s.(listener.Holder)
	if !ok {
		t.Fatalf("%T around a holding sink is no listener.Holder", s)
	}
	holder.Hold(func(*event.Event, error) {})
	aborter, ok := s.(listener.Aborter)
	if !ok {
		t.Fatalf("%T around an aborting sink is no listener.Aborter", s)
	}
	aborter.Abort()
	if !h.held || !h.aborted {
		t.Errorf("Hold reached the sink: %v, Abort: %v", h.held, h.aborted)
	}
	if _, ok := WithFilter(&recordingSink{}, Filter{Fold: true}).(listener.Holder); ok {
		t.Error("the filter around a sink that holds nothing claims to hold events")
	}
}

// TestFilterOnAndFold: on= keeps the events in which one of its transitions happened
// (never a SYNC or a ROLLOUT line); fold leaves out folded events and keeps ROLLOUT
// lines; event types let ROLLOUT lines through (only folding sinks get them).
func TestFilterOnAndFold(t *testing.T) {
	crash := &event.Event{Type: event.Modified, On: []string{"crashloop", "not-ready"}}
	oom := &event.Event{Type: event.Modified, On: []string{"oomkilled"}}
	plain := &event.Event{Type: event.Modified}
	folded := &event.Event{Type: event.Added, Folded: true}
	step := &event.Event{Type: event.RolloutStep}
	sync := &event.Event{Type: event.Sync}
	all := []*event.Event{crash, oom, plain, folded, step, sync}
	for _, tc := range []struct {
		filter Filter
		want   []*event.Event
	}{
		{Filter{On: []string{"not-ready", "deleted"}}, []*event.Event{crash}},
		{Filter{On: []string{"oomkilled", "crashloop"}}, []*event.Event{crash, oom}},
		{Filter{Fold: true}, []*event.Event{crash, oom, plain, step, sync}},
		{Filter{Fold: true, EventTypes: "ADDED"}, []*event.Event{step}},
		{Filter{EventTypes: "MODIFIED|SYNC"}, []*event.Event{crash, oom, plain, step, sync}},
		{Filter{On: []string{"oomkilled"}, Fold: true}, []*event.Event{oom}},
	} {
		var written []*event.Event
		s := WithFilter(&funcSink{write: func(ev *event.Event) { written = append(written, ev) }}, tc.filter)
		for _, ev := range all {
			err := s.Write(ev)
			if kept := slices.Contains(tc.want, ev); kept != (err == nil) || !kept && !errors.Is(err, listener.ErrFiltered) {
				t.Errorf("%+v: Write(%s %v folded %v) = %v", tc.filter, ev.Type, ev.On, ev.Folded, err)
			}
		}
		if !slices.Equal(written, tc.want) {
			t.Errorf("%+v: wrote %d events, want %d", tc.filter, len(written), len(tc.want))
		}
	}
}

type funcSink struct{ write func(*event.Event) }

func (f *funcSink) Write(ev *event.Event) error { f.write(ev); return nil }
func (f *funcSink) Close() error                { return nil }

// TestFilterShowsItsOwnTransitions: a sink names in its events only the transitions it
// asked for (Shows), whatever other sinks asked for; the event passes untouched when it
// names no other.
func TestFilterShowsItsOwnTransitions(t *testing.T) {
	crash := &event.Event{Type: event.Modified, On: []string{"crashloop", "not-ready"}}
	for _, tc := range []struct {
		filter Filter
		want   []string
	}{
		{Filter{On: []string{"crashloop"}, Shows: []string{"crashloop"}}, []string{"crashloop"}},
		{Filter{On: []string{"not-ready"}, Shows: []string{"not-ready"}}, []string{"not-ready"}},
		{Filter{Shows: []string{}}, nil},
		{Filter{Shows: []string{"not-ready", "crashloop", "oomkilled"}}, []string{"crashloop", "not-ready"}},
		{Filter{}, []string{"crashloop", "not-ready"}},
	} {
		var got *event.Event
		s := WithFilter(&funcSink{write: func(ev *event.Event) { got = ev }}, tc.filter)
		if err := s.Write(crash); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.On, tc.want) {
			t.Errorf("%+v: the sink got on %q, want %q", tc.filter, got.On, tc.want)
		}
		if untouched := len(tc.want) == len(crash.On); untouched != (got == crash) {
			t.Errorf("%+v: got the event itself: %v", tc.filter, got == crash)
		}
	}
	if !slices.Equal(crash.On, []string{"crashloop", "not-ready"}) {
		t.Errorf("the shared event's On became %q", crash.On)
	}
}

// keptSink keeps the events it is given.
type keptSink struct{ got []*event.Event }

func (r *keptSink) Write(ev *event.Event) error { r.got = append(r.got, ev); return nil }
func (r *keptSink) Close() error                { return nil }

// With episodes, a sink leaves out what its episode holds, takes what it opens with its
// decision (whatever its on= says), the episodes' own events only when they are its own,
// and a sink that follows every episode (the view) takes them as they are.
func TestFilterEpisodes(t *testing.T) {
	ep := &event.Episode{ID: "e1", Transition: "crashloop"}
	decide := func(typ event.EventType, on []string, a event.EpisodeAction) *event.Event {
		return &event.Event{Type: typ, On: on, Episodes: []event.EpisodeDecision{{}, {Action: a, Episode: ep}}}
	}
	rec := &keptSink{}
	s := WithFilter(rec, Filter{On: []string{"crashloop"}, Shows: []string{"crashloop"}, Episodes: true, Index: 1})
	for _, c := range []struct {
		ev   *event.Event
		want event.EpisodeAction // EpisodeNone: left out
		kept bool
	}{
		{decide(event.Modified, []string{"crashloop"}, event.EpisodeOpen), event.EpisodeOpen, true},
		{decide(event.Modified, []string{"crashloop"}, event.EpisodeHeld), 0, false},
		{decide(event.Modified, []string{"crashloop", "ready"}, event.EpisodeUpdate), event.EpisodeUpdate, true},
		{decide(event.EpisodeStep, nil, event.EpisodeResolve), event.EpisodeResolve, true},
		{&event.Event{Type: event.EpisodeStep, Episodes: []event.EpisodeDecision{{Action: event.EpisodeResolve, Episode: ep}, {}}}, 0, false},
		{&event.Event{Type: event.DigestStep, Episodes: []event.EpisodeDecision{{}, {Action: event.EpisodeDigest}}}, event.EpisodeDigest, true},
		{&event.Event{Type: event.Modified, On: []string{"ready"}}, 0, false},
	} {
		rec.got = nil
		err := s.Write(c.ev)
		if errors.Is(err, listener.ErrFiltered) == c.kept || c.kept && (len(rec.got) != 1 || rec.got[0].Episode == nil || rec.got[0].Episode.Action != c.want) {
			t.Errorf("%s %v %v: %v, got %+v", c.ev.Type, c.ev.On, c.want, err, rec.got)
		}
		if c.kept && c.ev.Type == event.Modified && !slices.Equal(rec.got[0].On, []string{"crashloop"}) {
			t.Errorf("shows %v", rec.got[0].On)
		}
	}
	view := &keptSink{}
	v := WithFilter(view, Filter{Episodes: true, Index: 0, AllEpisodes: true})
	res := decide(event.EpisodeStep, nil, event.EpisodeResolve)
	if err := v.Write(res); err != nil || len(view.got) != 1 || view.got[0] != res {
		t.Errorf("the view: %v %+v", err, view.got)
	}
	plain := &keptSink{}
	if err := WithFilter(plain, Filter{Episodes: true, Index: 0}).Write(res); !errors.Is(err, listener.ErrFiltered) {
		t.Errorf("a sink without episodes given another's resolution: %v", err)
	}
}
