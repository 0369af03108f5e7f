// Package terminalsink is the terminal sink kind: events printed on the standard output
// in a format of package render, -o's unless the sink gives one. The file kind prints
// with its format check, Reads and Printer too.
package terminalsink

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// Kind is the terminal sink kind.
var Kind = &sinkkind.Kind{
	Name: "terminal", Description: "the standard output", TargetHint: " in FORMAT",
	Target: "format", OptionalTarget: true, TargetNoun: "a format", TargetDoc: "the format", NameDoc: "screen",
	Rows:    []*sinkkind.Setting{sinkkind.FormatRow("-o's format")},
	Formats: render.Formats(), MoreFormats: "a template", FormatsNote: TemplatesNote, CheckFormat: CheckFormat,
	New: func() sinkkind.Settings { return &Settings{} },
	Compile: func(s sinkkind.Settings, c sinkkind.Compiling) error {
		t := s.(*Settings)
		t.Timestamps, t.WatchEvents = c.Timestamps, c.WatchEvents
		return nil
	},
	Reads: func(s sinkkind.Settings) sinkkind.Reads { return ReadsOf(s.(*Settings).Format) },
	Build: build,
}

// Settings are a terminal sink's: its format ("" until -o's is set), and what the
// command line says of its times and templates (sinkkind.Compiling).
type Settings struct {
	Format                  string `sink:"format"`
	Timestamps, WatchEvents bool
}

func build(spec sinkkind.Spec, env sinkkind.Env) (listener.Sink, error) {
	s := spec.Settings.(*Settings)
	p, err := render.NewPrinter(render.Options{
		Format: render.Format(s.Format), Color: env.Terminal.Color, Timestamps: s.Timestamps,
		ShowKind: env.Watched.ShowKind, Diff: env.Differ, ShowOld: env.ShowOld,
		// The command line says the namespace to whoever reads the terminal; a file is
		// read without it, so file sinks keep it in every name.
		Namespace: env.Watched.Namespace, TerminalWidth: env.Terminal.Width,
		Headers: env.Terminal.Is, PrinterColumns: env.Watched.Columns, Clusters: env.Watched.Clusters,
		WatchEvents: s.WatchEvents,
	})
	if err != nil {
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: err}
	}
	if env.Terminal.Printed != nil {
		env.Terminal.Printed(p)
	}
	return Printer(sink.NewPrinter(env.Stdout, p, "stdout", nil), spec, env), nil
}

// Printer has a printer sink leave out, with a line on env.Warn, an event its template
// fails on (sink.Printer.SkipFailedTemplates).
func Printer(p *sink.Printer, spec sinkkind.Spec, env sinkkind.Env) *sink.Printer {
	if env.Warn != nil {
		p.SkipFailedTemplates(spec.Name, env.Warn)
	}
	return p
}

// TemplatesNote says how a template format is written, for the docs.
const TemplatesNote = "a template is custom-columns=, jsonpath=, go-template= or their -file= forms"

// CheckFormat checks a format of a kind that prints with package render: one of its
// formats, or one of kubectl's templates.
func CheckFormat(k *sinkkind.Kind, format string) error {
	_, err := render.ParseFormat(format)
	switch {
	case kubectl.IsTemplateFormat(format):
		return err
	case slices.Contains(k.Formats, format):
		return nil
	case err == nil:
		return fmt.Errorf("format %q is not available for %s sinks; use one of: %s", format, k.Name, strings.Join(k.Formats, ", "))
	}
	return fmt.Errorf("unknown output format %q; use one of: %s", format, strings.Join(k.Formats, ", "))
}

// ReadsOf says what a sink printing in format reads: kubectl's columns and templates
// read the typed objects, pretty and wide lines the printer columns too.
func ReadsOf(format string) sinkkind.Reads {
	switch render.Format(format) {
	case "", render.FormatJSON, render.FormatYAML, render.FormatName:
		return sinkkind.Reads{}
	case render.FormatPretty, render.FormatWide:
		return sinkkind.Reads{Objects: true, Columns: true}
	}
	return sinkkind.Reads{Objects: true}
}
