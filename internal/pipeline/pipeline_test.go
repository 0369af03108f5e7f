package pipeline

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/event"
)

// recorder is a Receiver that keeps what it is given; with refuse set, TryAdd refuses.
type recorder struct {
	mu     sync.Mutex
	events []*event.Event
	refuse bool
	gate   chan struct{} // when not nil, Add waits for it
}

func (r *recorder) Add(ev *event.Event) {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) TryAdd(ev *event.Event) bool {
	r.mu.Lock()
	refuse := r.refuse
	r.mu.Unlock()
	if refuse {
		return false
	}
	r.Add(ev)
	return true
}

func (r *recorder) seqs() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []uint64
	for _, ev := range r.events {
		out = append(out, ev.Seq)
	}
	return out
}

func added(name string) *event.Event {
	return &event.Event{Type: event.Added, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}}
}

// The steps run in order; one that leaves an event out stops it there, says why, and
// counts it; no number is spent on it, so the next event follows without a gap.
func TestStepsInOrderLeaveOutWithoutGap(t *testing.T) {
	var order []string
	step := func(name string) Step {
		return Step{Name: name, Stage: StageFunc(func(ev *event.Event) { order = append(order, name) })}
	}
	seq := NewSequence()
	r := &recorder{}
	d := NewDeliver([]Receiver{r}, nil, KeepBacklog)
	p := New(step("a"), Step{Name: "nil", Stage: nil},
		Step{Name: "filter", Stage: StageFunc(func(ev *event.Event) {
			order = append(order, "filter")
			if ev.Meta().GetName() == "skip" {
				ev.LeftOut = event.LeftOutUnchanged
			}
		})},
		Step{Name: "number", Stage: seq.Number(), Ordered: true}, step("b"), Step{Name: "deliver", Stage: d, Sync: true})
	if got := len(p.Steps()); got != 5 {
		t.Errorf("%d steps, want 5: a nil stage is no step", got)
	}
	for _, name := range []string{"one", "skip", "two"} {
		if !p.Take(added(name)) {
			t.Fatalf("Take(%s) says the stream is over", name)
		}
	}
	if want := []string{"a", "filter", "b", "a", "filter", "a", "filter", "b"}; !slices.Equal(order, want) {
		t.Errorf("steps ran %v, want %v", order, want)
	}
	if got := r.seqs(); !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("delivered seqs %v, want 1 2: the event left out took no number", got)
	}
	if p.LeftOut(event.LeftOutUnchanged) != 1 {
		t.Errorf("left out as unchanged: %d, want 1", p.LeftOut(event.LeftOutUnchanged))
	}
	// A SYNC sees only the steps that take SYNC events, and goes to its listeners only.
	order = nil
	other := &recorder{}
	d2 := NewDeliver([]Receiver{r, other}, nil, KeepBacklog)
	p2 := New(step("a"), Step{Name: "annotate", Stage: StageFunc(func(*event.Event) { order = append(order, "annotate") }), Sync: true},
		Step{Name: "number", Stage: seq.Number(), Ordered: true}, Step{Name: "deliver", Stage: d2, Sync: true})
	p2.Take(&event.Event{Type: event.Sync, Object: &corev1.Pod{}, SyncTo: []int{1}})
	if !slices.Equal(order, []string{"annotate"}) || len(other.events) != 1 || other.events[0].Seq != 0 || len(r.events) != 2 {
		t.Errorf("a SYNC went through %v, to %d and %d events, seq %v", order, len(r.events), len(other.events), other.seqs())
	}
}

// The condition is asked about each event as it is numbered: none is numbered after the
// one that met it, and the limit is counted only after the condition was asked.
func TestSequenceEndsTheStream(t *testing.T) {
	seq := NewSequence()
	var asked []string
	met := func(ev *event.Event) bool {
		asked = append(asked, ev.Meta().GetName())
		return ev.Meta().GetName() == "b"
	}
	r := &recorder{}
	p := New(Step{Name: "number", Stage: seq.Number(), Ordered: true},
		Step{Name: "conditions", Stage: seq.Condition(met), Ordered: true},
		Step{Name: "limit", Stage: seq.Limit(2), Ordered: true},
		Step{Name: "deliver", Stage: NewDeliver([]Receiver{r}, nil, KeepBacklog)})
	if !p.Take(added("a")) {
		t.Fatal("the stream ended at a")
	}
	if p.Take(added("b")) {
		t.Fatal("Take(b) says the stream goes on, though b met the condition")
	}
	if p.Take(added("c")) {
		t.Fatal("Take(c) after the end says the stream goes on")
	}
	if got := r.seqs(); !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("delivered %v, want a and b", got)
	}
	if cause, last := seq.EndedAt(); cause != Condition || last != 2 || seq.Numbered() != 2 {
		t.Errorf("ended by %v at %d with %d numbered; want the condition at 2, 2 numbered", cause, last, seq.Numbered())
	}
	select {
	case <-seq.Ended():
	default:
		t.Error("Ended not closed")
	}
	if !slices.Equal(asked, []string{"a", "b"}) || p.LeftOut(event.LeftOutOver) != 1 {
		t.Errorf("asked about %v, %d left out as over", asked, p.LeftOut(event.LeftOutOver))
	}

	// The limit alone ends at its event; End without an event keeps what was made.
	seq = NewSequence()
	p = New(Step{Name: "number", Stage: seq.Number(), Ordered: true}, Step{Name: "limit", Stage: seq.Limit(1), Ordered: true})
	if p.Take(added("a")) {
		t.Error("the first of --max-events 1 does not end the stream")
	}
	if cause, last := seq.EndedAt(); cause != Limit || last != 1 {
		t.Errorf("ended by %v at %d", cause, last)
	}
	seq = NewSequence()
	p = New(Step{Name: "number", Stage: seq.Number(), Ordered: true})
	p.Take(added("a"))
	p.Locked(func() { seq.End(Condition) })
	if p.Take(added("b")) || seq.Numbered() != 1 {
		t.Errorf("an event numbered (%d) after End", seq.Numbered())
	}
}

