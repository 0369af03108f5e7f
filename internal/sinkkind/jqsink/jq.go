// Package jqsink is the jq sink kind: what a jq expression yields for each event, written
// to the standard output or a file.
package jqsink

import (
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// Kind is the jq sink kind.
var Kind = &sinkkind.Kind{
	Name: "jq", Description: "a jq filter", TargetHint: ": jq=EXPRESSION", AfterOptions: "then the jq EXPRESSION",
	Target: "expr", TargetNoun: "an expression", TargetDoc: "the jq expression", NameDoc: "jq",
	Rows: []*sinkkind.Setting{
		{YAML: "expr", Value: sinkkind.Expr, Meta: "EXPR", Help: "the jq expression whose results are written", Default: "required", Place: sinkkind.AfterName},
		{Flag: "raw", YAML: "raw", Value: sinkkind.Bool, Help: "print string results without quotes", Default: "false", Place: sinkkind.AfterResync},
		{Flag: "output", YAML: "output", Value: sinkkind.Path, Meta: "PATH", Help: "write results to PATH instead of stdout", Default: "stdout", Place: sinkkind.AfterResync},
	},
	Output:  "output",
	New:     func() sinkkind.Settings { return &Settings{} },
	Compile: func(s sinkkind.Settings, _ sinkkind.Compiling) error { return s.(*Settings).compile() },
	Reads:   func(sinkkind.Settings) sinkkind.Reads { return sinkkind.Reads{Objects: true} },
	Build:   build,
}

// Settings are a jq sink's: its expression (and it compiled), whether strings are
// printed raw, and the file the results go to ("" or "-": stdout).
type Settings struct {
	Expr   string `sink:"expr"`
	Query  *jq.Query
	Raw    bool   `sink:"raw"`
	Output string `sink:"output"`
}

func (s *Settings) compile() (err error) {
	if s.Query == nil { // not yet
		s.Query, err = jq.Compile(s.Expr)
	}
	return err
}

func build(spec sinkkind.Spec, env sinkkind.Env) (listener.Sink, error) {
	s := spec.Settings.(*Settings)
	if err := s.compile(); err != nil {
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: err}
	}
	opts := sink.JQOptions{Name: spec.Name, Query: s.Query, Differ: env.Differ, ShowOld: env.ShowOld, Raw: s.Raw,
		Out: env.Stdout, Terminal: env.Terminal.Is, Describe: "stdout", Warn: env.Warn}
	if s.Output != "" && s.Output != sinkkind.Stdout {
		f, err := sink.OpenFile(s.Output, sink.Rotation{}, env.Warn)
		if err != nil {
			return nil, err
		}
		env.Opened(f)
		opts.Out, opts.Terminal, opts.Describe, opts.CloseFn = f, false, "file "+s.Output, f.Close
	}
	return sink.NewJQ(opts), nil
}
