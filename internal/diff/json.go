package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jsonw"
)

// ChangesJSON is ev's diff as a JSON array (the "diff" of JSON lines), encoded once per
// event and shared by every caller, who must not modify it: each change has "op" and
// "path", a move "from", an add or replace "value", a remove or replace "old". Values are
// written as encoding/json writes them, so a json.Number keeps its digits and strings
// are escaped as in the object. Nil without a diff (see Diffs).
func (d *Differ) ChangesJSON(ev *event.Event) ([]byte, error) {
	if !d.Diffs(ev) {
		return nil, nil
	}
	view := viewOf(ev, d)
	changes, err := d.changes(ev, view)
	if err != nil {
		return nil, err
	}
	view.jsonOnce.Do(func() { view.json, view.jsonErr = appendChangesJSON(nil, changes) })
	if view.jsonErr != nil {
		return nil, fmt.Errorf("encoding the diff of %s %q as JSON: %w", ev.Kind, ev.Key(), view.jsonErr)
	}
	return view.json, nil
}

// appendChangesJSON appends changes as a JSON array, "op" and "path" first, then a
// move's "from". Values are
// encoded by encoding/json, as the object is, so both escape strings alike and a
// json.Number is written as it was read.
func appendChangesJSON(dst []byte, changes []Change) ([]byte, error) {
	return AppendChangesJSON(dst, changes, nil)
}

// AppendChangesJSON appends changes as ChangesJSON writes them, with what extra appends
// (",\"key\":value" pairs, or nothing) at the end of change i's object; extra may be nil.
// For what ChangesJSON does not cache: the managers of each change, when they differ.
func AppendChangesJSON(dst []byte, changes []Change, extra func(dst []byte, i int) []byte) ([]byte, error) {
	dst = append(dst, '[')
	for i, change := range changes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.AppendJSONField(dst, `{"op":`, change.Op)
		dst = jsonw.AppendJSONField(dst, `,"path":`, change.Path)
		if change.Op == OpMove {
			dst = jsonw.AppendJSONField(dst, `,"from":`, change.From)
		}
		var err error
		if change.Op == OpAdd || change.Op == OpReplace {
			if dst, err = appendGenericJSON(append(dst, `,"value":`...), change.Value); err != nil {
				return nil, err
			}
		}
		if change.Op == OpRemove || change.Op == OpReplace {
			if dst, err = appendGenericJSON(append(dst, `,"old":`...), change.Old); err != nil {
				return nil, err
			}
		}
		if extra != nil {
			dst = extra(dst, i)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendGenericJSON appends json.Marshal(v) for a generic JSON value (maps with string
// keys, lists, strings, json.Number, booleans, nil), byte for byte: keys sorted, and
// strings with HTML characters escaped as encoding/json escapes them. A diff's values are
// such values, and encoding/json's reflection on each of them was a quarter of writing a
// diff. Anything else (a float64, an odd string) goes to encoding/json.
// TestAppendGenericJSONSameAsMarshal holds the two to the same bytes.
func appendGenericJSON(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return jsonw.AppendJSONString(dst, v), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case json.Number:
		if isInteger(string(v)) {
			return append(dst, v...), nil
		}
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(jsonw.AppendJSONString(dst, k), ':')
			var err error
			if dst, err = appendGenericJSON(dst, v[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, elem := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendGenericJSON(dst, elem); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	encoded, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, encoded...), nil
}

// isInteger reports whether s is an integer as JSON writes it: what the numbers of typed
// objects are (generic.Of). Other numbers are left to encoding/json, which checks them.
func isInteger(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
