// Package recording reads back what kubeevents recorded: JSON Lines of its envelope (a
// file sink's default format, `watch -o json`), from files, their rotated and compressed
// backups, directories of them, or the standard input, in time order across files. It
// follows a file as it grows and across its rotation (Options.Follow, as `tail -F`), and
// names every line it cannot read by file and line number.
//
// It only reads: what the records mean (objects decoded, selected, diffed) is package
// replay's.
package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Record is one line of a recording: one event's envelope (docs/output.md), its parts
// that are JSON kept as the recording holds them.
type Record struct {
	Type     event.EventType
	Time     time.Time
	Seq      uint64 // as recorded; 0 for SYNC
	Cluster  string // "" unless several clusters were watched
	Resource schema.GroupVersionResource
	// Owners and Rollout are what --owned recorded (nil: none).
	Owners  []event.Owner
	Rollout *event.Rollout
	// Health is the object's health as recorded (nil: the run did not compute it).
	Health *event.Health
	// Object is the object's JSON; Old the previous object's (--show-old), Diff the
	// changes, By the field managers that made the change: nil when not recorded.
	Object, Old, Diff, By json.RawMessage
	// ByAmbiguous says By are candidates, one or more of which made the change.
	ByAmbiguous       bool
	FinalStateUnknown bool
	Past              bool
	Reason            string
	// Line is the whole line, as recorded.
	Line json.RawMessage
	// At is where the record was read.
	At Position
}

// Position is a line of an input: a file's path ("-" for the standard input) and the
// line's number, from 1.
type Position struct {
	File string
	Line int
}

func (p Position) String() string {
	name := p.File
	if name == "-" {
		name = "stdin"
	}
	return name + ":" + strconv.Itoa(p.Line)
}

// BadLineError says a line is not an event kubeevents wrote (not JSON, or not its
// envelope), or is cut short.
type BadLineError struct {
	At  Position
	Err error
	// Truncated says the line is the input's last and has no end of line: a file still
	// being written, or one cut short.
	Truncated bool
}

func (e *BadLineError) Error() string {
	if e.Truncated {
		return fmt.Sprintf("%s: the last line is cut short (%v): the file is still being written (--follow waits for the rest) or was truncated; --skip-bad-lines skips it", e.At, e.Err)
	}
	return fmt.Sprintf("%s: not an event kubeevents wrote: %v; replay reads the JSON Lines of a file sink or -o json (--skip-bad-lines skips such lines)", e.At, e.Err)
}

func (e *BadLineError) Unwrap() error { return e.Err }

// Parse reads one line (without its end of line) as a record. The record's JSON parts
// share line's memory, which must not change afterwards.
//
// The line is checked to be JSON once, then split into the envelope's members without
// decoding the large ones (object, old, diff, by), which are the caller's to read: a
// replay costs what reading the objects costs, not that twice over.
func Parse(line []byte) (Record, error) {
	if !gjson.ValidBytes(line) {
		return Record{}, notJSON(line)
	}
	// A view of the line, not a copy: the members' offsets are the line's.
	root := gjson.Parse(unsafe.String(unsafe.SliceData(line), len(line)))
	if !root.IsObject() {
		return Record{}, fmt.Errorf("a JSON %s, not an object", kindOf(root))
	}
	rec := Record{Line: line}
	var err error
	root.ForEach(func(key, value gjson.Result) bool {
		raw := line[value.Index : value.Index+len(value.Raw)]
		err = rec.set(key.Str, value, raw)
		return err == nil
	})
	if err != nil {
		return Record{}, err
	}
	return rec, rec.check()
}

// set reads one member of the envelope.
func (rec *Record) set(key string, value gjson.Result, raw []byte) error {
	switch key {
	case "type", "cluster", "reason", "time":
		if value.Type != gjson.String {
			return fmt.Errorf("%q is a JSON %s, not a string", key, kindOf(value))
		}
		switch key {
		case "type":
			rec.Type = event.EventType(value.Str)
		case "cluster":
			rec.Cluster = value.Str
		case "reason":
			rec.Reason = value.Str
		case "time":
			t, err := time.Parse(time.RFC3339Nano, value.Str)
			if err != nil {
				return fmt.Errorf(`"time" %q is not an RFC 3339 time`, value.Str)
			}
			rec.Time = t
		}
	case "seq":
		rec.Seq = value.Uint()
	case "resource":
		rec.Resource = schema.GroupVersionResource{Group: value.Get("group").Str, Version: value.Get("version").Str, Resource: value.Get("resource").Str}
	case "owners":
		if value.IsArray() {
			rec.Owners = []event.Owner{}
			value.ForEach(func(_, o gjson.Result) bool {
				rec.Owners = append(rec.Owners, event.Owner{Kind: o.Get("kind").Str, Name: o.Get("name").Str})
				return true
			})
		}
	case "rollout":
		if value.IsObject() {
			rec.Rollout = &event.Rollout{State: event.RolloutState(value.Get("state").Str), Message: value.Get("message").Str}
		}
	case "health":
		if value.IsObject() {
			rec.Health = &event.Health{Status: event.HealthStatus(value.Get("status").Str), Message: value.Get("message").Str,
				Previous: event.HealthStatus(value.Get("previous").Str)}
		}
	case "object":
		rec.Object = raw
	case "old":
		rec.Old = raw
	case "diff":
		if value.IsArray() {
			rec.Diff = raw
		}
	case "by":
		if value.IsArray() {
			rec.By = raw
		}
	case "byAmbiguous":
		rec.ByAmbiguous = value.Type == gjson.True
	case "finalStateUnknown":
		rec.FinalStateUnknown = value.Type == gjson.True
	case "past":
		rec.Past = value.Type == gjson.True
	}
	return nil
}

// check says what a record lacks to be an event.
func (rec *Record) check() error {
	switch rec.Type {
	case event.Added, event.Modified, event.Deleted, event.Sync, event.Stalled:
	case "":
		return errors.New(`no "type"`)
	default:
		return fmt.Errorf(`"type" %q is not ADDED, MODIFIED, DELETED, SYNC or STALLED`, rec.Type)
	}
	switch {
	case rec.Time.IsZero():
		return errors.New(`no "time"`)
	case rec.Resource.Version == "" || rec.Resource.Resource == "":
		return errors.New(`no "resource" with a version and a resource`)
	case !isObject(rec.Object):
		return errors.New(`no "object"`)
	}
	if !isObject(rec.Old) {
		rec.Old = nil
	}
	return nil
}

// notJSON says where a line stops being JSON, as encoding/json finds it.
func notJSON(line []byte) error {
	var v any
	err := json.Unmarshal(line, &v)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Errorf("not JSON (%v at byte %d)", syntax, syntax.Offset)
	}
	return errors.New("not JSON")
}

func kindOf(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return "string"
	case gjson.Number:
		return "number"
	case gjson.True, gjson.False:
		return "boolean"
	case gjson.Null:
		return "null"
	}
	if v.IsArray() {
		return "array"
	}
	return "object"
}

func isObject(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '{'
}

// Managers are the field managers of the recorded "by" (none when it was not recorded).
func (r Record) Managers() []string {
	if r.By == nil {
		return nil
	}
	var by []struct {
		Manager string `json:"manager"`
	}
	if json.Unmarshal(r.By, &by) != nil {
		return nil
	}
	managers := make([]string, 0, len(by))
	for _, b := range by {
		managers = append(managers, b.Manager)
	}
	return managers
}
