package config

import (
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sink"

	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const example = `defaults:
  buffer: 2048
  onFull: drop-oldest
sinks:
  - name: screen
    type: terminal
    format: pretty
  - name: archive
    type: file
    path: events.jsonl
    rotate: {maxSizeMB: 100, maxBackups: 5, compress: true}
    resync: 5m
    buffer: 4096
    onFull: block
  - name: deletions
    type: jq
    expr: 'select(.type=="DELETED") | .object.metadata.name'
    raw: true
    output: deletions.txt
`

var exampleFile = &File{
	Defaults: Defaults{Buffer: 2048, OnFull: listener.DropOldest},
	Sinks: specs([]Sink{
		{Name: "screen", Type: "terminal", Format: "pretty", Origin: "config.yaml:5:5"},
		{
			Name: "archive", Type: "file", Format: "json", Path: "events.jsonl",
			Rotate: sink.Rotation{MaxSizeMB: 100, MaxBackups: 5, Compress: true},
			Resync: 5 * time.Minute, Buffer: 4096, OnFull: listener.Block, Origin: "config.yaml:8:5",
		},
		{
			Name: "deletions", Type: "jq", Expr: `select(.type=="DELETED") | .object.metadata.name`,
			Raw: true, Output: "deletions.txt", Origin: "config.yaml:15:5",
		},
	}),
}

func TestParseExample(t *testing.T) {
	got, err := Parse("config.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exampleFile) {
		t.Errorf("Parse\n got  %+v\n want %+v", got, exampleFile)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, data string
		want       *File
	}{
		{"empty", "", &File{}},
		{"comment only", "# nothing yet\n", &File{}},
		{"empty document", "---\n", &File{}},
		{"null", "~\n", &File{}},
		{"null sinks", "defaults:\nsinks:\n", &File{}},
		{"no sinks", "sinks: []\n", &File{}},
		{"defaults only", "defaults: {buffer: 10, onFull: coalesce, resync: 1m}\n",
			&File{Defaults: Defaults{Buffer: 10, OnFull: listener.Coalesce, Resync: time.Minute}}},
		{"default names", "sinks:\n  - type: terminal\n  - type: file\n    path: /var/log/ev.log\n  - {type: jq, expr: .}\n", &File{Sinks: specs([]Sink{
			{Name: "screen", AutoName: true, Type: "terminal", Origin: "c.yaml:2:5"},
			{Name: "ev.log", AutoName: true, Type: "file", Format: "json", Path: "/var/log/ev.log", Origin: "c.yaml:3:5"},
			{Name: "jq", AutoName: true, Type: "jq", Expr: ".", Origin: "c.yaml:5:5"},
		})}},
		{"scalars", "sinks:\n  - {type: file, path: 2024, format: yaml, buffer: 0x10, rotate: {maxSizeMB: 1, maxAgeDays: 3}, resync: 0}\n", &File{Sinks: specs([]Sink{
			{Name: "2024", AutoName: true, Type: "file", Path: "2024", Format: "yaml", Buffer: 16, Rotate: sink.Rotation{MaxSizeMB: 1, MaxAgeDays: 3}, Origin: "c.yaml:2:5"},
		})}},
		{"nulls are unset", "sinks:\n  - {type: jq, expr: ., name: ~, raw: ~, buffer: ~, onFull: ~, resync: ~, output: ~}\n", &File{Sinks: specs([]Sink{
			{Name: "jq", AutoName: true, Type: "jq", Expr: ".", Origin: "c.yaml:2:5"},
		})}},
		{"aliases", "sinks:\n  - &s {type: jq, expr: ., buffer: &n 7}\n  - {type: file, path: x, buffer: *n}\n  - *s\n", &File{Sinks: specs([]Sink{
			{Name: "jq", AutoName: true, Type: "jq", Expr: ".", Buffer: 7, Origin: "c.yaml:2:5"},
			{Name: "x", AutoName: true, Type: "file", Format: "json", Path: "x", Buffer: 7, Origin: "c.yaml:3:5"},
			{Name: "jq", AutoName: true, Type: "jq", Expr: ".", Buffer: 7, Origin: "c.yaml:2:5"},
		})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("c.yaml", []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q)\n got  %+v\n want %+v", tt.data, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"unknown field", "sinks:\n  - name: archive\n    type: file\n    pathh: events.jsonl\n",
			`config.yaml:4:5: unknown field "pathh" in sink "archive" (did you mean "path"?)`},
		{"unknown field unnamed", "sinks:\n  - type: file\n    colour: red\n",
			`config.yaml:3:5: unknown field "colour" in sinks[0]`},
		{"kebab-case key", "sinks:\n  - type: terminal\n    on-full: block\n",
			`config.yaml:3:5: unknown field "on-full" in sinks[0] (did you mean "onFull"?)`},
		{"empty store", "store:\n",
			`config.yaml:1:7: store: want the path of a history store (kubeevents store import), got nothing`},
		{"empty resume", "resume:\n",
			`config.yaml:1:8: resume: want the path of a checkpoint file, got nothing`},
		{"resume not a path", "resume: [a]\n",
			`config.yaml:1:9: resume: want a string, got a list`},
		{"unknown top-level field", "sink: []\n",
			`config.yaml:1:1: unknown field "sink" at the top level (did you mean "sinks"?)`},
		{"unknown defaults field", "defaults:\n  bufer: 1\n",
			`config.yaml:2:3: unknown field "bufer" in defaults (did you mean "buffer"?)`},
		{"unknown rotate field", "sinks:\n  - type: file\n    path: x\n    rotate: {maxSize: 1}\n",
			`config.yaml:4:14: unknown field "maxSize" in sinks[0].rotate (did you mean "maxSizeMB"?)`},
		{"multi-line key", "? |\n  multi\n  line\n: x\n",
			`config.yaml:1:3: unknown field "multi\nline\n" at the top level`},
		{"non-string key", "{[a]: b}\n",
			`config.yaml:1:2: want a field name at the top level, got a list`},
		{"duplicate key", "sinks:\n  - type: file\n    path: x\n    path: y\n",
			`config.yaml:4:5: duplicate key "path" in sinks[0] (first at line 3)`},
		{"duplicate top-level key", "sinks: []\nsinks: []\n",
			`config.yaml:2:1: duplicate key "sinks" at the top level (first at line 1)`},
		{"duplicate name", "sinks:\n  - name: a\n    type: terminal\n  - type: jq\n    expr: .\n    name: a\n",
			`config.yaml:6:11: duplicate sink name "a" (also at line 2); give each sink its own name`},
		{"buffer not a number", "sinks:\n  - type: file\n    path: x\n  - type: file\n    path: y\n    buffer: lots\n",
			`config.yaml:6:13: sinks[1].buffer: want an integer, got "lots"`},
		{"buffer float", "sinks:\n  - {type: terminal, buffer: 1.5}\n",
			`config.yaml:2:30: sinks[0].buffer: want an integer, got "1.5"`},
		{"buffer string tag", "sinks:\n  - {type: terminal, buffer: !!str 5}\n",
			`config.yaml:2:30: sinks[0].buffer: want an integer, got "5"`},
		{"buffer overflow", "defaults: {buffer: 99999999999999999999999}\n",
			`config.yaml:1:20: defaults.buffer: want an integer, got "99999999999999999999999"`},
		{"negative buffer", "sinks:\n  - type: file\n    path: x\n    buffer: -1\n",
			`config.yaml:4:13: sinks[0].buffer: must not be negative, got -1`},
		{"huge buffer", "defaults:\n  buffer: 100000000\n",
			`config.yaml:2:11: defaults.buffer: must be at most 16777216, got 100000000`},
		{"bad duration", "sinks:\n  - type: file\n    path: x\n    resync: 5x\n",
			`config.yaml:4:13: sinks[0].resync: invalid duration "5x"; use a number with a unit, e.g. 30s, 5m or 1h`},
		{"duration without unit", "defaults:\n  resync: 30\n",
			`config.yaml:2:11: defaults.resync: invalid duration "30"; use a number with a unit, e.g. 30s, 5m or 1h`},
		{"short resync", "sinks:\n  - type: terminal\n    resync: 100ms\n",
			`config.yaml:3:13: sinks[0].resync: 100ms is too short; use at least 1s (client-go would raise it to that), or 0 for no resync`},
		{"negative resync", "defaults: {resync: -5m}\n",
			`config.yaml:1:20: defaults.resync: must not be negative, got -5m0s`},
		{"bad policy", "defaults:\n  onFull: drop\n",
			`config.yaml:2:11: defaults.onFull: unknown on-full policy "drop"; use one of: block, drop-oldest, drop-newest, coalesce`},
		{"bad bool", "sinks:\n  - type: jq\n    expr: .\n    raw: 1\n",
			`config.yaml:4:10: sinks[0].raw: want true or false, got "1"`},
		{"string for list", "sinks:\n  - type: terminal\n    format: [a]\n",
			`config.yaml:3:13: sinks[0].format: want a string, got a list`},
		{"missing type", "sinks:\n  - name: a\n    path: x\n",
			`config.yaml:2:5: sink "a": missing "type"; use terminal, file, jq, exec, http or store`},
		{"null type", "sinks:\n  - type:\n",
			`config.yaml:2:10: sinks[0].type: want one of terminal, file, jq, exec, http or store, got nothing`},
		{"unknown type", "sinks:\n  - type: filez\n",
			`config.yaml:2:11: sinks[0].type: unknown sink type "filez"; use terminal, file, jq, exec, http or store`},
		{"missing path", "sinks:\n  - type: terminal\n  - name: archive\n    type: file\n",
			`config.yaml:3:5: sink "archive": missing "path", which a file sink needs`},
		{"missing expr", "sinks:\n  - type: jq\n    expr: ''\n",
			`config.yaml:2:5: sinks[0]: missing "expr", which a jq sink needs`},
		{"field for another kind", "sinks:\n  - type: file\n    path: x\n    raw: true\n",
			`config.yaml:4:5: sinks[0].raw: not valid for file sinks (only for jq)`},
		{"format for jq", "sinks:\n  - type: jq\n    expr: .\n    format: json\n",
			`config.yaml:4:5: sinks[0].format: not valid for jq sinks (only for terminal, file or http)`},
		{"rotate for terminal", "sinks:\n  - {type: terminal, rotate: {maxSizeMB: 1}}\n",
			`config.yaml:2:22: sinks[0].rotate: not valid for terminal sinks (only for file)`},
		{"bad terminal format", "sinks:\n  - type: terminal\n    format: bogus\n",
			`config.yaml:3:13: sinks[0].format: unknown output format "bogus"; use one of: pretty, wide, json, yaml, name`},
		{"bad file format", "sinks:\n  - type: file\n    path: x\n    format: wide\n",
			`config.yaml:4:13: sinks[0].format: format "wide" is not available for file sinks; use one of: json, pretty, yaml`},
		{"rotate without size", "sinks:\n  - type: file\n    path: x\n    rotate: {compress: true}\n",
			`config.yaml:4:13: sinks[0].rotate needs a maximum size; rotation is off without one: add maxSizeMB`},
		{"negative rotate", "sinks:\n  - type: file\n    path: x\n    rotate: {maxSizeMB: -1}\n",
			`config.yaml:4:25: sinks[0].rotate.maxSizeMB: must not be negative, got -1`},
		{"rotate not a mapping", "sinks:\n  - type: file\n    path: x\n    rotate: 100\n",
			`config.yaml:4:13: sinks[0].rotate: want a mapping, got "100"`},
		{"top level not a mapping", "- a\n",
			`config.yaml:1:1: want a mapping with "defaults" and "sinks" at the top level, got a list`},
		{"defaults not a mapping", "defaults: 3\n",
			`config.yaml:1:11: defaults: want a mapping, got "3"`},
		{"sinks not a list", "sinks: {a: 1}\n",
			`config.yaml:1:8: sinks: want a list of sinks, got a mapping`},
		{"sink not a mapping", "sinks:\n  - file=x\n",
			`config.yaml:2:5: sinks[0]: want a mapping with a sink's settings, got "file=x"`},
		{"two documents", "sinks: []\n---\nsinks: []\n",
			`config.yaml:2:1: a second YAML document; the config file holds one`},
		// The YAML library reports the line of the block its parser was in, not the
		// line of the mistake (line 3).
		{"syntax error", "sinks:\n  - type: file\n   path: x\n",
			`config.yaml:1: did not find expected '-' indicator`},
		{"scanner error", "sinks:\n  - type: file\n    path: x: y\n",
			`config.yaml:3: mapping values are not allowed in this context`},
		{"syntax error in second document", "sinks: []\n---\na: b\n c: d\n",
			`config.yaml:4: mapping values are not allowed in this context`},
		// The parser gives no line for its first line.
		{"syntax error on the first line", ": : :\n",
			`config.yaml:1: did not find expected key`},
		{"unknown anchor", "sinks: *s\n",
			`config.yaml: unknown anchor 's' referenced`},
		{"a transition's name", "transitions:\n  Warning: '.object.type == \"Warning\"'\n",
			`config.yaml:2:3: transitions: transition name "Warning": use lower-case letters, digits and '-', starting with a letter`},
		{"a transition without a program", "transitions:\n  warning:\n",
			`config.yaml:2:11: transitions.warning: want a jq program, got nothing`},
		{"transitions as a list", "transitions: [a, b]\n",
			`config.yaml:1:14: transitions: want a mapping of names to jq programs, got a list`},
		{"the functions' name", "formats:\n  functions: '.'\n",
			`config.yaml:2:3: formats: format name "functions" is taken: kubeevents format functions prints the functions every format may use`},
		{"a transition's name in on", "sinks:\n  - type: file\n    path: x\n    on: [crashloop, Bad]\n",
			`config.yaml:4:9: sinks[0].on: transition name "Bad": use lower-case letters, digits and '-', starting with a letter`},
		{"an http format's name", "sinks:\n  - type: http\n    url: http://x\n    format: Slack\n",
			`config.yaml:4:13: sinks[0].format: format name "Slack": use lower-case letters, digits and '-', starting with a letter`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("config.yaml", []byte(tt.data))
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tt.data, got)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%q) error\n got  %s\n want %s", tt.data, err, tt.want)
			}
			if got != nil {
				t.Errorf("Parse(%q) returned %+v with its error, want nil", tt.data, got)
			}
		})
	}
}

