package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sink"
)

// Kind is one sink kind, registered once in kinds: the settings it takes beyond the
// common ones, what its --sink TARGET is, its formats, its default name, whether it
// writes to stdout, how its options complete and how it is built. The --sink parser,
// the config file decoder, completion and the run all read it from here, so a new kind
// is one more entry in kinds (and its writer in internal/sink).
type Kind struct {
	// Name is the kind, as --sink's KIND and a config file sink's type.
	Name string
	// Description says what the kind writes to, for completion ("a file").
	Description string
	// TargetHint follows the description of "KIND=" in completion (": file=PATH").
	TargetHint string
	// AfterOptions describes what follows a closed option list, in completion ("then
	// the file's PATH"); "" when the kind needs no target.
	AfterOptions string

	// target is the setting --sink's =TARGET sets (by its id: "path", "expr",
	// "format"); optionalTarget tells it may be left out, and targetNoun names it in
	// messages ("a path").
	target         string
	optionalTarget bool
	targetNoun     string
	targetMeta     string // its placeholder in the syntax: PATH, EXPR, FORMAT
	targetDoc      string // what it is, for the --sink help and the docs
	nameDoc        string // what defaultName gives, for the docs

	// settings are the ids of the settings this kind takes beyond the common ones.
	settings []string
	// formats are the formats the kind can be written in, the default first; nil when
	// it takes no format. defaultFormat is set on a sink that gives none ("" leaves it
	// to the caller: a terminal's format is the -o flag's).
	formats       []render.Format
	defaultFormat render.Format
	// namedFormats says its formats are the receivers' of package notify, which the config
	// file may add to: a name is checked for its form when read, and looked up when the
	// run builds the sink.
	namedFormats bool

	// defaultName is a sink's name when none is given.
	defaultName func(s *Sink) string
	// writesTo is the setting naming the file the sink writes to, which may name the
	// standard output ("path", "output"); "" when the kind always writes to stdout, or,
	// with elsewhere set, never (a command, a URL).
	writesTo  string
	elsewhere bool
	// build makes the sink's writer; see Build.
	build func(s Sink, env BuildEnv) (listener.Sink, error)
}

// kinds are the sink kinds, in the order messages and completion list them.
var kinds = []*Kind{
	{
		Name: KindTerminal, Description: "the standard output", TargetHint: " in FORMAT",
		target: "format", optionalTarget: true, targetNoun: "a format", targetMeta: "FORMAT",
		targetDoc: "the format", nameDoc: "screen",
		settings:    []string{"format"},
		formats:     allFormats(),
		defaultName: func(*Sink) string { return "screen" },
		build:       buildTerminal,
	},
	{
		Name: KindFile, Description: "a file", TargetHint: ": file=PATH", AfterOptions: "then the file's PATH",
		target: "path", targetNoun: "a path", targetMeta: "PATH",
		targetDoc: `the path ("-": stdout)`, nameDoc: `the file's base name ("stdout" for "-")`,
		settings:      []string{"format", "path", "rotate", "max-size", "max-backups", "max-age", "compress"},
		formats:       []render.Format{render.FormatJSON, render.FormatPretty, render.FormatYAML},
		defaultFormat: render.FormatJSON,
		defaultName: func(s *Sink) string {
			if s.Path == Stdout {
				return "stdout"
			}
			return filepath.Base(s.Path)
		},
		writesTo: "path",
		build:    buildFile,
	},
	{
		Name: KindJQ, Description: "a jq filter", TargetHint: ": jq=EXPRESSION", AfterOptions: "then the jq EXPRESSION",
		target: "expr", targetNoun: "an expression", targetMeta: "EXPR",
		targetDoc: "the jq expression", nameDoc: KindJQ,
		settings:    []string{"expr", "raw", "output"},
		defaultName: func(*Sink) string { return KindJQ },
		writesTo:    "output",
		build:       buildJQ,
	},
	{
		Name: KindExec, Description: "a command run per event or batch", TargetHint: ": exec=COMMAND ARGS...", AfterOptions: "then the COMMAND",
		target: "command", targetNoun: "a command", targetMeta: "COMMAND",
		targetDoc: "the command and its arguments (no shell)", nameDoc: KindExec,
		settings:    []string{"command", "jq", "batch", "batch-interval", "timeout", "retries", "concurrency"},
		defaultName: func(*Sink) string { return KindExec },
		elsewhere:   true,
		build:       buildExec,
	},
	{
		Name: KindHTTP, Description: "an HTTP endpoint (POSTed JSON Lines, or the receiver's format)", TargetHint: ": http=URL", AfterOptions: "then the URL",
		target: "url", targetNoun: "a URL", targetMeta: "URL",
		targetDoc: "the URL", nameDoc: KindHTTP,
		settings: []string{"format", "url", "jq", "batch", "batch-bytes", "batch-interval", "single", "timeout", "retries",
			"header", "ca-file", "cert-file", "key-file"},
		formats:      receiverFormats(),
		namedFormats: true,
		defaultName:  func(*Sink) string { return KindHTTP },
		elsewhere:    true,
		build:        buildHTTP,
	},
}

