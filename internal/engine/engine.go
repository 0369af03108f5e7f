// Package engine runs one watch. From a Config it builds one informer per watched type
// (and one for core Events with --with-events), registers every sink's listener with
// each, checks the rights they need, streams until a stop reason comes, shuts down within
// the grace period, and says what became of the events. cmd turns flags into a Config,
// builds the sinks and prints what Run returns; everything in between is here.
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/fold"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// runConfig is one watch resolved and built: the plain Config, the clusters with their
// clients, the listeners (one per sink) and what was compiled from the Config.
type runConfig struct {
	Config
	// Clusters are watched with informers of their own, every one numbering its events
	// from the run's one sequence and handing them to the same Listeners. With several
	// (Several), each one's diagnostics start with plan.ClusterNotice and each event
	// names its cluster.
	Clusters []Cluster
	Several  bool
	// Owned, when not nil, follows the one named object of the one type and everything
	// it owns (watch TYPE/NAME --owned).
	Owned  *Owned
	Differ *diff.Differ // nil with NoDiff
	// UntilQuery is Config.Until compiled.
	UntilQuery *jq.Query
	// Transitions are the transitions the run names, compiled (nil: none); Folder, when
	// not nil, folds rollouts for the listeners that fold.
	Transitions *transition.Set
	Folder      *fold.Folder

	Listeners []*listener.Listener // one per sink, not yet running
	// Deliver hands the events to the Listeners: the pipeline's last step.
	Deliver *pipeline.Deliver
	// OutputGone, when not nil, ends the run once it is closed: every sink writes to a
	// stdout that nobody reads any more.
	OutputGone <-chan struct{}
	// Started, when not nil, is called once every informer's rights were checked, just
	// before the first event can be delivered.
	Started func()
	// Synced, when not nil, is called once every informer has its initial list, and what
	// it returns when the run ends.
	Synced func() (undo func())
	Warn   func(format string, args ...any) // one diagnostic line
	// Observer, when not nil, is told of every event made and every watch outage (the
	// metrics endpoint).
	Observer informer.Observer

	// Resume, when not nil, keeps a checkpoint of what the sinks were delivered
	// (--resume) and, if it holds one from an earlier run, starts from it.
	Resume *Resume

	// Source, when not nil, hands over the events instead of informers (RunReplay):
	// Clusters, Owned and Resume are then unused.
	Source Source
}

// Resume is --resume: the checkpoint file and, per cluster, the watch its section
// belongs to and what it held at start.
type Resume struct {
	Path string
	// Store keeps the checkpoint (package clusterstore's, in the cluster); nil: the file
	// at Path.
	Store checkpoint.Store
	// Clusters has every watched cluster's part, by its name (Cluster.Name; "" for the
	// one cluster of a plain watch).
	Clusters map[string]ClusterResume
	// Kept are the file's sections of clusters not asked for this time: written back as
	// they were read, so that watching fewer clusters once loses no checkpoint.
	Kept []*checkpoint.Saved
}

// ClusterResume is one cluster's section of the checkpoint: the watch it belongs to and
// what it held at start (nil: none yet, the cluster starts afresh). The caller has
// checked that Saved belongs to Watch.
type ClusterResume struct {
	Watch checkpoint.Watch
	Saved *checkpoint.Saved
}

// StopReason says why a run ended.
type StopReason int

const (
	StopInterrupted StopReason = iota // the context ended: Ctrl-C, SIGTERM
	StopCondition                     // Until or UntilDeleted was met
	StopLimit                         // MaxEvents were made
	StopTimeout                       // Timeout expired
	StopOutputGone                    // every sink stopped, or nobody reads stdout any more
	StopFatal                         // an error the informers cannot retry past
	StopInputEnd                      // the Source's input ended (a recording read to its end)
)

