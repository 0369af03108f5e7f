// Package sender is what the exec and http sink kinds share: they send each event's JSON
// line, or what a jq expression yields, in batches, with a time limit and retries.
package sender

import (
	"cmp"
	"strconv"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// DefaultBatchInterval is how long a batch that is not full waits for more events.
const DefaultBatchInterval = time.Second

// The rows of the settings they share, some with the kind's default.
var (
	JQ = &sinkkind.Setting{Flag: "jq", YAML: "jq", Value: sinkkind.Expr, Meta: "EXPR", Help: "send what this jq expression yields instead of each event's JSON line", Default: "none"}
	// Interval is batch-interval's.
	Interval = &sinkkind.Setting{Flag: "batch-interval", YAML: "batchInterval", Value: sinkkind.Duration, Meta: "DURATION", Help: "send a batch that is not full this long after its first event",
		Default: DefaultBatchInterval.String()}
)

// Batch is the batch row.
func Batch(def int) *sinkkind.Setting {
	return &sinkkind.Setting{Flag: "batch", YAML: "batch", Value: sinkkind.Count, Meta: "N", Help: "events per run or request at most", Default: strconv.Itoa(def)}
}

// Timeout is the timeout row.
func Timeout(def time.Duration) *sinkkind.Setting {
	return &sinkkind.Setting{Flag: "timeout", YAML: "timeout", Value: sinkkind.Duration, Meta: "DURATION", Help: "time limit per run (then killed) or request", Default: def.String()}
}

// Retries is the retries row.
func Retries(def string) *sinkkind.Setting {
	return &sinkkind.Setting{Flag: "retries", YAML: "retries", Value: sinkkind.Count, Meta: "N", Help: "retries of a failed run or request before its events count as failed", Default: def}
}

// Settings are what the kinds share, embedded in theirs: the jq expression whose results
// are sent ("": each event's JSON line) and it compiled; the events per run or request
// at most, how long a batch that is not full waits, the time limit per run or request
// (0: the kind's default) and the retries (nil: the kind's default).
type Settings struct {
	JQ            string `sink:"jq"`
	Query         *jq.Query
	Batch         int           `sink:"batch"`
	BatchInterval time.Duration `sink:"batch-interval"`
	Timeout       time.Duration `sink:"timeout"`
	Retries       *int          `sink:"retries"`
}

// Compile compiles the jq expression, if any and not yet.
func (s *Settings) Compile() (err error) {
	if s.JQ != "" && s.Query == nil {
		s.Query, err = jq.Compile(s.JQ)
	}
	return err
}

// Encoder is what the sink sends for each event: its JSON line as a file sink writes it,
// or what its jq expression yields.
func (s *Settings) Encoder(spec sinkkind.Spec, env sinkkind.Env) (*sink.Encoder, error) {
	if err := s.Compile(); err != nil {
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: err}
	}
	if s.Query != nil {
		return &sink.Encoder{Query: s.Query, Differ: env.Differ, ShowOld: env.ShowOld,
			JQError: func(ev *event.Event, err error) {
				env.Warn("%s sink %q: jq: %v on %s %s %s; skipping it", spec.Kind.Name, spec.Name, err, ev.Type, ev.Kind, ev.Key())
			}}, nil
	}
	p, err := render.NewPrinter(render.Options{Format: render.FormatJSON, Timestamps: true, ShowKind: env.Watched.ShowKind, Diff: env.Differ, ShowOld: env.ShowOld})
	if err != nil {
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: err}
	}
	return &sink.Encoder{Printer: p}, nil
}

// Batching is the sink's batching: size is the kind's default batch, bytes the bytes
// per batch at most (0: no limit).
func (s *Settings) Batching(size, bytes int) sink.Batching {
	b := sink.Batching{Size: cmp.Or(s.Batch, size), Bytes: bytes, Interval: s.BatchInterval}
	if b.Size > 1 && b.Interval == 0 {
		b.Interval = DefaultBatchInterval
	}
	return b
}

// RetriesOr is the sink's retries, else def.
func (s *Settings) RetriesOr(def int) int {
	if s.Retries != nil {
		return *s.Retries
	}
	return def
}
