package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// recordedOp is one operation of a recorded diff, as appendChangesJSON writes it.
type recordedOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from"`
	Value json.RawMessage `json:"value"`
	Old   json.RawMessage `json:"old"`
}

// recorded is the diff a recording holds for ev (event.Event.RecordedDiff), as changes,
// and its JSON: the recorded bytes themselves, unless this Differ ignores more paths
// than the defaults (which the recording left out already), whose changes are then left
// out as compute leaves them out, and the JSON written again.
func (d *Differ) recorded(ev *event.Event) (changes []Change, raw []byte, err error) {
	var ops []recordedOp
	dec := json.NewDecoder(bytes.NewReader(ev.RecordedDiff))
	if err := dec.Decode(&ops); err != nil {
		return nil, nil, fmt.Errorf("reading the recorded diff of %s %q: %w", ev.Kind, ev.Key(), err)
	}
	changes = make([]Change, 0, len(ops))
	for _, op := range ops {
		change := Change{Op: op.Op, Path: op.Path, From: op.From}
		switch op.Op {
		case OpAdd, OpReplace, OpRemove:
		case OpMove:
			// The recording keeps where the element was taken from and put, counted
			// mid-patch; those stand for its places in the old and the new list.
			change.FromIndex, change.ToIndex = lastIndex(op.From), lastIndex(op.Path)
		default:
			return nil, nil, fmt.Errorf("reading the recorded diff of %s %q: unknown operation %q", ev.Kind, ev.Key(), op.Op)
		}
		if op.Value != nil {
			if change.Value, err = generic.Decode(op.Value); err != nil {
				return nil, nil, err
			}
		}
		if op.Old != nil {
			if change.Old, err = generic.Decode(op.Old); err != nil {
				return nil, nil, err
			}
		}
		changes = append(changes, change)
	}
	if len(d.ignores) == len(defaultIgnores) {
		return changes, ev.RecordedDiff, nil
	}
	kept := changes[:0]
	for _, change := range changes {
		if d.ignoredWhole(change.Path) {
			continue
		}
		if change, keep := d.pruneIgnored(change); keep {
			kept = append(kept, change)
		}
	}
	raw, err = appendChangesJSON(nil, kept)
	return kept, raw, err
}

// ignoredWhole reports whether an ignored path matches the change's path or one above
// it: what jsondiff leaves out of a computed diff.
func (d *Differ) ignoredWhole(pointer string) bool {
	for _, path := range d.ignores {
		if below, ok := matchPointer(path.segments, pointer); ok && below == nil {
			return true
		}
	}
	return false
}

func lastIndex(pointer string) int {
	n, err := strconv.Atoi(pointer[strings.LastIndexByte(pointer, '/')+1:])
	if err != nil {
		return 0
	}
	return n
}
