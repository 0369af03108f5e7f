package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kubeevents/kubeevents/internal/conditions"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/fold"
	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/related"
	"github.com/kubeevents/kubeevents/internal/resume"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/watch"
)

// runConfig is one run resolved and opened: the Config, the clusters with their clients,
// the listeners (one per sink) and the parts the run has (nil when it has not).
type runConfig struct {
	cfg *Config
	// clusters are watched with informers of their own, every one numbering its events
	// from the run's one sequence and handing them to the same listeners. With several
	// (several), each one's diagnostics start with plan.ClusterNotice and each event
	// names its cluster.
	clusters []watch.Cluster
	several  bool
	// source, for a replay, hands over the events instead of informers.
	source    Source
	listeners []*listener.Listener // one per sink, not yet running
	deliver   *pipeline.Deliver    // hands the events to the listeners: the last step
	// unchanged are the listeners that show every object (the view): a resumed start
	// hands them the objects unchanged since the checkpoint too.
	unchanged []int
	// The parts of the run: --owned, --resume, --fold-rollouts, the metrics.
	follow   *owners.Follow
	health   *health.Step
	resume   *resume.Resume
	folder   *fold.Folder
	observer informer.Observer
	// parts are told when the run starts, is synced and stops (pipeline.Part): the
	// checkpoint, the metrics' readiness, the full-screen view.
	parts []pipeline.Part
	hooks hooks
}

// hooks are what the run tells its caller, and when it is told to end early.
type hooks struct {
	// started is called once every source's rights were checked, just before the first
	// event can be delivered; synced once every informer has its initial list, and what
	// it returns when the run ends.
	started func(listeners []*listener.Listener, informers int)
	synced  func() (undo func())
	warn    func(format string, args ...any) // one diagnostic line
	// outputGone, when not nil, ends the run once it is closed: every sink writes to a
	// stdout that nobody reads any more.
	outputGone <-chan struct{}
}

// stream streams the run rc describes until a stop reason comes, then shuts it down.
// The error is the informers' fatal error, a condition not met (conditions.TimeoutError,
// NotMetError) or failed sinks (sinkkind.FailedError); an interrupted run is no error.
func stream(ctx context.Context, rc runConfig) (Result, error) {
	r := newRun(rc)
	if started, err := r.start(ctx); !started {
		return Result{Reason: StopInterrupted}, err
	}
	defer r.undoSynced()
	reason, err := r.wait(ctx)
	if r.conditions != nil && !r.conditionMet() {
		switch reason {
		case StopInterrupted:
			err = &conditions.InterruptedError{Err: r.conditions.NotMet("interrupted")}
		case StopInputEnd:
			err = &conditions.NotMetError{Err: r.conditions.NotMet("the recording ended")}
		}
	}
	res, stopErr := r.shutdown(reason)
	res.Started = true
	if err = cmp.Or(err, stopErr); err != nil {
		return res, err
	}
	if what, why, failed := r.conditions.Failed(); failed && reason == StopCondition {
		err = &conditions.FailedError{What: what, Message: why}
	}
	var failed []string
	for _, l := range rc.listeners {
		if err := l.Err(); err != nil && !errors.Is(err, listener.ErrOutputClosed) {
			failed = append(failed, l.Name())
		}
	}
	if len(failed) > 0 {
		return res, &sinkkind.FailedError{Names: failed}
	}
	return res, err
}

// run is one run's state between its start, its wait and its shutdown.
type run struct {
	runConfig
	// The pipeline every event takes (pipeline.go) and its numbering.
	pipe       *pipeline.Pipeline
	seq        *pipeline.Sequence
	conditions *conditions.Conditions // --until, --until-deleted, --until-rollout (nil: none)
	fatal      chan error
	stopping   chan struct{} // closed once the run shuts down
	// watch runs the clusters' informers (nil for a replay); replay runs the recording
	// and says when it ended.
	watch  *watch.Set
	replay pipeline.Running
	// stalls runs the health step's timer of STALLED events (--stalled-after) in a watch.
	stalls pipeline.Running
	// synced is what hooks.synced returned, undone when the run ends (and not called
	// once it has ended).
	synced struct {
		sync.Mutex
		ended bool
		undo  func()
	}
}

