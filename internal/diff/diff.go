// Package diff computes what a MODIFIED event changed: a JSON Patch (RFC 6902) from the
// previous object to the new one, as jsondiff computes it on their JSON, with the ignored
// paths (IgnorePath) left out and the lists whose elements have a key ("name", "type")
// compared by key (keyedlist.go). A Differ computes each event's diff once, however many
// sinks ask, and with it its JSON and its readable paths.
//
// Diffs are computed on the objects themselves, not on their JSON: field by field, with
// plans and functions compiled once per type (package generic's, and walkOf) that follow
// encoding/json's rules. The tests hold every shortcut to
// jsondiff on the whole JSON of both objects, for every type of client-go's scheme.
package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/wI2L/jsondiff"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// defaultIgnores are left out of every diff. resourceVersion changes with every write,
// so it would be in every diff and says nothing about what changed; managedFields (which
// the informer drops anyway) records which manager last wrote which field, changes with
// almost every update and is long.
var defaultIgnores = [...]string{"metadata.resourceVersion", "metadata.managedFields"}

// DefaultIgnorePaths lists the paths every Differ ignores, for help texts.
func DefaultIgnorePaths() []IgnorePath {
	paths := make([]IgnorePath, len(defaultIgnores))
	for i, s := range defaultIgnores {
		path, err := ParseIgnorePath(s)
		if err != nil {
			panic(err) // a constant above is broken
		}
		paths[i] = path
	}
	return paths
}

// Change operations, the JSON Patch (RFC 6902) names.
const (
	OpAdd     = jsondiff.OperationAdd
	OpRemove  = jsondiff.OperationRemove
	OpReplace = jsondiff.OperationReplace
	OpMove    = jsondiff.OperationMove
)

// Change is one difference between a MODIFIED event's old and new object.
type Change struct {
	// Op is OpAdd, OpRemove, OpReplace, or OpMove for an element of a keyed list (see
	// keyedlist.go) that changed its place among the others.
	Op string
	// Path is a JSON pointer (RFC 6901) as in a JSON Patch applied in order: an element
	// appended to a list has the index "-", and trailing elements removed from a list
	// all have the index where the list now ends. The changes inside an element of a
	// keyed list come before the elements removed, moved and added around it, so they
	// have its index in the previous list.
	Path string
	// From is where a move takes the element from, as the changes before it leave the list.
	From string
	// Value is the new value (add, replace); Old the previous one (remove, replace). Both
	// are generic JSON values shared with the event: they must not be modified.
	Value any
	Old   any
	// FromIndex and ToIndex are a moved element's index in the previous list and in the
	// new one, which pretty output shows: From and Path count the list mid-patch.
	FromIndex, ToIndex int
}

// Differ computes the changes of MODIFIED events, leaving out ignored paths. A nil
// *Differ means diffs are off: every method then reports no diff. A Differ is safe for
// concurrent use.
type Differ struct {
	ignores []IgnorePath // the default ones, then the caller's
	// exact are the JSON pointers of the ignores without wildcards, handed to jsondiff as
	// they are; wildcards are expanded against each event's objects.
	exact     []string
	wildcards []IgnorePath
	// noSameMemory walks every field, even one whose memory is the same on both sides
	// (the fast path of same; WithoutFastPaths).
	noSameMemory bool
	// noTypedWalk compares typed objects as generic JSON of their differing parts, as
	// other objects are (comparedParts), not on their structs (typedPatch).
	noTypedWalk bool
}

// NewDiffer returns a Differ that ignores the default paths (DefaultIgnorePaths) and
// ignores.
func NewDiffer(ignores []IgnorePath) *Differ {
	d := &Differ{ignores: append(DefaultIgnorePaths(), ignores...)}
	for _, path := range d.ignores {
		if path.hasWildcard() {
			d.wildcards = append(d.wildcards, path)
		} else {
			d.exact = append(d.exact, path.pointer())
		}
	}
	return d
}

