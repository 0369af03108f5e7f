// Package event holds Event, the one record of a change that the informers make and
// listeners, renderers and sinks share read-only, with its JSON and generic forms
// computed at most once however many sinks ask; and Until, which ends a stream at the
// event that meets a condition.
package event

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/generic"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// Encoder writes an object's JSON as encoding/json does (the render edge's part cache is
// one: package partjson), told by update what the encoding does to the versions it keeps.
type Encoder interface {
	Marshal(obj runtime.Object, update Update) ([]byte, error)
}

// Update says what an encoding does to the versions an Encoder keeps.
type Update uint8

const (
	KeepVersions  Update = iota // an older state (Old): compare with, but do not record
	RecordVersion               // the object's newest state
	ForgetObject                // its last state: the object was deleted
)

// EventType is what happened to an object, as printed in every sink.
type EventType string

const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	// Sync is a periodic resync re-delivery of an unchanged object. It reaches only the
	// listener whose resync period asked for it, so it carries no sequence number.
	Sync EventType = "SYNC"
	// RolloutStep is one step of a workload's rollout, made by --fold-rollouts (package
	// fold) for the sinks that fold the rollout's own events: Object is the workload,
	// Rollout says where its rollout stands and FoldedEvents how many events it stands
	// for. It is no change of its own, so it carries no sequence number.
	RolloutStep EventType = "ROLLOUT"
)

// LeftOut is why a step of the pipeline left an event out of the stream.
type LeftOut uint8

const (
	Kept LeftOut = iota
	// LeftOutUnfollowed: not an object the run follows (--owned's tree, the objects a
	// core Event of --with-events must be about), or not one of the NAME arguments.
	LeftOutUnfollowed
	LeftOutEventType // --event-types
	LeftOutNamespace // --exclude-namespace's patterns
	LeftOutBy        // --by, --not-by
	LeftOutOn        // --on: none of its transitions happened
	LeftOutUnchanged // --changes-only: nothing changed beyond the ignored paths
	LeftOutPast      // a core Event that happened before --since
	// LeftOutOver: the stream is over (a condition was met, or --max-events were made)
	// before this event was numbered.
	LeftOutOver
	LeftOutReasons // how many reasons there are
)

// ReasonSelector is the Reason of a DELETED event for an object that still exists but no
// longer matches the label or field selector: it left the watch, which the server says
// with a DELETED event.
const ReasonSelector = "selector"

