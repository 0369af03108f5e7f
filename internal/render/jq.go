package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/itchyny/gojq"

	"github.com/kubeevents/kubeevents/internal/event"
)

const (
	// DefaultJQTimeout is how long a jq expression may run on one event: plenty for any
	// filter or projection, and short enough that a runaway expression (repeat, a
	// recursive def) costs one event, not the stream.
	DefaultJQTimeout = time.Second
	// maxJQOutputs caps the outputs of one run, so that an expression generating values
	// without end stops at once rather than when it times out.
	maxJQOutputs = 1000
)

// errNoJQInput is what input and inputs give: an expression sees one event at a time,
// as its input, and there is no stream of further inputs to read.
//
//lint:ignore ST1005 the final "." is jq's identity, the event itself, not punctuation
var errNoJQInput = errors.New("input and inputs are not available: the expression runs on one event at a time, given as .")

// JQ is a compiled jq expression, run on event envelopes (see Input). It is
// sandboxed: $ENV and env are empty, input and inputs fail, modules cannot be loaded.
// A JQ is safe for concurrent use.
type JQ struct {
	code *gojq.Code
	// reads is the part of the envelope the expression reads (jqinput.go); nil: all.
	reads *readTree
	// types are the event types the expression can give an output or an error for
	// (jqtypes.go); nil: any.
	types map[string]bool
	// Timeout limits each Run; zero means DefaultJQTimeout. Set it before the first Run.
	Timeout time.Duration
}

// CompileJQ parses and compiles expr once for all events. A syntax error is a
// *JQSyntaxError; other errors (an undefined function or variable) are one line.
func CompileJQ(expr string) (*JQ, error) {
	query, err := gojq.Parse(expr)
	if err != nil {
		var parseErr *gojq.ParseError
		if errors.As(err, &parseErr) {
			return nil, newJQSyntaxError(expr, parseErr)
		}
		return nil, err
	}
	code, err := gojq.Compile(query,
		gojq.WithEnvironLoader(func() []string { return nil }),
		gojq.WithInputIter(noJQInput{}),
	)
	if err != nil {
		return nil, err
	}
	return &JQ{code: code, reads: readPaths(query), types: selectedTypes(query)}, nil
}

// noJQInput is the input iterator behind input and inputs; without one gojq refuses to
// compile them, and an empty one makes input fail with a bare "break".
type noJQInput struct{}

func (noJQInput) Next() (any, bool) { return errNoJQInput, true }

// Run runs the expression on input (normally the envelope that Input gives) and
// returns its outputs. As jq does, an error ends the run: the outputs before it are
// returned with it. A run that takes longer than the timeout, or produces more than
// 1000 outputs, ends with an error too.
func (q *JQ) Run(ctx context.Context, input any) ([]any, error) {
	timeout := q.Timeout
	if timeout <= 0 {
		timeout = DefaultJQTimeout
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
		if len(outputs) == maxJQOutputs {
			return outputs, fmt.Errorf("stopped after %d outputs, the limit for one event", maxJQOutputs)
		}
		outputs = append(outputs, v)
	}
}