func newRun(rc runConfig) *run {
	r := &run{runConfig: rc, fatal: make(chan error, 1), stopping: make(chan struct{}), seq: pipeline.NewSequence()}
	if r.deliver == nil {
		r.deliver = newDeliver(rc.listeners, rc.cfg.resyncs(), pipeline.KeepBacklog)
	}
	if r.hooks.warn == nil {
		r.hooks.warn = func(string, ...any) {}
	}
	cfg := rc.cfg
	if cfg.Health != nil {
		cfg.Health.Rules.WarnTo(r.hooks.warn)
		r.health = health.New(*cfg.Health)
	}
	r.conditions = conditions.New(conditions.Config{Until: cfg.End.Until, Differ: cfg.Output.Differ, ShowOld: cfg.Output.ShowOld,
		UntilDeleted: cfg.Watch.UntilDeleted, Names: cfg.Watch.Names, Ready: conditions.ReadyWait(conditions.ReadyWaitOptions{Follow: rc.followRoot(),
			UntilRollout: rc.follow != nil && rc.follow.UntilRollout, UntilReady: cfg.Watch.UntilReady, Names: cfg.Watch.Names,
			StallsFail: cfg.Health != nil && cfg.Health.StallAfter > 0})})
	return r
}

func (r *run) reportFatal(err error) {
	select {
	case r.fatal <- err:
	default:
	}
}

// start builds the sources of every cluster (or the replay's), checks their rights, and
// starts delivery. An error, or an interruption while the rights are checked, returns
// before any goroutine runs and anything is printed (started is false).
func (r *run) start(ctx context.Context) (started bool, _ error) {
	if r.source != nil {
		r.pipe = r.pipeline()
		r.startListeners()
		src := r.source
		if r.health != nil {
			src = r.health.Replayed(src) // its STALLED events, by the recording's times
		}
		r.replay.Start(ctx, src, r.pipe.Take)
		return true, nil
	}
	if err := r.buildWatch(); err != nil {
		return false, err
	}
	if r.conditions != nil {
		r.conditions.Watch(conditionsWatched(r.watch.Watched())...)
	}
	r.pipe = r.pipeline()
	if err := r.watch.CheckAccess(ctx); err != nil || ctx.Err() != nil {
		return false, err // an error, or interrupted: nothing was printed, nothing is
	}
	for i, p := range r.parts {
		if err := p.Start(ctx); err != nil {
			for _, started := range slices.Backward(r.parts[:i]) {
				_ = started.Stop()
			}
			return false, err
		}
	}
	r.startListeners()
	observe := func(*event.Event) bool { return true }
	if r.folder != nil {
		observe = r.folder.Observe
	}
	r.watch.Run(ctx, r.pipe.Take, observe)
	if r.health != nil {
		r.stalls.Start(ctx, r.health, r.pipe.Take) // its STALLED events
	}
	go r.afterSync(ctx)
	return true, nil
}

// buildWatch builds every cluster's informers (package watch), each handing its changes
// to the run's one pipeline.
func (r *run) buildWatch() error {
	cfg := r.cfg
	o := watch.Options{Several: r.several, ExcludeNamespaces: cfg.Watch.ExcludeNamespaces, Fold: r.folder != nil,
		WithEvents: cfg.Events.WithEvents, PastSince: r.pastEventsSince, Resync: r.deliver.NewResync, Discover: cfg.Watch.AllTypes,
		Warn: r.hooks.warn, Fatal: r.reportFatal,
		Informer: informer.Options{LabelSelector: cfg.Watch.LabelSelector, FieldSelector: cfg.Watch.FieldSelector, Names: cfg.Watch.Names,
			WatchOnly: cfg.Events.WatchOnly, MetadataOnly: cfg.Watch.MetadataOnly, ShowSecrets: cfg.Watch.ShowSecrets,
			NoFastPaths: cfg.Speed.NoFastPaths, NoWireDecoders: cfg.Speed.NoWireDecoders, NoAttribution: cfg.Events.NoAttribution,
			Coalesced: coalesces(r.listeners), Observer: r.observer}}
	if r.follow != nil {
		o.Children = r.follow.Children
	}
	if r.resume != nil {
		o.Seed, o.Leave = func(cluster string, inf *informer.Informer, warn func(string, ...any), gone func() bool) error {
			return r.resume.Seed(cluster, inf, warn, gone)
		}, r.resume.Leave
		o.RedactionKey = r.resume.RedactionKey
		o.Informer.Unchanged = r.unchanged
	}
	var err error
	r.watch, err = watch.New(r.clusters, o)
	return err
}

