package engine

import (
	"context"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// Source hands over the events of a recording read back (package replay): a source of
// the pipeline, as a watch's informers are.
type Source = pipeline.Source

// Replay is what `kubeevents replay` and `history` run instead of a watch: the events
// come from Source, and go through everything else a watch has (the sinks with their
// buffers and policies, the numbering, the exit conditions, the shutdown and the
// summary). Config.Watch, Resume, LeaderElect and MetricsAddr do not apply.
type Replay struct {
	Source Source
	// What names what is replayed, for the line at the start ("events.jsonl").
	What string
	// What the sinks are told of the events, as a watch tells them of what it watches:
	// whether the kind leads each name, the one namespace (left out of names; "" for
	// several) and the clusters' names when there are several.
	ShowKind  bool
	Namespace string
	Clusters  []string
}

// RunReplay runs a replay from start to end, as Run runs a watch. The input's end is a
// stop reason of its own (StopInputEnd): every sink then writes all it holds, unless
// the run is interrupted meanwhile. An input that ends before Until was met is a
// NotMetError.
func RunReplay(ctx context.Context, sys System, cfg Config, replay Replay) (Result, error) {
	w := &session{sys: sys, cfg: &cfg, headers: &sinkkind.HeaderPrinters{}, replay: &replay}
	return w.run(ctx)
}

// ReadsObjects reports whether a sink, a transition or an exit condition reads the
// events' objects beyond their JSON and metadata: the pretty, wide and template formats
// (kubectl's columns and templates read the typed objects), jq expressions (a jq sink's,
// an exec or http sink's, --until, the transitions of --on and of the sinks' on=), and
// health. A replay reads only the metadata of the recorded objects otherwise, and writes
// their JSON as it is.
func (c Config) ReadsObjects() bool {
	if c.End.Until != nil || len(c.Events.On) > 0 || c.Health != nil {
		return true
	}
	for _, s := range c.Output.Sinks {
		if s.On != "" || s.Reads().Objects {
			return true
		}
	}
	return false
}

// replayStarted is said once delivery starts.
func (w *session) replayStarted(listeners []*listener.Listener, _ int) {
	w.infof("replaying %s — %d sink%s (%s); Ctrl-C to stop", w.replay.What, len(listeners), diag.Plural(len(listeners)), sinkNames(listeners))
}

// sourceEnded says why the stream ends when the Source returned: the condition it met
// or the limit it reached comes first; then its error; else its input ended, and the
// sinks are given the time to write all they hold (unless ctx ends meanwhile).
func (r *run) sourceEnded(ctx context.Context, err error) (StopReason, error) {
	select {
	case <-r.seq.Ended():
		return r.ended()
	default:
	}
	if err != nil {
		return StopFatal, err
	}
	if !listener.AwaitWritten(ctx, r.listeners) {
		return StopInterrupted, nil
	}
	return StopInputEnd, nil
}
