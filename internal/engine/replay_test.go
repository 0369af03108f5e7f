package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/conditions"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/execsink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/filesink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/httpsink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/jqsink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/sender"
	"github.com/kubeevents/kubeevents/internal/sinkkind/terminalsink"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// fakeSource emits n pod events, web-1 ... web-n, then ends (or fails with err).
type fakeSource struct {
	n       int
	err     error
	emitted int
}

func (f *fakeSource) Run(ctx context.Context, emit func(*event.Event) bool) error {
	for i := 1; i <= f.n; i++ {
		pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "shop"}}
		typ := event.Modified
		if i%2 == 1 {
			typ = event.Added
		}
		ev := &event.Event{Type: typ, Time: time.Date(2026, 11, 23, 14, 0, i, 0, time.UTC), Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Object: pod}
		f.emitted++
		if !emit(ev) {
			return nil
		}
	}
	return f.err
}

func replayOn(t *testing.T, src *fakeSource, cfg Config) (string, Result, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cfg.Output.Sinks = []sinkkind.Spec{{Name: "screen", Kind: terminalsink.Kind, Settings: &terminalsink.Settings{Format: "name"}, Buffer: 4, OnFull: listener.Block}}
	cfg.End.Grace = time.Second
	sys := System{Out: &out, ErrOut: &errOut, Terminals: fakeTerminals{}, LookupEnv: os.LookupEnv}
	res, err := RunReplay(context.Background(), sys, cfg, Replay{Source: src, What: "test"})
	return out.String(), res, err
}

// TestReplayRunsTheSourceThroughTheSinks: every event reaches the sink, numbered, the
// input's end ends the run; --event-types and --max-events apply as to a watch's.
func TestReplayRunsTheSourceThroughTheSinks(t *testing.T) {
	out, res, err := replayOn(t, &fakeSource{n: 20}, Config{})
	if err != nil || res.Reason != StopInputEnd || res.Made != 20 || strings.Count(out, "\n") != 20 {
		t.Fatalf("%d lines, made %d, reason %v, err %v", strings.Count(out, "\n"), res.Made, res.Reason, err)
	}
	out, res, _ = replayOn(t, &fakeSource{n: 20}, Config{Events: Events{Types: []event.EventType{event.Added}}})
	if res.Made != 10 || strings.Contains(out, "MODIFIED") {
		t.Errorf("--event-types ADDED: made %d:\n%s", res.Made, out)
	}
	src := &fakeSource{n: 20}
	out, res, err = replayOn(t, src, Config{End: End{MaxEvents: 3}})
	if err != nil || res.Reason != StopLimit || out != "ADDED pod/web-1\nMODIFIED pod/web-2\nADDED pod/web-3\n" || src.emitted != 3 {
		t.Errorf("--max-events 3: reason %v, err %v, %d read:\n%s", res.Reason, err, src.emitted, out)
	}
}

// TestReplayConditions: --until met ends the run there; a recording that ends before it
// is met is a NotMetError (exit 3); the source's error ends the run.
func TestReplayConditions(t *testing.T) {
	until, err := jq.Compile(`.object.metadata.name == "web-4"`)
	if err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{n: 20}
	out, res, err := replayOn(t, src, Config{End: End{Until: until}})
	if err != nil || res.Reason != StopCondition || !strings.HasSuffix(out, "MODIFIED pod/web-4\n") || src.emitted != 4 {
		t.Errorf("--until: reason %v, err %v, %d read:\n%s", res.Reason, err, src.emitted, out)
	}
	_, _, err = replayOn(t, &fakeSource{n: 2}, Config{End: End{Until: until}})
	var notMet *conditions.NotMetError
	if !errors.As(err, &notMet) || !strings.Contains(err.Error(), "the recording ended before --until was met") {
		t.Errorf("a recording that ends first: %v", err)
	}
	bad := errors.New("events.jsonl:3: not an event kubeevents wrote")
	_, _, err = replayOn(t, &fakeSource{n: 2, err: bad}, Config{})
	if !errors.Is(err, bad) {
		t.Errorf("the source's error: %v", err)
	}
}

// Only pretty, wide and template formats and jq read objects beyond their JSON.
func TestReadsObjects(t *testing.T) {
	for _, c := range []struct {
		sinks []sinkkind.Spec
		until string
		want  bool
	}{
		{[]sinkkind.Spec{terminal("json"), {Kind: filesink.Kind, Settings: &filesink.Settings{Format: "yaml"}}, {Kind: httpsink.Kind, Settings: &httpsink.Settings{}}}, "", false},
		{[]sinkkind.Spec{terminal("name")}, ".type", true},
		{[]sinkkind.Spec{terminal("pretty")}, "", true},
		{[]sinkkind.Spec{terminal("jsonpath={.metadata.name}")}, "", true},
		{[]sinkkind.Spec{{Kind: jqsink.Kind, Settings: &jqsink.Settings{Expr: "."}}}, "", true},
		{[]sinkkind.Spec{{Kind: execsink.Kind, Settings: &execsink.Settings{Settings: sender.Settings{JQ: "select(.type)"}}}}, "", true},
	} {
		cfg := Config{Output: Output{Sinks: c.sinks}}
		if c.until != "" {
			cfg.End.Until, _ = jq.Compile(c.until)
		}
		if got := cfg.ReadsObjects(); got != c.want {
			t.Errorf("%+v until %q: %v", c.sinks, c.until, got)
		}
	}
}

