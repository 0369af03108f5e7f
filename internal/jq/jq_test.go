package jq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/render"
)

func mustCompile(t testing.TB, expr string) *Query {
	t.Helper()
	q, err := Compile(expr)
	if err != nil {
		t.Fatalf("Compile(%q): %v", expr, err)
	}
	return q
}

// jqLines runs q on input and renders its outputs as AppendOutput does.
func jqLines(t *testing.T, q *Query, input any) (string, error) {
	t.Helper()
	outputs, err := q.Run(context.Background(), input)
	var out []byte
	for _, v := range outputs {
		var encodeErr error
		if out, encodeErr = AppendOutput(out, v, false); encodeErr != nil {
			t.Fatal(encodeErr)
		}
	}
	return string(out), err
}

// differentRuns runs q on a and on b and says what each gave where they differ, in
// outputs or errors; "" where they agree.
func differentRuns(t *testing.T, q *Query, a, b any) string {
	t.Helper()
	aOut, aErr := jqLines(t, q, a)
	bOut, bErr := jqLines(t, q, b)
	if aOut == bOut && reflect.DeepEqual(aErr, bErr) {
		return ""
	}
	return fmt.Sprintf("%s %v\n%s %v", aOut, aErr, bOut, bErr)
}

func TestJQSyntaxErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{".object |", "syntax error at column 10: unexpected end of input\n.object |\n         ^"},
		{".object | ", "syntax error at column 10: unexpected end of input\n.object | \n         ^"},
		{".a ]", "syntax error at column 4: unexpected token \"]\"\n.a ]\n   ^"},
		{".a $$ .b", "syntax error at column 4: unexpected token \"$\"\n.a $$ .b\n   ^"},
		{`.a | "\x"`, "syntax error at column 7: invalid escape sequence \"\\x\" in string literal\n.a | \"\\x\"\n      ^"},
		{`"abc`, "syntax error at column 5: unterminated string literal\n\"abc\n    ^"},
		{"éé | ]", "syntax error at column 1: unexpected token \"é\"\néé | ]\n^"},
		{".name == \"é\" ]", "syntax error at column 14: unexpected token \"]\"\n.name == \"é\" ]\n             ^"},
		{".a\n| .b +\n| .c", "syntax error at line 3, column 1: unexpected token \"|\"\n| .c\n^"},
		{"select(\n\t.a ]\n)", "syntax error at line 2, column 5: unexpected token \"]\"\n\t.a ]\n\t   ^"},
		{".a |\n", "syntax error at column 5: unexpected end of input\n.a |\n    ^"},
	} {
		_, err := Compile(tc.expr)
		var syntaxErr *SyntaxError
		if !errors.As(err, &syntaxErr) {
			t.Errorf("Compile(%q) error = %v, want a *SyntaxError", tc.expr, err)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("Compile(%q) error =\n%s\nwant\n%s", tc.expr, got, tc.want)
		}
	}
}

func TestJQCompileErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"foo(1)":                 "function not defined: foo/1",
		"$nope":                  "variable not defined: $nope",
		`import "m" as m; .`:     `cannot load module: "m"`,
		`include "m"; .`:         `cannot load module: "m"`,
		"input_filename":         "function not defined: input_filename/0",
		"$__prog_args":           "variable not defined: $__prog_args",
		`.a | debug | .b`:        "function not defined: debug/0",
		`"x" | stderr`:           "function not defined: stderr/0",
		`get_search_list | .[0]`: "function not defined: get_search_list/0",
	} {
		_, err := Compile(expr)
		if err == nil || err.Error() != want {
			t.Errorf("Compile(%q) error = %v, want %s", expr, err, want)
		}
	}
}

