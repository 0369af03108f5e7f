// Package episode is the pipeline's episodes step: for each sink with on= transitions, the
// events in which one of them happened to objects that belong together form an episode,
// which opens with its first event (the sink delivers it at once), is updated while it
// goes on (at most once per the sink's cooldown; or summed up in a digest), and is
// resolved when its transition's opposite came for each of its objects and held, when
// they are gone, or after a quiet period.
//
// Which events belong together is the sink's group expression, a jq program over the
// event's envelope (with "transition" and "controller" added), by default the cluster,
// the namespace, the object at the top of the object's controller chain (a Pod's
// ReplicaSet's Deployment, looked up and cached) and the transition. Each transition
// names its opposite in its program's header (transition.Transition.ResolvedBy: a crash
// loop is resolved once its pod is Ready again and stays so for a minute; a failed
// rollout once it completes).
//
// The step decides and records; it sends nothing. Its decision for each sink is a typed
// field of the event (event.Event.Episodes); the sink's filter gives the sink its own
// (event.Event.ForSink) and leaves out what it holds. What no change of an object
// carries (an episode resolved after its opposite held or its quiet period, a digest)
// the step's clock makes into events of its own (event.EpisodeStep,
// event.DigestStep), which go through the rest of the pipeline.
//
// The episodes belong to the run's checkpoint (--resume): each decision is committed
// to the state the checkpoint keeps once every sink has been delivered its event, as
// the objects' states are, so that a resumed run or the replica that leads next neither
// opens an open episode again nor forgets to resolve one; after a crash, the decisions
// not yet delivered are made again (at most one repeat).
package episode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
)

// Defaults of a sink's settings.
const (
	DefaultCooldown     = 5 * time.Minute
	DefaultResolveAfter = 15 * time.Minute
	// Tick is how often the clock looks for episodes to resolve and digests to make.
	Tick = time.Second
)

// Settings are one sink's episodes: its on= transitions and its own settings.
type Settings struct {
	// Name is the sink's name: the checkpoint keeps its episodes by it.
	Name string
	On   []string
	// Group is the sink's group expression (group=JQ); nil: the default key. An event
	// for which it gives null (or nothing) is in no episode: the sink takes it as
	// without episodes.
	Group *jq.Query
	// Cooldown is the least time between two messages of one episode (0: none);
	// ResolveAfter how long an episode may go without news of its objects before it is
	// resolved as quiet, and the longest its opposite must hold; Digest, when set, sums
	// the sink's open episodes up every Digest instead of updates.
	Cooldown, ResolveAfter, Digest time.Duration
}

// Opposite is what ends an episode of a transition: another transition, once it held
// (its trouble did not come back) for Holds.
type Opposite struct {
	Name  string
	Holds time.Duration
}