// Event is the one event type that listeners and renderers see, whether the informer
// behind it is typed (client-go's scheme) or dynamic (unstructured). One Event is shared,
// read-only, by every listener that receives it: sinks must not modify Object or Old.
type Event struct {
	Type EventType
	// Time is when the informer handed the change over to kubeevents.
	Time time.Time
	// Seq increases by one for every ADDED/MODIFIED/DELETED event, in the order the
	// informers hand them over and before any buffering (events left out by Options.Skip
	// get none), so a gap in one sink's output is exactly where that sink dropped events
	// or, for a jq sink, where its expression yielded nothing. Zero for SYNC events.
	Seq uint64
	// Cluster is the kubeconfig context the object's cluster was reached through, when
	// several clusters are watched at once (--context a,b); "" with one cluster, whose
	// output says nothing about it.
	Cluster string
	// Resource is the watched resource; Kind its kind (e.g. "Pod").
	Resource schema.GroupVersionResource
	Kind     string
	// Object is the new state (for DELETED: the last known state). Its apiVersion and
	// kind are always set.
	Object runtime.Object
	// Old is the previous state for MODIFIED and SYNC events, nil otherwise.
	Old runtime.Object
	// InInitialList is true for ADDED events that come from the informer's first list.
	InInitialList bool
	// Related is true for a core Event about one of the watched objects (--with-events),
	// interleaved with their changes.
	Related bool
	// Child is true for an object of a type --owned watches for what the followed
	// object owns (which may be the followed object's own type too).
	Child bool
	// Past is true for a core Event about a watched object that happened before the
	// watch started (--with-events --since, or while kubeevents was down, --resume):
	// Time is then when it last happened.
	Past bool
	// FinalStateUnknown is true for a DELETED event whose deletion the watch missed
	// (client-go's DeletedFinalStateUnknown): Object is the last state seen before.
	FinalStateUnknown bool
	// Reason says why a DELETED event was made when it is not that the object was
	// deleted: ReasonSelector, or "" for a deletion.
	Reason string
	// Owners is the chain of owners from the followed object down to the object's direct
	// owner (watch TYPE/NAME --owned): empty but not nil for the followed object itself,
	// nil outside --owned. For a core Event (Related) it is the chain down to the object the Event
	// is about, that object included.
	Owners []Owner
	// ManagedFields is what the object's managedFields say about who made this change
	// (package attribution decides); nil when attribution is off, and for SYNC and core
	// Events.
	ManagedFields *managedfields.Record
	// RecordedBy is who made the change as a recording says (kubeevents replay: the
	// envelope's "by", "byAmbiguous" and each diff operation's "by"), said as it was
	// rather than decided again; nil for events of a watch, and where the recording
	// names nobody.
	RecordedBy *managedfields.Attribution
	// Rollout says where the object's rollout stands (--owned, for the kinds that have
	// one: Deployments, StatefulSets, DaemonSets, Jobs; a RolloutStep); nil otherwise.
	Rollout *Rollout
	// Health is the object's health (package health), when the run computes it; nil
	// otherwise.
	Health *Health

	// On names the transitions (--on, a sink's on=) that happened in this change: the
	// transitions step's decision, before the event is numbered, of those of the run's
	// transitions that did; nil when none did (package transition).
	On []string
	// LeftOut is why a step of the pipeline left the event out of the stream (Kept: it
	// was not): no later step, and no sink, sees it.
	LeftOut LeftOut
	// EndsStream says the event is the stream's last: it met the run's exit condition, or
	// it is the last one --max-events allows.
	EndsStream bool
	// SyncTo, for a SYNC event, are the listeners (by their index in the run) whose
	// resync period was due: it goes to those alone.
	SyncTo []int
	// Folded is set, before any sink has the event, when sinks that fold rollouts
	// (--fold-rollouts) leave it out: it is one of the expected events of a rollout in
	// progress (package fold).
	Folded bool
	// FoldedEvents is, for a RolloutStep, how many events were folded since the
	// workload's last step.
	FoldedEvents int
	// UnfoldedSeq is, for an event a failed rollout unfolded (a copy made by Unfold), the
	// sequence number the event had when it was folded; 0 otherwise.
	UnfoldedSeq uint64

	// Encoder writes the JSON of Object and Old: the informer's part cache, which copies
	// the JSON of parts that did not change since the object's previous version. Nil
	// encodes every object whole (encoding/json).
	Encoder Encoder

	// Written, if set, is called by each listener once its sink's Write returned for this
	// event without an error (written, or left out on purpose by a filter), or, for a sink
	// that holds events (a batch, a running command), once it settled the event as
	// delivered; never for one that failed or was dropped: the
	// checkpoint (--resume) counts an object's state as delivered once every sink has
	// called it. Set by the informer's Made hook before the event reaches any listener.
	Written func()

	// RecordedDiff is the diff a recording holds for this event (kubeevents replay): the
	// JSON array of the envelope's "diff", shown as it is rather than computed, even
	// without Old. Nil for events of a watch, and where the recording has none.
	RecordedDiff []byte

	object, old encoded // JSON and generic forms of Object and Old, each computed at most once
	memoMu      sync.Mutex
	memos       []memo // Memo's, a few: one per Differ, one per jq envelope
	// shown is, for a copy made by ShowingOn, the event it shows: whose encodings of
	// Object and Old it uses, so that they are made once (the informer's part encoder
	// must see each version once).
	shown *Event
}

type memo struct{ key, value any }

