package attribution

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
)

// Recorded reads who made a change from a recording's envelope: by is its "by" (nil:
// nobody), ambiguous its "byAmbiguous", and changes its "diff", whose operations carry a
// "by" of their own where the changes were not all made by the same managers. Nil when
// by names nobody.
func Recorded(by, changes []byte, ambiguous bool) (*Attribution, error) {
	if len(by) == 0 {
		return nil, nil
	}
	a := &Attribution{Ambiguous: ambiguous}
	if err := json.Unmarshal(by, &a.By); err != nil {
		return nil, fmt.Errorf(`its "by" cannot be read: %v`, err)
	}
	if len(a.By) == 0 {
		return nil, nil
	}
	if !bytes.Contains(changes, []byte(`"by":`)) {
		return a, nil // no operation has managers of its own: all are By's
	}
	var ops []struct {
		By []Entry `json:"by"`
	}
	if err := json.Unmarshal(changes, &ops); err != nil {
		return nil, fmt.Errorf(`its "diff" cannot be read: %v`, err)
	}
	perChange := make([][]int, len(ops))
	some := false
	for i, op := range ops {
		for _, e := range op.By {
			j := slices.Index(a.By, e)
			if j < 0 { // not among the event's own: named all the same
				j = len(a.By)
				a.By = append(a.By, e)
			}
			perChange[i] = append(perChange[i], j)
			some = true
		}
	}
	if some {
		a.Changes = perChange
	}
	return a, nil
}

// recordedKey keys, in an event's memo, its recorded attribution as a Differ's changes
// number them.
type recordedKey struct{ differ *diff.Differ }

// recorded is ev.RecordedBy for the changes d gives: the recorded one, unless d leaves
// out recorded changes (--ignore-path), when each change left keeps its managers.
func recorded(ev *event.Event, d *diff.Differ) *Attribution {
	a := ev.RecordedBy
	if a.Changes == nil || ev.RecordedDiff == nil || !d.Diffs(ev) {
		return a
	}
	slot := ev.Memo(recordedKey{d}, func() any { return new(memo) }).(*memo)
	slot.once.Do(func() { slot.a = renumbered(ev, d, a) })
	return &slot.a
}

// renumbered is a with its per-change managers for the changes d keeps of the recorded
// ones: those left out by an ignored path are dropped, in order, by their paths.
func renumbered(ev *event.Event, d *diff.Differ, a *Attribution) Attribution {
	changes, err := d.Changes(ev)
	if err != nil || len(changes) == len(a.Changes) {
		return *a
	}
	var ops []struct {
		Op   string `json:"op"`
		Path string `json:"path"`
	}
	// Where the changes cannot be matched to the recorded ones, each is nobody's:
	// nothing is said rather than something wrong.
	unmatched := Attribution{By: a.By, Ambiguous: a.Ambiguous, Changes: make([][]int, len(changes))}
	if json.NewDecoder(bytes.NewReader(ev.RecordedDiff)).Decode(&ops) != nil || len(ops) != len(a.Changes) {
		return unmatched
	}
	// The recorded operation of each change left.
	kept := make([]int, 0, len(changes))
	i := 0
	for _, c := range changes {
		for i < len(ops) && (ops[i].Op != c.Op || ops[i].Path != c.Path) {
			i++
		}
		if i == len(ops) {
			return unmatched
		}
		kept = append(kept, i)
		i++
	}
	// By keeps, in its order, the managers of the changes left, as a watch ignoring the
	// same paths names them.
	index := make([]int, len(a.By))
	for j := range index {
		index[j] = -1
	}
	for _, op := range kept {
		for _, j := range a.Changes[op] {
			index[j] = 0
		}
	}
	out := Attribution{Ambiguous: a.Ambiguous, Changes: make([][]int, len(kept))}
	for j, e := range a.By {
		if index[j] == 0 {
			index[j] = len(out.By)
			out.By = append(out.By, e)
		}
	}
	for k, op := range kept {
		for _, j := range a.Changes[op] {
			out.Changes[k] = append(out.Changes[k], index[j])
		}
	}
	return out
}