// WithoutFastPaths is a Differ like d that compares every field of typed objects by
// value, even one whose memory is the same on both sides, and hands jsondiff itself the
// generic JSON of the parts that differ rather than walking the structs (typedPatch):
// the reference a suspected wrong diff is checked against (KUBEEVENTS_FAST_PATHS=off).
func (d *Differ) WithoutFastPaths() *Differ {
	if d == nil {
		return nil
	}
	slow := *d
	slow.noSameMemory, slow.noTypedWalk = true, true
	return &slow
}

// Changes is ev's diff: for a MODIFIED event the changes from ev.Old to ev.Object, in
// jsondiff's order (keys sorted; in a list that shrank, the removed elements first, then
// the rest by index; in a keyed list, the changes inside elements, then the elements
// removed, moved and added); for other events none. Applied in order, they are a JSON
// Patch that turns the old object into the new one, ignored paths aside. It is computed
// once per event and shared by every sink: callers must not modify the result.
func (d *Differ) Changes(ev *event.Event) ([]Change, error) {
	if !d.Diffs(ev) {
		return nil, nil
	}
	return d.changes(ev, viewOf(ev, d))
}

// changes is Changes on ev's view, which the forms of the diff look up once for both.
func (d *Differ) changes(ev *event.Event, view *view) ([]Change, error) {
	view.diffOnce.Do(func() {
		if ev.RecordedDiff != nil {
			// Its JSON too: the recorded one, or written again without ignored paths.
			view.changes, view.json, view.diffErr = d.recorded(ev)
			view.jsonOnce.Do(func() { view.jsonErr = view.diffErr })
			return
		}
		view.changes, view.comparedOld, view.diffErr = d.compute(ev)
	})
	return view.changes, view.diffErr
}

// Unchanged reports whether ev is a MODIFIED event whose diff is empty once the ignored
// paths are left out, as when only the resourceVersion moved: what --changes-only
// skips. It is false when diffs are off or fail, so that no event is hidden for want of
// a diff.
func (d *Differ) Unchanged(ev *event.Event) bool {
	if !d.Diffs(ev) {
		return false
	}
	changes, err := d.Changes(ev)
	return err == nil && len(changes) == 0
}

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

// Diffs reports whether ev carries a diff: diffs are on and ev is a MODIFIED event with
// its previous state, or with a diff a recording holds. SYNC events never do: they
// re-deliver an unchanged object.
func (d *Differ) Diffs(ev *event.Event) bool {
	return d != nil && ev.Type == event.Modified && (ev.Old != nil || ev.RecordedDiff != nil)
}

func (d *Differ) compute(ev *event.Event) ([]Change, any, error) {
	// Typed objects are compared on their structs (typeddiff.go); the rest, and a patch
	// whose keyed lists need aligning, as generic JSON of the parts that differ.
	var (
		old, object any
		patch       jsondiff.Patch
		typed       bool
		err         error
	)
	if !d.noTypedWalk {
		// A value it could not convert (err) is left to comparedParts, which falls back
		// to comparing encodings.
		if patch, typed, err = d.typedPatch(ev); err != nil {
			typed = false
		}
	}
	if !typed || mayMisalignKeyedList(patch) {
		if old, object, err = comparedParts(ev, !d.noSameMemory); err != nil {
			return nil, nil, fmt.Errorf("converting %s %q for comparison: %w", ev.Kind, ev.Key(), err)
		}
		// A typed patch is already jsondiff's on these parts (TestTypedPatchSameAsWholeDiff):
		// the generic parts are needed only to align the keyed lists below.
		if !typed {
			if patch, err = d.compare(old, object); err != nil {
				return nil, nil, fmt.Errorf("comparing %s %q with its previous state: %w", ev.Kind, ev.Key(), err)
			}
		}
	}
	// jsondiff pairs list elements by index; where that pairs elements of a keyed list
	// with different keys, compare again with the lists aligned by key (keyedlist.go).
	var lists []keyedListChanges
	if mayMisalignKeyedList(patch) {
		if aligned, realigned := d.alignKeyedLists(old, object, "", &lists); realigned {
			if patch, err = d.compare(old, aligned); err != nil {
				return nil, nil, fmt.Errorf("comparing %s %q with its previous state: %w", ev.Kind, ev.Key(), err)
			}
		}
	}
	changes := make([]Change, 0, len(patch))
	for _, op := range patch {
		change := Change{Op: op.Type, Path: op.Path}
		switch op.Type {
		case OpAdd:
			change.Value = op.Value
		case OpRemove:
			change.Old = op.OldValue
		case OpReplace:
			change.Value, change.Old = op.Value, op.OldValue
		default:
			return nil, nil, fmt.Errorf("comparing %s %q: unexpected %q operation", ev.Kind, ev.Key(), op.Type)
		}
		changes = append(changes, change)
	}
	if len(lists) > 0 {
		changes = mergeKeyedListChanges(changes, lists)
	}
	kept := changes[:0]
	for _, change := range changes {
		if change, keep := d.pruneIgnored(change); keep {
			kept = append(kept, change)
		}
	}
	return kept, old, nil
}

