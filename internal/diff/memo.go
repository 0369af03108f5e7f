package diff

import (
	"sync"

	"github.com/kubeevents/kubeevents/internal/event"
)

// view is what a Differ caches on an event (event.Event.Memo, keyed by the Differ), so
// that the diff and its forms are computed once however many sinks render the event,
// each only when some sink needs it. A command has one Differ, so an event has one view
// in practice; keying by Differ keeps a sink with other ignore paths from being handed
// another sink's diff.
type view struct {
	diffOnce sync.Once
	changes  []Change
	diffErr  error
	// comparedOld is the part of the previous state the diff decoded (comparedParts):
	// enough to name the list elements of every change's path. Nil when the diff was
	// computed on typed objects' structs (typedPatch).
	comparedOld any

	jsonOnce sync.Once
	json     []byte // the changes as a JSON array (ChangesJSON)
	jsonErr  error

	pathsOnce sync.Once
	paths     []string // each change's readable path (ReadableChanges)
}

func newView() any { return new(view) }

// viewOf is ev's view for d, created on first use.
func viewOf(ev *event.Event, d *Differ) *view { return ev.Memo(d, newView).(*view) }