// Result is what became of a run's events.
type Result struct {
	// Started says that the stream started: the rights were checked and delivery began.
	// A run that did not start (an error, or interrupted while connecting) printed
	// nothing, and its other fields are zero.
	Started   bool
	Reason    StopReason
	Made      uint64 // events made, each handed to every listener (at most MaxEvents)
	Unchanged uint64 // updates that ChangesOnly left out before they were numbered
	// Late are the sinks that did not finish writing within Grace; what they still held
	// counts as dropped in their stats.
	Late []Late
	// Clusters says what each of several clusters gave; nil with one.
	Clusters []ClusterResult
}

// Late is a sink that did not finish writing within Grace, and how many events it still
// held then (dropped).
type Late struct {
	Name    string
	Dropped uint64
}

// TimeoutError says Timeout expired before the awaited condition was met.
type TimeoutError struct{ Err error }

func (e *TimeoutError) Error() string { return e.Err.Error() }

// InterruptedError says the run was interrupted (Ctrl-C, SIGTERM) while it waited for a
// condition that was not met: a script's `kubeevents ... --until-rollout && promote` must
// not go on.
type InterruptedError struct{ Err error }

func (e *InterruptedError) Error() string { return e.Err.Error() }

// NotMetError says MaxEvents ended the run before the awaited condition was met: like a
// timeout, a cap on a wait that did not end as awaited.
type NotMetError struct{ Err error }

func (e *NotMetError) Error() string { return e.Err.Error() }

// SinkFailedError says one or more sinks stopped on an error while the rest went on. Each
// failure was reported when it happened.
type SinkFailedError struct{ Names []string }

