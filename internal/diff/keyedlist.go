package diff

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wI2L/jsondiff"
)

// Lists whose elements have a key (containers, env, volumes and ports by "name",
// conditions by "type") are compared element by element as kubectl's strategic merge
// patch merges them: by key, not by position. jsondiff compares lists index by index, so
// a condition inserted before an existing one would show as the existing one changing
// its type and itself being added, under its own name.
//
// The diff is therefore computed in two steps. jsondiff compares the objects as they are;
// as long as the keys of each keyed list on one side start with all those on the other
// (elements changed in place, appended or removed at the end: the common case), its
// index-based patch is already right. Only when they do not, which shows in the patch as
// a change to the key field of a list element (mayMisalignKeyedList), are lists aligned:
// the new side's elements are put at their old positions (alignKeyedLists), jsondiff
// compares the old object with that, which yields each element's own changes at its
// old index, and the lists' structural changes (elements removed, moved and added)
// follow them, in an order that keeps the whole a JSON Patch applied in order.

// mayMisalignKeyedList reports whether patch, which paired list elements by index, may
// have paired elements of a keyed list that have different keys. If the keys of one
// side of a keyed list do not start with all those of the other, some index has
// different keys on the two sides, and the patch changes the "name" or "type" of the
// element there; a patch that changes no such field stands as it is.
func mayMisalignKeyedList(patch jsondiff.Patch) bool {
	for _, op := range patch {
		path := op.Path
		var parent string
		switch {
		case strings.HasSuffix(path, "/name"):
			parent = path[:len(path)-len("/name")]
		case strings.HasSuffix(path, "/type"):
			parent = path[:len(path)-len("/type")]
		default:
			continue
		}
		if isIndexSegment(parent[strings.LastIndexByte(parent, '/')+1:]) {
			return true
		}
	}
	return false
}

func isIndexSegment(segment string) bool {
	if segment == "" {
		return false
	}
	for i := 0; i < len(segment); i++ {
		if segment[i] < '0' || segment[i] > '9' {
			return false
		}
	}
	return true
}

// listKeyField is the field that identifies the elements of a list across its two
// versions: "name" if every element of both is an object with a non-empty string name,
// else "type" if every one has a non-empty string type, each unique within its version
// (as elementName labels them); "" if the list is not keyed, and is compared by index.
func listKeyField(old, object []any) string {
	for _, field := range [...]string{"name", "type"} {
		if uniqueKeys(old, field) && uniqueKeys(object, field) {
			return field
		}
	}
	return ""
}

func uniqueKeys(list []any, field string) bool {
	seen := make(map[string]struct{}, len(list))
	for _, element := range list {
		object, ok := element.(map[string]any)
		if !ok {
			return false
		}
		key, ok := object[field].(string)
		if !ok || key == "" {
			return false
		}
		if _, dup := seen[key]; dup {
			return false
		}
		seen[key] = struct{}{}
	}
	return true
}

// keyedListChanges are the structural changes of one keyed list, for merging with the
// other changes of the diff.
type keyedListChanges struct {
	pointer string // the list's
	changes []Change
}

// alignKeyedLists returns object with every keyed list whose common keys are not in the
// same order on both sides replaced by a list as long as old's, holding at each index the
// new version of the element old has there (or old's element itself if it was removed),
// so that an index-based comparison with old compares each element with itself. It
// appends those lists' structural changes to lists, inner lists first. object is shared
// with the event: maps and lists on the way to a replaced list are copied, never
// modified.
func (d *Differ) alignKeyedLists(old, object any, pointer string, lists *[]keyedListChanges) (any, bool) {
	switch o := old.(type) {
	case map[string]any:
		n, ok := object.(map[string]any)
		if !ok {
			return object, false
		}
		var aligned map[string]any
		for key, oldChild := range o {
			// A key only old has gives nil: nothing to align.
			child, changed := d.alignKeyedLists(oldChild, n[key], pointerChild(pointer, key), lists)
			if changed && aligned == nil {
				aligned = maps.Clone(n)
			}
			if changed {
				aligned[key] = child
			}
		}
		return alignedOr(aligned, n)
	case []any:
		n, ok := object.([]any)
		if !ok {
			return object, false
		}
		key := listKeyField(o, n)
		if key == "" || sameKeyOrder(o, n, key) || d.ignoresListElements(pointer) {
			return d.alignElementsByIndex(o, n, pointer, lists)
		}
		return d.alignElementsByKey(o, n, key, pointer, lists), true
	}
	return object, false
}

// sameKeyOrder reports whether the keys of one list start with all those of the other,
// in order: elements changed in place, appended or removed at the end, which an
// index-based comparison gets right.
func sameKeyOrder(old, object []any, key string) bool {
	for i := range min(len(old), len(object)) {
		if old[i].(map[string]any)[key] != object[i].(map[string]any)[key] {
			return false
		}
	}
	return true
}

// alignElementsByIndex aligns the lists inside the elements that have the same index on
// both sides, as jsondiff compares them.
func (d *Differ) alignElementsByIndex(old, object []any, pointer string, lists *[]keyedListChanges) (any, bool) {
	var aligned []any
	for i := range min(len(old), len(object)) {
		if element, changed := d.alignKeyedLists(old[i], object[i], pointer+"/"+strconv.Itoa(i), lists); changed {
			if aligned == nil {
				aligned = slices.Clone(object)
			}
			aligned[i] = element
		}
	}
	return alignedOr(aligned, object)
}

// alignedOr is aligned and true, or object and false where nothing was aligned (nil).
func alignedOr[C map[string]any | []any](aligned, object C) (any, bool) {
	if aligned == nil {
		return object, false
	}
	return aligned, true
}

