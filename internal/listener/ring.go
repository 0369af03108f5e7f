package listener

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// putResult says what ring.put did with an event.
type putResult int

const (
	queued        putResult = iota
	coalesced               // merged into the event already queued for the same object
	droppedOldest           // queued, after discarding the oldest event
	droppedNewest           // discarded
	full                    // not queued: the policy says wait for room (block, or coalesce with no event of this object queued)
)

// ring is the bounded FIFO between a listener's Add and its delivery goroutine. Unlike
// client-go's RingGrowing it never grows: its capacity is fixed at creation and put applies
// the policy when it is full. It does no locking; the Listener guards it.
type ring struct {
	policy Policy
	slots  []*event.Event
	head   int // slot of the oldest event
	n      int // number of queued events

	// Coalesce only: which object each slot's event is about, and the reverse index to
	// the slot an object's next change may merge into (its newest queued event, if that
	// one is mergeable), so that it is found without a scan. Queued events never move
	// (only head does), so a slot index stays valid until its event is popped.
	keys   []objectKey
	slotOf map[objectKey]int
	// existed[i] is whether slot i's object existed for the reader before the first of the
	// events merged into it (that event was not an ADDED), for coalesce.
	existed []bool
}

// objectKey identifies an object across resources and clusters: Event.Key is unique
// per resource of one cluster only.
type objectKey struct {
	cluster  string
	resource schema.GroupVersionResource
	key      string
}

func newRing(capacity int, policy Policy) *ring {
	r := &ring{policy: policy, slots: make([]*event.Event, capacity)}
	if policy == Coalesce {
		r.keys = make([]objectKey, capacity)
		r.existed = make([]bool, capacity)
		r.slotOf = make(map[objectKey]int, capacity)
	}
	return r
}

func (r *ring) len() int { return r.n }

func (r *ring) put(ev *event.Event) putResult {
	if r.policy == Coalesce {
		k := objectKey{ev.Cluster, ev.Resource, ev.Key()}
		if i, ok := r.slotOf[k]; ok && mergeable(ev) {
			r.slots[i] = coalesce(r.slots[i], ev, r.existed[i])
			return coalesced
		}
		if r.n == len(r.slots) {
			return full
		}
		i := r.push(ev)
		r.keys[i] = k
		r.existed[i] = ev.Type != event.Added
		if mergeable(ev) {
			r.slotOf[k] = i
		} else {
			// Nothing merges into it, nor, to keep the order, into one queued before it.
			delete(r.slotOf, k)
		}
		return queued
	}
	if r.n < len(r.slots) {
		r.push(ev)
		return queued
	}
	switch r.policy {
	case DropOldest:
		r.pop()
		r.push(ev)
		return droppedOldest
	case DropNewest:
		return droppedNewest
	case Block:
		return full
	}
	// Only a policy added to policies without a case here gets this far: fail at the
	// first full buffer in any test rather than quietly block.
	panic(fmt.Sprintf("listener: ring.put has no case for on-full policy %q", r.policy))
}

// push appends ev, which must fit, and returns its slot.
func (r *ring) push(ev *event.Event) int {
	i := (r.head + r.n) % len(r.slots)
	r.slots[i] = ev
	r.n++
	return i
}

func (r *ring) pop() (*event.Event, bool) {
	if r.n == 0 {
		return nil, false
	}
	ev := r.slots[r.head]
	r.slots[r.head] = nil // the ring must not keep a delivered event's objects alive
	if r.slotOf != nil {
		if i, ok := r.slotOf[r.keys[r.head]]; ok && i == r.head {
			delete(r.slotOf, r.keys[r.head])
		}
		r.keys[r.head] = objectKey{}
	}
	r.head = (r.head + 1) % len(r.slots)
	r.n--
	return ev, true
}

// discard empties the ring and returns how many events it held.
func (r *ring) discard() int {
	n := r.n
	for r.n > 0 {
		r.pop()
	}
	return n
}
