package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/wire"
)

// AppendEnvelopeWithDiff appends ev as one compact JSON object, without a trailing
// newline:
//
//	{"type":"ADDED","time":"<RFC 3339, UTC>","seq":42,"resource":{"group":"","version":"v1","resource":"pods"},"object":{...},"finalStateUnknown":true}
//
// seq is left out for SYNC events (which have none), cluster unless several clusters are
// watched (the kubeconfig context the event came through), finalStateUnknown unless true, and
// reason unless the event has one ("selector": a DELETED object that still exists but no
// longer matches the selectors, written last).
// The object is copied from ev.ObjectJSON, so it is encoded once however many sinks
// write it. On error dst is returned unchanged. After "object" come the previous object
// as "old" (if showOld, for MODIFIED and SYNC events) and the changes as "diff" (if d is
// not nil, for MODIFIED events):
//
//	"old":{...},"diff":[{"op":"replace","path":"/spec/replicas","value":3,"old":1},{"op":"add","path":"/metadata/labels/tier","value":"web"},{"op":"remove","path":"/metadata/annotations/note","old":"x"}]
//
// Every MODIFIED event has "diff", empty if only ignored paths changed. An add or
// replace has "value", a remove or replace "old", a move "from"; numbers are
// written as they are in the object. Both are copied from per-event caches, so they are
// encoded once however many sinks write them.
func AppendEnvelopeWithDiff(dst []byte, ev *event.Event, d *Differ, showOld bool) ([]byte, error) {
	object, err := ev.ObjectJSON()
	if err != nil {
		return dst, fmt.Errorf("encoding %s %q as JSON: %w", ev.Kind, ev.Key(), err)
	}
	var old, diff []byte
	if showOld && hasOld(ev) {
		if old, err = ev.OldJSON(); err != nil {
			return dst, fmt.Errorf("encoding the previous %s %q as JSON: %w", ev.Kind, ev.Key(), err)
		}
	}
	if d.diffs(ev) {
		if diff, err = d.changesJSON(ev); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, string(ev.Type))
	dst = append(dst, `,"time":"`...)
	dst = ev.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	if ev.Seq != 0 {
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendUint(dst, ev.Seq, 10)
	}
	if ev.Cluster != "" {
		dst = append(dst, `,"cluster":`...)
		dst = appendJSONString(dst, ev.Cluster)
	}
	dst = append(dst, `,"resource":{"group":`...)
	dst = appendJSONString(dst, ev.Resource.Group)
	dst = append(dst, `,"version":`...)
	dst = appendJSONString(dst, ev.Resource.Version)
	dst = append(dst, `,"resource":`...)
	dst = appendJSONString(dst, ev.Resource.Resource)
	dst = append(dst, '}')
	dst = appendOwnersJSON(dst, ev)
	dst = append(dst, `,"object":`...)
	dst = append(dst, object...)
	if old != nil {
		dst = append(dst, `,"old":`...)
		dst = append(dst, old...)
	}
	if diff != nil {
		dst = append(dst, `,"diff":`...)
		dst = append(dst, diff...)
	}
	if ev.FinalStateUnknown {
		dst = append(dst, `,"finalStateUnknown":true`...)
	}
	if ev.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = appendJSONString(dst, ev.Reason)
	}
	return append(dst, '}'), nil
}

// hasOld reports whether ev carries a previous state worth showing: MODIFIED and SYNC
// events do.
func hasOld(ev *event.Event) bool {
	return ev.Old != nil && (ev.Type == event.Modified || ev.Type == event.Sync)
}

// changesJSON is ev's diff as the JSON array of the envelope's "diff", encoded once per
// event.
func (d *Differ) changesJSON(ev *event.Event) ([]byte, error) {
	changes, err := d.Changes(ev)
	if err != nil {
		return nil, err
	}
	view := viewOf(ev, d)
	view.diffJSONOnce.Do(func() { view.diffJSON, view.diffJSONErr = appendChangesJSON(nil, changes) })
	if view.diffJSONErr != nil {
		return nil, fmt.Errorf("encoding the diff of %s %q as JSON: %w", ev.Kind, ev.Key(), view.diffJSONErr)
	}
	return view.diffJSON, nil
}

// appendChangesJSON appends changes as a JSON array, "op" and "path" first, then a
// move's "from". Values are
// encoded by encoding/json, as the object is, so both escape strings alike and a
// json.Number is written as it was read.
func appendChangesJSON(dst []byte, changes []Change) ([]byte, error) {
	dst = append(dst, '[')
	for i, change := range changes {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"op":`...)
		dst = appendJSONString(dst, change.Op)
		dst = append(dst, `,"path":`...)
		dst = appendJSONString(dst, change.Path)
		if change.Op == OpMove {
			dst = append(dst, `,"from":`...)
			dst = appendJSONString(dst, change.From)
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
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
func appendJSONString(dst []byte, s string) []byte { return wire.AppendJSONString(dst, s) }

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
		return appendJSONString(dst, v), nil
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
			dst = append(appendJSONString(dst, k), ':')
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
// objects are (genericOf). Other numbers are left to encoding/json, which checks them.
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
