package cmd

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/conditions"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/terminalsink"
	"github.com/kubeevents/kubeevents/internal/switches"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// runCommand runs kubeevents with fake streams and returns the exit code, stdout and
// stderr, as main would produce them.
func runCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user config file
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	err := Execute(context.Background(), streams, append([]string{"kubeevents"}, args...))
	code := ExitCode(err, errOut)
	return code, out.String(), errOut.String()
}

// Bad input is reported before anything connects: every case points --kubeconfig at a
// file that does not exist, so reaching the cluster code would give exit 1 instead.
func TestWatchUsageErrors(t *testing.T) {
	dir := t.TempDir()
	badConfig := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(badConfig, []byte("sinks:\n  - name: archive\n    type: file\n    pathh: x.jsonl\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string // the start of stderr's first line
	}{
		{"-o with a --sink on stdout", []string{"watch", "pods", "-o", "json", "--sink", "file=-"}, `kubeevents: -o sets the format of the terminal stream, but --sink "file=-" writes to stdout in its place`},
		{"bad output", []string{"watch", "pods", "-o", "xml"}, `kubeevents: -o: unknown output format "xml"; use one of: pretty, wide, json, yaml, name`},
		{"bad color", []string{"watch", "pods", "--color", "sometimes"}, `kubeevents: --color "sometimes": use auto, always or never`},
		{"bad label selector", []string{"watch", "pods", "-l", "a in (b"}, `kubeevents: -l/--selector "a in (b":`},
		{"bad field selector", []string{"watch", "pods", "--field-selector", "metadata.name"}, `kubeevents: --field-selector "metadata.name":`},
		{"until-deleted without names", []string{"watch", "pods", "--until-deleted"}, `kubeevents: --until-deleted needs the names of the objects to wait for`},
		{"invalid namespace", []string{"watch", "pods", "-n", "Bad NS"}, `kubeevents: -n/--namespace "Bad NS" is not a valid namespace name: use at most 63 lowercase letters`},
		{"type/name argument", []string{"watch", "pods", "pod/web-1"}, `kubeevents: NAME "pod/web-1": give the type once`},
		{"bad sink kind", []string{"watch", "pods", "--sink", "filez=x"}, `kubeevents: --sink "filez=x": unknown sink kind "filez"`},
		{"bad policy", []string{"watch", "pods", "--on-full", "explode"}, `kubeevents: --on-full: unknown on-full policy "explode"`},
		{"zero buffer", []string{"watch", "pods", "--buffer", "0"}, `kubeevents: --buffer 0: give a number of events from 1 to`},
		{"short resync", []string{"watch", "pods", "--resync", "100ms"}, `kubeevents: --resync 100ms: use 0 (never) or at least 1s`},
		{"no-diff with changes-only", []string{"watch", "pods", "--no-diff", "--changes-only"}, `kubeevents: --changes-only and --ignore-path need diffs`},
		{"bad ignore path", []string{"watch", "pods", "--ignore-path", "spec..x"}, `kubeevents: --ignore-path "spec..x":`},
		{"until without value", []string{"watch", "pods", "--until"}, `kubeevents: flag needs an argument: --until`},
		{"unknown flag", []string{"watch", "pods", "--colour", "never"}, `kubeevents: unknown flag: --colour`},
		{"jq syntax", []string{"watch", "pods", "--jq", ".type =="}, `kubeevents: --jq: syntax error at column 9: unexpected end of input`},
		{"by without attribution", []string{"watch", "pods", "--no-by", "--not-by", "kube-*"}, `kubeevents: --by and --not-by filter on the field managers, which --no-by leaves unread`},
		{"bad manager glob", []string{"watch", "pods", "--by", "kube["}, `kubeevents: --by "kube[": not a field manager's name or glob`},
		{"jq in a sink", []string{"watch", "pods", "--sink", "jq(output=x)=select(.a"}, `kubeevents: sink "jq": syntax error`},
		{"config unknown key", []string{"watch", "pods", "--config", badConfig}, `kubeevents: ` + badConfig + `:4:5: unknown field "pathh" in sink "archive" (did you mean "path"?)`},
		{"no type", []string{"watch"}, `kubeevents: no resource type given; usage: kubeevents watch TYPE[.VERSION][.GROUP][,TYPE...] [NAME...] [flags], e.g. kubeevents watch pods`},
		{"every type and a type", []string{"watch", "--all-types", "pods"}, `kubeevents: --all-types watches every type: give no TYPE or NAME arguments (pods), or drop --all-types`},
		{"raw output without jq", []string{"watch", "pods", "-r"}, `kubeevents: -r/--raw-output applies to --jq only; add --jq EXPRESSION`},
		{"-o yaml with jq", []string{"watch", "pods", "-o", "yaml", "--jq", ".type"}, `kubeevents: -o yaml does not apply with --jq`},
		{"bad request timeout", []string{"watch", "pods", "--request-timeout", "abc"}, `kubeevents: --request-timeout "abc": give a duration with a unit`},
		{"negative request timeout", []string{"watch", "pods", "--request-timeout", "-5s"}, `kubeevents: --request-timeout "-5s": give a duration with a unit`},
		{"negative timeout", []string{"watch", "pods", "--timeout", "-5s"}, `kubeevents: --timeout -5s: give a positive duration`},
		{"negative grace", []string{"watch", "pods", "--grace", "-1s"}, `kubeevents: --grace -1s: give a positive duration`},
		{"resync with event types without SYNC", []string{"watch", "pods", "--resync", "1m", "--event-types", "ADDED"}, `kubeevents: --resync re-delivers objects as SYNC events, which --event-types leaves out`},
		{"not an event type", []string{"watch", "pods", "--event-types", "ADDED,REMOVED"}, `kubeevents: --event-types "REMOVED": not an event type; use ADDED, MODIFIED, DELETED, SYNC or STALLED`},
		{"until-ready without names", []string{"watch", "myapps.example.com", "--until-ready"}, `kubeevents: --until-ready needs the objects to wait for: kubeevents watch TYPE NAME... --until-ready, or TYPE/NAME`},
		{"until-ready with until", []string{"watch", "myapps.example.com/web", "--until-ready", "--until", ".type"}, `kubeevents: --until-ready cannot be combined with --until, --until-deleted or --until-rollout`},
		{"until-ready with until-rollout", []string{"watch", "deploy/web", "--owned", "--until-ready", "--until-rollout"}, `kubeevents: --until-ready cannot be combined with --until, --until-deleted or --until-rollout`},
		{"until-ready with on", []string{"watch", "deploy/web", "--until-ready", "--on", "degraded"}, `kubeevents: --until-ready follows every change of the objects it waits for, which --on, --event-types, --by and --not-by would leave out`},
		{"until-ready with event types", []string{"watch", "deploy/web", "--until-ready", "--event-types", "MODIFIED"}, `kubeevents: --until-ready follows every change`},
		{"until-ready with watch-only", []string{"watch", "deploy/web", "--until-ready", "--watch-only"}, `kubeevents: --until-ready needs the objects as they are at start-up, which --watch-only and --resume leave out`},
		{"until-ready with metadata-only", []string{"watch", "deploy/web", "--until-ready", "--metadata-only"}, `kubeevents: --until-ready reads the objects' status, which --metadata-only leaves out`},
		{"health with metadata-only", []string{"watch", "pods", "--health", "--metadata-only"}, `kubeevents: --health reads the objects' status, which --metadata-only leaves out`},
		{"negative stalled-after", []string{"watch", "pods", "--stalled-after", "-1m"}, `kubeevents: --stalled-after -1m0s: give a positive duration, e.g. 5m, or 0 for never`},
		{"resume-reset without resume", []string{"watch", "pods", "--resume-reset"}, `kubeevents: --resume-reset applies to --resume only; add --resume FILE`},
		{"resume with watch-only", []string{"watch", "pods", "--resume", "x.ckpt", "--watch-only"}, `kubeevents: --resume and --watch-only do not go together`},
		{"jq and a stdout sink", []string{"watch", "pods", "--jq", ".", "--sink", "terminal=json"}, `kubeevents: --jq filters the standard output stream, but a sink already writes to stdout`},
		{"no-screen and no sink", []string{"watch", "pods", "--no-screen"}, `kubeevents: --no-screen leaves no sink to write to; add one, e.g. --sink file=events.jsonl`},
		{"no-screen and -o", []string{"watch", "pods", "--no-screen", "-o", "json", "--sink", "file=x.jsonl"}, `kubeevents: --no-screen turns off the standard output stream whose format -o sets`},
		{"no-screen and a stdout sink", []string{"watch", "pods", "--no-screen", "--sink", "file=/dev/stdout"}, `kubeevents: --no-screen turns off the standard output stream, but --sink "file=/dev/stdout" writes to it`},
		{"rotating stdout", []string{"watch", "pods", "--sink", "file(max-size=1)=-"}, `kubeevents: sink "stdout": - is the standard output, which cannot be rotated (rotation renames the file); drop max-size`},
		{"--on with --fold-rollouts", []string{"watch", "pods", "--on", "crashloop", "--fold-rollouts"}, `kubeevents: --on keeps only events in which a transition happened, which are never folded`},
		{"--on's name", []string{"watch", "pods", "--on", "CrashLoop"}, `kubeevents: --on: transition name "CrashLoop": use lower-case letters`},
		{"format with jq", []string{"watch", "pods", "--sink", "http(format=slack,jq=.)=http://x"}, `kubeevents: sink "http": format slack and jq both say what is sent; drop one`},
		{"ui on a pipe", []string{"watch", "pods", "--ui"}, `kubeevents: --ui needs a terminal, and the standard output is not one`},
		{"ui with json", []string{"watch", "pods", "--ui", "-o", "json"}, `kubeevents: --ui shows kubectl's columns, as -o pretty or -o wide do, not -o json`},
		{"ui with a stdout sink", []string{"watch", "pods", "--ui", "--sink", "jq=.type"}, `kubeevents: --ui takes the standard output, which sink "jq" writes to as well`},
		{"ui with fold-rollouts", []string{"watch", "pods", "--ui", "--fold-rollouts"}, `kubeevents: --ui shows each object as it is now, which folding its events would leave stale; drop --fold-rollouts`},
		{"ui with no-screen", []string{"watch", "pods", "--ui", "--no-screen"}, `kubeevents: --ui shows the standard output stream, which --no-screen turns off; drop --no-screen (the sinks go on writing beside the view)`},
		{"ui with no-screen and a sink", []string{"watch", "pods", "--ui", "--no-screen", "--sink", "file=x.jsonl"}, `kubeevents: --ui shows the standard output stream, which --no-screen turns off; drop --no-screen`},
		{"ui-history without ui", []string{"watch", "pods", "--ui-history", "5"}, `kubeevents: --ui-history applies to --ui only; add --ui`},
		{"rotating /dev/stdout", []string{"watch", "pods", "--sink", "file(max-size=1,name=out)=/dev/stdout"}, `kubeevents: sink "out": /dev/stdout is the standard output, which cannot be rotated`},
	}
	// The environment's switches of the speed pieces take on or off, and nothing else.
	for _, sw := range switches.All() {
		env := sw.Env
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "yes")
			code, _, stderr := runCommand(t, "--kubeconfig", filepath.Join(dir, "missing-kubeconfig"), "watch", "pods")
			if want := `kubeevents: ` + env + `="yes": want on or off (off `; code != ExitUsage || !strings.HasPrefix(stderr, want) {
				t.Errorf("%s=yes: exit code %d, stderr %q; want %d and a line starting %q", env, code, stderr, ExitUsage, want)
			}
		})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--kubeconfig", filepath.Join(dir, "missing-kubeconfig")}, c.args...)
			code, stdout, stderr := runCommand(t, args...)
			if code != ExitUsage {
				t.Errorf("exit code %d, want %d (usage); stderr %q", code, ExitUsage, stderr)
			}
			if !strings.HasPrefix(stderr, c.want) {
				t.Errorf("stderr = %q, want it to start with %q", stderr, c.want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			lines := strings.Count(strings.TrimRight(stderr, "\n"), "\n") + 1
			if lines != 1 && !strings.Contains(c.name, "jq") {
				t.Errorf("stderr has %d lines, want one: %q", lines, stderr)
			}
		})
	}
}