// Config is the episodes of a run.
type Config struct {
	// Sinks are the run's sinks by index (the listeners'); nil for a sink without
	// episodes.
	Sinks []*Settings
	// Opposites are the transitions' opposites, by transition.
	Opposites map[string]Opposite
	// Lookups find owners' controllers, by cluster name ("" for the one cluster of a
	// plain watch); none: a chain ends at the first controller its object names.
	Lookups map[string]Lookup
	// Listeners is how many sinks every event goes to: a decision is committed to the
	// checkpoint's state once each has been delivered its event. Persist says there is a
	// checkpoint.
	Listeners int
	Persist   bool
	Warn      func(format string, args ...any)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Step is the episodes step, and the part of the run whose clock resolves episodes and
// makes digests (pipeline.Part).
type Step struct {
	cfg         Config
	controllers *controllers
	emit        func(*event.Event) bool

	mu       sync.Mutex
	open     map[openKey]*episode
	byObject map[objectKey][]*episode
	digests  []time.Time // per sink: when its next digest is due
	version  uint64      // of the last record made

	// The checkpoint's episodes, by cluster and ID, as delivered (state.go).
	cmu         sync.Mutex
	committed   map[string]map[string]*record
	changed     map[string]bool // clusters whose committed episodes changed since Save
	droppedOnce sync.Once

	clock   atomic.Bool // the clock runs: Process does not advance it
	stop    chan struct{}
	stopped chan struct{}
}

type openKey struct {
	sink int
	key  string
}

// objectKey names one object of a cluster.
type objectKey struct {
	cluster, kind, namespace, name string
}

// episode is one open episode.
type episode struct {
	sink int
	ep   event.Episode
	// lastSent is when the sink was last given a message of it; lastNews when an event
	// of one of its objects last came.
	lastSent, lastNews time.Time
	// members are its objects: true while in trouble, false once their opposite came or
	// they were deleted.
	members map[objectKey]bool
	// recovering is when its last object in trouble recovered (zero while one is), by
	// what (the opposite's name, "deleted").
	recovering  time.Time
	recoveredBy string
	// last is the episode's last object seen, shown with its resolution.
	last object
	// digested is how many occurrences the last digest counted.
	digested int
	version  uint64
}

// object is an event's object as an episode keeps it.
type object struct {
	cluster  string
	resource schema.GroupVersionResource
	kind     string
	obj      runtime.Object
}

// New makes the step; nil when no sink has episodes.
func New(cfg Config) *Step {
	if !slices.ContainsFunc(cfg.Sinks, func(s *Settings) bool { return s != nil }) {
		return nil
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Warn == nil {
		cfg.Warn = func(string, ...any) {}
	}
	for _, s := range cfg.Sinks {
		if s != nil && s.ResolveAfter <= 0 {
			s.ResolveAfter = DefaultResolveAfter
		}
	}
	return &Step{cfg: cfg, controllers: newControllers(cfg.Lookups, cfg.Warn),
		open: map[openKey]*episode{}, byObject: map[objectKey][]*episode{}, digests: make([]time.Time, len(cfg.Sinks)),
		committed: map[string]map[string]*record{}, changed: map[string]bool{}}
}

// EmitTo says where the step's clock hands the events it makes: the pipeline from this
// step on (pipeline.Pipeline.From).
func (s *Step) EmitTo(emit func(*event.Event) bool) { s.emit = emit }

// Start does nothing: the clock starts once the first lists are in (Synced), so that a
// resumed episode whose objects changed while kubeevents was down hears of it first.
func (s *Step) Start(context.Context) error { return nil }

// Synced starts the clock.
func (s *Step) Synced() {
	if s.emit == nil || !s.clock.CompareAndSwap(false, true) {
		return
	}
	s.stop, s.stopped = make(chan struct{}), make(chan struct{})
	now := s.cfg.Now()
	s.mu.Lock()
	for i, set := range s.cfg.Sinks {
		if set != nil && set.Digest > 0 {
			s.digests[i] = now.Add(set.Digest)
		}
	}
	s.mu.Unlock()
	go func() {
		defer close(s.stopped)
		t := time.NewTicker(Tick)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.Advance(s.cfg.Now())
			}
		}
	}()
}

// Stop stops the clock: what it would resolve next is the next run's (the checkpoint
// keeps it).
func (s *Step) Stop() error {
	if s.stop != nil {
		close(s.stop)
		<-s.stopped
	}
	return nil
}

// Advance resolves the episodes due at now and makes the digests due, each handed on
// as an event of its own.
func (s *Step) Advance(now time.Time) {
	for _, ev := range s.due(now) {
		if s.emit != nil {
			s.emit(ev)
		}
	}
}

// Process is the step: it records in ev its decision for each sink with episodes.
func (s *Step) Process(ev *event.Event) {
	switch {
	case ev.Type == event.EpisodeStep || ev.Type == event.DigestStep:
		return // the clock's own: decided already, committed as it settles
	case ev.Type == event.Sync || ev.Related || ev.Object == nil:
		return
	}
	m := ev.Meta()
	if m == nil {
		return
	}
	now := ev.Time
	if now.IsZero() {
		now = s.cfg.Now()
	}
	obj := objectKey{cluster: ev.Cluster, kind: ev.Kind, namespace: m.GetNamespace(), name: m.GetName()}
	occurrences := s.occurrences(ev)

	s.mu.Lock()
	var changed []*episode
	// Its objects' news first: an opposite, a deletion; then what happened to it now.
	for _, e := range s.byObject[obj] {
		e.lastNews = now
		e.last = object{cluster: ev.Cluster, resource: ev.Resource, kind: ev.Kind, obj: ev.Object}
		opposite := s.cfg.Opposites[e.ep.Transition]
		switch {
		case ev.Type == event.Deleted:
			s.recovered(e, obj, "deleted", now)
		case opposite.Name != "" && slices.Contains(ev.On, opposite.Name):
			s.recovered(e, obj, opposite.Name, now)
		default:
			continue
		}
		changed = append(changed, e)
	}
	var decisions []event.EpisodeDecision
	for _, o := range occurrences {
		e, action := s.occurred(o, obj, ev, now)
		changed = append(changed, e)
		if decisions == nil {
			decisions = make([]event.EpisodeDecision, len(s.cfg.Sinks))
		}
		if d := &decisions[o.sink]; priority(action) > priority(d.Action) {
			d.Action, d.Episode = action, s.snapshot(e)
		}
		if action == event.EpisodeOpen || action == event.EpisodeUpdate {
			e.ep.Since = 0 // the sink is given this one
		}
	}
	var due []*event.Event
	if !s.clock.Load() {
		due = s.dueLocked(now) // no clock (a replay): the events' times move it
	}
	commit := s.records(changed)
	s.mu.Unlock()

	ev.Episodes = decisions
	s.settle(ev, commit)
	for _, d := range due {
		if s.emit != nil {
			s.emit(d)
		}
	}
}