// encoded is one object's JSON encoding and its generic decoding, each computed at most
// once per event however many sinks ask, so the per-event hot path encodes once.
type encoded struct {
	jsonOnce  sync.Once
	json      []byte
	jsonErr   error
	valueOnce sync.Once
	value     any
	valueErr  error
}

func (c *encoded) jsonOf(obj runtime.Object, encoder Encoder, update Update) ([]byte, error) {
	c.jsonOnce.Do(func() {
		switch {
		case obj == nil:
		case encoder == nil:
			c.json, c.jsonErr = json.Marshal(obj)
		default:
			c.json, c.jsonErr = encoder.Marshal(obj, update)
		}
	})
	return c.json, c.jsonErr
}

// valueOf is the object as maps, slices, strings, bools and numbers (json.Number or
// float64): the one number normalisation per event, in the form gojq and jsondiff both
// accept (unstructured objects hold int64, which both reject). A typed object is built
// from its fields (generic.Value), or, for a type it does not build, decoded from its
// JSON (encoded once anyway for output), which allocates about 40% more; an unstructured
// one is already a map, so it is copied with its integers converted, which costs far
// less than a round trip.
func (c *encoded) valueOf(obj runtime.Object, encoder Encoder, update Update) (any, error) {
	c.valueOnce.Do(func() {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			c.value = generic.Copy(u.Object)
			return
		}
		if obj != nil {
			var built bool
			if c.value, built, c.valueErr = generic.Value(obj); built {
				return
			}
		}
		raw, err := c.jsonOf(obj, encoder, update)
		if err != nil || raw == nil {
			c.valueErr = err
			return
		}
		c.value, c.valueErr = generic.Decode(raw)
	})
	return c.value, c.valueErr
}

// SetJSON gives the JSON of Object and Old (either may be nil: encoded as usual when
// asked for), as a recording holds them (kubeevents replay): written as they are, never
// encoded again. Call it before the event is shared.
func (e *Event) SetJSON(object, old []byte) {
	if object != nil {
		e.object.jsonOnce.Do(func() { e.object.json = object })
	}
	if old != nil {
		e.old.jsonOnce.Do(func() { e.old.json = old })
	}
}

// encodings is the event whose encodings of Object and Old e uses: e, or the one a copy
// made by ShowingOn shows.
func (e *Event) encodings() *Event {
	if e.shown != nil {
		return e.shown
	}
	return e
}

// ObjectJSON is the compact JSON encoding of Object, computed at most once per event.
func (e *Event) ObjectJSON() ([]byte, error) {
	b := e.encodings()
	return b.object.jsonOf(b.Object, b.Encoder, b.objectUpdate())
}

// objectUpdate is what encoding Object tells the informer's encoder.
func (e *Event) objectUpdate() Update {
	switch {
	case e.Type == Deleted:
		return ForgetObject
	case e.Related:
		return KeepVersions // core Events about watched objects: each is new, none changes
	case e.InInitialList:
		// Listed objects were not decoded by the protobuf watch, so their next versions
		// share nothing with them: keeping their parts' JSON would only cost memory.
		return KeepVersions
	}
	return RecordVersion
}

// OldJSON is the compact JSON encoding of Old (nil if there is none), computed at most once.
func (e *Event) OldJSON() ([]byte, error) {
	b := e.encodings()
	return b.old.jsonOf(b.Old, b.Encoder, KeepVersions)
}

// ObjectValue is Object as generic JSON values (map[string]any, []any, string, bool,
// json.Number, nil), computed once: built from its fields (package generic) where its
// type allows, else decoded from ObjectJSON. Shared: callers must not modify it.
func (e *Event) ObjectValue() (any, error) {
	b := e.encodings()
	return b.object.valueOf(b.Object, b.Encoder, b.objectUpdate())
}

// OldValue is Old as generic JSON values, like ObjectValue; nil if there is no Old.
func (e *Event) OldValue() (any, error) {
	b := e.encodings()
	return b.old.valueOf(b.Old, b.Encoder, KeepVersions)
}

