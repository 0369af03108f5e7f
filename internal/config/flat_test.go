package config

import (
	"time"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/execsink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/filesink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/httpsink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/jqsink"
	_ "github.com/kubeevents/kubeevents/internal/sinkkind/kinds"
	"github.com/kubeevents/kubeevents/internal/sinkkind/terminalsink"
)

// Sink is a sink as the tables of these tests write it, with the settings of every kind
// side by side; spec makes it the sinkkind.Spec the parsers return.
type Sink struct {
	Name, Type, Format, Path, Expr, Output string
	Raw                                    bool
	Rotate                                 sink.Rotation
	Buffer                                 int
	OnFull                                 listener.Policy
	Resync                                 time.Duration
	EventTypes, On                         string
	Fold                                   *bool
	AutoName                               bool
	Origin                                 string
}

func (s Sink) spec() sinkkind.Spec {
	spec := sinkkind.Spec{Name: s.Name, Buffer: s.Buffer, OnFull: s.OnFull, Resync: s.Resync, EventTypes: s.EventTypes,
		On: s.On, Fold: s.Fold, AutoName: s.AutoName, Origin: s.Origin}
	switch s.Type {
	case "terminal":
		spec.Kind, spec.Settings = terminalsink.Kind, &terminalsink.Settings{Format: s.Format}
	case "file":
		spec.Kind, spec.Settings = filesink.Kind, &filesink.Settings{Format: s.Format, Path: s.Path, MaxSizeMB: s.Rotate.MaxSizeMB, MaxBackups: s.Rotate.MaxBackups,
			MaxAgeDays: s.Rotate.MaxAgeDays, Compress: s.Rotate.Compress}
	case "jq":
		spec.Kind, spec.Settings = jqsink.Kind, &jqsink.Settings{Expr: s.Expr, Raw: s.Raw, Output: s.Output}
	case "exec":
		spec.Kind, spec.Settings = execsink.Kind, &execsink.Settings{}
	case "http":
		spec.Kind, spec.Settings = httpsink.Kind, &httpsink.Settings{Format: s.Format}
	}
	return spec
}

func specs(sinks []Sink) []sinkkind.Spec {
	var out []sinkkind.Spec
	for _, s := range sinks {
		out = append(out, s.spec())
	}
	return out
}
