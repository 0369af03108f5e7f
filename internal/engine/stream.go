package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubeevents/kubeevents/internal/conditions"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/fold"
	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/related"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/resume"
)

// runConfig is one run resolved and opened: the Config, the clusters with their clients,
// the listeners (one per sink) and the parts the run has (nil when it has not).
type runConfig struct {
	cfg *Config
	// clusters are watched with informers of their own, every one numbering its events
	// from the run's one sequence and handing them to the same listeners. With several
	// (several), each one's diagnostics start with plan.ClusterNotice and each event
	// names its cluster.
	clusters []Cluster
	several  bool
	// source, for a replay, hands over the events instead of informers.
	source    Source
	listeners []*listener.Listener // one per sink, not yet running
	deliver   *pipeline.Deliver    // hands the events to the listeners: the last step
	// The parts of the run: --owned, --resume, --fold-rollouts, the metrics.
	follow   *owners.Follow
	health   *health.Step
	resume   *resume.Resume
	folder   *fold.Folder
	observer informer.Observer
	hooks    hooks
}

// hooks are what the run tells its caller, and when it is told to end early.
type hooks struct {
	// started is called once every source's rights were checked, just before the first
	// event can be delivered; synced once every informer has its initial list, and what
	// it returns when the run ends.
	started func(listeners []*listener.Listener)
	synced  func() (undo func())
	warn    func(format string, args ...any) // one diagnostic line
	// outputGone, when not nil, ends the run once it is closed: every sink writes to a
	// stdout that nobody reads any more.
	outputGone <-chan struct{}
}

// stream streams the run rc describes until a stop reason comes, then shuts it down.
// The error is the informers' fatal error, a condition not met (TimeoutError,
// NotMetError) or failed sinks (SinkFailedError); an interrupted run is no error.
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
			err = &InterruptedError{Err: r.conditions.NotMet("interrupted")}
		case StopInputEnd:
			err = &NotMetError{Err: r.conditions.NotMet("the recording ended")}
		}
	}
	res, stopErr := r.shutdown(reason)
	res.Started = true
	if err = cmp.Or(err, stopErr); err != nil {
		return res, err
	}
	if what, why, failed := r.conditions.Failed(); failed && reason == StopCondition {
		err = &RolloutFailedError{What: what, Message: why}
	}
	var failed []string
	for _, l := range rc.listeners {
		if err := l.Err(); err != nil && !errors.Is(err, listener.ErrOutputClosed) {
			failed = append(failed, l.Name())
		}
	}
	if len(failed) > 0 {
		return res, &SinkFailedError{Names: failed}
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
	// parts are told when the run starts, is synced and stops (pipeline.Part).
	parts    []pipeline.Part
	fatal    chan error
	stopping chan struct{} // closed once the run shuts down
	sources  *sources
	// clusters are the clusters being watched; allClusters those asked for, with those
	// left out at start; live counts those not left out since.
	clusters    []*clusterRun
	allClusters []*clusterRun
	live        atomic.Int32
	// synced is what hooks.synced returned, undone when the run ends (and not called
	// once it has ended).
	synced struct {
		sync.Mutex
		ended bool
		undo  func()
	}
}

