// Package jq runs jq expressions (gojq) on events: compiled once, sandboxed and limited
// per event, on the event's envelope as generic JSON values, the keys and values of its
// JSON line (package render), so that `kubeevents -o json | jq EXPR` and `--jq EXPR`
// agree. An expression is given only the part of the envelope it reads (input.go), and
// not run at all on events whose type its first select rules out (types.go).
package jq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/generic"
)

const (
	// DefaultTimeout is how long a jq expression may run on one event: plenty for any
	// filter or projection, and short enough that a runaway expression (repeat, a
	// recursive def) costs one event, not the stream.
	DefaultTimeout = time.Second
	// maxOutputs caps the outputs of one run, so that an expression generating values
	// without end stops at once rather than when it times out.
	maxOutputs = 1000
)

// errNoInput is what input and inputs give: an expression sees one event at a time,
// as its input, and there is no stream of further inputs to read.
//
//lint:ignore ST1005 the final "." is jq's identity, the event itself, not punctuation
var errNoInput = errors.New("input and inputs are not available: the expression runs on one event at a time, given as .")

// Query is a compiled jq expression, run on event envelopes (see Input). It is
// sandboxed: $ENV and env are empty, input and inputs fail, modules cannot be loaded.
// A Query is safe for concurrent use.
type Query struct {
	code *gojq.Code
	// reads is the part of the envelope the expression reads (input.go); nil: all.
	reads *generic.Part
	// types are the event types the expression can give an output or an error for
	// (types.go); nil: any.
	types map[string]bool
	// Timeout limits each Run; zero means DefaultTimeout. Set it before the first Run.
	Timeout time.Duration
	src     string // the expression as given
}

// Reads reports whether the expression reads the envelope's key: it names it where the
// analysis of what it reads follows it (input.go), or anywhere in its text where that
// analysis gives up. What a run computes only for the expressions that read it (an
// object's health) is computed when one does.
func (q *Query) Reads(key string) bool {
	if q.reads == nil {
		return strings.Contains(q.src, key)
	}
	return q.reads.At(key) != nil
}

// Compile parses and compiles expr once for all events. A syntax error is a
// *SyntaxError; other errors (an undefined function or variable) are one line. Besides
// jq's own functions, the expression may use kubeevents' (functions.go).
func Compile(expr string) (*Query, error) {
	return CompileWith(expr, "")
}

// CompileWith is Compile with jq definitions (def NAME: ...; and nothing else) that the
// expression may use, as if written before it: a library of functions shared by several
// expressions (http sinks' formats). Errors in expr are placed in expr itself; the
// definitions are the caller's own and must compile.
func CompileWith(expr, definitions string) (*Query, error) {
	query, err := gojq.Parse(expr)
	if err != nil {
		var parseErr *gojq.ParseError
		if errors.As(err, &parseErr) {
			return nil, newSyntaxError(expr, parseErr)
		}
		return nil, err
	}
	if definitions != "" {
		defs, err := gojq.Parse(definitions + " .")
		if err != nil {
			return nil, fmt.Errorf("the shared definitions: %w", err)
		}
		query.FuncDefs = append(defs.FuncDefs, query.FuncDefs...)
	}
	code, err := gojq.Compile(query,
		gojq.WithEnvironLoader(func() []string { return nil }),
		gojq.WithInputIter(noInput{}),
		withFunctions,
	)
	if err != nil {
		return nil, err
	}
	return &Query{code: code, reads: readPaths(query), types: selectedTypes(query), src: definitions + expr}, nil
}

// noInput is the input iterator behind input and inputs; without one gojq refuses to
// compile them, and an empty one makes input fail with a bare "break".
type noInput struct{}

func (noInput) Next() (any, bool) { return errNoInput, true }

// Run runs the expression on input (normally the envelope that Input gives) and
// returns its outputs. As jq does, an error ends the run: the outputs before it are
// returned with it. A run that takes longer than the timeout, or produces more than
// 1000 outputs, ends with an error too.
func (q *Query) Run(ctx context.Context, input any) ([]any, error) {
	timeout := q.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var outputs []any
	iter := q.code.RunWithContext(ctx, input)
	for {
		v, ok := iter.Next()
		if !ok {
			return outputs, nil
		}
		if err, isErr := v.(error); isErr {
			var halt *gojq.HaltError
			switch {
			case errors.As(err, &halt) && halt.Value() == nil:
				return outputs, nil // halt: stop, without error
			case errors.Is(err, context.DeadlineExceeded):
				return outputs, fmt.Errorf("stopped after %v, the time limit for one event", timeout)
			}
			return outputs, err
		}
		if len(outputs) == maxOutputs {
			return outputs, fmt.Errorf("stopped after %d outputs, the limit for one event", maxOutputs)
		}
		outputs = append(outputs, v)
	}
}

