package listener

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
)

// drain pops everything from r.
func drain(r *ring) []*event.Event {
	var out []*event.Event
	for {
		ev, ok := r.pop()
		if !ok {
			return out
		}
		out = append(out, ev)
	}
}

func TestRingFIFOAcrossWraparound(t *testing.T) {
	for _, p := range policies {
		t.Run(p.String(), func(t *testing.T) {
			r := newRing(4, p)
			var want, got []uint64
			seq := uint64(0)
			// Interleave puts and pops so head wraps around the 4 slots several times,
			// never exceeding capacity.
			for round := range 40 {
				for range min(round%4+1, 4-r.len()) {
					seq++
					if res := r.put(newEv(event.Added, "p"+strconv.FormatUint(seq, 10), seq)); res != queued {
						t.Fatalf("put %d: got %v, want queued", seq, res)
					}
					want = append(want, seq)
				}
				for range round%3 + 1 {
					if ev, ok := r.pop(); ok {
						got = append(got, ev.Seq)
					}
				}
			}
			got = append(got, seqs(drain(r))...)
			if !slices.Equal(got, want) {
				t.Fatalf("order: got %v, want %v", got, want)
			}
			if r.len() != 0 {
				t.Fatalf("len after draining = %d", r.len())
			}
			if _, ok := r.pop(); ok {
				t.Fatal("pop on an empty ring returned an event")
			}
		})
	}
}

func TestRingFullPolicies(t *testing.T) {
	const capacity, total = 4, 10
	tests := []struct {
		policy     Policy
		wantResult putResult // for the puts beyond capacity
		wantKept   []uint64
	}{
		{DropOldest, droppedOldest, seqRange(total-capacity+1, total)}, // the newest N
		{DropNewest, droppedNewest, seqRange(1, capacity)},             // the first N
		{Block, full, seqRange(1, capacity)},
		{Coalesce, full, seqRange(1, capacity)}, // distinct objects: waits like Block
	}
	for _, tt := range tests {
		t.Run(tt.policy.String(), func(t *testing.T) {
			r := newRing(capacity, tt.policy)
			counts := map[putResult]int{}
			for _, ev := range distinctEvents(total) {
				res := r.put(ev)
				counts[res]++
				if ev.Seq <= capacity && res != queued {
					t.Fatalf("put %d with room: %v, want queued", ev.Seq, res)
				}
				if ev.Seq > capacity && res != tt.wantResult {
					t.Fatalf("put %d when full: %v, want %v", ev.Seq, res, tt.wantResult)
				}
				if r.len() > capacity {
					t.Fatalf("len %d exceeds capacity %d", r.len(), capacity)
				}
			}
			if counts[queued] != capacity || counts[tt.wantResult] != total-capacity {
				t.Fatalf("results %v: want %d queued and %d %v", counts, capacity, total-capacity, tt.wantResult)
			}
			if got := seqs(drain(r)); !slices.Equal(got, tt.wantKept) {
				t.Fatalf("kept %v, want %v", got, tt.wantKept)
			}
		})
	}
}