// Defaults of the exec and http sinks' settings.
const (
	DefaultExecTimeout   = 30 * time.Second
	DefaultExecRetries   = 2
	DefaultHTTPTimeout   = 10 * time.Second
	DefaultHTTPRetries   = 5
	DefaultHTTPBatch     = 100
	DefaultHTTPBytes     = 1 << 20
	DefaultBatchInterval = time.Second
)

// receiverFormats are the formats an http sink may post in: the shipped ones of package
// notify (the config file may add more).
func receiverFormats() []render.Format {
	var fs []render.Format
	for _, name := range notify.Shipped().Names() {
		fs = append(fs, render.Format(name))
	}
	return fs
}

func allFormats() []render.Format {
	var fs []render.Format
	for _, f := range render.Formats() {
		fs = append(fs, render.Format(f))
	}
	return fs
}

// LookupKind returns the registered kind called name.
func LookupKind(name string) (*Kind, bool) {
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return nil, false
}

// takes reports whether the kind takes the setting.
func (k *Kind) takes(set *setting) bool {
	if set.common {
		return true
	}
	for _, id := range k.settings {
		if id == set.id() {
			return true
		}
	}
	return false
}

// Formats lists the formats the kind can be written in, the default first; nil when it
// takes no format.
func (k *Kind) Formats() []string {
	names := make([]string, len(k.formats))
	for i, f := range k.formats {
		names[i] = string(f)
	}
	return names
}

// OptionalTarget reports whether --sink KIND alone, without =TARGET, is a whole sink.
func (k *Kind) OptionalTarget() bool { return k.optionalTarget }

// TargetIsFormat and TargetIsPath say what =TARGET is, for completion; an expression
// is neither.
func (k *Kind) TargetIsFormat() bool { return k.target == "format" }

// TargetIsPath reports whether =TARGET is a file's path.
func (k *Kind) TargetIsPath() bool {
	set, _ := settingByID(k.target)
	return set.value == pathValue
}

// takesTemplates reports whether the kind takes kubectl's templates as its format
// (custom-columns=, jsonpath=, go-template=): kinds that print lines for people do.
func (k *Kind) takesTemplates() bool { return slices.Contains(k.formats, render.FormatPretty) }

// checkFormat checks a sink's format against the formats its kind takes; "" is not
// checked.
func (k *Kind) checkFormat(format string) error {
	if len(k.formats) == 0 {
		return fmt.Errorf("%s sinks take no format", k.Name)
	}
	if k.namedFormats {
		return notify.CheckName(format)
	}
	names := k.Formats()
	if kubectl.IsTemplateFormat(format) && k.takesTemplates() {
		_, err := render.ParseFormat(format)
		return err
	}
	for _, f := range names {
		if f == format {
			return nil
		}
	}
	if _, err := render.ParseFormat(format); err == nil {
		return fmt.Errorf("format %q is not available for %s sinks; use one of: %s", format, k.Name, strings.Join(names, ", "))
	}
	return fmt.Errorf("unknown output format %q; use one of: %s", format, strings.Join(names, ", "))
}

// kindOf returns s's kind; nil when s.Type is not a registered kind.
func kindOf(s *Sink) *Kind {
	k, _ := LookupKind(s.Type)
	return k
}

