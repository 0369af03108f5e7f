package event

import (
	"encoding/json"
	"sync"
	"time"
)

// What the episodes step (package episode) decides: for a sink with on= transitions,
// the events in which one of its transitions happened to objects that belong together
// form an episode, which opens with its first event, is updated while it goes on, and is
// resolved when its opposite transition came and held or after a quiet period.

const (
	// EpisodeStep is an episode's news that no change of an object carries: one resolved
	// because its opposite held, or because nothing was heard of its objects for the
	// sink's resolve-after. Made by the episodes step's clock for the sinks it concerns
	// (Episodes); Object is the episode's last object seen (its kind, name and namespace
	// alone when the episode was resumed from a checkpoint since). No number: it is no
	// change.
	EpisodeStep EventType = "EPISODE"
	// DigestStep is a sink's summary of its open episodes (its digest=D), made every D
	// while it has any: Digest lists them. It has no object.
	DigestStep EventType = "DIGEST"
)

// EpisodeAction is what the episodes step decided for one sink about one event.
type EpisodeAction uint8

const (
	// EpisodeNone: the sink is not concerned; it takes the event as without episodes.
	EpisodeNone EpisodeAction = iota
	// EpisodeOpen: the event opens an episode: the sink delivers it at once, as the
	// episode's first message.
	EpisodeOpen
	// EpisodeUpdate: the episode goes on, and the sink's cooldown has passed since its
	// last message: it delivers the event as an update of the first message.
	EpisodeUpdate
	// EpisodeHeld: the episode goes on within the cooldown (or the sink sends digests):
	// the sink leaves the event out; the episode counts it.
	EpisodeHeld
	// EpisodeResolve: the episode ended (Episode.ResolvedBy says how).
	EpisodeResolve
	// EpisodeDigest: the sink's summary of its open episodes (a DigestStep).
	EpisodeDigest
)

var episodeActions = [...]string{"", "open", "update", "held", "resolve", "digest"}

// String is the action as JSON and formats name it: open, update, resolve, digest.
func (a EpisodeAction) String() string {
	if int(a) < len(episodeActions) {
		return episodeActions[a]
	}
	return ""
}

// EpisodeDecision is one sink's decision about one event.
type EpisodeDecision struct {
	Action EpisodeAction
	// Episode is the episode as it stood after the decision (a copy: it goes on).
	Episode *Episode
	// Digest, for EpisodeDigest, are the sink's open episodes, oldest first.
	Digest []*Episode
}

// Episode is one episode as it stood at a decision.
type Episode struct {
	// ID names the episode, the same in each of its events and across a resumed run.
	ID string
	// Key is what the sink's group expression gave for its events, as compact JSON.
	Key        string
	Transition string
	// Controller is the object at the top of the controller chain of the episode's
	// first object (followed through controller ownerReferences): itself when it has no
	// controller. Namespace is that object's ("" for a cluster-scoped one).
	Controller Owner
	Namespace  string
	Cluster    string
	// Resolved is set once it ended; ResolvedBy says how: the opposite transition that
	// held ("ready"), "deleted" when its objects are gone, or "quiet" when nothing was
	// heard of them for the sink's resolve-after.
	Resolved   time.Time
	ResolvedBy string
	Opened     time.Time
	// Last is when its transition last happened.
	Last time.Time
	// Count is how many times its transition happened, the first included; Since how
	// many of those the sink has not delivered (held within the cooldown).
	Count, Since int
	// Troubled is how many of its objects are in trouble now (their transition
	// happened, their opposite has not).
	Troubled int
	// Expires is when it will be resolved as quiet unless news of its objects comes
	// before (an alert's end, for a receiver that expires alerts); zero once resolved.
	Expires time.Time
	// Ref is the receiver's handle of the episode's first message, shared by every
	// copy of the episode: set by the sink that posted it, kept in the checkpoint.
	Ref *EpisodeRef
}