// Each receiver's resync comes at the first moment at or after its own period, as the
// source looks on the shortest one; periods below the minimum are raised to it.
func TestResyncSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := NewDeliver([]Receiver{&recorder{}, &recorder{}, &recorder{}, &recorder{}},
			[]time.Duration{0, 2 * time.Second, 5 * time.Second, 100 * time.Millisecond}, KeepBacklog)
		r := d.NewResync()
		if r.Period() != time.Second {
			t.Fatalf("period %v, want 1s (100ms raised)", r.Period())
		}
		var got [][]int
		for range 6 {
			time.Sleep(time.Second)
			got = append(got, r.Due(time.Now()))
		}
		want := [][]int{{3}, {1, 3}, {3}, {1, 3}, {2, 3}, {1, 3}}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("at %ds due %v, want %v", i+1, got[i], want[i])
			}
		}
		if NewDeliver([]Receiver{&recorder{}}, []time.Duration{0}, KeepBacklog).NewResync() != nil {
			t.Error("a schedule without a receiver that resyncs")
		}
	})
}

// A receiver that cannot take an event yet holds up nothing but itself: its lane keeps
// the events, in order, and hands them on once it takes them again; Drained waits for it.
func TestLaneHoldsUpOnlyItsReceiver(t *testing.T) {
	slow := &recorder{refuse: true, gate: make(chan struct{})}
	fast := &recorder{}
	d := NewDeliver([]Receiver{slow, fast}, nil, KeepBacklog)
	seq := NewSequence()
	p := New(Step{Name: "number", Stage: seq.Number(), Ordered: true}, Step{Name: "deliver", Stage: d})
	for _, name := range []string{"a", "b", "c"} {
		p.Take(added(name))
	}
	if got := fast.seqs(); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("the fast receiver got %v while the slow one waits", got)
	}
	drained := make(chan struct{})
	go func() {
		d.Drained()
		close(drained)
	}()
	select {
	case <-drained:
		t.Fatal("Drained returned while a lane still holds events")
	default:
	}
	close(slow.gate)
	<-drained
	if got := slow.seqs(); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("the slow receiver got %v, want 1 2 3 in order", got)
	}
}

// Under WaitForRoom (a recording read back) the source waits for a receiver that cannot
// take an event yet rather than read on into a backlog: nothing is kept but what the
// receivers hold.
func TestWaitForRoomHoldsUpTheSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &recorder{refuse: true, gate: make(chan struct{})}
		fast := &recorder{}
		d := NewDeliver([]Receiver{slow, fast}, nil, WaitForRoom)
		taken := make(chan struct{})
		go func() {
			d.Process(added("a"))
			close(taken)
		}()
		synctest.Wait()
		select {
		case <-taken:
			t.Fatal("the source went on while a receiver had no room")
		default:
		}
		close(slow.gate)
		<-taken
		d.Process(added("b"))
		d.Drained()
		for _, r := range []*recorder{slow, fast} {
			if got := len(r.events); got != 2 {
				t.Errorf("a receiver got %d events, want 2", got)
			}
		}
	})
}

// From runs a step's own events through that step and the ones after it only, ordered
// ones under the lock; nil for a step the pipeline has not.
func TestFromRunsTheStepsAfter(t *testing.T) {
	var seen []string
	step := func(name string) StageFunc {
		return func(ev *event.Event) { seen = append(seen, name) }
	}
	p := New(Step{Name: "filter", Stage: step("filter")}, Step{Name: "number", Stage: step("number"), Ordered: true},
		Step{Name: "episodes", Stage: step("episodes")}, Step{Name: "absent"},
		Step{Name: "limit", Stage: StageFunc(func(ev *event.Event) { seen = append(seen, "limit"); ev.LeftOut = event.LeftOutOver }), Ordered: true},
		Step{Name: "deliver", Stage: step("deliver")})
	if p.From("absent") != nil || p.From("nothing") != nil {
		t.Error("From of a step the pipeline has not")
	}
	if p.From("episodes")(&event.Event{Type: event.EpisodeStep}) {
		t.Error("an event left out reported as taken")
	}
	if want := []string{"episodes", "limit"}; !slices.Equal(seen, want) {
		t.Errorf("steps %q, want %q", seen, want)
	}
	if p.LeftOut(event.LeftOutOver) != 1 {
		t.Errorf("left out %d, want 1 counted", p.LeftOut(event.LeftOutOver))
	}
	seen = nil
	if !New(Step{Name: "a", Stage: step("a")}, Step{Name: "b", Stage: step("b")}).From("b")(&event.Event{Type: event.EpisodeStep}) || !slices.Equal(seen, []string{"b"}) {
		t.Errorf("steps %q", seen)
	}
}
