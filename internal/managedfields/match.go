package managedfields

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// fieldSet is the set of fields an entry owns (structured-merge-diff's, as the API
// server keeps it).
type fieldSet struct{ set *fieldpath.Set }

// parseFields reads an entry's field set; nil if it has none or it does not parse (it
// then owns nothing that Resolve can see).
func parseFields(fields any) *fieldSet {
	var raw []byte
	switch f := fields.(type) {
	case []byte:
		raw = f
	case *metav1.FieldsV1:
		raw = f.GetRawBytes()
	case map[string]any:
		var err error
		if raw, err = json.Marshal(f); err != nil {
			return nil
		}
	}
	if len(raw) == 0 {
		return nil
	}
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil
	}
	return &fieldSet{set: set}
}

// segment is one step of a changed path: a field (or map key), or a list element, with
// the element's value (for keyed and set-like lists) and index.
type segment struct {
	field   string
	list    bool
	element any
	index   int
}

// walk turns a change's JSON pointer into segments, reading the list elements it passes
// through in old (the diff indexes lists as in the previous object); the element a
// change adds or replaces at its last step is its value. False if the pointer is broken.
func walk(change Change, old any) ([]segment, bool) {
	if change.Path == "" || change.Path[0] != '/' {
		return nil, false
	}
	tokens := strings.Split(change.Path[1:], "/")
	path := make([]segment, 0, len(tokens))
	node := old
	for i, token := range tokens {
		token = strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
		last := i == len(tokens)-1
		list, isList := node.([]any)
		if !isList {
			path = append(path, segment{field: token})
			if m, ok := node.(map[string]any); ok {
				node = m[token]
			} else {
				node = nil
			}
			continue
		}
		seg := segment{list: true, index: -1}
		if token != "-" {
			index, err := strconv.Atoi(token)
			if err != nil || index < 0 {
				return nil, false
			}
			seg.index = index
			if index < len(list) {
				seg.element = list[index]
			}
		}
		if last && (change.Op == "add" || change.Op == "replace") {
			seg.element = change.Value
		}
		path = append(path, seg)
		node = seg.element
	}
	return path, true
}

// covers reports whether the set owns something at or under path, or a field above it
// that it owns whole (an atomic value, such as a map or list it owns as one).
func (s *fieldSet) covers(path []segment) bool {
	if s == nil || len(path) == 0 {
		return false
	}
	node := s.set
	for i, seg := range path {
		pe, ok := find(node, seg)
		if !ok {
			return false
		}
		child, hasChild := node.Children.Get(pe)
		if !hasChild || child.Empty() || i == len(path)-1 {
			return true // a leaf it owns whole, or the changed field itself
		}
		node = child
	}
	return true
}

// anyMayCover reports whether one of sets may own something at or under pointer (a
// change's path), false only when none can whatever the previous object holds: read as
// field names, the path leaves every set at a node that has neither that field nor any
// list element (only list elements depend on the object: which one an index names).
func anyMayCover(sets []*fieldSet, pointer string) bool {
	if pointer == "" || pointer[0] != '/' {
		return true // walk decides
	}
	for _, s := range sets {
		if s != nil && s.mayCover(pointer[1:]) {
			return true
		}
	}
	return false
}

func (s *fieldSet) mayCover(tokens string) bool {
	node := s.set
	for {
		token, rest, more := strings.Cut(tokens, "/")
		if strings.Contains(token, "~") {
			token = strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
		}
		pe := fieldpath.FieldNameElement(token)
		child, hasChild := node.Children.Get(pe)
		if !hasChild && !node.Members.Has(pe) {
			return hasListElement(node) // an index may name one of them
		}
		if !hasChild || child.Empty() || !more {
			return true
		}
		node, tokens = child, rest
	}
}

// anyMayCover is anyMayCover before the candidates' field sets are parsed: read from
// their JSON (FieldsV1's form), true where it is in doubt.
func (r *Record) anyMayCover(pointer string) bool {
	if pointer == "" || pointer[0] != '/' {
		return true
	}
	for _, c := range r.candidates {
		var raw []byte
		switch f := c.fields.(type) {
		case nil:
			continue // owns nothing
		case []byte:
			raw = f
		case *metav1.FieldsV1:
			raw = f.GetRawBytes()
		default:
			return true // an unstructured object's map: parsed to tell
		}
		if len(raw) > 0 && rawMayCover(raw, pointer[1:]) {
			return true
		}
	}
	return false
}

