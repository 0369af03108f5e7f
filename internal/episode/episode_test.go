package episode

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
)

var (
	t0      = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// podEvent is a MODIFIED event of pod name in namespace shop, owned by replica set rs
// ("" for none), at t, in which the transitions on happened.
func podEvent(name, rs string, t time.Time, on ...string) *event.Event {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name)}}
	if rs != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: types.UID("uid-" + rs), Controller: &yes}}
	}
	return &event.Event{Type: event.Modified, Time: t, Resource: podsGVR, Kind: "Pod", Object: p, Old: p, On: on}
}

// deployments is a Lookup for which every ReplicaSet web-HASH belongs to Deployment
// web, and counts its calls.
type deployments struct {
	mu    sync.Mutex
	calls int
}

func (d *deployments) lookup(_ context.Context, gvk schema.GroupVersionKind, namespace, name string) (metav1.Object, error) {
	d.mu.Lock()
	d.calls++
	d.mu.Unlock()
	switch gvk.Kind {
	case "Deployment":
		return &metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-" + name)}, nil
	case "ReplicaSet":
	default:
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: gvk.Kind}, name)
	}
	yes := true
	deploy, _, _ := strings.Cut(name, "-")
	return &metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-" + name),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: deploy, UID: types.UID("uid-" + deploy), Controller: &yes}}}, nil
}

var crashOpposites = map[string]Opposite{"crashloop": {Name: "ready", Holds: time.Minute}, "rollout-failed": {Name: "rollout-complete"}}

// newStep is a step of one sink "hook" with on=crashloop,rollout-failed and set's
// settings, whose emitted events are collected.
func newStep(t *testing.T, set Settings, lookup Lookup) (*Step, *[]*event.Event) {
	t.Helper()
	set.Name = "hook"
	if set.On == nil {
		set.On = []string{"crashloop", "rollout-failed"}
	}
	s := New(Config{Sinks: []*Settings{nil, &set}, Opposites: crashOpposites, Lookups: map[string]Lookup{"": lookup},
		Listeners: 2, Persist: true, Warn: func(f string, a ...any) { t.Logf("warn: "+f, a...) }})
	var emitted []*event.Event
	s.EmitTo(func(ev *event.Event) bool {
		s.Process(ev)
		emitted = append(emitted, ev)
		return true
	})
	s.clock.Store(true) // the tests move the clock themselves (Advance)
	return s, &emitted
}

// decision is the sink's decision about ev (the second sink, index 1).
func decision(t *testing.T, ev *event.Event) event.EpisodeDecision {
	t.Helper()
	if ev.Episodes == nil {
		return event.EpisodeDecision{}
	}
	if ev.Episodes[0].Action != event.EpisodeNone {
		t.Errorf("a decision for the sink without episodes: %+v", ev.Episodes[0])
	}
	return ev.Episodes[1]
}

func process(t *testing.T, s *Step, ev *event.Event) event.EpisodeDecision {
	t.Helper()
	s.Process(ev)
	return decision(t, ev)
}

// A crash-looping pod opens an episode; its next crashes within the cooldown are held,
// the first after it is an update counting those held; its Ready for the hold resolves
// it, but not while the crashes come back within the hold.
func TestEpisodeOpenUpdateResolve(t *testing.T) {
	s, emitted := newStep(t, Settings{Cooldown: 10 * time.Minute, ResolveAfter: time.Hour}, nil)
	d := process(t, s, podEvent("flaky", "", t0, "crashloop"))
	if d.Action != event.EpisodeOpen || d.Episode.Count != 1 || d.Episode.Transition != "crashloop" || d.Episode.Controller.Name != "flaky" {
		t.Fatalf("first crash: %v %+v", d.Action, d.Episode)
	}
	id := d.Episode.ID
	for i := 1; i <= 3; i++ {
		at := t0.Add(time.Duration(i) * time.Minute)
		if d := process(t, s, podEvent("flaky", "", at, "crashloop")); d.Action != event.EpisodeHeld || d.Episode.ID != id || d.Episode.Since != i {
			t.Fatalf("crash %d within the cooldown: %v %+v", i, d.Action, d.Episode)
		}
		// Ready between crashes, for less than the hold.
		process(t, s, podEvent("flaky", "", at.Add(10*time.Second), "ready"))
		s.Advance(at.Add(50 * time.Second))
	}
	if len(*emitted) != 0 {
		t.Fatalf("resolved while the crashes came back: %+v", (*emitted)[0].Episodes)
	}
	d = process(t, s, podEvent("flaky", "", t0.Add(11*time.Minute), "crashloop"))
	if d.Action != event.EpisodeUpdate || d.Episode.Count != 5 || d.Episode.Since != 4 {
		t.Fatalf("the crash past the cooldown: %v %+v", d.Action, d.Episode)
	}
	ready := t0.Add(11*time.Minute + 5*time.Second)
	process(t, s, podEvent("flaky", "", ready, "ready"))
	s.Advance(ready.Add(59 * time.Second))
	if len(*emitted) != 0 {
		t.Fatal("resolved before its opposite held a minute")
	}
	s.Advance(ready.Add(time.Minute))
	if len(*emitted) != 1 {
		t.Fatalf("%d events once Ready held, want the resolution", len(*emitted))
	}
	res := (*emitted)[0]
	d = decision(t, res)
	if res.Type != event.EpisodeStep || d.Action != event.EpisodeResolve || d.Episode.ID != id || d.Episode.ResolvedBy != "ready" ||
		d.Episode.Resolved != ready.Add(time.Minute) || res.Object == nil || res.Kind != "Pod" {
		t.Fatalf("resolution %s %v %+v", res.Type, d.Action, d.Episode)
	}
	if s.Open() != 0 {
		t.Errorf("%d open after the resolution", s.Open())
	}
	// Its next crash is a new episode.
	if d := process(t, s, podEvent("flaky", "", ready.Add(2*time.Minute), "crashloop")); d.Action != event.EpisodeOpen || d.Episode.ID == id {
		t.Errorf("a crash after the resolution: %v %+v", d.Action, d.Episode)
	}
}

