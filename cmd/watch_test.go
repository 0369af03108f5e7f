package cmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/switches"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
		{"jq in a sink", []string{"watch", "pods", "--sink", "jq(output=x)=select(.a"}, `kubeevents: sink "jq": syntax error`},
		{"config unknown key", []string{"watch", "pods", "--config", badConfig}, `kubeevents: ` + badConfig + `:4:5: unknown field "pathh" in sink "archive" (did you mean "path"?)`},
		{"no type", []string{"watch"}, `kubeevents: no resource type given; usage: kubeevents watch TYPE[.VERSION][.GROUP][,TYPE...] [NAME...] [flags], e.g. kubeevents watch pods`},
		{"raw output without jq", []string{"watch", "pods", "-r"}, `kubeevents: -r/--raw-output applies to --jq only; add --jq EXPRESSION`},
		{"-o yaml with jq", []string{"watch", "pods", "-o", "yaml", "--jq", ".type"}, `kubeevents: -o yaml does not apply with --jq`},
		{"bad request timeout", []string{"watch", "pods", "--request-timeout", "abc"}, `kubeevents: --request-timeout "abc": give a duration with a unit`},
		{"negative request timeout", []string{"watch", "pods", "--request-timeout", "-5s"}, `kubeevents: --request-timeout "-5s": give a duration with a unit`},
		{"negative timeout", []string{"watch", "pods", "--timeout", "-5s"}, `kubeevents: --timeout -5s: give a positive duration`},
		{"negative grace", []string{"watch", "pods", "--grace", "-1s"}, `kubeevents: --grace -1s: give a positive duration`},
		{"resume-reset without resume", []string{"watch", "pods", "--resume-reset"}, `kubeevents: --resume-reset applies to --resume only; add --resume FILE`},
		{"resume with watch-only", []string{"watch", "pods", "--resume", "x.ckpt", "--watch-only"}, `kubeevents: --resume and --watch-only do not go together`},
		{"jq and a stdout sink", []string{"watch", "pods", "--jq", ".", "--sink", "terminal=json"}, `kubeevents: --jq filters the standard output stream, but a sink already writes to stdout`},
		{"no-screen and no sink", []string{"watch", "pods", "--no-screen"}, `kubeevents: --no-screen leaves no sink to write to; add one, e.g. --sink file=events.jsonl`},
		{"no-screen and -o", []string{"watch", "pods", "--no-screen", "-o", "json", "--sink", "file=x.jsonl"}, `kubeevents: --no-screen turns off the standard output stream whose format -o sets`},
		{"no-screen and a stdout sink", []string{"watch", "pods", "--no-screen", "--sink", "file=/dev/stdout"}, `kubeevents: --no-screen turns off the standard output stream, but --sink "file=/dev/stdout" writes to it`},
		{"rotating stdout", []string{"watch", "pods", "--sink", "file(max-size=1)=-"}, `kubeevents: sink "stdout": - is the standard output, which cannot be rotated (rotation renames the file); drop max-size`},
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
		{&engine.TimeoutError{Err: os.ErrDeadlineExceeded}, ExitTimeout},
		{&engine.NotMetError{Err: errors.New("--max-events 1 reached before --until was met")}, ExitTimeout},
		{&engine.SinkFailedError{Names: []string{"archive"}}, ExitSinkFailed},
		{&SinkOpenError{Name: "archive", Err: os.ErrPermission}, ExitSinkFailed},
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

// The command line decides what goes to stdout: the config file's stdout sinks give way
// to -o, --jq, --no-screen and --sink flags that write to stdout; its other sinks stay.
func TestConfigFileStdoutGivesWayToFlags(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	content := `sinks:
  - {name: screen, type: terminal, format: pretty, resync: 30s}
  - {name: types, type: jq, expr: .type}
  - {name: archive, type: file, path: events.jsonl}
`
	if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		set   map[string]bool // flags given
		o     WatchOptions
		sinks string // name:type:format-or-expr, in order
	}{
		{"no flags", nil, WatchOptions{}, "screen:terminal:pretty types:jq:.type archive:file:json"},
		{"-o json", map[string]bool{"output": true}, WatchOptions{Output: "json"}, "screen:terminal:json archive:file:json"},
		{"--jq", map[string]bool{"jq": true}, WatchOptions{JQ: ".object"}, "screen:jq:.object archive:file:json"},
		{"--no-screen", map[string]bool{"no-screen": true}, WatchOptions{NoScreen: true}, "archive:file:json"},
		{"--sink to stdout", map[string]bool{"sink": true}, WatchOptions{SinkSpecs: []string{"file=-"}}, "archive:file:json stdout:file:json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			streams, _, _, _ := genericiooptions.NewTestIOStreams()
			o := c.o
			o.Streams, o.ConfigFile, o.Buffer, o.OnFull = streams, cfg, 1024, "block"
			if o.Output == "" {
				o.Output = "pretty"
			}
			o.flagsSet = func(name string) bool { return c.set[name] }
			if err := o.completeSinks(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range o.sinks {
				what := s.Format
				if s.Type == "jq" {
					what = s.Expr
				}
				got = append(got, s.Name+":"+s.Type+":"+what)
			}
			if strings.Join(got, " ") != c.sinks {
				t.Errorf("sinks %q, want %q", strings.Join(got, " "), c.sinks)
			}
			if c.name == "-o json" && o.sinks[0].Resync != 30*time.Second {
				t.Errorf("-o json lost the file's settings of its screen sink: %+v", o.sinks[0])
			}
		})
	}
}