// priority orders the actions of one sink's episodes on one event: the one it is given.
func priority(a event.EpisodeAction) int {
	switch a {
	case event.EpisodeOpen:
		return 3
	case event.EpisodeUpdate:
		return 2
	case event.EpisodeHeld:
		return 1
	}
	return 0
}

// occurrence is one of a sink's transitions that happened in an event, with the key of
// the episode it belongs to.
type occurrence struct {
	sink       int
	transition string
	key        string
	controller event.Owner
}

// occurrences are the sinks' transitions that happened in ev, with their episodes'
// keys: computed before the step's lock is taken, as they may ask the server.
func (s *Step) occurrences(ev *event.Event) []occurrence {
	if len(ev.On) == 0 || ev.Type == event.Deleted {
		return nil
	}
	var out []occurrence
	var top *event.Owner
	controller := func() event.Owner {
		if top == nil {
			t := s.controllers.top(ev.Cluster, ev.Kind, ev.Meta())
			top = &t
		}
		return *top
	}
	for i, set := range s.cfg.Sinks {
		if set == nil {
			continue
		}
		for _, t := range ev.On {
			if !slices.Contains(set.On, t) {
				continue
			}
			key, c, ok := s.key(set, ev, t, controller)
			if ok {
				out = append(out, occurrence{sink: i, transition: t, key: key, controller: c})
			}
		}
	}
	return out
}

// key is the key of the episode an occurrence of transition t in ev belongs to for the
// sink set, and the controller it names; false when the sink's group gives it none.
func (s *Step) key(set *Settings, ev *event.Event, t string, controller func() event.Owner) (string, event.Owner, bool) {
	if set.Group == nil {
		c := controller()
		raw, _ := json.Marshal([]string{ev.Cluster, ev.Meta().GetNamespace(), c.Kind, c.Name, t})
		return string(raw), c, true
	}
	var c event.Owner
	input, err := set.Group.Input(ev, nil, false)
	if err == nil {
		envelope, _ := input.(map[string]any)
		envelope = maps.Clone(envelope)
		if envelope == nil {
			envelope = map[string]any{}
		}
		envelope["transition"] = t
		if set.Group.Reads("controller") {
			c = controller()
			envelope["controller"] = map[string]any{"kind": c.Kind, "name": c.Name}
		}
		var outs []any
		if outs, err = set.Group.Run(context.Background(), envelope); err == nil {
			if len(outs) == 0 || outs[0] == nil {
				return "", c, false
			}
			var buf []byte
			if buf, err = jq.AppendOutput(nil, outs[0], false); err == nil {
				if c == (event.Owner{}) {
					c = event.Owner{Kind: ev.Kind, Name: ev.Meta().GetName()}
				}
				return string(trimNewline(buf)), c, true
			}
		}
	}
	s.cfg.Warn("sink %q: group: jq: %v on %s %s %s; the event is in no episode", set.Name, err, ev.Type, ev.Kind, ev.Key())
	return "", c, false
}

func trimNewline(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}

// occurred counts an occurrence in its episode, opening it if none is open, and says
// what the sink does with the event.
func (s *Step) occurred(o occurrence, obj objectKey, ev *event.Event, now time.Time) (*episode, event.EpisodeAction) {
	set := s.cfg.Sinks[o.sink]
	k := openKey{o.sink, o.key}
	e := s.open[k]
	if e == nil {
		e = &episode{sink: o.sink, lastSent: now, lastNews: now, members: map[objectKey]bool{},
			ep: event.Episode{ID: episodeID(set.Name, o.key, now), Key: o.key, Transition: o.transition,
				Controller: o.controller, Namespace: obj.namespace, Cluster: ev.Cluster,
				Opened: now, Last: now, Count: 1, Since: 1, Ref: event.NewEpisodeRef("")}}
		s.open[k] = e
		s.member(e, obj)
		e.last = object{cluster: ev.Cluster, resource: ev.Resource, kind: ev.Kind, obj: ev.Object}
		return e, event.EpisodeOpen
	}
	s.member(e, obj)
	e.last = object{cluster: ev.Cluster, resource: ev.Resource, kind: ev.Kind, obj: ev.Object}
	e.recovering, e.recoveredBy = time.Time{}, ""
	e.ep.Count++
	e.ep.Since++
	if now.After(e.ep.Last) {
		e.ep.Last = now
	}
	e.lastNews = now
	if set.Digest > 0 || now.Sub(e.lastSent) < set.Cooldown {
		return e, event.EpisodeHeld
	}
	e.lastSent = now
	return e, event.EpisodeUpdate
}