// alignElementsByKey returns object's elements at the indices of old's with the same key
// (old's own where object has none), and appends the list's structural changes: removed
// elements, then moved ones, then added ones, each at its index in the list as the
// changes before it leave it (JSON Patch semantics).
func (d *Differ) alignElementsByKey(old, object []any, key, pointer string, lists *[]keyedListChanges) []any {
	keyOf := func(element any) string { return element.(map[string]any)[key].(string) }
	newIndex := make(map[string]int, len(object))
	for j, element := range object {
		newIndex[keyOf(element)] = j
	}
	oldIndex := make(map[string]int, len(old))
	aligned := make([]any, len(old))
	for i, element := range old {
		k := keyOf(element)
		oldIndex[k] = i
		j, kept := newIndex[k]
		if !kept {
			aligned[i] = element
			continue
		}
		aligned[i], _ = d.alignKeyedLists(element, object[j], pointer+"/"+strconv.Itoa(i), lists)
	}

	var changes []Change
	// Removed elements, from the first: each is where the kept elements before it end.
	current := make([]string, 0, len(old)) // the keys as the changes so far leave the list
	for _, element := range old {
		k := keyOf(element)
		if _, kept := newIndex[k]; kept {
			current = append(current, k)
			continue
		}
		changes = append(changes, Change{Op: OpRemove, Path: pointer + "/" + strconv.Itoa(len(current)), Old: element})
	}
	// Moved elements: those out of the longest run of kept elements that is in order on
	// both sides, each put after the element that precedes it in the new list.
	var target []string // the kept keys in their new order
	for _, element := range object {
		if k := keyOf(element); hasKey(oldIndex, k) {
			target = append(target, k)
		}
	}
	inOrder := keysInOrder(current, newIndex)
	for t, k := range target {
		if inOrder[k] {
			continue
		}
		from := slices.Index(current, k)
		current = slices.Delete(current, from, from+1)
		to := 0
		if t > 0 {
			to = slices.Index(current, target[t-1]) + 1
		}
		current = slices.Insert(current, to, k)
		changes = append(changes, Change{
			Op: OpMove, Path: pointer + "/" + strconv.Itoa(to), From: pointer + "/" + strconv.Itoa(from),
			FromIndex: oldIndex[k], ToIndex: newIndex[k],
		})
	}
	// Added elements, by their new index: every element before it is then in place.
	length := len(current)
	for j, element := range object {
		if hasKey(oldIndex, keyOf(element)) {
			continue
		}
		index := strconv.Itoa(j)
		if j == length {
			index = "-" // appended, as jsondiff writes it
		}
		changes = append(changes, Change{Op: OpAdd, Path: pointer + "/" + index, Value: element})
		length++
	}
	*lists = append(*lists, keyedListChanges{pointer: pointer, changes: changes})
	return aligned
}

func hasKey(index map[string]int, key string) bool {
	_, ok := index[key]
	return ok
}

// keysInOrder is the largest set of keys whose order in keys is their order by
// newIndex: the elements that stay put while the others move around them (a longest
// increasing subsequence, by patience sorting).
func keysInOrder(keys []string, newIndex map[string]int) map[string]bool {
	tails := make([]int, 0, len(keys)) // per run length, the index in keys of the smallest last element
	previous := make([]int, len(keys)) // per index in keys, the one before it in its run
	for i, k := range keys {
		n := sort.Search(len(tails), func(t int) bool { return newIndex[keys[tails[t]]] >= newIndex[k] })
		previous[i] = -1
		if n > 0 {
			previous[i] = tails[n-1]
		}
		if n == len(tails) {
			tails = append(tails, i)
		} else {
			tails[n] = i
		}
	}
	inOrder := make(map[string]bool, len(tails))
	if len(tails) > 0 {
		for i := tails[len(tails)-1]; i >= 0; i = previous[i] {
			inOrder[keys[i]] = true
		}
	}
	return inOrder
}

// ignoresListElements reports whether an ignore path matches the list at pointer, a
// value above it or its elements themselves (a.*, a.0): such a list is left to jsondiff,
// which applies those ignores index by index.
func (d *Differ) ignoresListElements(pointer string) bool {
	for _, path := range d.ignores {
		// All of the path matched (at or above the list), or all but one segment, which
		// is then an index or "*" below the list.
		if below, ok := matchPointer(path.segments, pointer); ok && len(below) <= 1 {
			return true
		}
	}
	return false
}

// mergeKeyedListChanges puts each keyed list's structural changes among the others: after
// the last change inside the list (those use the old indices, so they must come first),
// else where the list's path sorts among them.
func mergeKeyedListChanges(changes []Change, lists []keyedListChanges) []Change {
	for _, list := range lists {
		prefix := list.pointer + "/"
		at := -1
		for i, change := range changes {
			if strings.HasPrefix(change.Path, prefix) {
				at = i + 1
			}
		}
		if at < 0 {
			at = len(changes)
			for i, change := range changes {
				if pointerSortsBefore(list.pointer, change.Path) {
					at = i
					break
				}
			}
		}
		changes = slices.Insert(changes, at, list.changes...)
	}
	return changes
}

// pointerSortsBefore orders JSON pointers segment by segment, indices by number, as
// jsondiff orders its operations.
func pointerSortsBefore(a, b string) bool {
	for a != "" && b != "" {
		sa, restA := nextPointerSegment(a)
		sb, restB := nextPointerSegment(b)
		if sa != sb {
			na, errA := strconv.Atoi(sa)
			nb, errB := strconv.Atoi(sb)
			if errA == nil && errB == nil {
				return na < nb
			}
			return sa < sb
		}
		a, b = restA, restB
	}
	return a == "" && b != ""
}