// The default key is the top controller: two pods of one Deployment (through their
// ReplicaSets, looked up once each) are one episode, which is resolved once both
// recovered; a pod of another Deployment is another.
func TestEpisodeGroupsByTopController(t *testing.T) {
	var lookups deployments
	s, emitted := newStep(t, Settings{Cooldown: time.Hour, ResolveAfter: time.Hour}, lookups.lookup)
	a := process(t, s, podEvent("web-1", "web-abc", t0, "crashloop"))
	b := process(t, s, podEvent("web-2", "web-def", t0.Add(time.Second), "crashloop"))
	c := process(t, s, podEvent("api-1", "api-abc", t0.Add(2*time.Second), "crashloop"))
	if a.Action != event.EpisodeOpen || a.Episode.Controller != (event.Owner{Kind: "Deployment", Name: "web"}) {
		t.Fatalf("web-1: %v %+v", a.Action, a.Episode)
	}
	if b.Action != event.EpisodeHeld || b.Episode.ID != a.Episode.ID || b.Episode.Troubled != 2 {
		t.Fatalf("web-2, of the same Deployment: %v %+v", b.Action, b.Episode)
	}
	if c.Action != event.EpisodeOpen || c.Episode.ID == a.Episode.ID {
		t.Fatalf("api-1, of another: %v %+v", c.Action, c.Episode)
	}
	process(t, s, podEvent("web-1", "web-abc", t0.Add(3*time.Second), "crashloop"))
	if lookups.calls != 5 {
		t.Errorf("%d lookups, want one per ReplicaSet and Deployment", lookups.calls)
	}
	process(t, s, podEvent("web-1", "web-abc", t0.Add(10*time.Second), "ready"))
	s.Advance(t0.Add(5 * time.Minute))
	if len(*emitted) != 0 {
		t.Fatal("resolved while web-2 still crash-loops")
	}
	deleted := podEvent("web-2", "web-def", t0.Add(6*time.Minute))
	deleted.Type = event.Deleted
	process(t, s, deleted)
	s.Advance(t0.Add(7 * time.Minute))
	if len(*emitted) != 1 {
		t.Fatalf("%d events, want web's resolution", len(*emitted))
	}
	if d := decision(t, (*emitted)[0]); d.Episode.ID != a.Episode.ID || d.Episode.ResolvedBy != "deleted" {
		t.Errorf("resolution %+v", d.Episode)
	}
}

// A sink's group expression keys episodes; null puts an event in none.
func TestEpisodeGroupExpression(t *testing.T) {
	q, err := jq.Compile(`if .object.metadata.name == "lonely" then null else [.object.metadata.namespace, .transition] end`)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newStep(t, Settings{Group: q, Cooldown: time.Hour}, nil)
	a := process(t, s, podEvent("a", "", t0, "crashloop"))
	b := process(t, s, podEvent("b", "", t0, "crashloop"))
	if a.Action != event.EpisodeOpen || b.Action != event.EpisodeHeld || a.Episode.Key != `["shop","crashloop"]` {
		t.Fatalf("a %v %+v, b %v", a.Action, a.Episode, b.Action)
	}
	if d := process(t, s, podEvent("lonely", "", t0, "crashloop")); d.Action != event.EpisodeNone {
		t.Errorf("null group: %v", d.Action)
	}
}

// Nothing heard of an episode's objects for resolve-after resolves it as quiet; a
// transition without an opposite ends only so.
func TestEpisodeQuiet(t *testing.T) {
	s, emitted := newStep(t, Settings{ResolveAfter: 10 * time.Minute, On: []string{"crashloop", "restarted"}}, nil)
	process(t, s, podEvent("flaky", "", t0, "restarted"))
	process(t, s, podEvent("flaky", "", t0.Add(5*time.Minute))) // news, no transition
	s.Advance(t0.Add(14 * time.Minute))
	if len(*emitted) != 0 {
		t.Fatal("resolved as quiet though its object changed 9 minutes ago")
	}
	s.Advance(t0.Add(15 * time.Minute))
	if len(*emitted) != 1 || decision(t, (*emitted)[0]).Episode.ResolvedBy != "quiet" {
		t.Fatalf("emitted %d", len(*emitted))
	}
}

