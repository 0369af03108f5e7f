package health

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/pipeline"
)

// Config is what the health step is given.
type Config struct {
	// Rules are the health rules compiled (nil: kstatus alone).
	Rules *Rules
	// StallAfter is how long an object may stay InProgress without progress before the
	// step makes a STALLED event for it (0: never).
	StallAfter time.Duration
	// StatusWritten are the custom resources whose definition has a status subresource:
	// one of them without a status is InProgress, not kstatus's Current.
	StatusWritten []schema.GroupResource
}

// Step is the pipeline's health step: it gives every event of an object (SYNC events
// too) its health, with the status of the object's previous event, and makes the
// STALLED events (Run, or Replayed for a recording).
type Step struct {
	rules         *Rules
	stallAfter    time.Duration
	statusWritten map[schema.GroupResource]bool
	pods          podMemo

	mu      sync.Mutex
	objects map[objectKey]*tracked
	stalls  stallQueue    // the objects InProgress, by when they stall (StallAfter > 0)
	wake    chan struct{} // told when a stall earlier than the first may have come
}

// objectKey names an object of the run.
type objectKey struct {
	cluster  string
	resource schema.GroupResource
	ns, name string
}

// tracked is what the step keeps of one object: its last health, and while it is
// InProgress, what its STALLED event would be made of.
type tracked struct {
	status  event.HealthStatus
	message string
	// When InProgress (and stalls are watched): since when it made no progress, when it
	// stalls, and its last event (the STALLED event's object, owners and flags).
	progress time.Time
	due      time.Time
	last     *event.Event
	fired    bool
	index    int // in the stall queue; -1 when not in it
}

// New is the health step of cfg.
func New(cfg Config) *Step {
	s := &Step{rules: cfg.Rules, stallAfter: cfg.StallAfter, objects: map[objectKey]*tracked{}, wake: make(chan struct{}, 1),
		statusWritten: map[schema.GroupResource]bool{}}
	for _, gr := range cfg.StatusWritten {
		s.statusWritten[gr] = true
	}
	return s
}

// Of is an object's health, as the step computes it at an event, without its previous
// status: a DELETED event's object is NotFound (one that only left the selection is
// judged by its last state); one being deleted Terminating; else its kind's rule, if
// one gives an answer; else a custom resource whose controller writes its status
// (StatusWritten) but has not yet is InProgress (kstatus would say Current: it has no
// conditions); else kstatus.
func (s *Step) Of(ev *event.Event) event.Health {
	if ev.Type == event.Deleted && ev.Reason != event.ReasonSelector {
		msg := "deleted"
		if ev.FinalStateUnknown {
			msg = "deleted (its final state is unknown)"
		}
		return event.Health{Status: event.HealthNotFound, Message: msg}
	}
	if m, err := meta.Accessor(ev.Object); err == nil && m.GetDeletionTimestamp() != nil {
		return event.Health{Status: event.HealthTerminating, Message: "Resource scheduled for deletion"}
	}
	if h, ok := s.rules.Eval(ev); ok {
		return h
	}
	if u, ok := ev.Object.(*unstructured.Unstructured); ok && s.statusWritten[ev.Resource.GroupResource()] {
		if status, _ := u.Object["status"].(map[string]any); len(status) == 0 {
			return event.Health{Status: event.HealthInProgress, Message: "no status yet: its controller has not reported on it"}
		}
	}
	if pod, ok := ev.Object.(*corev1.Pod); ok {
		return s.pods.of(pod)
	}
	return Kstatus(ev.Object)
}

