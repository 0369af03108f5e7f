package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/httpsink"
)

// The command compiles what the sinks and --on name, and says which name or program is
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
		{formats: map[string]string{"x": "titl"}, sinks: hook("", "x"),
			want: `sink "hook": format "x": function not defined: titl/0`},
	} {
		cfg := engine.Config{Output: engine.Output{Sinks: tc.sinks}}
		err := compileOutput(&cfg, "", sinkkind.Compiling{Formats: tc.formats})
		if err == nil {
			_, err = compileTransitions(tc.on, tc.sinks, tc.transitions, nil)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc, err, tc.want)
		}
	}
	sinks := hook("crashloop|deleted", "slack")
	cfg := engine.Config{Output: engine.Output{Sinks: sinks}}
	if err := compileOutput(&cfg, "", sinkkind.Compiling{}); err != nil {
		t.Fatal(err)
	}
	set, err := compileTransitions([]string{"deleted"}, sinks, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := set.Names(); !slices.Equal(names, []string{"crashloop", "deleted"}) || sinks[0].Settings.(*httpsink.Settings).Compiled == nil {
		t.Errorf("transitions %q, http sink %+v", names, sinks[0].Settings)
	}
}

// The run computes health only when something reads it; then with the shipped rules and
// the config file's, and the kinds' owns for --owned.
func TestHealthOnlyWhenRead(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("health:\n  MyApp.example.com:\n    owns: [deployments.apps]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"watch", "pods"}, false},
		{[]string{"watch", "pods", "-o", "json"}, false},
		{[]string{"watch", "pods", "--jq", "."}, false},
		{[]string{"watch", "pods", "--on", "crashloop"}, false},
		{[]string{"watch", "pods", "--health"}, true},
		{[]string{"watch", "pods", "-o", "wide"}, true},
		{[]string{"watch", "pods", "--on", "degraded"}, true},
		{[]string{"watch", "pods", "--on", "ready"}, true},
		{[]string{"watch", "pods", "--sink", "jq=select(.health.status == \"Failed\")"}, true},
		{[]string{"watch", "pods", "--sink", "http(jq=.health)=http://x"}, true},
		{[]string{"watch", "pods", "--sink", "exec(jq=.object)=true"}, false},
		{[]string{"watch", "pods", "--until", ".health.status == \"Current\""}, true},
		{[]string{"watch", "pods", "--stalled-after", "5m"}, true},
		{[]string{"watch", "myapps.example.com/web", "--until-ready"}, true},
		{[]string{"watch", "myapps.example.com/web", "--owned", "--config", config}, true},
	} {
		cfg := configOf(t, tc.args...)
		if got := cfg.Health != nil; got != tc.want {
			t.Errorf("%s: health computed %v, want %v", strings.Join(tc.args, " "), got, tc.want)
		}
		if tc.args[len(tc.args)-1] == config {
			owns := cfg.Watch.HealthOwns(schema.GroupKind{Group: "example.com", Kind: "MyApp"})
			if len(owns) != 1 || owns[0] != "deployments.apps" {
				t.Errorf("the config file's owns: %q", owns)
			}
		}
	}
}

// hook is an http sink named hook, with on= and format=.
func hook(on, format string) []sinkkind.Spec {
	return []sinkkind.Spec{{Name: "hook", Kind: httpsink.Kind, Settings: &httpsink.Settings{Format: format, URL: "http://x"}, On: on}}
}