// The jq syntax error shows the expression and a caret under the column.
func TestJQSyntaxErrorCaret(t *testing.T) {
	_, _, stderr := runCommand(t, "watch", "pods", "--jq", ".type ==", "--kubeconfig", "/nonexistent")
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("stderr = %q, want the message, the expression and the caret", stderr)
	}
	expr, caret := lines[1], lines[2]
	col := strings.Index(caret, "^")
	if !strings.HasSuffix(expr, ".type ==") || col != len(expr) {
		t.Errorf("caret at column %d of %q, want just past the end of the expression", col, expr)
	}
}

func TestMissingKubeconfigIsOneLine(t *testing.T) {
	code, _, stderr := runCommand(t, "watch", "pods", "--kubeconfig", "/nonexistent/kubeconfig")
	if code != ExitError || !strings.HasPrefix(stderr, "kubeevents: cannot load kubeconfig:") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 1 and one line about the kubeconfig", code, stderr)
	}
}

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{usageErrorf("x"), ExitUsage},
		{&conditions.TimeoutError{Err: os.ErrDeadlineExceeded}, ExitTimeout},
		{&conditions.NotMetError{Err: errors.New("--max-events 1 reached before --until was met")}, ExitTimeout},
		{&sinkkind.FailedError{Names: []string{"archive"}}, ExitSinkFailed},
		{&sinkkind.OpenError{Name: "archive", Err: os.ErrPermission}, ExitSinkFailed},
		{&checkpoint.CorruptError{Path: "x.ckpt", What: "truncated"}, ExitUsage},
		{&checkpoint.MismatchError{Path: "x.ckpt", Differences: []string{"namespace"}}, ExitUsage},
		{&checkpoint.WriteError{Path: "x.ckpt", Err: os.ErrPermission}, ExitSinkFailed},
		{os.ErrPermission, ExitError},
	} {
		var b strings.Builder
		if got := ExitCode(c.err, &b); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
		if c.err != nil && !strings.HasPrefix(b.String(), "kubeevents: ") {
			t.Errorf("ExitCode(%v) printed %q", c.err, b.String())
		}
	}
}