// rawMayCover is mayCover on a field set's JSON: false only when, read as field names,
// the path leaves it at an object that has neither that field ("f:NAME") nor any list
// element ("k:", "v:", "i:"). Keys with escapes, and JSON that does not scan, are in
// doubt (true).
func rawMayCover(node []byte, tokens string) bool {
	for {
		token, rest, more := strings.Cut(tokens, "/")
		if strings.Contains(token, "~") {
			token = strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
		}
		var child []byte
		found, lists, doubt := false, false, false
		ok := eachKey(node, func(key []byte, escaped bool, value []byte) {
			switch {
			case escaped:
				doubt = true
			case len(key) == len(token)+2 && string(key[:2]) == "f:" && string(key[2:]) == token:
				found, child = true, value
			case len(key) >= 2 && key[1] == ':' && (key[0] == 'k' || key[0] == 'v' || key[0] == 'i'):
				lists = true
			}
		})
		switch {
		case !ok || doubt || lists:
			return true
		case !found:
			return false
		case !more:
			return true
		}
		// A field it owns whole (no member below it but itself) covers what is under it.
		whole := true
		if !eachKey(child, func(key []byte, escaped bool, _ []byte) {
			whole = whole && !escaped && string(key) == "."
		}) || whole {
			return true
		}
		node, tokens = child, rest
	}
}

// eachKey calls f with each key of the JSON object obj (its bytes between the quotes;
// escaped says it holds a backslash) and its value, an object; false if obj is not an
// object of objects, as FieldsV1 is.
func eachKey(obj []byte, f func(key []byte, escaped bool, value []byte)) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return false
		}
		start, escaped := i+1, false
		i++
		for i < len(obj) && obj[i] != '"' {
			if obj[i] == '\\' {
				escaped = true
				i++
			}
			i++
		}
		if i >= len(obj) {
			return false
		}
		key := obj[start:i]
		i = skipSpace(obj, i+1)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipSpace(obj, i+1)
		end, ok := objectEnd(obj, i)
		if !ok {
			return false
		}
		f(key, escaped, obj[i:end])
		i = skipSpace(obj, end)
		if i >= len(obj) {
			return false
		}
		if obj[i] == '}' {
			return true
		}
		if obj[i] != ',' {
			return false
		}
		i = skipSpace(obj, i+1)
	}
	return false
}

// objectEnd is the index after the JSON object starting at b[i].
func objectEnd(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// hasListElement reports whether node has a member or child that is not a field name.
func hasListElement(node *fieldpath.Set) bool {
	found := false
	check := func(pe fieldpath.PathElement) {
		found = found || pe.FieldName == nil
	}
	node.Members.Iterate(check)
	if !found {
		node.Children.Iterate(check)
	}
	return found
}

// find is the path element of node (a member or a child) that seg is: the field, or the
// list element whose key fields, value or index match.
func find(node *fieldpath.Set, seg segment) (fieldpath.PathElement, bool) {
	if !seg.list {
		pe := fieldpath.FieldNameElement(seg.field)
		if node.Members.Has(pe) {
			return pe, true
		}
		if _, ok := node.Children.Get(pe); ok {
			return pe, true
		}
		return pe, false
	}
	var found fieldpath.PathElement
	ok := false
	match := func(pe fieldpath.PathElement) {
		if !ok && elementIs(pe, seg) {
			found, ok = pe, true
		}
	}
	node.Children.Iterate(match)
	node.Members.Iterate(match)
	return found, ok
}

// elementIs reports whether pe names the list element seg.
func elementIs(pe fieldpath.PathElement, seg segment) bool {
	switch {
	case pe.Index != nil:
		return *pe.Index == seg.index
	case pe.Value != nil:
		return seg.element != nil && value.Equals(*pe.Value, valueOf(seg.element))
	case pe.Key != nil:
		element, ok := seg.element.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			v, present := element[f.Name]
			if !present || !value.Equals(f.Value, valueOf(v)) {
				return false
			}
		}
		return true
	}
	return false
}

// valueOf is a generic JSON value as structured-merge-diff compares values: numbers as
// int64 or float64 (the diff's values hold json.Number).
func valueOf(v any) value.Value {
	return value.NewValueInterface(plain(v))
}

func plain(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = plain(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = plain(x)
		}
		return out
	}
	return v
}