// terminal is a terminal sink in format.
func terminal(format string) sinkkind.Spec {
	return sinkkind.Spec{Kind: terminalsink.Kind, Settings: &terminalsink.Settings{Format: format}}
}

// TestSinksGetTheirExpression: a jq sink is built with its compiled expression, so each
// event is what the expression makes of it.
func TestSinksGetTheirExpression(t *testing.T) {
	var out, errOut bytes.Buffer
	const expr = `select(.type == "ADDED") | .object.metadata.name`
	jqSink := sinkkind.Spec{Name: "jq", Kind: jqsink.Kind, Settings: &jqsink.Settings{Expr: expr, Raw: true, Output: sinkkind.Stdout}, Buffer: 4, OnFull: listener.Block}
	if err := jqSink.Compile(sinkkind.Compiling{}); err != nil {
		t.Fatal(err)
	}
	cfg := Config{End: End{Grace: time.Second}, Output: Output{Sinks: []sinkkind.Spec{jqSink}}}
	sys := System{Out: &out, ErrOut: &errOut, Terminals: fakeTerminals{}, LookupEnv: os.LookupEnv}
	if _, err := RunReplay(context.Background(), sys, cfg, Replay{Source: &fakeSource{n: 4}, What: "test"}); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, errOut.String())
	}
	if out.String() != "web-1\nweb-3\n" || errOut.Len() > 0 {
		t.Errorf("jq sink printed %q, want the ADDED pods' names; stderr:\n%s", out.String(), errOut.String())
	}
}

// crashSource emits a pod that runs, enters CrashLoopBackOff, and waits in it again,
// each update with its previous version as Old, as package replay makes them.
type crashSource struct{}

func (crashSource) Run(ctx context.Context, emit func(*event.Event) bool) error {
	state := func(waiting string) *corev1.Pod {
		p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "flaky", Namespace: "shop"}}
		s := corev1.ContainerStatus{Name: "app"}
		if waiting != "" {
			s.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{s}
		return p
	}
	var prev *corev1.Pod
	for i, waiting := range []string{"", "CrashLoopBackOff", "CrashLoopBackOff"} {
		ev := &event.Event{Type: event.Modified, Time: time.Date(2026, 11, 23, 14, 0, i, 0, time.UTC), Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
			Kind: "Pod", Object: state(waiting)}
		if prev == nil {
			ev.Type = event.Added
		} else {
			ev.Old = prev
		}
		prev = ev.Object.(*corev1.Pod)
		if !emit(ev) {
			return nil
		}
	}
	return nil
}

// TestReplayTransitions: the transitions of --on and of a sink's on= are evaluated on
// the replayed events, with their previous versions: --on keeps the pod's entering
// CrashLoopBackOff, not its waiting there again, and so does the sink's on=.
func TestReplayTransitions(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"--on crashloop", Config{Events: Events{On: []string{"crashloop"}}}},
		{"on=crashloop", Config{Output: Output{Sinks: []sinkkind.Spec{{Name: "screen", Kind: terminalsink.Kind, Settings: &terminalsink.Settings{Format: "name"}, Buffer: 4, OnFull: listener.Block, On: "crashloop"}}}}},
	} {
		var stdout, errOut bytes.Buffer
		cfg := c.cfg
		if cfg.Output.Sinks == nil {
			cfg.Output.Sinks = []sinkkind.Spec{{Name: "screen", Kind: terminalsink.Kind, Settings: &terminalsink.Settings{Format: "name"}, Buffer: 4, OnFull: listener.Block}}
		}
		set, err := transition.Shipped().Compile([]string{"crashloop"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Events.Transitions = set
		cfg.End.Grace = time.Second
		sys := System{Out: &stdout, ErrOut: &errOut, Terminals: fakeTerminals{}, LookupEnv: os.LookupEnv}
		if _, err := RunReplay(context.Background(), sys, cfg, Replay{Source: crashSource{}, What: "test"}); err != nil {
			t.Fatalf("%s: %v; stderr:\n%s", c.name, err, errOut.String())
		}
		if stdout.String() != "MODIFIED pod/flaky\n" {
			t.Errorf("%s: %q, want the one update that entered CrashLoopBackOff; stderr:\n%s", c.name, stdout.String(), errOut.String())
		}
	}
	if !(Config{Events: Events{On: []string{"crashloop"}}}).ReadsObjects() || !(Config{Output: Output{Sinks: []sinkkind.Spec{{Kind: filesink.Kind, Settings: &filesink.Settings{Format: "json"}, On: "crashloop"}}}}).ReadsObjects() {
		t.Error("transitions read the objects: ReadsObjects must say so")
	}
}