// compare is jsondiff's patch from old to object, without the ignored paths.
func (d *Differ) compare(old, object any) (jsondiff.Patch, error) {
	ignored := d.exact
	if len(d.wildcards) > 0 {
		ignored = append([]string(nil), d.exact...)
		for _, path := range d.wildcards {
			ignored = appendMatchingPointers(ignored, old, path.segments, "")
			ignored = appendMatchingPointers(ignored, object, path.segments, "")
		}
	}
	// The values are generic JSON with json.Number numbers, as jsondiff compares them
	// without encoding; Factorize (move/copy) and Invertible (test) stay off, so every
	// operation is an add, remove or replace, and replace and remove carry the old value.
	return jsondiff.CompareWithoutMarshal(old, object, jsondiff.Ignores(ignored...))
}

// prunedLevels is how deep comparedParts and changedParts compare fields before
// converting them: the top level (metadata, spec, status) and the one below it (labels,
// containers, phase).
const prunedLevels = 2

// changedParts is comparedParts on encodings: it decodes, of two encoded objects, only
// the parts that differ, as generic
// JSON with json.Number numbers. Down to levels deep, an object field whose encoding is
// the same on both sides is left out of both: it cannot produce a change, and decoding
// a whole object into maps costs several times its encoding. An update that touches a
// label then decodes little more than the labels and the resourceVersion. The encodings
// are canonical (struct field order, or sorted map keys), so equal fields encode equally.
func changedParts(oldJSON, newJSON []byte, levels int) (old, object any, err error) {
	if levels == 0 || !isJSONObject(oldJSON) || !isJSONObject(newJSON) {
		if old, err = generic.Decode(oldJSON); err != nil {
			return nil, nil, err
		}
		object, err = generic.Decode(newJSON)
		return old, object, err
	}
	var oldFields, newFields map[string]json.RawMessage
	if err := json.Unmarshal(oldJSON, &oldFields); err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(newJSON, &newFields); err != nil {
		return nil, nil, err
	}
	oldParts := make(map[string]any, len(oldFields))
	newParts := make(map[string]any, len(newFields))
	for key, oldField := range oldFields {
		newField, both := newFields[key]
		switch {
		case !both:
			if oldParts[key], err = generic.Decode(oldField); err != nil {
				return nil, nil, err
			}
		case !bytes.Equal(oldField, newField):
			if oldParts[key], newParts[key], err = changedParts(oldField, newField, levels-1); err != nil {
				return nil, nil, err
			}
		}
	}
	for key, newField := range newFields {
		if _, both := oldFields[key]; !both {
			if newParts[key], err = generic.Decode(newField); err != nil {
				return nil, nil, err
			}
		}
	}
	return oldParts, newParts, nil
}