func TestRingDropOldestKeepsOrderAfterWrap(t *testing.T) {
	r := newRing(3, DropOldest)
	for _, ev := range distinctEvents(3) {
		r.put(ev)
	}
	r.pop() // head moves to slot 1
	for _, ev := range distinctEvents(7)[3:] {
		r.put(ev) // 4 fits, 5..7 each drop the oldest
	}
	if got, want := seqs(drain(r)), []uint64{5, 6, 7}; !slices.Equal(got, want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
}

func TestRingPopReleasesEvents(t *testing.T) {
	for _, p := range policies {
		r := newRing(4, p)
		for _, ev := range distinctEvents(3) {
			r.put(ev)
		}
		drain(r)
		for i, ev := range r.slots {
			if ev != nil {
				t.Errorf("%s: slot %d still holds event %d after pop", p, i, ev.Seq)
			}
		}
		if len(r.slotOf) != 0 {
			t.Errorf("%s: slotOf still has %d entries after draining", p, len(r.slotOf))
		}
	}
}

func TestRingDiscard(t *testing.T) {
	for _, p := range policies {
		r := newRing(8, p)
		for _, ev := range distinctEvents(5) {
			r.put(ev)
		}
		r.pop()
		if n := r.discard(); n != 4 {
			t.Errorf("%s: discard returned %d, want 4", p, n)
		}
		if r.len() != 0 {
			t.Errorf("%s: len %d after discard", p, r.len())
		}
		if len(r.slotOf) != 0 {
			t.Errorf("%s: slotOf has %d entries after discard", p, len(r.slotOf))
		}
		// Still usable, and FIFO.
		for _, ev := range distinctEvents(8) {
			if res := r.put(ev); res != queued {
				t.Fatalf("%s: put after discard: %v", p, res)
			}
		}
		if got := seqs(drain(r)); !slices.Equal(got, seqRange(1, 8)) {
			t.Errorf("%s: after discard got %v", p, got)
		}
	}
}

func TestRingCoalesceMergesInPlace(t *testing.T) {
	r := newRing(4, Coalesce)
	a1 := newEv(event.Modified, "a", 1)
	a1.Old = podObj("a", "0")
	b2 := newEv(event.Modified, "b", 2)
	a3 := newEv(event.Modified, "a", 3)
	c4 := newEv(event.Added, "c", 4)
	a5 := newEv(event.Modified, "a", 5)
	want := []putResult{queued, queued, coalesced, queued, coalesced}
	for i, ev := range []*event.Event{a1, b2, a3, c4, a5} {
		if res := r.put(ev); res != want[i] {
			t.Fatalf("put %d: %v, want %v", ev.Seq, res, want[i])
		}
	}
	if r.len() != 3 {
		t.Fatalf("len %d, want 3 (one per object)", r.len())
	}
	got := drain(r)
	if names := []string{got[0].Key(), got[1].Key(), got[2].Key()}; !slices.Equal(names, []string{"default/a", "default/b", "default/c"}) {
		t.Fatalf("order %v: the merged event must keep the first one's place", names)
	}
	a := got[0]
	if a.Object != a5.Object {
		t.Errorf("merged Object is not the last event's object")
	}
	if a.Old != a1.Old {
		t.Errorf("merged Old is not the first event's Old")
	}
	if a.Seq != 5 || a.Type != event.Modified {
		t.Errorf("merged = %s seq %d, want MODIFIED seq 5", a.Type, a.Seq)
	}
	if got[1] != b2 || got[2] != c4 {
		t.Errorf("events for other objects were replaced")
	}
}

func TestRingCoalesceWhenFull(t *testing.T) {
	r := newRing(2, Coalesce)
	r.put(newEv(event.Added, "a", 1))
	r.put(newEv(event.Added, "b", 2))
	if res := r.put(newEv(event.Added, "c", 3)); res != full {
		t.Fatalf("new object into a full ring: %v, want full", res)
	}
	if res := r.put(newEv(event.Modified, "b", 4)); res != coalesced {
		t.Fatalf("queued object into a full ring: %v, want coalesced", res)
	}
	got := drain(r)
	if len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 4 {
		t.Fatalf("got seqs %v, want [1 4]", seqs(got))
	}
}

func TestRingCoalesceAfterPopQueuesAnew(t *testing.T) {
	r := newRing(4, Coalesce)
	a1 := newEv(event.Added, "a", 1)
	r.put(a1)
	if ev, _ := r.pop(); ev != a1 {
		t.Fatal("pop did not return the queued event")
	}
	// a1 is now with the sink: a later event about a must not be merged into it.
	a2 := newEv(event.Modified, "a", 2)
	if res := r.put(a2); res != queued {
		t.Fatalf("put after pop: %v, want queued", res)
	}
	if ev, _ := r.pop(); ev != a2 {
		t.Fatal("the later event was changed")
	}
	if a1.Type != event.Added || a1.Seq != 1 {
		t.Fatal("the delivered event was modified")
	}
}

func TestRingCoalesceKeysIncludeResource(t *testing.T) {
	r := newRing(4, Coalesce)
	pod := newEv(event.Added, "x", 1)
	cm := newEv(event.Added, "x", 2)
	cm.Resource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if res := r.put(pod); res != queued {
		t.Fatal(res)
	}
	if res := r.put(cm); res != queued {
		t.Fatalf("same namespace/name in another resource: %v, want queued", res)
	}
	other := newEv(event.Added, "x", 3)
	other.Object.(*corev1.Pod).Namespace = "other"
	if res := r.put(other); res != queued {
		t.Fatalf("same name in another namespace: %v, want queued", res)
	}
}

func TestParsePolicy(t *testing.T) {
	for _, name := range Policies() {
		p, err := ParsePolicy(name)
		if err != nil || p.String() != name {
			t.Errorf("ParsePolicy(%q) = %q, %v", name, p, err)
		}
	}
	if got := Policies(); !slices.Equal(got, []string{"block", "drop-oldest", "drop-newest", "coalesce"}) {
		t.Errorf("Policies() = %v", got)
	}
	if _, err := ParsePolicy("drop"); err == nil {
		t.Error("ParsePolicy accepted an unknown name")
	}
}

func TestStatsSummary(t *testing.T) {
	tests := []struct {
		s    Stats
		want string
	}{
		{Stats{Delivered: 11950, Dropped: 84}, "archive 11,950 delivered, 84 dropped"},
		{Stats{}, "archive 0 delivered"},
		{Stats{Delivered: 1, Dropped: 1000, Coalesced: 1234567, Failed: 3}, "archive 1 delivered, 1,000 dropped, 1,234,567 coalesced, 3 failed"},
		{Stats{Delivered: 999, Failed: 100}, "archive 999 delivered, 100 failed"},
		{Stats{Delivered: 5, Filtered: 2500, Coalesced: 1}, "archive 5 delivered, 2,500 filtered, 1 coalesced"},
	}
	for _, tt := range tests {
		if got := tt.s.Summary("archive"); got != tt.want {
			t.Errorf("Summary = %q, want %q", got, tt.want)
		}
	}
	for n, want := range map[uint64]string{0: "0", 12: "12", 123: "123", 1234: "1,234", 123456: "123,456", 1234567: "1,234,567", 18446744073709551615: "18,446,744,073,709,551,615"} {
		if got := diag.Count(n); got != want {
			t.Errorf("diag.Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestRingUnhandledPolicyFailsLoudly: a policy that put has no case for panics at the
// first full buffer, naming the policy, instead of quietly blocking. Every listed policy
// has its case (TestRingPolicies and the listener tests fill buffers under each).
func TestRingUnhandledPolicyFailsLoudly(t *testing.T) {
	r := newRing(1, Policy{"drop-random"})
	r.put(newEv(event.Added, "a", 1))
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), `"drop-random"`) {
			t.Errorf("put on a full ring under an unhandled policy: recovered %v, want a panic naming it", p)
		}
	}()
	r.put(newEv(event.Added, "b", 2))
}
