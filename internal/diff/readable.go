package diff

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// ReadableChanges is ev's diff (Changes) with the path of each change in the form pretty
// output shows, dotted, with list elements named in brackets by their key:
// status.containerStatuses[app].ready. Both are computed once per event and shared by
// every caller, who must not modify them.
func (d *Differ) ReadableChanges(ev *event.Event) ([]Change, []string, error) {
	if !d.Diffs(ev) {
		return nil, nil, nil
	}
	view := viewOf(ev, d)
	changes, err := d.changes(ev, view)
	if err != nil || len(changes) == 0 {
		return nil, nil, err
	}
	view.pathsOnce.Do(func() {
		old := view.comparedOld
		if old == nil {
			// Compared on the structs (typedPatch): the paths are read on the previous
			// typed object itself.
			old = ev.Old
		}
		view.paths = readablePaths(changes, old)
	})
	return changes, view.paths, nil
}

// readablePaths are the changes' paths as pretty output shows them, dotted, with list
// elements in brackets: status.containerStatuses[app].ready. An element is named by its
// "name" (containers, volumes, env), else its "type" (conditions), else its index. Keys
// are shown as they are, dots and all (metadata.labels.app.kubernetes.io/name): this is
// for reading, not for pasting into --ignore.
func readablePaths(changes []Change, old any) []string {
	paths := make([]string, len(changes))
	// repeats counts the earlier changes with the same list path: jsondiff writes every
	// appended element as "-" and every trailing removed one at the same index.
	var repeats map[string]int
	for i, change := range changes {
		repeat := 0
		if change.Op == OpRemove || strings.HasSuffix(change.Path, "/-") {
			if repeats == nil {
				repeats = make(map[string]int)
			}
			repeat = repeats[change.Path]
			repeats[change.Path]++
		}
		paths[i] = readablePath(change, old, repeat)
	}
	return paths
}

// readablePath walks change.Path through the old object, which has every list element
// the path passes through: jsondiff compares lists index by index, and the changes inside
// an element of a keyed list have its old index (see Change.Path). The old object is
// generic JSON (the parts comparedParts decoded) or a typed object (see oldNodeOf).
func readablePath(change Change, old any, repeat int) string {
	var b []byte
	node := oldNodeOf(old)
	for pointer := change.Path; pointer != ""; {
		escaped, rest := nextPointerSegment(pointer)
		pointer = rest
		key, err := unescapePointerSegment(escaped, 0)
		if err != nil {
			key = escaped
		}
		length, isList := listLength(node)
		if !isList {
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, key...)
			if pointer != "" { // the value at the end of the path is not looked at
				node = childOf(node, key)
			}
			continue
		}
		index, err := strconv.Atoi(key)
		var element any
		if err == nil && index >= 0 && index < length {
			element = elementOf(node, index)
		}
		label := elementName(element)
		switch {
		case pointer == "" && change.Op == OpMove:
			// Path is where the element goes mid-patch; it is the old list's fromIndex.
			label = ""
			if change.FromIndex < length {
				label = elementName(elementOf(node, change.FromIndex))
			}
		case pointer == "":
			label = elementName(changedElement(change))
		}
		if label == "" {
			switch {
			case key == "-":
				label = strconv.Itoa(length + repeat)
			case err == nil && pointer == "" && change.Op == OpRemove:
				label = strconv.Itoa(index + repeat)
			default:
				label = key
			}
		}
		b = append(b, '[')
		b = append(b, label...)
		b = append(b, ']')
		node = element
	}
	if len(b) == 0 {
		return "."
	}
	return string(b)
}

// changedElement is the list element a change adds, removes or replaces.
func changedElement(change Change) any {
	switch {
	case change.Op == OpRemove:
		return change.Old
	case change.Op == OpReplace && elementName(change.Value) == "":
		return change.Old
	}
	return change.Value
}

// elementName is a list element's "name" if not empty, else its "type"; "" if it has
// neither or is not an object.
func elementName(element any) string {
	if name, _ := childOf(element, "name").(string); name != "" {
		return name
	}
	typ, _ := childOf(element, "type").(string)
	return typ
}

// The old object readablePath walks is generic JSON, or a typed object when the diff was
// computed on the structs: a typed node is then a reflect.Value (addressable, pointers
// followed) of a struct of a plain plan or of a list, and any other value is its generic
// JSON, built when the path reaches it.

// oldNodeOf is the root node of an old object.
func oldNodeOf(old any) any {
	if _, generic := old.(map[string]any); generic || old == nil {
		return old
	}
	return typedNode(reflect.ValueOf(old))
}

// typedNode is v as a node: pointers followed, a struct of a plain plan or a list kept as
// it is, anything else as its generic JSON.
func typedNode(v reflect.Value) any {
	for {
		switch walkOf(v.Type()).kind {
		case walkPointer:
			if v.IsNil() {
				return nil
			}
			v = v.Elem()
			continue
		case walkStruct:
			if v.CanAddr() {
				return v
			}
		case walkList:
			if !v.IsNil() {
				return v
			}
		}
		value, err := generic.Of(v)
		if err != nil {
			return nil
		}
		return value
	}
}

// listLength reports whether node is a list, and its length.
func listLength(node any) (int, bool) {
	switch node := node.(type) {
	case []any:
		return len(node), true
	case reflect.Value:
		if node.Kind() == reflect.Slice {
			return node.Len(), true
		}
	}
	return 0, false
}

// elementOf is element i of a list node.
func elementOf(node any, i int) any {
	switch node := node.(type) {
	case []any:
		return node[i]
	case reflect.Value:
		return typedNode(node.Index(i))
	}
	return nil
}

// childOf is the value of key in an object node, nil if it has none.
func childOf(node any, key string) any {
	switch node := node.(type) {
	case map[string]any:
		return node[key]
	case reflect.Value:
		if node.Kind() != reflect.Struct {
			return nil
		}
		fields := generic.PlanOf(node.Type()).SortedFields()
		i, found := slices.BinarySearchFunc(fields, key, func(f generic.SortedField, key string) int { return strings.Compare(f.Name, key) })
		if !found {
			return nil
		}
		f := fields[i]
		p := unsafe.Add(node.Addr().UnsafePointer(), f.Offset)
		if f.Omitted != nil && f.Omitted(p) {
			return nil
		}
		return typedNode(reflect.NewAt(f.Type, p).Elem())
	}
	return nil
}