// member makes obj one of e's objects, in trouble.
func (s *Step) member(e *episode, obj objectKey) {
	if _, ok := e.members[obj]; !ok {
		s.byObject[obj] = append(s.byObject[obj], e)
	}
	e.members[obj] = true
}

// recovered says that obj, one of e's objects, is no longer in trouble (by what: its
// opposite's name, "deleted"); once none is, e is recovering.
func (s *Step) recovered(e *episode, obj objectKey, by string, now time.Time) {
	e.members[obj] = false
	for _, troubled := range e.members {
		if troubled {
			return
		}
	}
	if e.recovering.IsZero() {
		e.recovering = now
	}
	e.recoveredBy = by
}

// due resolves the episodes due at now and makes the digests due.
func (s *Step) due(now time.Time) []*event.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dueLocked(now)
}

func (s *Step) dueLocked(now time.Time) []*event.Event {
	var out []*event.Event
	for _, k := range slices.SortedFunc(maps.Keys(s.open), func(a, b openKey) int {
		return s.open[a].ep.Opened.Compare(s.open[b].ep.Opened)
	}) {
		e := s.open[k]
		set := s.cfg.Sinks[e.sink]
		var by string
		switch {
		case !e.recovering.IsZero() && !now.Before(e.recovering.Add(s.holds(e, set))):
			by = e.recoveredBy
		case !now.Before(e.lastNews.Add(set.ResolveAfter)):
			by = "quiet"
		default:
			continue
		}
		e.ep.Resolved, e.ep.ResolvedBy = now, by
		delete(s.open, k)
		for obj := range e.members {
			s.byObject[obj] = slices.DeleteFunc(s.byObject[obj], func(x *episode) bool { return x == e })
			if len(s.byObject[obj]) == 0 {
				delete(s.byObject, obj)
			}
		}
		ev := s.resolution(e, now)
		s.settle(ev, s.records([]*episode{e}))
		out = append(out, ev)
	}
	for i, set := range s.cfg.Sinks {
		if set == nil || set.Digest <= 0 || s.digests[i].IsZero() || now.Before(s.digests[i]) {
			continue
		}
		s.digests[i] = now.Add(set.Digest)
		if ev := s.digest(i, now); ev != nil {
			out = append(out, ev)
		}
	}
	return out
}

// holds is how long e's opposite must hold: its transition's own time, at most the
// sink's resolve-after; none for an episode whose objects are gone and that has no
// opposite.
func (s *Step) holds(e *episode, set *Settings) time.Duration {
	return min(s.cfg.Opposites[e.ep.Transition].Holds, set.ResolveAfter)
}

// resolution is the event that says e was resolved: its last object's, of its own type.
func (s *Step) resolution(e *episode, now time.Time) *event.Event {
	ev := &event.Event{Type: event.EpisodeStep, Time: now, Cluster: e.last.cluster, Resource: e.last.resource,
		Kind: e.last.kind, Object: e.last.obj}
	ev.Episodes = make([]event.EpisodeDecision, len(s.cfg.Sinks))
	ev.Episodes[e.sink] = event.EpisodeDecision{Action: event.EpisodeResolve, Episode: s.snapshot(e)}
	return ev
}

// digest is sink i's summary of its open episodes, if one of them went on since the
// last one; nil otherwise.
func (s *Step) digest(i int, now time.Time) *event.Event {
	var list []*episode
	news := false
	for _, e := range s.open {
		if e.sink != i {
			continue
		}
		list = append(list, e)
		news = news || e.ep.Count != e.digested
	}
	if !news {
		return nil
	}
	slices.SortFunc(list, func(a, b *episode) int { return a.ep.Opened.Compare(b.ep.Opened) })
	d := event.EpisodeDecision{Action: event.EpisodeDigest}
	for _, e := range list {
		d.Digest = append(d.Digest, s.snapshot(e))
		e.digested, e.ep.Since = e.ep.Count, 0
	}
	ev := &event.Event{Type: event.DigestStep, Time: now}
	ev.Episodes = make([]event.EpisodeDecision, len(s.cfg.Sinks))
	ev.Episodes[i] = d
	s.settle(ev, s.records(list))
	return ev
}

// snapshot is e as it stands now, for a decision.
func (s *Step) snapshot(e *episode) *event.Episode {
	c := e.ep
	if c.Resolved.IsZero() {
		c.Expires = e.lastNews.Add(s.cfg.Sinks[e.sink].ResolveAfter)
	}
	c.Troubled = 0
	for _, troubled := range e.members {
		if troubled {
			c.Troubled++
		}
	}
	return &c
}

// episodeID names an episode: the same for its sink, key and opening time.
func episodeID(sink, key string, opened time.Time) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d", sink, key, opened.UnixNano()))
	return hex.EncodeToString(sum[:6])
}

// Open is how many episodes are open now, of every sink (the live view and top count
// them).
func (s *Step) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}