func newRun(rc runConfig) *run {
	r := &run{runConfig: rc, fatal: make(chan error, 1), stopping: make(chan struct{}), seq: pipeline.NewSequence(), sources: &sources{}}
	if r.deliver == nil {
		r.deliver = newDeliver(rc.listeners, rc.cfg.resyncs())
	}
	if r.hooks.warn == nil {
		r.hooks.warn = func(string, ...any) {}
	}
	cfg := rc.cfg
	r.health = newHealthStep(cfg, r.hooks.warn)
	r.conditions = conditions.New(conditions.Config{Until: cfg.End.Until, Differ: cfg.Output.Differ, ShowOld: cfg.Output.ShowOld,
		UntilDeleted: cfg.Watch.UntilDeleted, Names: cfg.Watch.Names, Ready: rc.readyWait()})
	if rc.resume != nil {
		r.parts = append(r.parts, rc.resume)
	}
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
// before any goroutine runs and anything is printed (started is false). With several
// clusters, one whose rights are missing is said in one line and left out; only when
// none is left is it an error.
func (r *run) start(ctx context.Context) (started bool, _ error) {
	if r.source != nil {
		r.pipe = r.pipeline()
		r.startListeners()
		r.sources.ended = make(chan error, 1)
		src := r.source
		if r.health != nil {
			src = r.health.Replayed(src) // its STALLED events, by the recording's times
		}
		r.sources.run(ctx, src, r.pipe.Take, func(err error) { r.sources.ended <- err })
		return true, nil
	}
	r.clusters = r.clusterRuns()
	r.allClusters = r.clusters
	for _, c := range r.clusters {
		if err := r.buildInformers(c); err != nil {
			return false, err
		}
		if r.conditions != nil {
			for _, inf := range c.watched {
				r.conditions.Watch(inf)
			}
		}
	}
	r.pipe = r.pipeline()
	watched, err := r.checkAccess(ctx)
	if watched == nil || ctx.Err() != nil {
		return false, err // an error, or interrupted: nothing was printed, nothing is
	}
	r.clusters = watched
	r.live.Store(int32(len(watched)))
	for _, p := range r.parts {
		if err := p.Start(ctx); err != nil {
			return false, err
		}
	}
	r.startListeners()
	for _, c := range watched {
		var cctx context.Context
		cctx, c.stop = context.WithCancel(ctx)
		for _, inf := range c.informers {
			take := r.pipe.Take
			if slices.Contains(c.folding, inf) {
				take = r.folder.Observe // the Folder's own informers: no part of the stream
			}
			r.sources.run(cctx, inf, take, c.fatalOf(r))
		}
		if c.Clients.Dynamic != nil && slices.ContainsFunc(c.Resources, func(res resource.Resource) bool { return res.Namespaced }) {
			for _, ns := range c.Namespaces {
				go informer.WatchNamespace(cctx, c.Clients.Dynamic, ns, slices.Contains(c.Missing, ns), c.warn)
			}
		}
	}
	if r.health != nil {
		r.sources.run(ctx, r.health, r.pipe.Take, func(error) {}) // its STALLED events
	}
	go r.afterSync(ctx)
	return true, nil
}

// checkAccess checks every cluster's rights before anything is printed: an informer's
// own first list says that its rights are missing, but only after the other informers
// printed what they listed, and a missing right to watch only after it printed its own
// list. It returns the clusters to watch (nil: none, with the error; or interrupted).
func (r *run) checkAccess(ctx context.Context) ([]*clusterRun, error) {
	var watched []*clusterRun
	var firstErr error
	for _, c := range r.clusters {
		err := c.checkAccess(ctx)
		if ctx.Err() != nil {
			return nil, nil
		}
		if err == nil {
			watched = append(watched, c)
			continue
		}
		if !r.several {
			return nil, err // one cluster: its error, as it is
		}
		firstErr = cmp.Or(firstErr, err)
		c.left = err
		if r.resume != nil {
			r.resume.Leave(c.Name)
		}
	}
	if len(watched) == 0 {
		noCluster := &plan.NoClusterError{Err: firstErr}
		for _, c := range r.clusters {
			noCluster.Reasons = append(noCluster.Reasons, fmt.Sprintf(plan.ClusterNotice+"%v", c.Name, c.left))
		}
		return nil, noCluster
	}
	for _, c := range r.clusters {
		if c.left != nil {
			r.hooks.warn("cluster %s: %v; watching the other clusters without it", c.Name, c.left)
		}
	}
	return watched, nil
}

func (r *run) startListeners() {
	if r.hooks.started != nil {
		r.hooks.started(r.listeners)
	}
	for _, l := range r.listeners {
		go l.Run()
	}
}

// buildInformers builds c's informers: one per watched type (and namespace), the
// owned object's children's, the workloads' of --fold-rollouts and the core Events'
// (WithEvents). Each hands its changes to the run's one pipeline.
func (r *run) buildInformers(c *clusterRun) error {
	cfg := r.cfg
	fatal := c.fatalOf(r)
	base := informer.Options{Cluster: c.Name, LabelSelector: cfg.Watch.LabelSelector, Names: cfg.Watch.Names,
		WatchOnly: cfg.Events.WatchOnly, MetadataOnly: cfg.Watch.MetadataOnly, ShowSecrets: cfg.Watch.ShowSecrets,
		NoFastPaths: cfg.Speed.NoFastPaths, NoWireDecoders: cfg.Speed.NoWireDecoders, NoAttribution: cfg.Events.NoAttribution,
		Coalesced: coalesces(r.listeners), Warn: c.warn, Fatal: fatal, Observer: r.observer}
	if r.resume != nil {
		base.RedactionKey = r.resume.RedactionKey(c.Name)
	}
	add := func(res resource.Resource, opts informer.Options) (*informer.Informer, error) {
		inf, err := informer.New(res, c.Clients, opts)
		if err == nil {
			c.informers = append(c.informers, inf)
		}
		return inf, err
	}
	for _, ri := range r.resourceInformers(c) {
		opts := base
		opts.Namespace, opts.FieldSelector, opts.Resync = ri.namespace, ri.fieldSelector, r.deliver.NewResync()
		inf, err := add(ri.res, opts)
		if err != nil {
			return err
		}
		if base.RedactionKey == nil {
			base.RedactionKey = inf.RedactionKey() // one key for all its Secret informers
		}
		if r.resume != nil {
			if err := r.resume.Seed(c.Name, inf, c.warn, c.isGone); err != nil {
				return err
			}
		}
	}
	c.watched = slices.Clip(c.informers)
	if r.follow != nil {
		for _, child := range r.follow.Children {
			opts := base
			opts.Names, opts.LabelSelector, opts.Child, opts.Resync = nil, child.LabelSelector, true, r.deliver.NewResync()
			opts.MetadataOnly = opts.MetadataOnly || child.MetadataOnly
			inf, err := add(child.Resource, opts)
			if err != nil {
				return err
			}
			if child.MetadataOnly {
				c.found = append(c.found, inf) // every namespaced type: one may be left out
			}
		}
	}
	if r.folder != nil {
		for _, res := range fold.Workloads {
			for _, ns := range c.namespaces() {
				inf, err := add(res, informer.Options{Cluster: c.Name, Namespace: ns, NoFastPaths: cfg.Speed.NoFastPaths, NoWireDecoders: cfg.Speed.NoWireDecoders, Warn: c.warn, Fatal: fatal})
				if err != nil {
					return err
				}
				c.folding = append(c.folding, inf)
			}
		}
	}
	if !cfg.Events.WithEvents {
		return nil
	}
	// The core Events of the namespaces watched, one informer each, as the watched
	// types'. Only what happens from now on, like the changes they explain; past ones
	// (--since, --resume) are listed, and kept by the pipeline's related step.
	for _, ns := range c.namespaces() {
		inf, err := add(related.Resource, informer.Options{Cluster: c.Name, Namespace: ns, Related: true, NoFastPaths: cfg.Speed.NoFastPaths, NoWireDecoders: cfg.Speed.NoWireDecoders,
			WatchOnly: r.pastEventsSince(c).IsZero(), Warn: c.warn, Fatal: fatal, Observer: r.observer})
		if err != nil {
			return err
		}
		c.events = append(c.events, inf)
	}
	return nil
}

// pastEventsSince is from when the core Events about the watched objects that exist at
// start-up are shown, marked past (--with-events): those since the checkpoint was
// written, else those of the last --since; zero: none.
func (r *run) pastEventsSince(c *clusterRun) time.Time {
	var written time.Time
	if r.resume != nil {
		written = r.resume.Written(c.Name)
	}
	return related.Since(written, r.cfg.Events.Since)
}

// afterSync waits for every informer's initial list (of the clusters not left out
// meanwhile), then tells the parts, the caller and the exit conditions.
func (r *run) afterSync(ctx context.Context) {
	for _, c := range r.clusters {
		if !c.waitForSync(ctx) {
			return
		}
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
	case err := <-r.sources.ended:
		return r.sourceEnded(ctx, err)
	case <-r.seq.Ended():
		return r.ended()
	case <-allStopped:
		return StopOutputGone, nil
	case <-r.hooks.outputGone:
		return StopOutputGone, nil
	case <-timeout:
		if r.conditions != nil {
			return StopTimeout, &TimeoutError{Err: r.conditions.NotMet(fmt.Sprintf("timed out after %s", r.cfg.End.Timeout))}
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
	return StopLimit, &NotMetError{Err: r.conditions.NotMet(fmt.Sprintf("--max-events %d reached", r.cfg.End.MaxEvents))}
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
		awaitSeen(r.listeners, last, grace)
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
	return Result{Reason: reason, Made: made, Unchanged: r.pipe.LeftOut(event.LeftOutUnchanged), Late: late,
		Clusters: r.clusterResults(r.allClusters)}, err
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
		r.sources.stop()
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

// awaitSeen waits until every listener has been handed the event numbered seq (each
// source hands its events on from its own goroutine), for at most grace.
func awaitSeen(listeners []*listener.Listener, seq uint64, grace time.Duration) {
	if seq == 0 {
		return
	}
	deadline := time.Now().Add(grace)
	for _, l := range listeners {
		for !l.Seen(seq) && !isDone(l) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func isDone(l *listener.Listener) bool {
	select {
	case <-l.Done():
		return true
	default:
		return false
	}
}

// resyncs reports whether the listeners' resync periods apply: --event-types without
// SYNC leaves out the SYNC events they would make.
func (cfg *Config) resyncs() bool {
	return len(cfg.Events.Types) == 0 || slices.Contains(cfg.Events.Types, event.Sync)
}

// newDeliver is the pipeline's last step for listeners, with their resync periods when
// resync is set.
func newDeliver(listeners []*listener.Listener, resync bool) *pipeline.Deliver {
	receivers := make([]pipeline.Receiver, len(listeners))
	var periods []time.Duration
	for i, l := range listeners {
		receivers[i] = l
		if resync {
			periods = append(periods, l.Config().Resync)
		}
	}
	return pipeline.NewDeliver(receivers, periods)
}

// sources runs the run's sources, each on a goroutine of its own, and stops them.
type sources struct {
	cancels []context.CancelFunc
	running sync.WaitGroup
	// ended has the end of a source that ends by itself (a recording): nil once its
	// input is read to the end, else why it could not go on.
	ended chan error
}

// run starts src, handing its events to take; ended is told how it ended, unless it was
// stopped (an informer ends only so; a recording also at its input's end: nil).
func (s *sources) run(ctx context.Context, src pipeline.Source, take func(*event.Event) bool, ended func(error)) {
	ctx, cancel := context.WithCancel(ctx)
	s.cancels = append(s.cancels, cancel)
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		if err := src.Run(ctx, take); ctx.Err() == nil {
			ended(err)
		}
	}()
}

// stop stops every source and waits until none hands on events any more.
func (s *sources) stop() {
	for _, cancel := range s.cancels {
		cancel()
	}
	s.running.Wait()
}

// coalesces reports whether a listener merges changes of one object (on-full=coalesce),
// whose attribution then needs every writer's fields.
func coalesces(listeners []*listener.Listener) bool {
	return slices.ContainsFunc(listeners, func(l *listener.Listener) bool { return l.Config().OnFull == listener.Coalesce })
}