// TestParseSignal: the file's own transitions and formats, and sinks that name them.
func TestParseSignal(t *testing.T) {
	f, err := Parse("config.yaml", []byte(`
transitions:
  warning: |
    # A Warning Event.
    .object.kind == "Event" and .object.type == "Warning"
formats:
  plain: "map(title) | join(\"\\n\")"
sinks:
  - type: http
    url: https://hooks.example.com/x
    format: plain
    on: [warning, crashloop]
  - type: file
    path: all.jsonl
    fold: false
    on: oomkilled,rollout-failed
`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Transitions["warning"] != "# A Warning Event.\n.object.kind == \"Event\" and .object.type == \"Warning\"\n" ||
		f.Formats["plain"] != `map(title) | join("\n")` {
		t.Errorf("transitions %q, formats %q", f.Transitions, f.Formats)
	}
	hook, file := f.Sinks[0], f.Sinks[1]
	if hook.Format() != "plain" || hook.On != "warning|crashloop" || hook.Fold != nil {
		t.Errorf("http sink %+v", hook)
	}
	if file.On != "oomkilled|rollout-failed" || file.Fold == nil || *file.Fold {
		t.Errorf("file sink %+v", file)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(example), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sinks) != 3 || got.Sinks[1].Origin != path+":8:5" {
		t.Errorf("Load(%q) = %+v, want the example with origins in %s", path, got, path)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("sinks:\n  - type: filez\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":2:11: ") {
		t.Errorf("Load(%q) error = %v, want it to start with %q", bad, err, bad+":2:11: ")
	}

	missing := filepath.Join(dir, "missing.yaml")
	_, err = Load(missing)
	if want := missing + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("Load(%q) error = %v, want %q", missing, err, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(%q) error %v is not fs.ErrNotExist", missing, err)
	}
}

// A checkpoint kept in the cluster (resume: secret:NAME) is no path: it stays as it is.
func TestLoadKeepsAClusterCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("resume: secret:kubeevents/ckpt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Resume != "secret:kubeevents/ckpt" {
		t.Errorf("resume %q, want secret:kubeevents/ckpt", got.Resume)
	}
}

// Relative paths in a config file are relative to its directory, wherever kubeevents
// runs; absolute ones and "-" (stdout) stay as they are.
func TestLoadResolvesRelativePaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	content := "resume: state/kubeevents.ckpt\nstore: state/events.db\n" + example + `  - name: absolute
    type: file
    path: /var/log/kubeevents.jsonl
  - name: to-stdout
    type: jq
    expr: .type
    output: "-"
  - name: nested
    type: file
    path: logs/../archive/x.jsonl
`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // elsewhere: the paths must not depend on it
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Resume != filepath.Join(dir, "state", "kubeevents.ckpt") {
		t.Errorf("resume %q, want it beside the config file", got.Resume)
	}
	if got.Store != filepath.Join(dir, "state", "events.db") {
		t.Errorf("store %q, want it beside the config file", got.Store)
	}
	want := map[string]string{
		"archive":   filepath.Join(dir, "events.jsonl"),
		"deletions": filepath.Join(dir, "deletions.txt"),
		"absolute":  "/var/log/kubeevents.jsonl",
		"to-stdout": "-",
		"nested":    filepath.Join(dir, "archive", "x.jsonl"),
	}
	for _, s := range got.Sinks {
		p, _ := s.Destination()
		if w, ok := want[s.Name]; ok && p != w {
			t.Errorf("sink %q: path %q, want %q", s.Name, p, w)
		}
	}
	if got.Sinks[1].Name != "archive" {
		t.Errorf("the default name changed with the path: %q", got.Sinks[1].Name)
	}

	// A config file given by a relative path: its directory is taken from where it is.
	t.Chdir(dir)
	got, err = Load("config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := got.Sinks[1].Destination(); p != filepath.Join(dir, "events.jsonl") {
		t.Errorf("loaded as config.yaml from %s: path %q", dir, p)
	}
}

func TestResolved(t *testing.T) {
	f, err := Parse("c.yaml", []byte(`defaults: {buffer: 100, onFull: drop-newest, resync: 10m}
sinks:
  - type: terminal
  - {type: jq, expr: ., buffer: 5, onFull: block, resync: 1m}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := f.Resolved()
	want := specs([]Sink{
		{Name: "screen", AutoName: true, Type: "terminal", Buffer: 100, OnFull: listener.DropNewest, Resync: 10 * time.Minute, Origin: "c.yaml:3:5"},
		{Name: "jq", AutoName: true, Type: "jq", Expr: ".", Buffer: 5, OnFull: listener.Block, Resync: time.Minute, Origin: "c.yaml:4:5"},
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Resolved\n got  %+v\n want %+v", got, want)
	}
	if f.Sinks[0].Buffer != 0 {
		t.Errorf("Resolved changed f.Sinks: %+v", f.Sinks[0])
	}
	if got := (*File)(nil).Resolved(); got != nil {
		t.Errorf("nil File: Resolved = %+v, want nil", got)
	}
	if got := (&File{}).Resolved(); got != nil {
		t.Errorf("empty File: Resolved = %+v, want nil", got)
	}
}

func TestParseClipsLongValues(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	_, err := Parse("c.yaml", []byte("defaults: {buffer: "+long+"}\n"))
	want := `c.yaml:1:20: defaults.buffer: want an integer, got "` + strings.Repeat("é", 30) + `..."`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}
