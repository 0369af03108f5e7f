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

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/fold"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
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
	if r.conditions != nil && (reason == StopInterrupted || reason == StopInputEnd) {
		if _, met := r.conditions.until.MetAt(); !met && reason == StopInterrupted {
			err = &InterruptedError{Err: fmt.Errorf("interrupted before %s was met", r.conditions.awaited())}
		} else if !met {
			err = &NotMetError{Err: fmt.Errorf("the recording ended before %s was met", r.conditions.awaited())}
		}
	}
	res := r.shutdown(reason)
	res.Started = true
	if err != nil {
		return res, err
	}
	if r.checkpointErr != nil {
		return res, r.checkpointErr
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
	cfg        runConfig
	seq        atomic.Uint64
	unchanged  atomic.Uint64
	fatal      chan error
	limit      chan struct{} // closed once MaxEvents were made
	stopping   chan struct{} // closed once the run shuts down
	limitOnce  sync.Once
	conditions *exitConditions      // nil without Until and UntilDeleted
	informers  []*informer.Informer // every cluster's
	// clusters are the clusters being watched;
	// allClusters those asked for, with those left out at start; live counts those not
	// left out since.
	clusters    []*clusterRun
	allClusters []*clusterRun
	live        atomic.Int32
	// stopNamespaceWatch ends watchNamespace (nil when it does not run).
	stopNamespaceWatch func()

	// The checkpoint (Config.Resume): nil without one.
	checkpoint     *checkpoint.Writer // its Sections are set once the clusters are known
	stopCheckpoint chan struct{}      // ends the periodic writes
	checkpointDone chan struct{}      // closed once they have ended
	checkpointErr  error              // the last write's, at shutdown
	// seeded is, per informer, the resourceVersion of every object the checkpoint put
	// into its cache by key: what the first list is compared with, to say what changed.
	// Dropped once said.
	seeded map[*informer.Informer]map[string]string

	// The Source's run (runConfig.Source): sourceDone has its end, stopSource stops it
	// and waits for it to return; emitSkip is the Skip of its events.
	sourceDone chan error
	stopSource func()
	emitSkip   func(*event.Event) bool

	// synced is what Config.Synced returned, undone when the run ends (and not called
	// once it has ended).
	synced struct {
		sync.Mutex
		ended bool
		undo  func()
	}
}

