package pipeline

import (
	"sync"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Sequence numbers the stream's events and ends the stream: its steps (Number,
// Condition, Limit) are Ordered, so events pass them one at a time and no event is
// numbered after the one that ended the stream, even when that one comes early in a
// long initial list whose rest is already decoded.
type Sequence struct {
	// ended, last and cause change only under the pipeline's lock (the ordered steps, or
	// End through Pipeline.Locked); mu lets the rest of the run read them.
	mu    sync.Mutex
	next  uint64 // the last Seq handed out
	ended bool
	last  uint64 // the Seq of the last event numbered when the stream ended
	cause EndCause
	done  chan struct{}
}

// EndCause says what ended the stream.
type EndCause uint8

const (
	NotEnded  EndCause = iota
	Condition          // an exit condition was met (--until, --until-deleted, --until-rollout)
	Limit              // --max-events were made
)

// NewSequence starts numbering at 1.
func NewSequence() *Sequence { return &Sequence{done: make(chan struct{})} }

// Number is the step that numbers each event, and leaves out (LeftOutOver) those that
// come once the stream has ended.
func (s *Sequence) Number() Stage {
	return StageFunc(func(ev *event.Event) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ended {
			ev.LeftOut = event.LeftOutOver
			return
		}
		s.next++
		ev.Seq = s.next
	})
}

// Condition is the step that ends the stream at the event met says meets the run's exit
// condition (nil: the run has none, and neither has the step).
func (s *Sequence) Condition(met func(ev *event.Event) bool) Stage {
	if met == nil {
		return nil
	}
	return StageFunc(func(ev *event.Event) {
		if met(ev) {
			ev.EndsStream = true
			s.end(Condition, ev.Seq)
		}
	})
}

// Limit is the step that ends the stream at its max-th event (0: no limit, no step).
func (s *Sequence) Limit(max uint64) Stage {
	if max == 0 {
		return nil
	}
	return StageFunc(func(ev *event.Event) {
		if ev.Seq == max {
			ev.EndsStream = true
			s.end(Limit, ev.Seq)
		}
	})
}

// End ends the stream without an event (the objects --until-deleted waits for never
// existed): the events numbered so far are the whole stream. Call it through
// Pipeline.Locked, so that no event is being numbered meanwhile.
func (s *Sequence) End(cause EndCause) {
	s.mu.Lock()
	last := s.next
	s.mu.Unlock()
	s.end(cause, last)
}

func (s *Sequence) end(cause EndCause, last uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended, s.last, s.cause = true, last, cause
	close(s.done)
}

// Ended is closed once the stream has ended.
func (s *Sequence) Ended() <-chan struct{} { return s.done }

// EndedAt says what ended the stream (NotEnded: nothing yet) and the Seq of the last
// event then (0 if none was made).
func (s *Sequence) EndedAt() (cause EndCause, last uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cause, s.last
}

// Numbered is the last Seq handed out.
func (s *Sequence) Numbered() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// Locked runs f under the pipeline's lock, between two events of its ordered steps.
func (p *Pipeline) Locked(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
}