// WritesStdout reports whether the sink writes to the standard output: exec and http
// sinks never, a terminal always, a file whose path or a jq sink whose output is Stdout ("-"), and a jq sink
// without output. Paths that name stdout otherwise (/dev/stdout) count once the caller
// made them Stdout with SetStdout.
func (s Sink) WritesStdout() bool {
	k := kindOf(&s)
	if k == nil || k.elsewhere {
		return false
	}
	if k.writesTo == "" {
		return true
	}
	return isStdoutPath(*k.output(&s))
}

// isStdoutPath reports whether a sink's output path stands for stdout: "" or Stdout.
func isStdoutPath(path string) bool { return path == "" || path == Stdout }

// Destination returns the file the sink writes to, as written ("" when it writes to
// stdout without naming it), and whether its kind writes to a file at all.
func (s Sink) Destination() (string, bool) {
	k := kindOf(&s)
	if k == nil || k.writesTo == "" {
		return "", false
	}
	return *k.output(&s), true
}

// SetStdout makes the file the sink writes to Stdout ("-"), for a path the caller found
// to be the standard output (/dev/stdout, or the very file stdout is), and gives a sink
// without a name of its own its default name for stdout. It does nothing for a kind
// that writes to no file.
func (s *Sink) SetStdout() {
	k := kindOf(s)
	if k == nil || k.writesTo == "" {
		return
	}
	*k.output(s) = Stdout
	if s.AutoName {
		s.Name = k.defaultName(s)
	}
}

// BuildEnv is what a run gives every sink it builds.
type BuildEnv struct {
	Stdout        io.Writer  // the command's standard output
	Color         bool       // colour on Stdout (terminal sinks)
	Terminal      bool       // Stdout is a terminal (jq sinks writing to it)
	TerminalWidth func() int // Stdout's width, 0 when unknown; asked again at each line
	Timestamps    bool       // terminal sinks print times (file sinks always do)
	ShowKind      bool       // lines name the kind: several resources are watched
	Namespace     string     // the namespace the command line names, left out on the terminal
	Differ        *diff.Differ
	ShowOld       bool
	// Query is the sink's compiled jq expression (jq sinks).
	Query *jq.Query
	// Format is an http sink's compiled format (its Format names it), nil without one.
	Format *notify.Compiled
	Warn   func(format string, args ...any)
	// Headers prints header lines on the terminal sink (stdout is a terminal);
	// PrinterColumns are the watched CRDs' columns; TerminalPrinter, when set, is told of
	// the terminal sink's printer (to print its headers again after a re-sync).
	Headers         bool
	PrinterColumns  kubectl.PrinterColumns
	TerminalPrinter func(*render.Printer)
	// Clusters are the watched clusters' names when there are several: pretty and wide
	// lines show a cluster column (render.Options.Clusters).
	Clusters []string
	// View, when set, is what the terminal sink is: the full-screen view (--ui), which
	// takes the terminal instead of printing lines on it.
	View listener.Sink
	// Opened is told of every file a sink opens, so that the caller can close it when a
	// later sink fails, or remove it when the run never starts.
	Opened func(*sink.File)
}

// InvalidSinkError is a sink whose settings cannot be built (a format the renderer
// does not know, a kind not registered): a usage error, unlike a file that cannot be
// opened.
type InvalidSinkError struct {
	Sink string
	Err  error
}

func (e *InvalidSinkError) Error() string { return fmt.Sprintf("sink %q: %v", e.Sink, e.Err) }
func (e *InvalidSinkError) Unwrap() error { return e.Err }

// Build makes the sink's writer. Errors opening a file are returned as sink.OpenFile
// gives them; settings that cannot be built are an *InvalidSinkError.
func Build(s Sink, env BuildEnv) (listener.Sink, error) {
	k := kindOf(&s)
	if k == nil {
		return nil, &InvalidSinkError{Sink: s.Name, Err: fmt.Errorf("unknown kind %q", s.Type)}
	}
	return k.build(s, env)
}

