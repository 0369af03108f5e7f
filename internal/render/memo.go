package render

import (
	"sync"

	"github.com/kubeevents/kubeevents/internal/event"
)

// eventMemo is what the renderer caches on an event (event.Event.Memo), so the diff
// and the envelopes are computed once however many sinks render the event, each part
// only when some sink needs it.
type eventMemo struct {
	mu    sync.Mutex
	views []*eventView
}

// eventView is everything derived from one event with one Differ. A command has one
// Differ, so an event has one view in practice; keying by Differ keeps a sink with other
// ignore paths (or with diffs off) from being handed another sink's diff.
type eventView struct {
	differ *Differ

	diffOnce sync.Once
	changes  []Change
	diffErr  error
	// comparedOld is the part of the previous state the diff decoded (comparedParts):
	// enough to name the list elements of every change's path. Nil when the diff was
	// computed on typed objects' structs (typedPatch).
	comparedOld any

	diffJSONOnce sync.Once
	diffJSON     []byte // the "diff" array of the JSON envelope
	diffJSONErr  error

	fieldsOnce sync.Once
	fields     []string // each change's readable path, for pretty output

	// envelopes are EnvelopeValue's results, without and with "old".
	envelopes [2]envelopeSlot
}

type envelopeSlot struct {
	once  sync.Once
	value map[string]any
	err   error
}

func newEventMemo(*event.Event) any { return new(eventMemo) }

// viewOf is ev's view for d, created on first use.
func viewOf(ev *event.Event, d *Differ) *eventView {
	memo, ok := ev.Memo(newEventMemo).(*eventMemo)
	if !ok {
		// Someone else's memo: still correct, only uncached.
		return &eventView{differ: d}
	}
	memo.mu.Lock()
	defer memo.mu.Unlock()
	for _, view := range memo.views {
		if view.differ == d {
			return view
		}
	}
	view := &eventView{differ: d}
	memo.views = append(memo.views, view)
	return view
}