// configOf is the engine Config that `kubeevents ARGS...` hands to the engine.
func configOf(t *testing.T, args ...string) engine.Config {
	t.Helper()
	var got engine.Config
	runEngine = func(_ context.Context, _ engine.System, cfg engine.Config) (engine.Result, error) {
		got = cfg
		return engine.Result{}, nil
	}
	defer func() { runEngine = engine.Run }()
	if code, _, stderr := runCommand(t, args...); code != 0 {
		t.Fatalf("kubeevents %s: exit %d, %s", strings.Join(args, " "), code, stderr)
	}
	return got
}

// What the command line says reaches the engine's Config as it was said.
func TestEngineConfigFromFlags(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		check func(engine.Config) bool
	}{
		{"types, names, namespaces", []string{"watch", "pods,deploy", "a", "b", "-n", "x,y"}, func(c engine.Config) bool {
			return slices.Equal(c.Watch.Types, []string{"pods", "deploy"}) && slices.Equal(c.Watch.Names, []string{"a", "b"}) &&
				c.Watch.Namespace == "x,y" && c.Watch.NamespaceGiven
		}},
		{"every type", []string{"watch", "--all-types", "-A"}, func(c engine.Config) bool {
			return c.Watch.AllTypes && len(c.Watch.Types) == 0 && c.Watch.AllNamespaces
		}},
		{"TYPE/NAME", []string{"watch", "deployments.apps/web", "--owned", "--owned-types", "cm"}, func(c engine.Config) bool {
			return slices.Equal(c.Watch.Types, []string{"deployments.apps"}) && slices.Equal(c.Watch.Names, []string{"web"}) &&
				c.Watch.Owned && slices.Equal(c.Watch.OwnedTypes, []string{"cm"})
		}},
		{"selectors", []string{"watch", "pods", "-l", "app=web", "--field-selector", "status.phase=Running", "-A", "--exclude-namespace", "kube-*"}, func(c engine.Config) bool {
			return c.Watch.LabelSelector == "app=web" && c.Watch.FieldSelector == "status.phase=Running" && c.Watch.AllNamespaces &&
				slices.Equal(c.Watch.ExcludeNamespaces, []string{"kube-*"})
		}},
		{"contexts", []string{"watch", "pods", "--context", "prod-*", "--server", "https://x"}, func(c engine.Config) bool {
			return c.Watch.Context == "prod-*" && slices.Equal(c.Watch.ClusterFlags, []string{"server"})
		}},
		{"exit conditions", []string{"watch", "pods", "a", "--max-events", "7", "--timeout", "1m", "--grace", "3s", "--until-deleted"}, func(c engine.Config) bool {
			return c.End.MaxEvents == 7 && c.End.Timeout == time.Minute && c.End.Grace == 3*time.Second && c.Watch.UntilDeleted && c.End.Until == nil
		}},
		{"what is watched and how", []string{"watch", "pods", "--watch-only", "--metadata-only", "--show-secrets", "--with-events", "--changes-only", "--show-old", "--event-types", "added,Deleted"}, func(c engine.Config) bool {
			return c.Events.WatchOnly && c.Watch.MetadataOnly && c.Watch.ShowSecrets && c.Events.WithEvents && c.Events.ChangesOnly && c.Output.ShowOld &&
				slices.Equal(c.Events.Types, []event.EventType{event.Added, event.Deleted})
		}},
		{"sinks", []string{"watch", "pods", "-o", "wide", "--sink", "file=x.jsonl", "--buffer", "7"}, func(c engine.Config) bool {
			path, _ := c.Output.Sinks[1].Destination()
			return len(c.Output.Sinks) == 2 && c.Output.Sinks[0].Format() == "wide" && path == "x.jsonl" && c.Output.Sinks[1].Buffer == 7
		}},
		{"templates", []string{"watch", "pods", "-o", "jsonpath={.type}", "--output-watch-events"}, func(c engine.Config) bool {
			return c.Output.Sinks[0].Settings.(*terminalsink.Settings).WatchEvents && c.Output.Sinks[0].Format() == "jsonpath={.type}"
		}},
		{"timestamps", []string{"watch", "pods", "--timestamps"}, func(c engine.Config) bool {
			return c.Output.Sinks[0].Settings.(*terminalsink.Settings).Timestamps && c.Output.Timestamps
		}},
		{"ui", []string{"watch", "pods", "--ui", "--ui-history", "9"}, func(c engine.Config) bool { return c.UI && c.UIHistory == 9 }},
		{"resume and metrics", []string{"watch", "pods", "--resume", "c.ckpt", "--metrics-addr", "127.0.0.1:0"}, func(c engine.Config) bool {
			return c.Resume == "c.ckpt" && c.MetricsAddr == "127.0.0.1:0"
		}},
		{"field managers", []string{"watch", "pods", "--by", "kubectl*", "--by", "helm", "--not-by", "kube-*"}, func(c engine.Config) bool {
			return slices.Equal(c.Events.By.By, []string{"kubectl*", "helm"}) && slices.Equal(c.Events.By.NotBy, []string{"kube-*"}) && !c.Events.NoAttribution
		}},
		{"no attribution", []string{"watch", "pods", "--no-by"}, func(c engine.Config) bool { return c.Events.NoAttribution && c.Events.By.Empty() }},
		{"signal", []string{"watch", "pods", "--on", "crashloop,oomkilled", "--on", "deleted", "--sink", "http(on=failed,format=slack)=http://x"}, func(c engine.Config) bool {
			return slices.Equal(c.Events.On, []string{"crashloop", "oomkilled", "deleted"}) && !c.Events.FoldRollouts &&
				c.Output.Sinks[1].On == "failed" && c.Output.Sinks[1].Format() == "slack"
		}},
		{"folding", []string{"watch", "pods", "--fold-rollouts", "--sink", "file(fold=false)=all.jsonl"}, func(c engine.Config) bool {
			return c.Events.FoldRollouts && c.Output.Sinks[1].Fold != nil && !*c.Output.Sinks[1].Fold
		}},
	}
	terminals = stdoutTerminal{} // --ui needs one
	defer func() { terminals = osTerminals{} }()
	for _, tc := range cases {
		if cfg := configOf(t, tc.args...); !tc.check(cfg) {
			t.Errorf("%s: config %+v", tc.name, cfg)
		}
	}
}

