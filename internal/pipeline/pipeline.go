// Package pipeline is the path of every event of a run, from its sources to its
// listeners. A source (a live informer, a recording) hands over each raw change as an
// event holding only what the source knows (type, object, old object, initial list,
// final state unknown, left the selection, who made it); an ordered list of steps
// turns it into an event of the stream, each step recording what it decided in the
// event's own typed fields (owners, transitions, why it was left out, its number, ...);
// and Deliver, the last step, hands it to every listener that is to have it, through a
// lane each, so that a slow listener holds up nothing but itself.
//
// The engine says which steps a run has, and in which order (engine/pipeline.go); the
// steps live with what they know (owners, transitions, checkpoint, ...). Sources and
// the optional parts of a run (resume, owned, metrics, ...) meet it here too: Source and
// Part are the interfaces the engine drives them through.
package pipeline

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Stage is one step's work. Process looks at one event and records what it decides in
// the event's own fields: an event it leaves out of the stream gets a LeftOut reason,
// and no later step sees it. It must not keep the event or change its objects (they are
// shared with the informers' caches and every sink).
//
// Process is called from every source's goroutine at once, unless its step is Ordered.
type Stage interface {
	Process(ev *event.Event)
}

// StageFunc is a Stage of a function.
type StageFunc func(ev *event.Event)

// Process calls f.
func (f StageFunc) Process(ev *event.Event) { f(ev) }

// Step is a stage in the run's order.
type Step struct {
	// Name says what the step does, for the order's tests and docs ("owners", "filter").
	Name  string
	Stage Stage
	// Sync says the step also sees SYNC events (a listener's periodic re-delivery of an
	// unchanged object), which no step but those that annotate needs to see: they take
	// no number and are no change.
	Sync bool
	// Ordered says the step runs under the pipeline's one lock, with the ordered steps
	// next to it: events pass them one at a time, in the order they are numbered, so that
	// no event is numbered after the one that met a condition or reached a limit.
	Ordered bool
}

// Pipeline runs every event of a run through its steps, in order.
type Pipeline struct {
	segments []segment
	mu       sync.Mutex // held through an ordered segment
	leftOut  [event.LeftOutReasons]atomic.Uint64
}

// segment is a run of steps that are all ordered, or all not.
type segment struct {
	steps   []Step
	ordered bool
}

// New is a pipeline of steps, in the order given; nil stages are left out (a step of a
// feature the run does not have).
func New(steps ...Step) *Pipeline {
	p := &Pipeline{}
	for _, s := range steps {
		if s.Stage == nil {
			continue
		}
		if n := len(p.segments); n > 0 && p.segments[n-1].ordered == s.Ordered {
			p.segments[n-1].steps = append(p.segments[n-1].steps, s)
			continue
		}
		p.segments = append(p.segments, segment{steps: []Step{s}, ordered: s.Ordered})
	}
	return p
}

// Steps are the pipeline's steps, in order.
func (p *Pipeline) Steps() []Step {
	var steps []Step
	for _, seg := range p.segments {
		steps = append(steps, seg.steps...)
	}
	return steps
}

// Take runs ev through the steps. It reports false once the stream is over: ev was left
// out because it came after the end, or it is the event that ended the stream (a
// condition met, the last event --max-events allows). A source that can stop (a
// recording) stops then; an informer's next changes are left out anyway.
func (p *Pipeline) Take(ev *event.Event) bool {
	sync := ev.Type == event.Sync
	for _, seg := range p.segments {
		if seg.ordered && !sync {
			p.mu.Lock()
			left := p.run(seg.steps, ev, sync)
			p.mu.Unlock()
			if left {
				return ev.LeftOut != event.LeftOutOver
			}
			continue
		}
		if p.run(seg.steps, ev, sync) {
			return ev.LeftOut != event.LeftOutOver
		}
	}
	return !ev.EndsStream
}

// From is Take for events that a step makes itself (its clock's: an episode resolved
// after a quiet period): they run through the named step and those after it, not the
// ones before (they are no change an informer made: nothing to number, filter or
// follow). Nil when the pipeline has no such step.
func (p *Pipeline) From(name string) func(ev *event.Event) bool {
	var segments []segment
	for _, seg := range p.segments {
		if segments == nil {
			i := slices.IndexFunc(seg.steps, func(s Step) bool { return s.Name == name })
			if i < 0 {
				continue
			}
			seg.steps = seg.steps[i:]
		}
		segments = append(segments, seg)
	}
	if segments == nil {
		return nil
	}
	return func(ev *event.Event) bool {
		for _, seg := range segments {
			if seg.ordered {
				p.mu.Lock()
			}
			left := p.run(seg.steps, ev, false)
			if seg.ordered {
				p.mu.Unlock()
			}
			if left {
				return false
			}
		}
		return true
	}
}

// run runs ev through steps and reports whether one left it out.
func (p *Pipeline) run(steps []Step, ev *event.Event, sync bool) (leftOut bool) {
	for _, s := range steps {
		if sync && !s.Sync {
			continue
		}
		s.Stage.Process(ev)
		if ev.LeftOut != event.Kept {
			p.leftOut[ev.LeftOut].Add(1)
			return true
		}
	}
	return false
}

// LeftOut is how many events the steps left out for reason.
func (p *Pipeline) LeftOut(reason event.LeftOut) uint64 { return p.leftOut[reason].Load() }

// Source hands over the raw changes of a run, each as an event holding only what the
// source knows, in the order they happened (for an informer: the order client-go gives
// them; for a recording: the order it holds them).
type Source interface {
	// Run hands every change to take until ctx ends, or its input ends (a recording read
	// to the end), or take reports that the stream is over; only a failure to go on is an
	// error. take is called from one goroutine at a time, Run's or one of its own.
	Run(ctx context.Context, take func(ev *event.Event) bool) error
}

// Part is an optional piece of a run (resume, owned, metrics, the view, folding, ...):
// what it adds to the stream are steps (and sources) the engine places in its order;
// these are the moments of the run it is told of. The engine calls each method once,
// in this order, and Stop only if Start returned no error.
type Part interface {
	// Start is called once the run's sources are built and their rights checked, before
	// any of them starts and anything is printed: an error ends the run there.
	Start(ctx context.Context) error
	// Synced is called once every source has handed over its initial list.
	Synced()
	// Stop is called once the sources have stopped and the listeners have written what
	// they hold (or --grace ran out), in the reverse order of Start: its error (a
	// checkpoint that could not be written) is the run's, unless the run has one.
	Stop() error
}