// TestJQSandbox checks that an expression cannot read the environment, nor input
// beyond the one event it is given.
func TestJQSandbox(t *testing.T) {
	const secret = "kubeevents-jq-leak-probe-4c1e"
	t.Setenv("KUBEEVENTS_JQ_PROBE", secret)
	t.Setenv("HOME", "/home/"+secret)
	for _, tc := range []struct{ expr, want, err string }{
		{"$ENV", "{}\n", ""},
		{"env", "{}\n", ""},
		{"$ENV.KUBEEVENTS_JQ_PROBE", "null\n", ""},
		{"env.HOME", "null\n", ""},
		{"[env[]] | length", "0\n", ""},
		{"input", "", errNoInput.Error()},
		// inputs re-raises input's error with error/1, which prefixes it.
		{"[inputs]", "", "error: " + errNoInput.Error()},
		{"first(inputs)", "", "error: " + errNoInput.Error()},
		{"try input catch .", `"` + errNoInput.Error() + `"` + "\n", ""},
	} {
		out, err := jqLines(t, mustCompile(t, tc.expr), map[string]any{"type": "ADDED"})
		if strings.Contains(out, secret) || (err != nil && strings.Contains(err.Error(), secret)) {
			t.Fatalf("%s leaked the environment: %q, %v", tc.expr, out, err)
		}
		if out != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s = %q, %v; want %q, %s", tc.expr, out, err, tc.want, tc.err)
		}
	}
}

func TestJQRun(t *testing.T) {
	ev := eventtest.DiffEvents()[0] // the deployment scaled from 1 to 3
	envelope, err := EnvelopeValue(ev, diff.NewDiffer(nil), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ expr, want, err string }{
		{".object.spec.replicas > 2", "true\n", ""},
		{".object.spec.replicas + 1", "4\n", ""},
		{".object.spec.replicas * 1.5", "4.5\n", ""},
		{".seq", "100\n", ""},
		{".seq == 100", "true\n", ""},
		{`select(.type == "DELETED")`, "", ""},
		{`.diff[] | select(.path == "/spec/replicas") | [.old, .value]`, "[1,3]\n", ""},
		{".diff | length", "2\n", ""},
		{".object.metadata.name, halt, 2", "\"web\"\n", ""},
		{".object.metadata.name + 1", "", `cannot add: string ("web") and number (1)`},
		{`1, error("boom"), 2`, "1\n", "error: boom"},
		{"[limit(3; repeat(1))]", "[1,1,1]\n", ""},
	} {
		out, err := jqLines(t, mustCompile(t, tc.expr), envelope)
		if out != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s = %q, %v; want %q, %s", tc.expr, out, err, tc.want, tc.err)
		}
	}
}