// Memo caches values derived from the event by the packages that render it (a Differ's
// diff, jq's envelope), one per key, so that every sink shares them: the value of a key
// is made by the first caller's compute, and every caller of that key must pass an
// equivalent one. compute runs under the event's lock, so it must not call Memo. Keys
// are compared with ==; a package keys with a type of its own, so that no other
// package's key can be equal to its.
func (e *Event) Memo(key any, compute func() any) any {
	e.memoMu.Lock()
	defer e.memoMu.Unlock()
	for _, m := range e.memos {
		if m.key == key {
			return m.value
		}
	}
	value := compute()
	e.memos = append(e.memos, memo{key, value})
	return value
}

// Unfold is a copy of a folded event, to be handed again to the sinks that left it out
// once its rollout failed: the same change, with its time, objects, owners and
// transitions, and the sequence number it had as UnfoldedSeq. The copy has no number of its
// own, as it is no new change; it is not followed by the checkpoint (no Written), and its
// objects are encoded whole (no Encoder: the informer's part encoder follows each
// object's versions once).
func (e *Event) Unfold() *Event {
	return &Event{Type: e.Type, Time: e.Time, Cluster: e.Cluster, Resource: e.Resource, Kind: e.Kind,
		Object: e.Object, Old: e.Old, InInitialList: e.InInitialList, Related: e.Related, Past: e.Past,
		FinalStateUnknown: e.FinalStateUnknown, Reason: e.Reason, Owners: e.Owners, Rollout: e.Rollout,
		Health: e.Health, On: e.On, UnfoldedSeq: e.Seq}
}

// ShowingOn is the event as a sink that names only these transitions sees it: e itself
// when its On names no other, else a copy whose On keeps only those (nil when none is
// left). The transitions are evaluated once per event for every sink (package
// transition); the others that happened were asked for by other sinks, and are not this
// one's news. The copy shares e's encodings of Object and Old but not its Memo: its
// envelope differs (its "on"), so a sink that sees one makes its diff and envelope again,
// which only events in which another sink's transition happened cost.
func (e *Event) ShowingOn(names []string) *Event {
	if !slices.ContainsFunc(e.On, func(name string) bool { return !slices.Contains(names, name) }) {
		return e
	}
	var on []string
	for _, name := range e.On {
		if slices.Contains(names, name) {
			on = append(on, name)
		}
	}
	return &Event{Type: e.Type, Time: e.Time, Seq: e.Seq, Cluster: e.Cluster, Resource: e.Resource, Kind: e.Kind,
		Object: e.Object, Old: e.Old, InInitialList: e.InInitialList, Related: e.Related, Past: e.Past,
		FinalStateUnknown: e.FinalStateUnknown, Reason: e.Reason, Owners: e.Owners, ManagedFields: e.ManagedFields,
		Rollout: e.Rollout, Health: e.Health, On: on, Folded: e.Folded, FoldedEvents: e.FoldedEvents, UnfoldedSeq: e.UnfoldedSeq,
		Encoder: e.Encoder, Written: e.Written, RecordedDiff: e.RecordedDiff, RecordedBy: e.RecordedBy, Child: e.Child,
		LeftOut: e.LeftOut, EndsStream: e.EndsStream, SyncTo: e.SyncTo, shown: e.encodings()}
}

// HasOld reports whether the event carries a previous state worth showing: MODIFIED and
// SYNC events do.
func (e *Event) HasOld() bool {
	return e.Old != nil && (e.Type == Modified || e.Type == Sync)
}

// Meta gives access to the object's metadata; nil if the object has none (never the case
// for objects an informer returns).
func (e *Event) Meta() metav1.Object {
	m, err := meta.Accessor(e.Object)
	if err != nil {
		return nil
	}
	return m
}

// Key is "namespace/name" (or "name" for cluster-scoped objects), unique per resource.
func (e *Event) Key() string {
	m := e.Meta()
	if m == nil {
		return ""
	}
	return cache.MetaObjectToName(m).String()
}