// SyntaxError is a syntax error in a jq expression, shown as the message, the line
// of the expression it is in and a caret under the column:
//
//	syntax error at column 10: unexpected end of input
//	.object |
//	         ^
type SyntaxError struct {
	// Line and Column are 1-based; Column counts runes within Line.
	Line, Column int
	// Message says what is wrong ("unexpected token \"]\"").
	Message string
	// Text is the line of the expression with the error.
	Text string
	// multiline is whether the expression has more lines than Text, so the message
	// names the line.
	multiline bool
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	if e.multiline {
		fmt.Fprintf(&b, "syntax error at line %d, column %d: %s\n", e.Line, e.Column, e.Message)
	} else {
		fmt.Fprintf(&b, "syntax error at column %d: %s\n", e.Column, e.Message)
	}
	b.WriteString(e.Text)
	b.WriteByte('\n')
	// The caret line copies the tabs before the column, so the caret stays under it.
	column := 1
	for _, r := range e.Text {
		if column == e.Column {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		column++
	}
	for ; column < e.Column; column++ {
		b.WriteByte(' ')
	}
	b.WriteByte('^')
	return b.String()
}

// newSyntaxError places gojq's error, which is reported after the token that caused
// it, at the start of that token (or just past the expression's last token, at its end).
func newSyntaxError(expr string, err *gojq.ParseError) *SyntaxError {
	at := min(max(err.Offset-len(err.Token), 0), len(expr))
	if at == len(expr) {
		at = len(strings.TrimRight(expr, " \t\r\n"))
	}
	for at > 0 && at < len(expr) && !utf8.RuneStart(expr[at]) {
		at--
	}
	lineStart := strings.LastIndexByte(expr[:at], '\n') + 1
	lineEnd := strings.IndexByte(expr[at:], '\n')
	if lineEnd < 0 {
		lineEnd = len(expr)
	} else {
		lineEnd += at
	}
	message := err.Error()
	if message == "unexpected EOF" {
		message = "unexpected end of input"
	}
	return &SyntaxError{
		Line:      strings.Count(expr[:lineStart], "\n") + 1,
		Column:    utf8.RuneCountInString(expr[lineStart:at]) + 1,
		Message:   message,
		Text:      strings.TrimSuffix(expr[lineStart:lineEnd], "\r"),
		multiline: strings.Contains(strings.TrimRight(expr, "\n"), "\n"),
	}
}

// EnvelopeValue is ev's envelope as generic JSON values, for jq: the keys and values of
// the JSON line (render.AppendEnvelopeWithDiff with the same d and showOld). The object
// and old object are ev.ObjectValue and ev.OldValue themselves, not copies, and numbers
// are json.Number, which gojq computes with. It is built once per event for each d and
// showOld and shared by every caller: they must not modify it.
func EnvelopeValue(ev *event.Event, d *diff.Differ, showOld bool) (map[string]any, error) {
	slot := ev.Memo(envelopeKey{d, showOld}, newEnvelopeSlot).(*envelopeSlot)
	slot.once.Do(func() { slot.value, slot.err = buildEnvelopeValue(ev, d, showOld, wholeValue) })
	return slot.value, slot.err
}

// envelopeKey is the key of an event's envelope in its memo (event.Event.Memo).
type envelopeKey struct {
	differ  *diff.Differ
	showOld bool
}

type envelopeSlot struct {
	once  sync.Once
	value map[string]any
	err   error
}

func newEnvelopeSlot() any { return new(envelopeSlot) }

// wholeValue reads every part of a value.
var wholeValue = &generic.Part{Whole: true}

// buildEnvelopeValue builds the keys of the envelope that reads names (wholeValue:
// every key), and of the object and old object only the part it names.
func buildEnvelopeValue(ev *event.Event, d *diff.Differ, showOld bool, reads *generic.Part) (map[string]any, error) {
	envelope := make(map[string]any, 8)
	if r := reads.At("object"); r != nil {
		object, err := objectPart(ev.Object, r, ev.ObjectValue)
		if err != nil {
			return nil, fmt.Errorf("decoding %s %q: %w", ev.Kind, ev.Key(), err)
		}
		envelope["object"] = object
	}
	if reads.At("type") != nil {
		envelope["type"] = string(ev.Type)
	}
	if reads.At("time") != nil {
		envelope["time"] = ev.Time.UTC().Format(time.RFC3339Nano)
	}
	if reads.At("resource") != nil {
		envelope["resource"] = map[string]any{
			"group":    ev.Resource.Group,
			"version":  ev.Resource.Version,
			"resource": ev.Resource.Resource,
		}
	}
	if ev.Seq != 0 && reads.At("seq") != nil {
		envelope["seq"] = json.Number(strconv.FormatUint(ev.Seq, 10))
	}
	if ev.Cluster != "" && reads.At("cluster") != nil {
		envelope["cluster"] = ev.Cluster
	}
	if reads.At("owners") != nil || reads.At("rollout") != nil {
		addOwners(envelope, ev)
	}
	if h := ev.Health; h != nil && reads.At("health") != nil {
		health := map[string]any{"status": string(h.Status), "message": h.Message}
		if h.Previous != "" {
			health["previous"] = string(h.Previous)
		}
		envelope["health"] = health
	}
	if r := reads.At("old"); r != nil && showOld && ev.HasOld() {
		old, err := objectPart(ev.Old, r, ev.OldValue)
		if err != nil {
			return nil, fmt.Errorf("decoding the previous %s %q: %w", ev.Kind, ev.Key(), err)
		}
		envelope["old"] = old
	}
	if d.Diffs(ev) && reads.At("diff") != nil {
		changes, err := d.Changes(ev)
		if err != nil {
			return nil, err
		}
		envelope["diff"] = changesValue(changes, attribution.Of(ev, d))
	}
	if reads.At("by") != nil || reads.At("byAmbiguous") != nil {
		if by := attribution.Of(ev, d); by != nil && len(by.By) > 0 {
			envelope["by"] = attribution.Value(by.By)
			if by.Ambiguous {
				envelope["byAmbiguous"] = true
			}
		}
	}
	if ev.On != nil && reads.At("on") != nil {
		on := make([]any, len(ev.On))
		for i, name := range ev.On {
			on[i] = name
		}
		envelope["on"] = on
	}
	if ev.Type == event.RolloutStep && reads.At("folded") != nil {
		envelope["folded"] = json.Number(strconv.Itoa(ev.FoldedEvents))
	}
	if ev.UnfoldedSeq != 0 && reads.At("unfolded") != nil {
		envelope["unfolded"] = json.Number(strconv.FormatUint(ev.UnfoldedSeq, 10))
	}
	if ev.FinalStateUnknown && reads.At("finalStateUnknown") != nil {
		envelope["finalStateUnknown"] = true
	}
	if ev.Past && reads.At("past") != nil {
		envelope["past"] = true
	}
	if ev.Reason != "" && reads.At("reason") != nil {
		envelope["reason"] = ev.Reason
	}
	return envelope, nil
}

// objectPart is the part of obj (ev.Object or ev.Old) that reads names, built for it
// where generic.PartOf can, else the event's whole value (value: ev.ObjectValue or
// ev.OldValue), shared.
func objectPart(obj runtime.Object, reads *generic.Part, value func() (any, error)) (any, error) {
	if part, built, err := generic.PartOf(obj, reads); built {
		return part, err
	}
	return value()
}

// addOwners adds the envelope's owner chain and rollout state (watch TYPE/NAME --owned),
// each only when the event has one, as render's JSON lines have them.
func addOwners(envelope map[string]any, ev *event.Event) {
	if ev.Owners != nil {
		owners := make([]any, len(ev.Owners))
		for i, o := range ev.Owners {
			owners[i] = map[string]any{"kind": o.Kind, "name": o.Name}
		}
		envelope["owners"] = owners
	}
	if ev.Rollout != nil {
		envelope["rollout"] = map[string]any{"state": string(ev.Rollout.State), "message": ev.Rollout.Message}
	}
}

// changesValue is changes as the generic values of their JSON (diff.Differ.ChangesJSON).
func changesValue(changes []diff.Change, by *attribution.Attribution) []any {
	values := make([]any, len(changes))
	for i, change := range changes {
		value := map[string]any{"op": change.Op, "path": change.Path}
		switch change.Op {
		case diff.OpAdd:
			value["value"] = change.Value
		case diff.OpRemove:
			value["old"] = change.Old
		case diff.OpReplace:
			value["value"], value["old"] = change.Value, change.Old
		case diff.OpMove:
			value["from"] = change.From
		}
		if by.Differs() {
			if entries := by.ChangeBy(i); len(entries) > 0 {
				value["by"] = attribution.Value(entries)
			}
		}
		values[i] = value
	}
	return values
}

// Truthy is jq's truth: everything but false and null is true.
func Truthy(v any) bool {
	return v != nil && v != false
}

// AppendOutput appends one output of a jq run as a line: compact JSON as jq writes
// it, or, if raw and v is a string, the string itself (jq -r). Raw text is not escaped:
// a caller writing it to a terminal decides whether to escape it. On error dst is
// returned unchanged.
func AppendOutput(dst []byte, v any, raw bool) (out []byte, err error) {
	if s, ok := v.(string); ok && raw {
		dst = append(dst, s...)
		return append(dst, '\n'), nil
	}
	// gojq.Marshal panics on a type no jq run produces, such as int64.
	defer func() {
		if r := recover(); r != nil {
			out, err = dst, fmt.Errorf("cannot encode jq output: %v", r)
		}
	}()
	text, err := gojq.Marshal(v)
	if err != nil {
		return dst, err
	}
	dst = append(dst, text...)
	return append(dst, '\n'), nil
}