// With a digest, an episode's occurrences after the first are held, and every period one
// summary lists the sink's open episodes, when one went on since the last.
func TestEpisodeDigest(t *testing.T) {
	s, emitted := newStep(t, Settings{Digest: 10 * time.Minute, ResolveAfter: time.Hour}, nil)
	s.digests[1] = t0.Add(10 * time.Minute)
	process(t, s, podEvent("a", "", t0, "crashloop"))
	process(t, s, podEvent("b", "", t0.Add(time.Minute), "crashloop"))
	if d := process(t, s, podEvent("a", "", t0.Add(20*time.Minute), "crashloop")); d.Action != event.EpisodeHeld {
		t.Fatalf("with a digest, a later crash: %v", d.Action)
	}
	s.Advance(t0.Add(10 * time.Minute))
	if len(*emitted) != 1 {
		t.Fatalf("%d events at the digest", len(*emitted))
	}
	dg := (*emitted)[0]
	d := decision(t, dg)
	if dg.Type != event.DigestStep || d.Action != event.EpisodeDigest || len(d.Digest) != 2 || d.Digest[0].Count != 2 {
		t.Fatalf("digest %s %v %+v", dg.Type, d.Action, d.Digest)
	}
	s.Advance(t0.Add(20 * time.Minute))
	if len(*emitted) != 1 {
		t.Errorf("a digest though nothing went on since the last")
	}
}

// The checkpoint's episodes are those delivered: a decision is committed once every
// sink was delivered its event. Restored, an open episode is not opened again, keeps
// its receiver's handle, and is resolved when its opposite holds.
func TestEpisodeCheckpoint(t *testing.T) {
	s, _ := newStep(t, Settings{Cooldown: time.Hour, ResolveAfter: time.Hour}, nil)
	first := podEvent("flaky", "", t0, "crashloop")
	d := process(t, s, first)
	if raw, _ := s.Save(""); raw != nil {
		t.Fatalf("saved before delivery: %s", raw)
	}
	d.Episode.Ref.Set(`{"ts":"1.2"}`) // the sink posted it
	first.Written()
	if raw, _ := s.Save(""); raw != nil {
		t.Fatalf("saved before every sink had it: %s", raw)
	}
	first.Written()
	raw, changed := s.Save("")
	if !changed || !strings.Contains(string(raw), `"ref":"{\"ts\":\"1.2\"}"`) {
		t.Fatalf("saved %s (changed %v)", raw, changed)
	}
	held := podEvent("flaky", "", t0.Add(time.Minute), "crashloop")
	process(t, s, held) // not delivered: a crash now keeps the count of the first

	r, emitted := newStep(t, Settings{Cooldown: time.Hour, ResolveAfter: time.Hour}, nil)
	if err := r.Restore("", raw); err != nil {
		t.Fatal(err)
	}
	again := process(t, r, podEvent("flaky", "", t0.Add(2*time.Minute), "crashloop"))
	if again.Action != event.EpisodeHeld || again.Episode.ID != d.Episode.ID || again.Episode.Count != 2 || again.Episode.Ref.Get() != `{"ts":"1.2"}` {
		t.Fatalf("after the restore: %v %+v", again.Action, again.Episode)
	}
	process(t, r, podEvent("flaky", "", t0.Add(3*time.Minute), "ready"))
	r.Advance(t0.Add(4 * time.Minute))
	if len(*emitted) != 1 || decision(t, (*emitted)[0]).Action != event.EpisodeResolve {
		t.Fatalf("the restored episode was not resolved: %d events", len(*emitted))
	}
	res := (*emitted)[0]
	res.Written()
	res.Written()
	if raw, _ := r.Save(""); raw != nil {
		t.Errorf("a resolved episode saved: %s", raw)
	}

	// A checkpoint of a sink the run has not is dropped, said once.
	var warned []string
	o := New(Config{Sinks: []*Settings{{Name: "other", On: []string{"crashloop"}}}, Persist: true,
		Warn: func(f string, a ...any) { warned = append(warned, f) }})
	if err := o.Restore("", raw); err != nil || o.Open() != 0 || len(warned) != 1 {
		t.Errorf("restore into another sink: %v, %d open, warned %q", err, o.Open(), warned)
	}
	var list []record
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 1 || list[0].Sink != "hook" || len(list[0].Members) != 1 {
		t.Errorf("the record %s: %v", raw, err)
	}
}

// Without a clock (a replay), the events' times move it.
func TestEpisodeReplayClock(t *testing.T) {
	s, emitted := newStep(t, Settings{ResolveAfter: 5 * time.Minute}, nil)
	s.clock.Store(false)
	process(t, s, podEvent("flaky", "", t0, "crashloop"))
	process(t, s, podEvent("other", "", t0.Add(6*time.Minute)))
	if len(*emitted) != 1 || decision(t, (*emitted)[0]).Episode.ResolvedBy != "quiet" {
		t.Fatalf("emitted %d", len(*emitted))
	}
}