// conditionsWatched are the informers --until-deleted looks names up in.
func conditionsWatched(infs []*informer.Informer) []conditions.Watched {
	out := make([]conditions.Watched, len(infs))
	for i, inf := range infs {
		out[i] = inf
	}
	return out
}

func (r *run) startListeners() {
	if r.hooks.started != nil {
		r.hooks.started(r.listeners, r.informers())
	}
	for _, l := range r.listeners {
		go l.Run()
	}
}

// informers is how many informers the run runs (0 for a replay).
func (r *run) informers() int {
	if r.watch == nil {
		return 0
	}
	return r.watch.Informers()
}

// pastEventsSince is from when the core Events about the watched objects that exist at
// start-up are shown, marked past (--with-events): those since the checkpoint was
// written, else those of the last --since; zero: none.
func (r *run) pastEventsSince(cluster string) time.Time {
	var written time.Time
	if r.resume != nil {
		written = r.resume.Written(cluster)
	}
	return related.Since(written, r.cfg.Events.Since)
}

// afterSync waits for every informer's initial list (of the clusters not left out
// meanwhile), then tells the parts, the caller and the exit conditions.
func (r *run) afterSync(ctx context.Context) {
	if !r.watch.WaitForSync(ctx) {
		return
	}
	for _, p := range r.parts {
		p.Synced()
	}
	if r.hooks.synced != nil {
		r.synced.Lock()
		if !r.synced.ended {
			r.synced.undo = r.hooks.synced()
		}
		r.synced.Unlock()
	}
	if r.conditions != nil {
		r.pipe.Locked(func() {
			if r.conditions.Synced() {
				r.seq.End(pipeline.Condition)
			}
		})
	}
}

func (r *run) undoSynced() {
	r.synced.Lock()
	defer r.synced.Unlock()
	r.synced.ended = true
	if r.synced.undo != nil {
		r.synced.undo()
	}
}

// wait blocks until the stream should end and says why.
func (r *run) wait(ctx context.Context) (StopReason, error) {
	var timeout <-chan time.Time
	if d := r.cfg.End.Timeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	allStopped := make(chan struct{})
	go func() {
		for _, l := range r.listeners {
			<-l.Done()
		}
		close(allStopped)
	}()
	select {
	case <-ctx.Done():
		return StopInterrupted, nil
	case err := <-r.fatal:
		return StopFatal, err
	case err := <-r.replay.Ended():
		return r.sourceEnded(ctx, err)
	case <-r.seq.Ended():
		return r.ended()
	case <-allStopped:
		return StopOutputGone, nil
	case <-r.hooks.outputGone:
		return StopOutputGone, nil
	case <-timeout:
		if r.conditions != nil {
			return StopTimeout, &conditions.TimeoutError{Err: r.conditions.NotMet(fmt.Sprintf("timed out after %s", r.cfg.End.Timeout))}
		}
		return StopTimeout, nil
	}
}

// ended says why the stream ended by itself: a condition met, or --max-events made
// (before an awaited condition was met: NotMetError).
func (r *run) ended() (StopReason, error) {
	switch {
	case r.conditionMet():
		return StopCondition, nil
	case r.conditions == nil:
		return StopLimit, nil
	}
	return StopLimit, &conditions.NotMetError{Err: r.conditions.NotMet(fmt.Sprintf("--max-events %d reached", r.cfg.End.MaxEvents))}
}