func (e *SinkFailedError) Error() string {
	quoted := make([]string, len(e.Names))
	for i, n := range e.Names {
		quoted[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("sink %s failed (see above)", strings.Join(quoted, ", "))
}

// stream streams the watch cfg describes until a stop reason comes, then shuts it down.
// The error is the informers' fatal error, a condition not met (TimeoutError,
// NotMetError) or failed sinks (SinkFailedError); an interrupted run is no error.
func stream(ctx context.Context, cfg runConfig) (Result, error) {
	r := newRun(cfg)
	if started, err := r.start(ctx); !started {
		return Result{Reason: StopInterrupted}, err
	}
	defer r.undoSynced()
	reason, err := r.wait(ctx)
	if r.conditions != nil && (reason == StopInterrupted || reason == StopInputEnd) && !r.conditionMet() {
		if reason == StopInterrupted {
			err = &InterruptedError{Err: fmt.Errorf("interrupted before %s was met", r.conditions.awaited())}
		} else {
			err = &NotMetError{Err: fmt.Errorf("the recording ended before %s was met", r.conditions.awaited())}
		}
	}
	res := r.shutdown(reason)
	res.Started = true
	if err != nil {
		return res, err
	}
	if r.checkpoint != nil && r.checkpoint.err != nil {
		return res, r.checkpoint.err
	}
	if failed := r.conditions.rolloutFailed(); failed != nil && reason == StopCondition {
		err = &RolloutFailedError{Message: failed.Message}
	}
	var failed []string
	for _, l := range cfg.Listeners {
		if err := l.Err(); err != nil && !errors.Is(err, listener.ErrOutputClosed) {
			failed = append(failed, l.Name())
		}
	}
	if len(failed) > 0 {
		return res, &SinkFailedError{Names: failed}
	}
	return res, err
}

// run is one Run's state between its start, its wait and its shutdown.
type run struct {
	cfg runConfig
	// The pipeline every event takes (pipeline.go), its numbering and its last step.
	pipe    *pipeline.Pipeline
	seq     *pipeline.Sequence
	deliver *pipeline.Deliver
	// conditions decides --until, --until-deleted and --until-rollout (nil: none).
	conditions *exitConditions
	fatal      chan error
	stopping   chan struct{} // closed once the run shuts down
	sources    *sources      // what runs the sources, and stops them
	// clusters are the clusters being watched;
	// allClusters those asked for, with those left out at start; live counts those not
	// left out since.
	clusters    []*clusterRun
	allClusters []*clusterRun
	live        atomic.Int32
	// stopNamespaceWatch ends watchNamespace (nil when it does not run).
	stopNamespaceWatch func()
	// The checkpoint (Config.Resume): nil without one.
	checkpoint *checkpointRun
	// synced is what Config.Synced returned, undone when the run ends (and not called
	// once it has ended).
	synced struct {
		sync.Mutex
		ended bool
		undo  func()
	}
}

func newRun(cfg runConfig) *run {
	r := &run{cfg: cfg, fatal: make(chan error, 1), stopping: make(chan struct{}), seq: pipeline.NewSequence(), sources: &sources{}}
	r.deliver = cfg.Deliver
	if r.deliver == nil {
		r.deliver = newDeliver(cfg.Listeners, cfg.resyncs())
	}
	if cfg.UntilQuery != nil || cfg.Watch.UntilDeleted || cfg.Owned != nil && cfg.Owned.UntilRollout {
		r.conditions = newConditions(cfg)
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
	cfg := r.cfg
	if cfg.Source != nil {
		r.pipe = r.pipeline()
		r.startReplay(ctx)
		return true, nil
	}
	r.clusters = r.clusterRuns()
	r.allClusters = r.clusters
	if cfg.Resume != nil {
		r.checkpoint = newCheckpointRun(cfg)
	}
	for _, c := range r.clusters {
		if r.checkpoint != nil {
			r.checkpoint.section(c)
		}
		if err := r.buildInformers(c); err != nil {
			return false, err
		}
	}
	if r.conditions != nil {
		for _, c := range r.clusters {
			r.conditions.informers = append(r.conditions.informers, c.watched...)
		}
	}
	r.pipe = r.pipeline()

	// An informer's own first list says that its rights are missing, but only after the
	// other informers printed what they listed, and a missing right to watch only after
	// it printed its own list: check them all before anything is printed.
	var watched []*clusterRun
	var firstErr error
	for _, c := range r.clusters {
		err := c.checkAccess(ctx)
		if ctx.Err() != nil {
			return false, nil // interrupted
		}
		if err == nil {
			watched = append(watched, c)
			continue
		}
		if !r.cfg.Several {
			return false, err // one cluster: its error, as it is
		}
		firstErr = cmp.Or(firstErr, err)
		c.left = err
	}
	if len(watched) == 0 {
		noCluster := &plan.NoClusterError{Err: firstErr}
		for _, c := range r.clusters {
			noCluster.Reasons = append(noCluster.Reasons, fmt.Sprintf(plan.ClusterNotice+"%v", c.Name, c.left))
		}
		return false, noCluster
	}
	for _, c := range r.clusters {
		if c.left != nil {
			cfg.Warn("cluster %s: %v; watching the other clusters without it", c.Name, c.left)
		}
	}
	r.clusters = watched
	r.live.Store(int32(len(watched)))
	if ctx.Err() != nil {
		return false, nil // interrupted while connecting: nothing was printed, nothing is
	}
	if r.checkpoint != nil {
		if err := r.checkpoint.start(r.allClusters); err != nil {
			return false, err
		}
	}
	if cfg.Started != nil {
		cfg.Started()
	}

	for _, l := range cfg.Listeners {
		go l.Run()
	}
	for _, c := range watched {
		var cctx context.Context
		cctx, c.stop = context.WithCancel(ctx)
		for _, inf := range c.informers {
			take := r.pipe.Take
			if slices.Contains(c.folding, inf) {
				take = r.cfg.Folder.Observe // the Folder's own informers: no part of the stream
			}
			r.sources.run(cctx, inf, take, c.fatalOf(r))
		}
	}
	go r.afterSync(ctx)
	nsCtx, stop := context.WithCancel(ctx)
	r.stopNamespaceWatch = stop
	for _, c := range watched {
		if c.Clients.Dynamic == nil || !namespaced(c.Resources) {
			continue
		}
		for _, ns := range c.Namespaces {
			go watchNamespace(nsCtx, c.Clients.Dynamic, ns, slices.Contains(c.Missing, ns), c.warn)
		}
	}
	return true, nil
}

// buildInformers builds c's informers: one per watched type (and namespace), the
// owned object's children's, the workloads' of --fold-rollouts and the core Events'
// (WithEvents). Each hands its changes to the run's one pipeline.
func (r *run) buildInformers(c *clusterRun) error {
	cfg := r.cfg
	fatal := c.fatalOf(r)
	base := informer.Options{
		Cluster:       c.Name,
		LabelSelector: cfg.Watch.LabelSelector,
		Names:         cfg.Watch.Names,
		WatchOnly:     cfg.WatchOnly,
		MetadataOnly:  cfg.Watch.MetadataOnly,
		ShowSecrets:   cfg.Watch.ShowSecrets,
		NoFastPaths:   cfg.NoFastPaths,
		NoAttribution: cfg.NoAttribution,
		Warn:          c.warn,
		Fatal:         fatal,
		Observer:      cfg.Observer,
	}
	if r.checkpoint != nil {
		base.RedactionKey = c.checkpoint.RedactionKey
	}
	for _, ri := range r.resourceInformers(c) {
		opts := base
		opts.Namespace, opts.FieldSelector = ri.namespace, ri.fieldSelector
		opts.Resync = r.deliver.NewResync()
		inf, err := informer.New(ri.res, c.Clients, opts)
		if err != nil {
			return err
		}
		if base.RedactionKey == nil {
			base.RedactionKey = inf.RedactionKey() // one key for all its Secret informers
		}
		if r.checkpoint != nil {
			if err := r.checkpoint.seed(c, inf); err != nil {
				return err
			}
		}
		c.informers = append(c.informers, inf)
	}
	c.watched = c.informers[:len(c.informers):len(c.informers)]
	if cfg.Owned != nil {
		for _, child := range cfg.Owned.Children {
			opts := base
			opts.Names, opts.LabelSelector, opts.Child = nil, child.LabelSelector, true
			opts.Resync = r.deliver.NewResync()
			inf, err := informer.New(child.Resource, c.Clients, opts)
			if err != nil {
				return err
			}
			c.informers = append(c.informers, inf)
		}
	}
	if err := r.buildFoldInformers(c, fatal); err != nil {
		return err
	}
	if !cfg.WithEvents {
		return nil
	}
	// The core Events of the namespaces watched, one informer each, as the watched types'.
	eventNamespaces := c.Namespaces
	if len(eventNamespaces) == 0 {
		eventNamespaces = []string{""}
	}
	for _, ns := range eventNamespaces {
		opts := informer.Options{Cluster: c.Name, Namespace: ns, Related: true, NoFastPaths: cfg.NoFastPaths,
			// Only what happens from now on, like the changes they explain; past ones
			// (--since, --resume) are listed and kept by the pipeline's related step.
			WatchOnly: r.pastEventsSince(c).IsZero(),
			Warn:      c.warn, Fatal: fatal, Observer: cfg.Observer}
		inf, err := informer.New(coreEvents, c.Clients, opts)
		if err != nil {
			return err
		}
		c.events = append(c.events, inf)
		c.informers = append(c.informers, inf)
	}
	return nil
}

// afterSync waits for every informer's initial list (of the clusters not left out
// meanwhile), then lets the checkpoint's tracker share the cache's unchanged objects,
// calls Config.Synced and tells the exit conditions.
func (r *run) afterSync(ctx context.Context) {
	for _, c := range r.clusters {
		if !c.waitForSync(ctx) {
			return
		}
	}
	if r.checkpoint != nil {
		r.checkpoint.synced(r.clusters)
	}
	if r.cfg.Synced != nil {
		r.synced.Lock()
		if !r.synced.ended {
			r.synced.undo = r.cfg.Synced()
		}
		r.synced.Unlock()
	}
	if r.conditions != nil && r.cfg.Watch.UntilDeleted {
		r.pipe.Locked(func() {
			if r.conditions.synced() {
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
	cfg := r.cfg
	var timeout <-chan time.Time
	if cfg.Timeout > 0 {
		t := time.NewTimer(cfg.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	allStopped := make(chan struct{})
	go func() {
		for _, l := range cfg.Listeners {
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
	case <-cfg.OutputGone:
		return StopOutputGone, nil
	case <-timeout:
		if r.conditions != nil {
			return StopTimeout, &TimeoutError{Err: fmt.Errorf("timed out after %s before %s was met", cfg.Timeout, r.conditions.awaited())}
		}
		return StopTimeout, nil
	}
}

// ended says why the stream ended by itself: a condition met, or --max-events made
// (before an awaited condition was met: NotMetError).
func (r *run) ended() (StopReason, error) {
	cause, _ := r.seq.EndedAt()
	switch {
	case cause == pipeline.Condition:
		return StopCondition, nil
	case r.conditions == nil:
		return StopLimit, nil
	}
	return StopLimit, &NotMetError{Err: fmt.Errorf("--max-events %d reached before %s was met", r.cfg.MaxEvents, r.conditions.awaited())}
}

// conditionMet reports whether the run's exit condition was met.
func (r *run) conditionMet() bool {
	cause, _ := r.seq.EndedAt()
	return cause == pipeline.Condition
}

// shutdown stops the sources and lets the sinks write what they hold, all within Grace,
// and counts what every sink got.
func (r *run) shutdown(reason StopReason) Result {
	cfg := r.cfg
	close(r.stopping)
	// The event that ended the stream must reach every sink before the sources stop.
	if _, last := r.seq.EndedAt(); reason == StopCondition || reason == StopLimit {
		awaitSeen(cfg.Listeners, last, cfg.Grace)
	}
	deadline := time.Now().Add(cfg.Grace)
	if r.stopNamespaceWatch != nil {
		r.stopNamespaceWatch()
	}
	r.stopSources(deadline)
	made := r.seq.Numbered()
	for _, l := range cfg.Listeners {
		l.Missed(made)
	}
	dropped := make(map[*listener.Listener]uint64, len(cfg.Listeners))
	for _, l := range cfg.Listeners {
		dropped[l] = l.Stats().Dropped
	}
	// At least a moment, for sinks that are only finishing: a deadline spent waiting for
	// a blocked lane (stopSources) is no reason to cut them short.
	var late []Late
	for _, l := range listener.Drain(cfg.Listeners, max(time.Until(deadline), time.Second)) {
		late = append(late, Late{Name: l.Name(), Dropped: l.Stats().Dropped - dropped[l]})
	}
	if r.checkpoint != nil {
		r.checkpoint.stop()
	}
	return Result{Reason: reason, Made: made, Unchanged: r.pipe.LeftOut(event.LeftOutUnchanged), Late: late,
		Clusters: r.clusterResults(r.allClusters)}
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
	for _, l := range r.cfg.Listeners {
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
func (cfg runConfig) resyncs() bool {
	return len(cfg.EventTypes) == 0 || slices.Contains(cfg.EventTypes, event.Sync)
}

// sources runs the run's sources, each on a goroutine of its own, and stops them.
type sources struct {
	cancels []context.CancelFunc
	running sync.WaitGroup
	// ended has the end of a source that ends by itself (a recording): nil once its
	// input is read to the end, else why it could not go on.
	ended chan error
}

// run starts src, handing its events to take; fatal is told of its error.
func (s *sources) run(ctx context.Context, src pipeline.Source, take func(*event.Event) bool, fatal func(error)) {
	ctx, cancel := context.WithCancel(ctx)
	s.cancels = append(s.cancels, cancel)
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		if err := src.Run(ctx, take); err != nil && ctx.Err() == nil {
			fatal(err)
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