func buildTerminal(s Sink, env BuildEnv) (listener.Sink, error) {
	if env.View != nil {
		return env.View, nil
	}
	p, err := render.NewPrinter(render.Options{
		Format: render.Format(s.Format), Color: env.Color, Timestamps: env.Timestamps,
		ShowKind: env.ShowKind, Diff: env.Differ, ShowOld: env.ShowOld,
		// The command line says the namespace to whoever reads the terminal; a file is
		// read without it, so file sinks keep it in every name.
		Namespace: env.Namespace, TerminalWidth: env.TerminalWidth,
		Headers: env.Headers, PrinterColumns: env.PrinterColumns, Clusters: env.Clusters,
	})
	if err != nil {
		return nil, &InvalidSinkError{Sink: s.Name, Err: err}
	}
	if env.TerminalPrinter != nil {
		env.TerminalPrinter(p)
	}
	return sink.NewPrinter(env.Stdout, p, "stdout", nil), nil
}

func buildFile(s Sink, env BuildEnv) (listener.Sink, error) {
	p, err := render.NewPrinter(render.Options{
		Format: render.Format(s.Format), Timestamps: true, ShowKind: env.ShowKind, Diff: env.Differ, ShowOld: env.ShowOld,
		PrinterColumns: env.PrinterColumns, Clusters: env.Clusters,
	})
	if err != nil {
		return nil, &InvalidSinkError{Sink: s.Name, Err: err}
	}
	if s.Path == Stdout {
		// Written as files are (full times, no colour), to stdout, which is not ours to
		// close.
		return sink.NewPrinter(env.Stdout, p, "stdout", nil), nil
	}
	f, err := sink.OpenFile(s.Path, sink.Rotation(s.Rotate), env.Warn)
	if err != nil {
		return nil, err
	}
	env.Opened(f)
	return sink.NewPrinter(f, p, "file "+s.Path, f.Close), nil
}

func buildJQ(s Sink, env BuildEnv) (listener.Sink, error) {
	opts := sink.JQOptions{Name: s.Name, Query: env.Query, Differ: env.Differ, ShowOld: env.ShowOld, Raw: s.Raw,
		Out: env.Stdout, Terminal: env.Terminal, Describe: "stdout", Warn: env.Warn}
	if !isStdoutPath(s.Output) {
		f, err := sink.OpenFile(s.Output, sink.Rotation{}, env.Warn)
		if err != nil {
			return nil, err
		}
		env.Opened(f)
		opts.Out, opts.Terminal, opts.Describe, opts.CloseFn = f, false, "file "+s.Output, f.Close
	}
	return sink.NewJQ(opts), nil
}

// encoder is what an exec or http sink sends for each event: its JSON line as a file
// sink writes it, or what the sink's jq expression yields.
func encoder(s Sink, env BuildEnv) (*sink.Encoder, error) {
	if env.Query != nil {
		return &sink.Encoder{Query: env.Query, Differ: env.Differ, ShowOld: env.ShowOld,
			JQError: func(ev *event.Event, err error) {
				env.Warn("%s sink %q: jq: %v on %s %s %s; skipping it", s.Type, s.Name, err, ev.Type, ev.Kind, ev.Key())
			}}, nil
	}
	p, err := render.NewPrinter(render.Options{Format: render.FormatJSON, Timestamps: true, ShowKind: env.ShowKind, Diff: env.Differ, ShowOld: env.ShowOld})
	if err != nil {
		return nil, &InvalidSinkError{Sink: s.Name, Err: err}
	}
	return &sink.Encoder{Printer: p}, nil
}

// batching is an exec or http sink's Batching, with the kind's defaults.
func batching(s Sink, size, bytes int) sink.Batching {
	b := sink.Batching{Size: cmp.Or(s.Batch, size), Bytes: cmp.Or(s.BatchBytes, bytes), Interval: s.BatchInterval}
	if b.Size > 1 && b.Interval == 0 {
		b.Interval = DefaultBatchInterval
	}
	return b
}

func retries(s Sink, def int) int {
	if s.Retries != nil {
		return *s.Retries
	}
	return def
}

// buildExec makes an exec sink; a command that cannot be run (not found, not
// executable) is an error like a file that cannot be opened.
func buildExec(s Sink, env BuildEnv) (listener.Sink, error) {
	argv, err := SplitCommand(s.Command)
	if err != nil {
		return nil, &InvalidSinkError{Sink: s.Name, Err: err}
	}
	enc, err := encoder(s, env)
	if err != nil {
		return nil, err
	}
	return sink.NewExec(sink.ExecOptions{Name: s.Name, Argv: argv, Batching: batching(s, 1, 0),
		Concurrency: s.Concurrency, Timeout: cmp.Or(s.Timeout, DefaultExecTimeout), Retries: retries(s, DefaultExecRetries),
		Encoder: enc, Warn: env.Warn})
}