// stdoutTerminal says every stream is a terminal of 80 columns.
type stdoutTerminal struct{}

func (stdoutTerminal) IsTerminal(io.Writer) bool  { return true }
func (stdoutTerminal) Width(io.Writer) func() int { return func() int { return 80 } }

// The config file's resume and metricsAddr apply unless the flags say otherwise.
func TestConfigFileSettingsGiveWayToFlags(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("resume: r.ckpt\nmetricsAddr: 127.0.0.1:9999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := configOf(t, "watch", "pods", "--config", cfgFile)
	if !strings.HasSuffix(c.Resume, "/r.ckpt") || c.MetricsAddr != "127.0.0.1:9999" {
		t.Errorf("from the file: resume %q, metrics %q", c.Resume, c.MetricsAddr)
	}
	c = configOf(t, "watch", "pods", "--config", cfgFile, "--resume", "flag.ckpt", "--metrics-addr", "127.0.0.1:1")
	if c.Resume != "flag.ckpt" || c.MetricsAddr != "127.0.0.1:1" {
		t.Errorf("flags: resume %q, metrics %q", c.Resume, c.MetricsAddr)
	}
}

// kubeevents on and kubeevents format list what they know, the config file's among
// them, and print one's program; an unknown name is bad usage.
func TestOnAndFormatCommands(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("transitions:\n  warning: |\n    # A Warning Event.\n    .object.type == \"Warning\"\n"+
		"formats:\n  plain: |\n    # A line per event.\n    # content-type: text/plain\n    map(title) | join(\"\\n\")\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCommand(t, "on", "--config", cfgFile)
	if code != 0 || !strings.HasPrefix(out, "crashloop  ") || !strings.Contains(out, "\nwarning           A Warning Event. (config file)\n") {
		t.Errorf("kubeevents on: exit %d\n%s", code, out)
	}
	code, out, _ = runCommand(t, "on", "deleted")
	if code != 0 || !strings.Contains(out, `.type == "DELETED" and .reason != "selector"`) {
		t.Errorf("kubeevents on deleted: exit %d\n%s", code, out)
	}
	code, out, _ = runCommand(t, "format", "--config", cfgFile)
	if code != 0 || !strings.HasPrefix(out, "slack  ") || !strings.Contains(out, "plain          text/plain                       A line per event. (config file)") {
		t.Errorf("kubeevents format: exit %d\n%s", code, out)
	}
	code, out, _ = runCommand(t, "format", "functions")
	if code != 0 || !strings.Contains(out, "def title:") {
		t.Errorf("kubeevents format functions: exit %d\n%s", code, out)
	}
	code, _, errOut := runCommand(t, "format", "slak")
	if code != ExitUsage || errOut != "kubeevents: unknown format \"slak\" (did you mean \"slack\"?); kubeevents format lists them\n" {
		t.Errorf("kubeevents format slak: exit %d, %q", code, errOut)
	}
}
