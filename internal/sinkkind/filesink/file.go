// Package filesink is the file sink kind: events written to a file, JSON Lines unless the
// sink gives another format, rotated by size when asked.
package filesink

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/terminalsink"
)

// needsSize says why a rotation setting needs max-size.
const needsSize = "needs a maximum size; rotation is off without one"

// Kind is the file sink kind.
var Kind = &sinkkind.Kind{
	Name: "file", Description: "a file", TargetHint: ": file=PATH", AfterOptions: "then the file's PATH",
	Target: "path", TargetNoun: "a path", TargetDoc: `the path ("-": stdout)`, NameDoc: `the file's base name ("stdout" for "-")`,
	Rows: []*sinkkind.Setting{
		sinkkind.FormatRow(string(render.FormatJSON)),
		{YAML: "path", Value: sinkkind.Path, Meta: "PATH", Help: `the file written ("-": stdout)`, Default: "required", Place: sinkkind.AfterName},
		{YAML: "rotate", Value: sinkkind.Group},
		{Flag: "max-size", YAML: "rotate.maxSizeMB", Value: sinkkind.Count, Meta: "MB", Help: "rotate the file at this many megabytes", Default: "no rotation"},
		{Flag: "max-backups", YAML: "rotate.maxBackups", Value: sinkkind.Count, Meta: "N", Help: "rotated files kept at most (needs max-size)", Default: "all",
			Needs: "max-size", NeedsWhy: needsSize},
		{Flag: "max-age", YAML: "rotate.maxAgeDays", Value: sinkkind.Count, Meta: "DAYS", Help: "days a rotated file is kept at most (needs max-size)", Default: "no limit",
			Needs: "max-size", NeedsWhy: needsSize},
		{Flag: "compress", YAML: "rotate.compress", Value: sinkkind.Bool, Help: "gzip rotated files (needs max-size)", Default: "false",
			Needs: "max-size", NeedsWhy: needsSize},
	},
	Formats:       []string{string(render.FormatJSON), string(render.FormatPretty), string(render.FormatYAML)},
	DefaultFormat: string(render.FormatJSON), MoreFormats: "a template", FormatsNote: terminalsink.TemplatesNote,
	CheckFormat: terminalsink.CheckFormat,
	Output:      "path",
	New:         func() sinkkind.Settings { return &Settings{} },
	DefaultName: func(s sinkkind.Settings) string {
		if path := s.(*Settings).Path; path != sinkkind.Stdout {
			return filepath.Base(path)
		}
		return "stdout"
	},
	Compile: func(s sinkkind.Settings, c sinkkind.Compiling) error {
		s.(*Settings).WatchEvents = c.WatchEvents
		return nil
	},
	ToStdout: func(spec sinkkind.Spec, path string) error {
		if spec.Settings.(*Settings).MaxSizeMB == 0 {
			return nil
		}
		return fmt.Errorf("sink %q: %s is the standard output, which cannot be rotated (rotation renames the file); %s", spec.Name, path, dropRotation(spec))
	},
	Reads: func(s sinkkind.Settings) sinkkind.Reads { return terminalsink.ReadsOf(s.(*Settings).Format) },
	Build: build,
}

// Settings are a file sink's: its format (json, pretty, yaml or a template), the file
// ("-": stdout), its rotation, and whether templates get the watch event (the command
// line's --output-watch-events).
type Settings struct {
	Format      string `sink:"format"`
	Path        string `sink:"path"`
	MaxSizeMB   int    `sink:"max-size"`
	MaxBackups  int    `sink:"max-backups"`
	MaxAgeDays  int    `sink:"max-age"`
	Compress    bool   `sink:"compress"`
	WatchEvents bool
}

func build(spec sinkkind.Spec, env sinkkind.Env) (listener.Sink, error) {
	s := spec.Settings.(*Settings)
	p, err := render.NewPrinter(render.Options{
		Format: render.Format(s.Format), Timestamps: true, ShowKind: env.Watched.ShowKind, Diff: env.Differ, ShowOld: env.ShowOld,
		PrinterColumns: env.Watched.Columns, Clusters: env.Watched.Clusters, WatchEvents: s.WatchEvents,
	})
	if err != nil {
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: err}
	}
	if s.Path == sinkkind.Stdout {
		// Written as files are (full times, no colour), to stdout, not ours to close.
		return terminalsink.Printer(sink.NewPrinter(env.Stdout, p, "stdout", nil), spec, env), nil
	}
	f, err := sink.OpenFile(s.Path, sink.Rotation{MaxSizeMB: s.MaxSizeMB, MaxBackups: s.MaxBackups, MaxAgeDays: s.MaxAgeDays, Compress: s.Compress}, env.Warn)
	var notRegular *sink.NotRegularError
	switch {
	case errors.As(err, &notRegular):
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: fmt.Errorf("%w; %s", err, dropRotation(spec))}
	case err != nil:
		return nil, err
	}
	env.Opened(f)
	return terminalsink.Printer(sink.NewPrinter(f, p, "file "+s.Path, f.Close), spec, env), nil
}

// dropRotation says how to turn a sink's rotation off, where it was defined.
func dropRotation(spec sinkkind.Spec) string {
	if strings.HasPrefix(spec.Origin, "--sink") {
		return "drop max-size"
	}
	return "remove its rotate settings (" + spec.Origin + ")"
}