func isJSONObject(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}

// pruneIgnored leaves out of a change's values what an ignore path below the change
// matches: adding metadata.annotations whole must not bring an ignored annotation with
// it. An add or remove left with only an empty map or list is dropped, since all it
// added or removed is ignored.
func (d *Differ) pruneIgnored(change Change) (Change, bool) {
	for _, path := range d.ignores {
		// A path that ends at or above the change matched nothing (jsondiff left out what
		// it matches); the part of one below it is removed from the change's values.
		below, ok := matchPointer(path.segments, change.Path)
		if !ok || below == nil {
			continue
		}
		var prunedValue, prunedOld bool
		if change.Op != OpRemove {
			change.Value, prunedValue = withoutMatches(change.Value, below)
		}
		if change.Op != OpAdd {
			change.Old, prunedOld = withoutMatches(change.Old, below)
		}
		if change.Op == OpAdd && prunedValue && isEmptyContainer(change.Value) ||
			change.Op == OpRemove && prunedOld && isEmptyContainer(change.Old) {
			return change, false
		}
	}
	return change, true
}

// matchPointer matches the leading segments against a JSON pointer's (still escaped) and
// returns the segments left once the pointer is used up: nil where the path ends at or
// above the pointer. ok is false where a segment does not match.
func matchPointer(segments []string, pointer string) (below []string, ok bool) {
	for i, segment := range segments {
		if pointer == "" {
			return segments[i:], true
		}
		escaped, rest := nextPointerSegment(pointer)
		if !segmentMatchesPointerSegment(segment, escaped) {
			return nil, false
		}
		pointer = rest
	}
	return nil, true
}

// nextPointerSegment splits "/a/b/c" into "a" (still escaped) and "/b/c".
func nextPointerSegment(pointer string) (segment, rest string) {
	pointer = pointer[1:]
	if i := strings.IndexByte(pointer, '/'); i >= 0 {
		return pointer[:i], pointer[i:]
	}
	return pointer, ""
}

// withoutMatches returns v without the values segments match, copying only the maps and
// lists on the way to them: v is shared with the event.
func withoutMatches(v any, segments []string) (any, bool) {
	switch node := v.(type) {
	case map[string]any:
		return mapWithout(node, segments)
	case []any:
		return listWithout(node, segments)
	}
	return v, false
}

func mapWithout(node map[string]any, segments []string) (any, bool) {
	var out map[string]any
	prune := func(key string, child any) {
		replacement, remove, changed := childWithout(child, segments[1:])
		if !changed {
			return
		}
		if out == nil {
			out = maps.Clone(node)
		}
		if remove {
			delete(out, key)
		} else {
			out[key] = replacement
		}
	}
	if segments[0] == wildcard {
		for key, child := range node {
			prune(key, child)
		}
	} else if child, ok := node[segments[0]]; ok {
		prune(segments[0], child)
	}
	if out == nil {
		return node, false
	}
	return out, true
}

func listWithout(node []any, segments []string) (any, bool) {
	var out []any
	for i, child := range node {
		var replacement any
		remove, changed := false, false
		if segmentMatchesIndex(segments[0], i) {
			replacement, remove, changed = childWithout(child, segments[1:])
		}
		switch {
		case changed && out == nil:
			out = append(make([]any, 0, len(node)), node[:i]...)
		case !changed && out != nil:
			replacement = child
		case !changed:
			continue
		}
		if !remove {
			out = append(out, replacement)
		}
	}
	if out == nil {
		return node, false
	}
	return out, true
}

// childWithout prunes a matched child: with no segments left the child itself goes.
func childWithout(child any, segments []string) (replacement any, remove, changed bool) {
	if len(segments) == 0 {
		return nil, true, true
	}
	replacement, changed = withoutMatches(child, segments)
	return replacement, false, changed
}

func isEmptyContainer(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}