func newRun(cfg runConfig) *run {
	r := &run{cfg: cfg, fatal: make(chan error, 1), limit: make(chan struct{}), stopping: make(chan struct{})}
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

func (r *run) limitReached() { r.limitOnce.Do(func() { close(r.limit) }) }

// start builds the informers of every cluster, checks their rights, and starts
// delivery. An error, or an interruption while the rights are checked, returns before
// any goroutine runs and anything is printed (started is false). With several clusters,
// one whose rights are missing is said in one line and left out; only when none is left
// is it an error.
func (r *run) start(ctx context.Context) (started bool, _ error) {
	cfg := r.cfg
	if cfg.Source != nil {
		r.startSource(ctx)
		return true, nil
	}
	r.clusters = r.clusterRuns()
	r.allClusters = r.clusters
	if cfg.Resume != nil {
		r.checkpoint = &checkpoint.Writer{Store: cfg.Resume.Store, Path: cfg.Resume.Path, Warn: cfg.Warn}
	}
	for _, c := range r.clusters {
		var made func(*event.Event)
		var redactionKey []byte
		if cfg.Resume != nil {
			c.resume = cfg.Resume.Clusters[c.Name]
			// A section keeps its context; one of a run of one cluster takes the name of
			// the cluster that resumes from it.
			section := c.Name
			if c.resume.Saved != nil {
				section = cmp.Or(c.resume.Saved.Context, c.Name)
				redactionKey = c.resume.Saved.RedactionKey
			}
			c.checkpoint = &checkpoint.Section{Context: section, Watch: c.resume.Watch,
				Tracker: checkpoint.NewTracker(len(cfg.Listeners))}
			made = c.checkpoint.Tracker.Made
		}
		if cfg.Folder != nil {
			made = chainMade(made, cfg.Folder.Made)
		}
		if err := r.buildInformers(c, made, redactionKey); err != nil {
			return false, err
		}
	}
	if r.conditions != nil {
		for _, c := range r.clusters {
			r.conditions.informers = append(r.conditions.informers, c.watched...)
		}
	}

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
	r.informers = nil
	for _, c := range watched {
		r.informers = append(r.informers, c.informers...)
	}
	if ctx.Err() != nil {
		return false, nil // interrupted while connecting: nothing was printed, nothing is
	}
	if r.checkpoint != nil {
		r.checkpoint.Sections = r.checkpointSections()
		// Written once before anything is printed: a file that cannot be written is
		// found now, and a resumed checkpoint is a whole one from the start.
		if err := r.checkpoint.Write(); err != nil {
			return false, err
		}
		r.stopCheckpoint, r.checkpointDone = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(r.checkpointDone)
			r.checkpoint.Run(r.stopCheckpoint)
		}()
	}
	if cfg.Started != nil {
		cfg.Started()
	}

	for _, l := range cfg.Listeners {
		go l.Run()
	}
	for _, inf := range r.informers {
		inf.Start()
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
// owned object's children's, and the core Events' (WithEvents), every one numbering its
// events from the run's one sequence and handing them to every listener.
func (r *run) buildInformers(c *clusterRun, made func(*event.Event), redactionKey []byte) error {
	cfg := r.cfg
	var until *event.Until
	if r.conditions != nil {
		until = r.conditions.until
	}
	skip := r.skip()
	// With several clusters each counts its events (for the summary); the core Events'
	// informer is not the checkpoint's.
	var counted func(*event.Event)
	if cfg.Several {
		counted = func(*event.Event) { c.made.Add(1) }
		if checkpointed := made; checkpointed != nil {
			made = func(ev *event.Event) { counted(ev); checkpointed(ev) }
		} else {
			made = counted
		}
	}
	fatal := r.reportFatal
	if cfg.Several {
		fatal = c.fatal(r)
	}
	var rootOptions informer.Options
	for _, ri := range r.resourceInformers(c) {
		opts := informer.Options{
			Cluster:       c.Name,
			Namespace:     ri.namespace,
			LabelSelector: cfg.Watch.LabelSelector,
			FieldSelector: ri.fieldSelector,
			Names:         cfg.Watch.Names,
			Seq:           &r.seq,
			WatchOnly:     cfg.WatchOnly,
			MetadataOnly:  cfg.Watch.MetadataOnly,
			ShowSecrets:   cfg.Watch.ShowSecrets,
			RedactionKey:  redactionKey,
			NoFastPaths:   cfg.NoFastPaths,
			NoAttribution: cfg.NoAttribution,
			Coalesced:     coalesces(cfg.Listeners),
			MaxEvents:     cfg.MaxEvents,
			Limit:         r.limitReached,
			Skip:          skip,
			Until:         until,
			Warn:          c.warn,
			Fatal:         fatal,
			Observer:      cfg.Observer,
			Made:          made,
		}
		if cfg.Owned != nil {
			cfg.Owned.ownedRoot(&opts)
			rootOptions = opts
		}
		inf, err := informer.New(ri.res, c.Clients, opts, registrations(cfg.Listeners, cfg.resyncs()))
		if err != nil {
			return err
		}
		if err := r.resumeFrom(c, inf); err != nil {
			return err
		}
		c.informers = append(c.informers, inf)
	}
	c.watched = c.informers[:len(c.informers):len(c.informers)]
	if cfg.Owned != nil {
		for _, child := range cfg.Owned.Children {
			inf, err := informer.New(child.Resource, c.Clients, cfg.Owned.childOptions(rootOptions, child), registrations(cfg.Listeners, cfg.resyncs()))
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
	accept, annotate := involvesWatched(c.watchedAndOwned()), func(*event.Event) {}
	if cfg.Owned != nil {
		accept, annotate = cfg.Owned.Tree.AcceptEvent, cfg.Owned.Tree.Annotate
	}
	// The core Events of the namespaces watched, one informer each, as the watched types'.
	eventNamespaces := c.Namespaces
	if len(eventNamespaces) == 0 {
		eventNamespaces = []string{""}
	}
	since := r.pastEventsSince(c)
	for _, ns := range eventNamespaces {
		opts := informer.Options{
			Cluster:     c.Name,
			Namespace:   ns,
			Seq:         &r.seq,
			WatchOnly:   true, // only what happens from now on, like the changes they explain
			NoFastPaths: cfg.NoFastPaths,
			MaxEvents:   cfg.MaxEvents,
			Limit:       r.limitReached,
			Skip:        skip,
			Until:       until,
			Related:     true,
			Accept:      accept,
			Annotate:    annotate,
			Warn:        c.warn,
			Fatal:       fatal,
			Observer:    cfg.Observer,
			Made:        counted,
		}
		if !since.IsZero() {
			r.withPastEvents(c, &opts, since)
		}
		inf, err := informer.New(coreEvents, c.Clients, opts, registrations(cfg.Listeners, false))
		if err != nil {
			return err
		}
		c.events = append(c.events, inf)
		c.informers = append(c.informers, inf)
	}
	return nil
}

// resumeFrom puts the objects the checkpoint holds for inf's resource into its cache, so
// that its first list emits only what changed since (informer.Seed), and tells the
// tracker they were delivered.
func (r *run) resumeFrom(c *clusterRun, inf *informer.Informer) error {
	if c.checkpoint == nil {
		return nil
	}
	if key := inf.RedactionKey(); key != nil {
		c.checkpoint.RedactionKey = key
	}
	saved := c.resume.Saved
	if saved == nil {
		return nil
	}
	name := checkpoint.ResourceName(inf.Resource.GVR)
	objects, managers, err := inf.Seed(saved.Objects[name])
	if err != nil {
		what := fmt.Sprintf("an object of %s cannot be read: %v", inf.Resource, err)
		if c.Name != "" {
			what = fmt.Sprintf("cluster %s: %s", c.Name, what)
		}
		return &checkpoint.CorruptError{Path: saved.Path, What: what}
	}
	c.checkpoint.Tracker.Seed(name, objects, managers)
	versions := make(map[string]string, len(objects))
	for _, obj := range objects {
		if m, err := meta.Accessor(obj); err == nil {
			versions[cache.MetaObjectToName(m).String()] = m.GetResourceVersion()
		}
	}
	if r.seeded == nil {
		r.seeded = map[*informer.Informer]map[string]string{}
	}
	r.seeded[inf] = versions
	return nil
}

// sayResumed tells, per resource, what the first list found changed since the
// checkpoint, as a re-list after an outage does ("re-synced ..."), and lets the tracker
// share the cache's unchanged objects.
func (r *run) sayResumed(c *clusterRun) {
	saved := c.resume.Saved
	for _, inf := range c.watched {
		store := inf.Store()
		c.checkpoint.Tracker.Adopt(checkpoint.ResourceName(inf.Resource.GVR), func(key string) (runtime.Object, bool) {
			obj, ok, _ := store.GetByKey(key)
			ro, isObject := obj.(runtime.Object)
			return ro, ok && isObject
		})
		seeded := r.seeded[inf]
		var changed, created int
		keys := store.ListKeys()
		for _, key := range keys {
			rv, ok := seeded[key]
			switch {
			case !ok:
				created++
			case rv != storedVersion(store, key):
				changed++
			}
		}
		deleted := len(seeded) - (len(keys) - created)
		c.warn("resumed %s from %s (written %s): %s now, %d changed, %d created, %d deleted since",
			inf.Resource, saved.Path, saved.Written.Local().Format(time.RFC3339), diag.Count(len(keys)), changed, created, deleted)
	}
}

// checkpointSections are the checkpoint file's sections: every watched cluster's
// tracker; for a cluster left out at start, its section as it was read (it was down this
// time, its checkpoint stays); and the sections of clusters not asked for, as they were.
func (r *run) checkpointSections() []*checkpoint.Section {
	var sections []*checkpoint.Section
	for _, c := range r.allClusters {
		switch {
		case c.left == nil:
			sections = append(sections, c.checkpoint)
		case c.resume.Saved != nil:
			sections = append(sections, &checkpoint.Section{Context: c.checkpoint.Context, Kept: c.resume.Saved})
		}
	}
	for _, kept := range r.cfg.Resume.Kept {
		sections = append(sections, &checkpoint.Section{Context: kept.Context, Kept: kept})
	}
	return sections
}

func storedVersion(store cache.Store, key string) string {
	obj, ok, _ := store.GetByKey(key)
	if !ok {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// afterSync waits for every informer's initial list (of the clusters not left out
// meanwhile), then lets the checkpoint's tracker
// share the cache's unchanged objects, calls Config.Synced and tells the exit conditions.
func (r *run) afterSync(ctx context.Context) {
	for _, c := range r.clusters {
		if !c.waitForSync(ctx) {
			return
		}
	}
	for _, c := range r.clusters {
		if c.checkpoint != nil && c.resume.Saved != nil && !c.isGone() {
			r.sayResumed(c)
		}
	}
	r.seeded = nil
	if r.cfg.Synced != nil {
		r.synced.Lock()
		if !r.synced.ended {
			r.synced.undo = r.cfg.Synced()
		}
		r.synced.Unlock()
	}
	if r.conditions != nil && r.cfg.Watch.UntilDeleted {
		r.conditions.synced()
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

// changesOnly is the informers' Skip for ChangesOnly (nil without it): it leaves out
// MODIFIED events whose diff is empty after the ignored paths before they are numbered,
// and counts them.
func (r *run) changesOnly() func(*event.Event) bool {
	if !r.cfg.ChangesOnly {
		return nil
	}
	return func(ev *event.Event) bool {
		if ev.Type != event.Modified || !r.cfg.Differ.Unchanged(ev) {
			return false
		}
		r.unchanged.Add(1)
		return true
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
	var met <-chan struct{}
	if r.conditions != nil {
		met = r.conditions.met
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
	case err := <-r.sourceDone:
		return r.sourceEnded(ctx, err)
	case <-met:
		return StopCondition, nil
	case <-r.limit:
		if r.conditions == nil {
			return StopLimit, nil
		}
		// The informer asks the condition about an event before it counts it against
		// MaxEvents: if the last event met it, it is met by now.
		if _, met := r.conditions.until.MetAt(); met {
			return StopCondition, nil
		}
		return StopLimit, &NotMetError{Err: fmt.Errorf("--max-events %d reached before %s was met", cfg.MaxEvents, r.conditions.awaited())}
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

// shutdown stops the informers and lets the sinks write what they hold, all within
// Grace, and counts what every sink got.
func (r *run) shutdown(reason StopReason) Result {
	cfg := r.cfg
	close(r.stopping)
	// The event that met a condition must reach every sink before the informers stop.
	switch reason {
	case StopCondition:
		last, _ := r.conditions.until.MetAt()
		awaitSeen(cfg.Listeners, last, cfg.Grace)
	case StopLimit:
		awaitSeen(cfg.Listeners, cfg.MaxEvents, cfg.Grace)
	}
	deadline := time.Now().Add(cfg.Grace)
	if r.stopNamespaceWatch != nil {
		r.stopNamespaceWatch()
	}
	stopInformers(r.informers, r.stopSource, cfg.Listeners, deadline)
	made := r.seq.Load()
	if cfg.MaxEvents > 0 {
		made = min(made, cfg.MaxEvents) // numbers beyond it were drawn, not used
	}
	for _, l := range cfg.Listeners {
		l.Missed(made)
	}
	dropped := make(map[*listener.Listener]uint64, len(cfg.Listeners))
	for _, l := range cfg.Listeners {
		dropped[l] = l.Stats().Dropped
	}
	// At least a moment, for sinks that are only finishing: a deadline spent waiting for
	// a blocked handler (stopInformers) is no reason to cut them short.
	var late []Late
	for _, l := range listener.Drain(cfg.Listeners, max(time.Until(deadline), time.Second)) {
		late = append(late, Late{Name: l.Name(), Dropped: l.Stats().Dropped - dropped[l]})
	}
	if r.checkpoint != nil {
		close(r.stopCheckpoint) // gives up a periodic write in progress
		<-r.checkpointDone
		ctx, cancel := context.WithTimeout(context.Background(), FinalCheckpointTimeout)
		r.checkpointErr = r.checkpoint.WriteContext(ctx)
		cancel()
	}
	return Result{Reason: reason, Made: made, Unchanged: r.unchanged.Load(), Late: late, Clusters: r.clusterResults(r.allClusters)}
}

// FinalCheckpointTimeout bounds the checkpoint's last write, once the sinks are drained:
// the whole stop (--grace for the sinks, this, and the lease's release, within its renew
// deadline) fits in the chart's termination grace period of 30 s, whatever the state of
// the checkpoint. A write not done by then leaves the checkpoint before it, whole.
const FinalCheckpointTimeout = 10 * time.Second

// stopInformers stops the informers, so that no event is made after those the sinks are
// about to drain. An informer stops only once its handlers return, and a handler that
// feeds a full sink under on-full=block (or coalesce) waits for room: if the informers
// have not stopped by the deadline, the receivers are closed, which makes such waiting
// handlers give up (their events count as dropped), and the informers can stop.
func stopInformers(informers []*informer.Informer, stopSource func(), receivers []*listener.Listener, deadline time.Time) {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for _, inf := range informers {
			inf.Stop()
		}
		if stopSource != nil {
			stopSource()
		}
	}()
	timer := time.NewTimer(max(time.Until(deadline), 0))
	defer timer.Stop()
	select {
	case <-stopped:
		return
	case <-timer.C:
	}
	for _, l := range receivers {
		l.Close()
	}
	<-stopped
}

// awaitSeen waits until every listener has been handed the event numbered seq (client-go
// hands each change to each handler on its own goroutine), for at most grace.
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

// registrations registers every listener with an informer, each with its own resync
// period when resync is set (Events interleaved by WithEvents are never re-sent).
func registrations(listeners []*listener.Listener, resync bool) []informer.Registration {
	regs := make([]informer.Registration, 0, len(listeners))
	for _, l := range listeners {
		reg := informer.Registration{Receiver: l}
		if resync {
			reg.Resync = l.Config().Resync
		}
		regs = append(regs, reg)
	}
	return regs
}

// coalesces reports whether a listener merges changes of one object (on-full=coalesce),
// whose attribution then needs every writer's fields.
func coalesces(listeners []*listener.Listener) bool {
	return slices.ContainsFunc(listeners, func(l *listener.Listener) bool { return l.Config().OnFull == listener.Coalesce })
}