// State is "open" or "resolved".
func (e *Episode) State() string {
	if e.Resolved.IsZero() {
		return "open"
	}
	return "resolved"
}

// EpisodeRef is a receiver's handle of an episode's first message, as the sink that
// posted it writes it (Slack's channel and ts, Discord's message id), so that updates
// edit it or reply to it, in this run or a resumed one. Safe for concurrent use.
type EpisodeRef struct {
	mu    sync.Mutex
	value string
}

// NewEpisodeRef is a handle holding value ("" for none yet).
func NewEpisodeRef(value string) *EpisodeRef { return &EpisodeRef{value: value} }

// Get is the handle; "" while the first message has not been posted (or its receiver
// gave none).
func (r *EpisodeRef) Get() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.value
}

// Set keeps the handle.
func (r *EpisodeRef) Set(value string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.value = value
	r.mu.Unlock()
}

// ForSink is the event as the sink of index i takes it: e itself when the episodes
// step decided nothing for it, else a copy whose Episode is that decision.
func (e *Event) ForSink(i int) *Event {
	if i >= len(e.Episodes) || e.Episodes[i].Action == EpisodeNone {
		return e
	}
	c := e.copyShown()
	c.On = e.On
	c.Episode = &e.Episodes[i]
	return c
}

// episodeJSON is an episode as JSON and jq see it (the envelope's "episode", a digest's
// items).
type episodeJSON struct {
	ID         string          `json:"id"`
	Action     string          `json:"action,omitempty"`
	Transition string          `json:"transition"`
	State      string          `json:"state"`
	Cluster    string          `json:"cluster,omitempty"`
	Namespace  string          `json:"namespace,omitempty"`
	Controller *ownerJSON      `json:"controller,omitempty"`
	Key        json.RawMessage `json:"key,omitempty"`
	Opened     time.Time       `json:"opened"`
	Last       time.Time       `json:"last"`
	Count      int             `json:"count"`
	Since      int             `json:"since"`
	Troubled   int             `json:"troubled"`
	Expires    time.Time       `json:"expires,omitzero"`
	Resolved   time.Time       `json:"resolved,omitzero"`
	ResolvedBy string          `json:"resolvedBy,omitempty"`
}

type ownerJSON struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

func (e *Episode) json(action string) episodeJSON {
	j := episodeJSON{ID: e.ID, Action: action, Transition: e.Transition, State: e.State(), Cluster: e.Cluster,
		Namespace: e.Namespace, Opened: e.Opened.UTC(), Last: e.Last.UTC(), Count: e.Count, Since: e.Since,
		Troubled: e.Troubled, Expires: e.Expires.UTC(), Resolved: e.Resolved.UTC(), ResolvedBy: e.ResolvedBy}
	if e.Controller != (Owner{}) {
		j.Controller = &ownerJSON{Kind: e.Controller.Kind, Name: e.Controller.Name}
	}
	if json.Valid([]byte(e.Key)) {
		j.Key = json.RawMessage(e.Key)
	}
	return j
}

// MarshalJSON writes the episode as JSON output and jq's envelope have it:
//
//	{"id":"3f2a9c1b7d4e","transition":"crashloop","state":"open","namespace":"shop",
//	 "controller":{"kind":"Deployment","name":"web"},"key":[...],"opened":"…","last":"…",
//	 "count":14,"since":6,"troubled":1,"expires":"…"}
//
// with "resolved" and "resolvedBy" once it ended.
func (e *Episode) MarshalJSON() ([]byte, error) { return json.Marshal(e.json("")) }

// MarshalJSON writes the decision as the envelope's "episode": its episode with the
// action ("open", "update", "resolve"), or for a digest {"action":"digest"} (the
// episodes are the envelope's "digest").
func (d *EpisodeDecision) MarshalJSON() ([]byte, error) {
	if d.Episode == nil {
		return json.Marshal(struct {
			Action string `json:"action"`
		}{d.Action.String()})
	}
	return json.Marshal(d.Episode.json(d.Action.String()))
}