// buildHTTP makes an http sink; headers and TLS files that cannot be read are errors
// like a file that cannot be opened.
func buildHTTP(s Sink, env BuildEnv) (listener.Sink, error) {
	if err := CheckHTTP(s); err != nil {
		return nil, &InvalidSinkError{Sink: s.Name, Err: err}
	}
	headers, err := sink.ParseHeaders(s.Headers)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := sink.TLSConfig(s.CAFile, s.CertFile, s.KeyFile)
	if err != nil {
		return nil, err
	}
	enc, err := encoder(s, env)
	if err != nil {
		return nil, err
	}
	if s.Format != "" && env.Format == nil {
		return nil, &InvalidSinkError{Sink: s.Name, Err: fmt.Errorf("format %q was not compiled", s.Format)}
	}
	return sink.NewHTTP(sink.HTTPOptions{Name: s.Name, URL: s.URL, Batching: batching(s, DefaultHTTPBatch, DefaultHTTPBytes),
		Single: s.Single, Timeout: cmp.Or(s.Timeout, DefaultHTTPTimeout), Retries: httpRetries(s),
		Headers: headers, TLS: tlsConfig, Encoder: enc, Format: env.Format, Differ: env.Differ, ShowOld: env.ShowOld,
		Warn: env.Warn}), nil
}

// httpRetries is an http sink's retries: those it gives, else, under a policy that
// loses nothing (block, the default, and coalesce), no limit, so that a receiver that is
// down for any length of time gets every event once it is back, while the buffer fills
// and the policy applies; else DefaultHTTPRetries.
func httpRetries(s Sink) int {
	if s.Retries == nil && s.OnFull.Lossless() {
		return sink.RetryForever
	}
	return retries(s, DefaultHTTPRetries)
}

// CheckHTTP refuses batch settings on an http sink that sends one event per request,
// where they would change nothing, and settings a format leaves without use.
func CheckHTTP(s Sink) error {
	switch {
	case s.Single && (s.Batch > 1 || s.BatchBytes > 0):
		return errors.New("single sends one event per request; drop batch and batch-bytes, or single")
	case s.Format != "" && s.Expr != "":
		return fmt.Errorf("format %s and jq both say what is sent; drop one", s.Format)
	case s.Format != "" && s.BatchBytes > 0:
		return fmt.Errorf("batch-bytes counts the events' JSON lines, which format %s does not send; drop batch-bytes (batch limits a request's events)", s.Format)
	}
	return nil
}

// CheckRunnable checks what a sink needs from the machine it runs on, beyond its
// settings: an exec sink's command can be found and run, an http sink's header and TLS
// files can be read and its header variables are set. config validate runs it; a watch
// finds the same when it builds the sink.
func CheckRunnable(s Sink) error {
	switch s.Type {
	case KindExec:
		argv, err := SplitCommand(s.Command)
		if err != nil {
			return err
		}
		if _, err := exec.LookPath(argv[0]); err != nil {
			var e *exec.Error
			if errors.As(err, &e) {
				err = e.Err
			}
			return fmt.Errorf("command %q: %w", argv[0], err)
		}
	case KindHTTP:
		if err := CheckHTTP(s); err != nil {
			return err
		}
		if _, err := sink.ParseHeaders(s.Headers); err != nil {
			return err
		}
		if _, err := sink.TLSConfig(s.CAFile, s.CertFile, s.KeyFile); err != nil {
			return err
		}
	}
	return nil
}

// targetField returns the field the kind's =TARGET sets.
func (k *Kind) targetField(s *Sink) *string {
	set, _ := settingByID(k.target)
	return set.text(s)
}

// output returns the field naming the file the sink writes to, which may name the
// standard output, or nil when the kind always writes to stdout.
func (k *Kind) output(s *Sink) *string {
	if k.writesTo == "" {
		return nil
	}
	set, _ := settingByID(k.writesTo)
	return set.text(s)
}
