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
	// Object is the object's JSON; Old the previous object's (--show-old), Diff the
	// changes, By the field managers that made the change: nil when not recorded.
	Object, Old, Diff, By json.RawMessage
	FinalStateUnknown     bool
	Reason                string
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

// envelope is the JSON form of a record.
type envelope struct {
	Type     string    `json:"type"`
	Time     time.Time `json:"time"`
	Seq      uint64    `json:"seq"`
	Cluster  string    `json:"cluster"`
	Resource *struct {
		Group    string `json:"group"`
		Version  string `json:"version"`
		Resource string `json:"resource"`
	} `json:"resource"`
	Owners []struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"owners"`
	Rollout *struct {
		State   string `json:"state"`
		Message string `json:"message"`
	} `json:"rollout"`
	Object            json.RawMessage `json:"object"`
	Old               json.RawMessage `json:"old"`
	Diff              json.RawMessage `json:"diff"`
	By                json.RawMessage `json:"by"`
	FinalStateUnknown bool            `json:"finalStateUnknown"`
	Reason            string          `json:"reason"`
}

// Parse reads one line (without its end of line) as a record. The record's JSON parts
// share line's memory.
func Parse(line []byte) (Record, error) {
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return Record{}, fmt.Errorf("not JSON (%v at byte %d)", syntax, syntax.Offset)
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field == "" {
			return Record{}, fmt.Errorf("a JSON %s, not an object", typeErr.Value)
		}
		return Record{}, err
	}
	rec := Record{Type: event.EventType(env.Type), Time: env.Time, Seq: env.Seq, Cluster: env.Cluster,
		FinalStateUnknown: env.FinalStateUnknown, Reason: env.Reason}
	switch rec.Type {
	case event.Added, event.Modified, event.Deleted, event.Sync:
	case "":
		return Record{}, errors.New(`no "type"`)
	default:
		return Record{}, fmt.Errorf(`"type" %q is not ADDED, MODIFIED, DELETED or SYNC`, env.Type)
	}
	switch {
	case rec.Time.IsZero():
		return Record{}, errors.New(`no "time"`)
	case env.Resource == nil || env.Resource.Version == "" || env.Resource.Resource == "":
		return Record{}, errors.New(`no "resource" with a version and a resource`)
	case !isObject(env.Object):
		return Record{}, errors.New(`no "object"`)
	}
	rec.Resource = schema.GroupVersionResource{Group: env.Resource.Group, Version: env.Resource.Version, Resource: env.Resource.Resource}
	rec.Object = env.Object
	if isObject(env.Old) {
		rec.Old = env.Old
	}
	if len(env.Diff) > 0 && env.Diff[0] == '[' {
		rec.Diff = env.Diff
	}
	if len(env.By) > 0 && env.By[0] == '[' {
		rec.By = env.By
	}
	if env.Owners != nil {
		rec.Owners = make([]event.Owner, len(env.Owners))
		for i, o := range env.Owners {
			rec.Owners[i] = event.Owner{Kind: o.Kind, Name: o.Name}
		}
	}
	if env.Rollout != nil {
		rec.Rollout = &event.Rollout{State: event.RolloutState(env.Rollout.State), Message: env.Rollout.Message}
	}
	return rec, nil
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
