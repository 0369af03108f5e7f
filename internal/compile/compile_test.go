package compile

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/httpsink"
)

// A run compiles what the sinks and --on name, and says which name or program is
// wrong, where, before anything connects.
func TestCompileSignal(t *testing.T) {
	for _, tc := range []struct {
		on          []string
		sinks       []sinkkind.Spec
		transitions map[string]string
		formats     map[string]string
		want        string
	}{
		{on: []string{"crashlop"}, want: `--on: unknown transition "crashlop" (did you mean "crashloop"?); kubeevents on lists them`},
		{sinks: hook("crashloop|nope", ""), want: `sink "hook": on: unknown transition "nope"`},
		{sinks: hook("", "slak"), want: `sink "hook": unknown format "slak" (did you mean "slack"?)`},
		{transitions: map[string]string{"x": ".object |"}, on: []string{"x"}, want: `transition "x": syntax error at column 10`},
		{sinks: []sinkkind.Spec{{Name: "hook", Kind: httpsink.Kind, Settings: &httpsink.Settings{URL: "http://x"}, Cooldown: time.Minute}},
			want: `sink "hook": cooldown groups what the sink's on= keeps into episodes; add on=TRANSITIONS, or drop cooldown`},
		{sinks: []sinkkind.Spec{{Name: "hook", Kind: httpsink.Kind, Settings: &httpsink.Settings{URL: "http://x"}, On: "crashloop", Group: ".object |"}},
			want: `sink "hook": group: syntax error`},
		{formats: map[string]string{"x": "titl"}, sinks: hook("", "x"),
			want: `sink "hook": format "x": function not defined: titl/0`},
	} {
		cfg := engine.Config{Output: engine.Output{Sinks: tc.sinks}}
		err := Output(&cfg, "", sinkkind.Compiling{Formats: tc.formats})
		if err == nil {
			err = Signal(&cfg, tc.on, tc.sinks, tc.transitions, func(string, ...any) {})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc, err, tc.want)
		}
	}
	sinks := hook("crashloop|deleted", "slack")
	cfg := engine.Config{Output: engine.Output{Sinks: sinks}}
	if err := Output(&cfg, "", sinkkind.Compiling{}); err != nil {
		t.Fatal(err)
	}
	var warned []string
	if err := Signal(&cfg, []string{"deleted"}, sinks, nil, func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatal(err)
	}
	// The sink's episodes of crashloop are resolved by ready: the run evaluates it too,
	// and --on, which leaves it out of the stream, is said to.
	if names := cfg.Events.Transitions.Names(); !slices.Equal(names, []string{"crashloop", "ready", "deleted"}) || sinks[0].Settings.(*httpsink.Settings).Compiled == nil {
		t.Errorf("transitions %q, http sink %+v", names, sinks[0].Settings)
	}
	if e := cfg.Events.Episodes; len(e) != 1 || e[0] == nil || e[0].Name != "hook" || !slices.Equal(e[0].On, []string{"crashloop", "deleted"}) {
		t.Errorf("episodes %+v", e)
	}
	if o := cfg.Events.Opposites; len(o) != 1 || o["crashloop"].Name != "ready" || o["crashloop"].Holds != time.Minute {
		t.Errorf("opposites %+v", o)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], `sink "hook": its episodes of crashloop are resolved by ready, which --on leaves out`) {
		t.Errorf("warned %q", warned)
	}
}

// hook is an http sink named hook, with on= and format=.
func hook(on, format string) []sinkkind.Spec {
	return []sinkkind.Spec{{Name: "hook", Kind: httpsink.Kind, Settings: &httpsink.Settings{Format: format, URL: "http://x"}, On: on}}
}