func TestJQLimits(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		outputs int
		err     string
	}{
		{"def f: f; f", 0, "stopped after 100ms, the time limit for one event"},
		{"[repeat(.)]", 0, "stopped after 100ms, the time limit for one event"},
		{"last(range(1e15))", 0, "stopped after 100ms, the time limit for one event"},
		{"repeat(.)", maxOutputs, "stopped after 1000 outputs, the limit for one event"},
		{"range(1e15)", maxOutputs, "stopped after 1000 outputs, the limit for one event"},
	} {
		q := mustCompile(t, tc.expr)
		q.Timeout = 100 * time.Millisecond
		start := time.Now()
		outputs, err := q.Run(context.Background(), map[string]any{"type": "ADDED"})
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("%s ran for %v", tc.expr, elapsed)
		}
		if len(outputs) != tc.outputs || err == nil || err.Error() != tc.err {
			t.Errorf("%s = %d outputs, %v; want %d, %s", tc.expr, len(outputs), err, tc.outputs, tc.err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := mustCompile(t, "def f: f; f").Run(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("run with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestJQAgreesWithJSONLines checks that --jq EXPR gives what `-o json | jq EXPR` gives:
// the same expression over EnvelopeValue and over the decoded JSON line.
func TestJQAgreesWithJSONLines(t *testing.T) {
	exprs := []string{
		".",
		"keys",
		`select(.type == "DELETED") | .object.metadata.name`,
		"[.type, .time, .seq, .resource, .finalStateUnknown]",
		"[.on, .folded, .unfolded, .rollout]",
		".health", "[.health.status, .health.previous]",
		".diff | map(.path)",
		`[.diff[]? | select(.op == "replace") | .old]`,
		`[.diff[]? | select(.op == "add") | has("old"), has("value")]`,
		".old.metadata.resourceVersion",
		".object.spec.replicas + 1",
		".object.spec.total - 1",
		`[.object | .. | numbers] | add`,
		".by", "[.by[]?.manager]", ".byAmbiguous", "[.diff[]?.by]",
	}
	d := diff.NewDiffer(eventtest.MustParseAll(t, diff.ParseIgnorePath, eventtest.UserIgnores...))
	for _, showOld := range []bool{false, true} {
		events := append(append(append(eventtest.DiffGoldenEvents(), eventtest.Events()...), eventtest.AttributedEvents()...), append(eventtest.SignalEvents(), eventtest.HealthEvents()...)...)
		for _, expr := range exprs {
			q := mustCompile(t, expr)
			for i, ev := range events {
				text, err := render.AppendEnvelopeWithDiff(nil, ev, d, showOld)
				if err != nil {
					t.Fatal(err)
				}
				dec := json.NewDecoder(bytes.NewReader(text))
				dec.UseNumber()
				var line any
				if err := dec.Decode(&line); err != nil {
					t.Fatal(err)
				}
				envelope, err := EnvelopeValue(ev, d, showOld)
				if err != nil {
					t.Fatal(err)
				}
				if differ := differentRuns(t, q, line, envelope); differ != "" {
					t.Errorf("showOld %v, %s on event %d (%s %s), JSON line and envelope:\n%s",
						showOld, expr, i, ev.Type, ev.Key(), differ)
				}
			}
		}
	}
}

// TestEnvelopeValueShared checks that the envelope is built once per event and shares
// the event's decoded object rather than copying it.
func TestEnvelopeValueShared(t *testing.T) {
	ev := eventtest.DiffEvents()[2]
	d := diff.NewDiffer(nil)
	first, err := EnvelopeValue(ev, d, true)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EnvelopeValue(ev, d, true)
	if reflect.ValueOf(first).UnsafePointer() != reflect.ValueOf(again).UnsafePointer() {
		t.Error("EnvelopeValue built twice for one event")
	}
	object, _ := ev.ObjectValue()
	old, _ := ev.OldValue()
	if reflect.ValueOf(first["object"]).UnsafePointer() != reflect.ValueOf(object).UnsafePointer() ||
		reflect.ValueOf(first["old"]).UnsafePointer() != reflect.ValueOf(old).UnsafePointer() {
		t.Error("the envelope copies the object or the old object")
	}
	withoutOld, _ := EnvelopeValue(ev, d, false)
	if _, ok := withoutOld["old"]; ok {
		t.Error(`EnvelopeValue(showOld=false) has "old"`)
	}
	withoutDiff, _ := EnvelopeValue(ev, nil, false)
	if _, ok := withoutDiff["diff"]; ok {
		t.Error(`EnvelopeValue(nil Differ) has "diff"`)
	}
}

// TestJQDoesNotModifyEnvelope checks that updates in an expression work on copies: the
// envelope is shared by every sink.
func TestJQDoesNotModifyEnvelope(t *testing.T) {
	ev := eventtest.DiffEvents()[2]
	envelope, err := EnvelopeValue(ev, diff.NewDiffer(nil), true)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := AppendOutput(nil, envelope, false)
	for _, expr := range []string{
		`.object.metadata.name = "x"`, "del(.object.spec)", ".diff |= reverse", ".object.spec.containers[0] += {a: 1}",
		".old.status.conditions |= sort_by(.type)", "to_entries", `.object.metadata.labels.app |= ascii_upcase`,
	} {
		if _, err := mustCompile(t, expr).Run(context.Background(), envelope); err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
	}
	if after, _ := AppendOutput(nil, envelope, false); !bytes.Equal(before, after) {
		t.Errorf("the envelope changed:\n%s\nwas\n%s", after, before)
	}
}

func TestTruthy(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{nil, false}, {false, false}, {true, true}, {0, true}, {json.Number("0"), true},
		{"", true}, {[]any{}, true}, {map[string]any{}, true},
	} {
		if got := Truthy(tc.v); got != tc.want {
			t.Errorf("Truthy(%#v) = %v", tc.v, got)
		}
	}
}

func TestAppendJQOutput(t *testing.T) {
	for _, tc := range []struct {
		v    any
		raw  bool
		want string
	}{
		{"web", false, "\"web\"\n"},
		{"web", true, "web\n"},
		{"a\nb", true, "a\nb\n"},
		{json.Number("12345678901234567890"), true, "12345678901234567890\n"},
		{map[string]any{"b": []any{1, 2.5, nil, true}, "a": "<x>"}, false, `{"a":"<x>","b":[1,2.5,null,true]}` + "\n"},
	} {
		got, err := AppendOutput([]byte("> "), tc.v, tc.raw)
		if err != nil || string(got) != "> "+tc.want {
			t.Errorf("AppendOutput(%#v, %v) = %q, %v; want %q", tc.v, tc.raw, got, err, "> "+tc.want)
		}
	}
	got, err := AppendOutput([]byte("> "), int64(1), false)
	if err == nil || string(got) != "> " {
		t.Errorf("AppendOutput(int64) = %q, %v; want the input back and an error", got, err)
	}
}

// TestEnvelopeValueNoSeqForSync mirrors the JSON line: SYNC events have no seq.
func TestEnvelopeValueNoSeqForSync(t *testing.T) {
	sync := eventtest.Events()[9]
	if sync.Type != event.Sync {
		t.Fatalf("fixture 9 is %s", sync.Type)
	}
	envelope, err := EnvelopeValue(sync, diff.NewDiffer(nil), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := envelope["seq"]; ok {
		t.Error("SYNC envelope has seq")
	}
	if _, ok := envelope["diff"]; ok {
		t.Error("SYNC envelope has diff")
	}
	if _, ok := envelope["old"]; !ok {
		t.Error("SYNC envelope with showOld has no old")
	}
}

// TestRolloutStatus: rollout_status judges a workload by kubectl rollout status's rules
// (package owners), and is null for anything else.
func TestRolloutStatus(t *testing.T) {
	for _, tc := range []struct{ object, want string }{
		{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","generation":2},"spec":{"replicas":3},
		   "status":{"observedGeneration":2,"replicas":3,"updatedReplicas":1}}`,
			`{"message":"Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...","state":"progressing"}`},
		{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","generation":2},"spec":{"replicas":3},
		   "status":{"observedGeneration":2,"replicas":3,"updatedReplicas":1,"conditions":[{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded"}]}}`,
			`{"message":"deployment \"web\" exceeded its progress deadline","state":"failed"}`},
		{`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"once"},"status":{"succeeded":1,"conditions":[{"type":"Complete","status":"True"}]}}`,
			`{"message":"job \"once\" completed: 1 succeeded","state":"complete"}`},
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1"}}`, `null`},
		{`null`, `null`},
	} {
		var input any
		dec := json.NewDecoder(strings.NewReader(tc.object))
		dec.UseNumber()
		if err := dec.Decode(&input); err != nil {
			t.Fatal(err)
		}
		outs, err := mustCompile(t, "rollout_status").Run(context.Background(), input)
		if err != nil || len(outs) != 1 {
			t.Fatalf("rollout_status on %s: %v %v", tc.object, outs, err)
		}
		got, err := AppendOutput(nil, outs[0], false)
		if err != nil || strings.TrimSpace(string(got)) != tc.want {
			t.Errorf("rollout_status on %s = %s %v, want %s", tc.object, got, err, tc.want)
		}
	}
}

// TestCompileWith: the shared definitions are there for the expression, and its errors
// are placed in the expression, not in the definitions before it.
func TestCompileWith(t *testing.T) {
	q, err := CompileWith(`shout(.name)`, "def shout(f): f | ascii_upcase;\n# a comment\ndef twice: . * 2;")
	if err != nil {
		t.Fatal(err)
	}
	outs, err := q.Run(context.Background(), map[string]any{"name": "web"})
	if err != nil || len(outs) != 1 || outs[0] != "WEB" {
		t.Errorf("outputs %v, %v", outs, err)
	}
	_, err = CompileWith(".a |", "def twice: . * 2;")
	var syntax *SyntaxError
	if !errors.As(err, &syntax) || syntax.Line != 1 || syntax.Text != ".a |" {
		t.Errorf("a syntax error in the expression: %#v", err)
	}
}