// conditionMet reports whether the run's exit condition was met.
func (r *run) conditionMet() bool {
	cause, _ := r.seq.EndedAt()
	return cause == pipeline.Condition
}

// shutdown stops the sources and lets the sinks write what they hold, all within Grace,
// counts what every sink got, and stops the parts (the checkpoint's last write: its
// error is returned).
func (r *run) shutdown(reason StopReason) (Result, error) {
	close(r.stopping)
	grace := r.cfg.End.Grace
	// The event that ended the stream must reach every sink before the sources stop.
	if _, last := r.seq.EndedAt(); reason == StopCondition || reason == StopLimit {
		listener.AwaitSeen(r.listeners, last, grace)
	}
	deadline := time.Now().Add(grace)
	r.stopSources(deadline)
	made := r.seq.Numbered()
	for _, l := range r.listeners {
		l.Missed(made)
	}
	dropped := make(map[*listener.Listener]uint64, len(r.listeners))
	for _, l := range r.listeners {
		dropped[l] = l.Stats().Dropped
	}
	// At least a moment, for sinks that are only finishing: a deadline spent waiting for
	// a blocked lane (stopSources) is no reason to cut them short.
	var late []Late
	for _, l := range listener.Drain(r.listeners, max(time.Until(deadline), time.Second)) {
		late = append(late, Late{Name: l.Name(), Dropped: l.Stats().Dropped - dropped[l]})
	}
	var err error
	for i := len(r.parts) - 1; i >= 0; i-- {
		err = cmp.Or(err, r.parts[i].Stop())
	}
	res := Result{Reason: reason, Made: made, Unchanged: r.pipe.LeftOut(event.LeftOutUnchanged), Late: late}
	if r.watch != nil {
		res.Clusters = r.watch.Results()
	}
	return res, err
}

// stopSources stops the sources, so that no event is made after those the sinks are
// about to drain, and waits until every listener was handed every event made. A lane
// that feeds a full sink under on-full=block (or coalesce) waits for room: if that has
// not ended by the deadline, the listeners are closed, which makes such lanes give up
// (their events count as dropped).
func (r *run) stopSources(deadline time.Time) {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if r.watch != nil {
			r.watch.Stop()
		}
		r.replay.Stop()
		r.stalls.Stop()
		r.deliver.Drained()
	}()
	timer := time.NewTimer(max(time.Until(deadline), 0))
	defer timer.Stop()
	select {
	case <-stopped:
		return
	case <-timer.C:
	}
	for _, l := range r.listeners {
		l.Close()
	}
	<-stopped
}

// resyncs reports whether the listeners' resync periods apply: --event-types without
// SYNC leaves out the SYNC events they would make.
func (cfg *Config) resyncs() bool {
	return len(cfg.Events.Types) == 0 || slices.Contains(cfg.Events.Types, event.Sync)
}

// newDeliver is the pipeline's last step for listeners, with their resync periods when
// resync is set. A watch's informers never wait for a full sink (each lane keeps its
// backlog); a replay's source does (package pipeline, Backlog).
func newDeliver(listeners []*listener.Listener, resync bool, backlog pipeline.Backlog) *pipeline.Deliver {
	receivers := make([]pipeline.Receiver, len(listeners))
	var periods []time.Duration
	for i, l := range listeners {
		receivers[i] = l
		if resync {
			periods = append(periods, l.Config().Resync)
		}
	}
	return pipeline.NewDeliver(receivers, periods, backlog)
}

// followRoot tells the followed object (--owned) from its tree; nil without --owned.
func (rc runConfig) followRoot() func(*event.Event) bool {
	if rc.follow == nil {
		return nil
	}
	return rc.follow.Tree.IsRoot
}

// coalesces reports whether a listener merges changes of one object (on-full=coalesce),
// whose attribution then needs every writer's fields.
func coalesces(listeners []*listener.Listener) bool {
	return slices.ContainsFunc(listeners, func(l *listener.Listener) bool { return l.Config().OnFull == listener.Coalesce })
}