// Process gives ev its health. Core Events (--with-events) have none; a STALLED event
// has its own already.
func (s *Step) Process(ev *event.Event) {
	if ev.Related || ev.Type == event.Stalled || ev.Type == event.RolloutStep {
		return
	}
	h := s.Of(ev)
	if ev.Owners != nil && len(ev.Owners) == 0 && ev.Rollout == nil {
		// The object --owned follows, of a kind without a rollout of its own: its rollout
		// line is its health.
		ev.Rollout = rolloutOf(h)
	}
	key, ok := keyOf(ev)
	if !ok {
		ev.Health = &h
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.objects[key]
	if t != nil {
		h.Previous = t.status
	}
	ev.Health = &h
	switch {
	case ev.Type == event.Deleted:
		if t != nil {
			s.unqueue(t)
			delete(s.objects, key)
		}
		return
	case t == nil:
		t = &tracked{index: -1}
		s.objects[key] = t
	case ev.Type == event.Sync:
		return // no change: nothing progressed, nothing to track
	}
	progressed := t.status != h.Status || t.message != h.Message
	t.status, t.message = h.Status, h.Message
	if s.stallAfter <= 0 {
		return
	}
	if h.Status != event.HealthInProgress {
		s.unqueue(t)
		t.last = nil
		return
	}
	// What the STALLED event would be made of, without the rest of the event (its JSON,
	// its diff), which would be kept for nothing.
	t.last = &event.Event{Cluster: ev.Cluster, Resource: ev.Resource, Kind: ev.Kind, Object: ev.Object, Child: ev.Child}
	if progressed || t.progress.IsZero() {
		t.progress, t.fired = ev.Time, false
		t.due = ev.Time.Add(s.stallAfter)
		if t.index < 0 {
			heap.Push(&s.stalls, t)
		} else {
			heap.Fix(&s.stalls, t.index)
		}
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

func (s *Step) unqueue(t *tracked) {
	if t.index >= 0 {
		heap.Remove(&s.stalls, t.index)
	}
}

// keyOf is the key of ev's object; false for an object without metadata.
func keyOf(ev *event.Event) (objectKey, bool) {
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return objectKey{}, false
	}
	return objectKey{cluster: ev.Cluster, resource: ev.Resource.GroupResource(), ns: m.GetNamespace(), name: m.GetName()}, true
}

// due pops the objects that stall by now, as STALLED events.
func (s *Step) due(now time.Time) []*event.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*event.Event
	for s.stalls.Len() > 0 && !s.stalls[0].due.After(now) {
		t := heap.Pop(&s.stalls).(*tracked)
		if t.fired || t.last == nil {
			continue
		}
		t.fired = true
		out = append(out, stalledEvent(t, s.stallAfter))
	}
	return out
}

// next is when the first object stalls; zero when none is InProgress.
func (s *Step) next() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalls.Len() == 0 {
		return time.Time{}
	}
	return s.stalls[0].due
}

// stalledEvent is the STALLED event of t: its last state, at the time it stalled.
func stalledEvent(t *tracked, after time.Duration) *event.Event {
	last := t.last
	return &event.Event{Type: event.Stalled, Time: t.due, Cluster: last.Cluster, Resource: last.Resource, Kind: last.Kind,
		Object: last.Object, Child: last.Child,
		Health: &event.Health{Status: event.HealthInProgress, Previous: event.HealthInProgress,
			Message: fmt.Sprintf("no progress for %s: %s", after, t.message)}}
}

// Run is the step's source of STALLED events in a live run: each is handed over once
// its object has been InProgress for StallAfter without progress, until ctx ends.
func (s *Step) Run(ctx context.Context, take func(*event.Event) bool) error {
	if s.stallAfter <= 0 {
		<-ctx.Done()
		return nil
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := time.Hour
		if next := s.next(); !next.IsZero() {
			wait = max(time.Until(next), 0)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-s.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		case <-timer.C:
		}
		for _, ev := range s.due(time.Now()) {
			if !take(ev) {
				<-ctx.Done() // the stream is over; the run stops its sources
				return nil
			}
		}
	}
}

// Replayed is src with the STALLED events a recording's times make: before each event,
// those of the objects that stalled by its time, as a live run would have made them
// (none after the recording's last event: its end is not a time that passed).
func (s *Step) Replayed(src pipeline.Source) pipeline.Source {
	if s.stallAfter <= 0 {
		return src
	}
	return replayed{src: src, step: s}
}

type replayed struct {
	src  pipeline.Source
	step *Step
}

func (r replayed) Run(ctx context.Context, take func(*event.Event) bool) error {
	return r.src.Run(ctx, func(ev *event.Event) bool {
		if ev.Type == event.Stalled {
			return true // one the recording holds: made again here, from its times
		}
		for _, stalled := range r.step.due(ev.Time) {
			if !take(stalled) {
				return false
			}
		}
		return take(ev)
	})
}

// stallQueue is a heap of the tracked objects by due time.
type stallQueue []*tracked

func (q stallQueue) Len() int           { return len(q) }
func (q stallQueue) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q stallQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *stallQueue) Push(x any) {
	t := x.(*tracked)
	t.index = len(*q)
	*q = append(*q, t)
}
func (q *stallQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*q = old[:len(old)-1]
	return t
}

// rolloutOf is the rollout a health says of an object without a rollout of its own.
func rolloutOf(h event.Health) *event.Rollout {
	state := event.RolloutProgressing
	switch h.Status {
	case event.HealthCurrent:
		state = event.RolloutComplete
	case event.HealthFailed:
		state = event.RolloutFailed
	case event.HealthNotFound:
		state = event.RolloutDeleted
	}
	return &event.Rollout{State: state, Message: string(h.Status) + ": " + h.Message}
}