// JQSyntaxError is a syntax error in a jq expression, shown as the message, the line
// of the expression it is in and a caret under the column:
//
//	syntax error at column 10: unexpected end of input
//	.object |
//	         ^
type JQSyntaxError struct {
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

func (e *JQSyntaxError) Error() string {
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

// newJQSyntaxError places gojq's error, which is reported after the token that caused
// it, at the start of that token (or just past the expression's last token, at its end).
func newJQSyntaxError(expr string, err *gojq.ParseError) *JQSyntaxError {
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
	return &JQSyntaxError{
		Line:      strings.Count(expr[:lineStart], "\n") + 1,
		Column:    utf8.RuneCountInString(expr[lineStart:at]) + 1,
		Message:   message,
		Text:      strings.TrimSuffix(expr[lineStart:lineEnd], "\r"),
		multiline: strings.Contains(strings.TrimRight(expr, "\n"), "\n"),
	}
}

// EnvelopeValue is ev's envelope as generic JSON values, for jq: the keys and values of
// the JSON line (AppendEnvelopeWithDiff with the same d and showOld), so that
// `kubeevents -o json | jq EXPR` and `--jq EXPR` agree. The object and old object are
// ev.ObjectValue and ev.OldValue themselves, not copies, and numbers are json.Number,
// which gojq computes with. It is built once per event for each showOld and shared by
// every caller: they must not modify it.
func EnvelopeValue(ev *event.Event, d *Differ, showOld bool) (map[string]any, error) {
	view := viewOf(ev, d)
	slot := &view.envelopes[0]
	if showOld {
		slot = &view.envelopes[1]
	}
	slot.once.Do(func() { slot.value, slot.err = buildEnvelopeValue(ev, d, showOld, wholeValue) })
	return slot.value, slot.err
}

// wholeValue reads every part of a value.
var wholeValue = &readTree{whole: true}

// buildEnvelopeValue builds the keys of the envelope that reads names (wholeValue:
// every key), and of the object and old object only the part it names.
func buildEnvelopeValue(ev *event.Event, d *Differ, showOld bool, reads *readTree) (map[string]any, error) {
	envelope := make(map[string]any, 8)
	if r := reads.at("object"); r != nil {
		object, err := objectPart(ev.Object, r, func() (any, error) { return ev.ObjectValue(typedValue) })
		if err != nil {
			return nil, fmt.Errorf("decoding %s %q: %w", ev.Kind, ev.Key(), err)
		}
		envelope["object"] = object
	}
	if reads.at("type") != nil {
		envelope["type"] = string(ev.Type)
	}
	if reads.at("time") != nil {
		envelope["time"] = ev.Time.UTC().Format(time.RFC3339Nano)
	}
	if reads.at("resource") != nil {
		envelope["resource"] = map[string]any{
			"group":    ev.Resource.Group,
			"version":  ev.Resource.Version,
			"resource": ev.Resource.Resource,
		}
	}
	if ev.Seq != 0 && reads.at("seq") != nil {
		envelope["seq"] = json.Number(strconv.FormatUint(ev.Seq, 10))
	}
	if ev.Cluster != "" && reads.at("cluster") != nil {
		envelope["cluster"] = ev.Cluster
	}
	if reads.at("owners") != nil || reads.at("rollout") != nil {
		addOwnersValue(envelope, ev)
	}
	if r := reads.at("old"); r != nil && showOld && hasOld(ev) {
		old, err := objectPart(ev.Old, r, func() (any, error) { return ev.OldValue(typedValue) })
		if err != nil {
			return nil, fmt.Errorf("decoding the previous %s %q: %w", ev.Kind, ev.Key(), err)
		}
		envelope["old"] = old
	}
	if d.diffs(ev) && reads.at("diff") != nil {
		changes, err := d.Changes(ev)
		if err != nil {
			return nil, err
		}
		envelope["diff"] = changesValue(changes)
	}
	if ev.FinalStateUnknown && reads.at("finalStateUnknown") != nil {
		envelope["finalStateUnknown"] = true
	}
	if ev.Reason != "" && reads.at("reason") != nil {
		envelope["reason"] = ev.Reason
	}
	return envelope, nil
}

// changesValue is changes as the generic values of their JSON (see appendChangesJSON).
func changesValue(changes []Change) []any {
	values := make([]any, len(changes))
	for i, change := range changes {
		value := map[string]any{"op": change.Op, "path": change.Path}
		switch change.Op {
		case OpAdd:
			value["value"] = change.Value
		case OpRemove:
			value["old"] = change.Old
		case OpReplace:
			value["value"], value["old"] = change.Value, change.Old
		case OpMove:
			value["from"] = change.From
		}
		values[i] = value
	}
	return values
}

// Truthy is jq's truth: everything but false and null is true.
func Truthy(v any) bool {
	return v != nil && v != false
}

// AppendJQOutput appends one output of a jq run as a line: compact JSON as jq writes
// it, or, if raw and v is a string, the string itself (jq -r). Raw text is not escaped:
// a caller writing it to a terminal decides whether to escape it. On error dst is
// returned unchanged.
func AppendJQOutput(dst []byte, v any, raw bool) (out []byte, err error) {
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