// What the command line says reaches the engine's Config as it was said: a table from
// options to config, without a cluster.
func TestEngineConfigFromOptions(t *testing.T) {
	pods := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	base := func() *WatchOptions {
		return &WatchOptions{Streams: genericiooptions.NewTestIOStreamsDiscard(), resources: []resource.Resource{pods}, namespace: "web"}
	}
	cases := []struct {
		name  string
		set   func(*WatchOptions)
		check func(engine.Config) bool
	}{
		{"namespace and types", func(o *WatchOptions) {}, func(c engine.Config) bool {
			return c.Namespace == "web" && len(c.Resources) == 1 && c.Resources[0].GVR.Resource == "pods"
		}},
		{"selectors and names", func(o *WatchOptions) {
			o.LabelSelector, o.FieldSelector, o.Names = "app=web", "status.phase=Running", []string{"a", "b"}
		}, func(c engine.Config) bool {
			return c.LabelSelector == "app=web" && c.FieldSelector == "status.phase=Running" && len(c.Names) == 2
		}},
		{"exit conditions", func(o *WatchOptions) {
			o.MaxEvents, o.Timeout, o.Grace, o.UntilDeleted = 7, time.Minute, 3*time.Second, true
		}, func(c engine.Config) bool {
			return c.MaxEvents == 7 && c.Timeout == time.Minute && c.Grace == 3*time.Second && c.UntilDeleted && c.Until == nil
		}},
		{"what is watched and how", func(o *WatchOptions) {
			o.WatchOnly, o.MetadataOnly, o.ShowSecrets, o.WithEvents, o.ChangesOnly, o.ShowOld = true, true, true, true, true, true
		}, func(c engine.Config) bool {
			return c.WatchOnly && c.MetadataOnly && c.ShowSecrets && c.WithEvents && c.ChangesOnly && c.ShowOld
		}},
		{"the process is tuned once synced, not before", func(o *WatchOptions) {}, func(c engine.Config) bool {
			return c.Synced != nil && c.Started != nil && c.Warn != nil
		}},
	}
	for _, tc := range cases {
		o := base()
		tc.set(o)
		if cfg := o.engineConfig(nil); !tc.check(cfg) {
			t.Errorf("%s: config %+v", tc.name, cfg)
		}
	}
}

// When the objects that exist at start-up are kept from every sink (--watch-only, or
// --event-types without ADDED), stderr says when they are listed: from then on a change is
// an event. When they are shown, their ADDED events say it.
func TestSyncedSaysWhenTheHiddenListIsIn(t *testing.T) {
	pods := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	cases := []struct {
		name       string
		watchOnly  bool
		eventTypes []string
		want       string // "" for no line
	}{
		{"list shown", false, nil, ""},
		{"watch-only", true, nil, "kubeevents: pods in web listed (not shown: --watch-only); changes from here on are shown\n"},
		{"no ADDED", false, []string{"deleted", " Modified"}, "kubeevents: pods in web listed (not shown: --event-types DELETED,MODIFIED); changes from here on are shown\n"},
		{"ADDED among the types", false, []string{"modified", "added"}, ""},
	}
	for _, tc := range cases {
		var errOut bytes.Buffer
		verbosity := 1
		o := &WatchOptions{Streams: genericiooptions.IOStreams{Out: io.Discard, ErrOut: &errOut}, resources: []resource.Resource{pods},
			namespace: "web", WatchOnly: tc.watchOnly, EventTypes: tc.eventTypes, Verbosity: &verbosity}
		o.engineConfig(nil).Synced()()
		if errOut.String() != tc.want {
			t.Errorf("%s: stderr %q, want %q", tc.name, errOut.String(), tc.want)
		}
	}
}

// fakeTerminals says every stream in tty is a terminal of the given width.
type fakeTerminals struct {
	tty   map[io.Writer]bool
	width int
}

func (f fakeTerminals) IsTerminal(w io.Writer) bool { return f.tty[w] }
func (f fakeTerminals) Width(w io.Writer) func() int {
	if !f.tty[w] {
		return nil
	}
	return func() int { return f.width }
}

// Colour follows --color, NO_COLOR, TERM=dumb and whether the stream is a terminal, for
// each stream on its own; the start line and summary show on a terminal or with -v.
func TestColorAndDiagnosticsFollowTheStreams(t *testing.T) {
	var out, errOut bytes.Buffer
	env := func(kv ...string) func(string) (string, bool) {
		return func(key string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == key {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	cases := []struct {
		color     string
		stdoutTTY bool
		env       func(string) (string, bool)
		wantColor bool
	}{
		{"auto", true, env(), true},
		{"auto", false, env(), false},
		{"auto", true, env("NO_COLOR", ""), false},
		{"auto", true, env("TERM", "dumb"), false},
		{"always", false, env("NO_COLOR", "1"), true},
		{"never", true, env(), false},
	}
	for _, tc := range cases {
		o := &WatchOptions{Color: tc.color, lookupEnv: tc.env,
			terminals: fakeTerminals{tty: map[io.Writer]bool{&out: tc.stdoutTTY}}}
		if got := o.colorFor(&out); got != tc.wantColor {
			t.Errorf("--color %s, stdout a terminal %v: colour %v, want %v", tc.color, tc.stdoutTTY, got, tc.wantColor)
		}
	}
	for _, tc := range []struct {
		stderrTTY bool
		verbosity int
		want      bool
	}{{false, 0, false}, {true, 0, true}, {false, 1, true}} {
		errOut.Reset()
		v := tc.verbosity
		o := &WatchOptions{Streams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, Verbosity: &v,
			terminals: fakeTerminals{tty: map[io.Writer]bool{&errOut: tc.stderrTTY}}}
		o.infof("watching pods")
		if shown := errOut.Len() > 0; shown != tc.want {
			t.Errorf("stderr a terminal %v, -v=%d: start line shown %v, want %v", tc.stderrTTY, tc.verbosity, shown, tc.want)
		}
	}
}
