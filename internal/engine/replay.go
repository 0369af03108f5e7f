package engine

import (
	"context"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
)

// Source hands over events from elsewhere than informers: a recording read back
// (package replay). The engine numbers them, applies --event-types, --changes-only,
// --until and --max-events, and hands them to every sink, as it does an informer's.
type Source interface {
	// Run hands each event to emit, in order, until its input ends (it returns nil), ctx
	// ends (it returns ctx's error, or nil), or emit returns false: the stream is over (a
	// condition met, MaxEvents made). Any other error ends the run with it. An event is
	// shared read-only with the sinks once handed over.
	Run(ctx context.Context, emit func(*event.Event) bool) error
}

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
	w := &session{sys: sys, cfg: cfg, headers: &headerPrinters{}, replay: &replay}
	return w.run(ctx)
}

// ReadsObjects reports whether a sink, a transition or an exit condition reads the
// events' objects beyond their JSON and metadata: the pretty, wide and template formats
// (kubectl's columns and templates read the typed objects), and jq expressions (a jq
// sink's, an exec or http sink's, --until, the transitions of --on and of the sinks'
// on=). A replay reads only the metadata of the recorded objects otherwise, and writes
// their JSON as it is.
func (c Config) ReadsObjects() bool {
	if c.Until != "" || len(c.On) > 0 {
		return true
	}
	for _, s := range c.Sinks {
		if s.Expr != "" || s.Type == config.KindJQ || s.On != "" {
			return true
		}
		switch render.Format(s.Format) {
		case "", render.FormatJSON, render.FormatYAML, render.FormatName:
		default:
			return true
		}
	}
	return false
}

// replayStarted is said once delivery starts.
func (w *session) replayStarted(listeners []*listener.Listener) func() {
	return func() {
		names := make([]string, len(listeners))
		for i, l := range listeners {
			names[i] = l.Name()
		}
		w.infof("replaying %s — %d sink%s (%s); Ctrl-C to stop", w.replay.What, len(listeners), diag.Plural(len(listeners)), strings.Join(names, ", "))
	}
}

// startSource starts the listeners, then the Source on its own goroutine.
func (r *run) startSource(ctx context.Context) {
	cfg := r.cfg
	r.emitSkip = r.skip()
	if cfg.Started != nil {
		cfg.Started()
	}
	for _, l := range cfg.Listeners {
		go l.Run()
	}
	ctx, cancel := context.WithCancel(ctx)
	r.sourceDone = make(chan error, 1)
	returned := make(chan struct{})
	r.stopSource = func() {
		cancel()
		<-returned
	}
	go func() {
		defer close(returned)
		err := cfg.Source.Run(ctx, r.emit)
		if ctx.Err() != nil {
			err = nil // stopped, or interrupted: said by wait
		}
		r.sourceDone <- err
	}()
}

// emit is the Source's emit: it makes ev an event of the run as an informer's minter
// does (Skip first, then the number and the exit conditions) and hands it to every
// listener. It reports whether the stream goes on.
func (r *run) emit(ev *event.Event) bool {
	if r.emitSkip != nil && r.emitSkip(ev) {
		return true
	}
	if ev.Type != event.Sync { // a re-delivery has no number, as a listener's resync
		var numbered bool
		if r.conditions != nil {
			numbered = r.conditions.until.Number(ev, r.number)
		} else {
			numbered = r.number(ev)
		}
		if !numbered {
			return false
		}
		if max := r.cfg.MaxEvents; max > 0 && ev.Seq == max {
			r.limitReached()
		}
	}
	for _, l := range r.cfg.Listeners {
		l.Add(ev)
	}
	if max := r.cfg.MaxEvents; max > 0 && ev.Seq >= max {
		return false
	}
	if r.conditions != nil {
		_, met := r.conditions.until.MetAt()
		return !met
	}
	return true
}

// number gives ev the run's next number; false past MaxEvents.
func (r *run) number(ev *event.Event) bool {
	ev.Seq = r.seq.Add(1)
	return r.cfg.MaxEvents == 0 || ev.Seq <= r.cfg.MaxEvents
}

// sourceEnded says why the stream ends when the Source returned: the condition it met
// or the limit it reached comes first; then its error; else its input ended, and the
// sinks are given the time to write all they hold (unless ctx ends meanwhile).
func (r *run) sourceEnded(ctx context.Context, err error) (StopReason, error) {
	if r.conditions != nil {
		if _, met := r.conditions.until.MetAt(); met {
			return StopCondition, nil
		}
	}
	select {
	case <-r.limit:
		return StopLimit, nil
	default:
	}
	if err != nil {
		return StopFatal, err
	}
	if !awaitWritten(ctx, r.cfg.Listeners) {
		return StopInterrupted, nil
	}
	return StopInputEnd, nil
}

// awaitWritten waits until every listener has written (or dropped, or failed) all it was
// given, however long that takes, unless ctx ends first (false).
func awaitWritten(ctx context.Context, listeners []*listener.Listener) bool {
	ticker := time.NewTicker(5 * time.Millisecond)
	defer ticker.Stop()
	for _, l := range listeners {
		for {
			if queued, held := l.Queue(); queued+held == 0 || isDone(l) {
				break
			}
			select {
			case <-ctx.Done():
				return false
			case <-ticker.C:
			}
		}
	}
	return true
}
