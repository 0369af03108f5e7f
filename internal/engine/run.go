package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/fold"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/metrics"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/resume"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/viewsink"
	"github.com/kubeevents/kubeevents/internal/ui"
	"github.com/kubeevents/kubeevents/internal/watch"
)

// Run runs one watch from start to end: it resolves what to watch against the clusters
// (plan.Resolve), the followed object (--owned) and the checkpoint (--resume), all before
// any sink opens; opens the sinks, streams until a stop reason comes, and says how it
// ended. Bad usage found against the clusters is a *diag.UsageError; the other errors
// are a wait's (conditions.TimeoutError, NotMetError, InterruptedError, FailedError),
// the sinks' (sinkkind.FailedError, OpenError), the checkpoint's, or a failure to
// connect or watch. An interrupted run is no error.
func Run(ctx context.Context, sys System, cfg Config) (Result, error) {
	w := &session{sys: sys, cfg: &cfg, headers: &sinkkind.HeaderPrinters{}}
	return w.run(ctx)
}

// session is one Run's set-up: what it resolved, and what it opened.
type session struct {
	sys     System
	cfg     *Config
	plan    *plan.Plan
	replay  *Replay // where the events come from instead of a watch (RunReplay)
	metrics *metrics.Metrics
	elector *leader.Elector // nil without --leader-elect
	headers *sinkkind.HeaderPrinters
	files   []sinkkind.File // every file a sink opened
	// view is the full-screen view (--ui), nil without; diagnostics, when set, is where
	// diagnostics go instead of sys.ErrOut (through the view).
	view        *ui.View
	diagnostics io.Writer
}

func (w *session) run(ctx context.Context) (_ Result, runErr error) {
	// The view's q and Ctrl-C stop the run as Ctrl-C (SIGINT) stops a stream.
	ctx, quit := context.WithCancel(ctx)
	defer quit()
	defer func() {
		// A run that never got going (bad credentials, missing rights) leaves no empty
		// output files behind; a run that streamed keeps its files, even empty ones.
		if runErr != nil && !startedErr(runErr) {
			for _, f := range w.files {
				f.RemoveIfUnused()
			}
		}
	}()
	if w.replay != nil {
		return w.stream(ctx)
	}
	var err error
	w.plan, err = plan.Resolve(ctx, w.sys.Kubeconfig, w.request(), plan.Notices{Warn: w.warnf, Info: w.infof, Debug: w.debugf})
	if ctx.Err() != nil {
		return Result{}, nil // interrupted while connecting: the request was given up, not failed
	}
	if err != nil {
		return Result{}, err
	}
	if h := w.cfg.Health; h != nil {
		for _, c := range w.plan.Clusters {
			h.StatusWritten = append(h.StatusWritten, c.StatusWritten...)
		}
	}
	w.keepSecretsOutOfLogs()
	if err := w.newView(quit); err != nil {
		return Result{}, err
	}
	stopMetrics, err := w.startMetrics()
	if err != nil {
		return Result{}, err
	}
	defer stopMetrics()
	if w.elector, err = w.newElector(); err != nil {
		return Result{}, err
	}
	// With --leader-elect a standby builds nothing until it leads.
	var res Result
	err = leader.Around(ctx, w.elector, func(ctx context.Context) error {
		var err error
		res, err = w.stream(ctx)
		return err
	})
	return res, err
}

// stream resolves what needs the clusters, opens the sinks, streams and says how it
// ended.
func (w *session) stream(ctx context.Context) (Result, error) {
	rc, err := w.resolve(ctx)
	if err != nil {
		return Result{}, err
	}
	if err := w.openSinks(&rc); err != nil {
		return Result{}, err
	}
	stopWatchingOutput := w.watchOutput(ctx, &rc)
	defer stopWatchingOutput()
	if w.sys.Starting != nil {
		w.sys.Starting(w.cfg.Speed.Runtime)
	}
	res, err := stream(ctx, rc)
	if !res.Started {
		return res, err // the error says why; interrupted while connecting, quietly
	}
	for _, l := range res.Late {
		w.warnf("sink %q did not finish writing within --grace %s; dropped the %s it still held", l.Name, w.cfg.End.Grace, diag.Events(l.Dropped))
	}
	w.summary(rc.listeners, res)
	return res, err
}

// resolve is the one place where what needs the clusters is resolved, before any sink
// opens: every cluster's clients, the followed object (--owned) and the checkpoint
// (--resume). Its usage errors are the run's.
func (w *session) resolve(ctx context.Context) (rc runConfig, err error) {
	rc = runConfig{cfg: w.cfg, hooks: hooks{warn: w.warn}}
	if t := w.cfg.Events.Transitions; t != nil {
		t.WarnTo(w.warnf) // through the view, when it has the screen
	}
	if w.replay != nil {
		rc.source, rc.hooks.started = w.replay.Source, w.replayStarted
		return rc, nil
	}
	rc.several, rc.hooks.started, rc.hooks.synced = w.plan.Several, w.started, w.synced
	if w.metrics != nil {
		rc.observer = w.metrics
		rc.parts = append(rc.parts, w.metrics.Part())
	}
	defer func() { // rc is the named result: the view is the last part whichever return
		if w.view != nil {
			rc.parts = append(rc.parts, w.view.Part()) // last: it takes the screen
		}
	}()
	for _, c := range w.plan.Clusters {
		clients, err := w.sys.NewClients(c.WatchConfig(), w.cfg.Speed.Recovery)
		if err != nil {
			if w.plan.Several {
				err = fmt.Errorf(plan.ClusterNotice+"%w", c.Name, err)
			}
			return rc, err
		}
		rc.clusters = append(rc.clusters, watch.Cluster{Name: c.Name, Clients: clients, Resources: c.Resources,
			Namespaces: c.Namespaces, Missing: c.Missing})
	}
	if w.cfg.Watch.Owned {
		// Before the checkpoint: an object that is not there says it all.
		c := w.plan.Clusters[0]
		f, err := owners.NewFollow(ctx, owners.FollowOptions{Root: c.Resources[0], Name: w.cfg.Watch.Names[0],
			Namespace: c.Namespace(), Children: c.Children, MetadataChildren: c.ChildrenFound, UntilRollout: w.cfg.Watch.UntilRollout, Given: w.cfg.Watch.Types[0],
			Dynamic: rc.clusters[0].Clients.Dynamic, Metadata: rc.clusters[0].Clients.Metadata, Warn: w.warnf})
		var notFound *owners.NotFoundError
		switch {
		case errors.As(err, &notFound):
			return rc, err
		case err != nil:
			return rc, informer.APIError(err, "get", c.Resources[0])
		}
		rc.follow = f
	}
	if w.cfg.Resume == "" {
		return rc, nil
	}
	store, err := w.resumeStore()
	if err != nil {
		return rc, err
	}
	var clusters []resume.Cluster
	for _, c := range w.plan.Clusters {
		clusters = append(clusters, resume.Cluster{Name: c.Name, Watch: c.Checkpoint})
	}
	rc.resume, err = resume.Open(ctx, resume.Options{Store: store, Reset: w.cfg.ResumeReset, Clusters: clusters,
		Sinks: len(w.cfg.Output.Sinks) + len(w.cfg.Output.InProcess), Warn: w.warnf})
	if err != nil {
		return rc, err
	}
	rc.parts = append(rc.parts, rc.resume)
	return rc, nil
}

// resumeStore is where --resume keeps the checkpoint (package resume), for objects in
// the cluster the first cluster's, in the pod's namespace unless the reference names
// one, fenced by --leader-elect's lease.
func (w *session) resumeStore() (checkpoint.Store, error) {
	cfg := afterStopConfig(w.plan.Clusters[0].Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf" // the shards travel as bytes, not base64
	// A write sends the shards one after another, as fast as the API server answers:
	// client-go's default of 5 requests a second would take 25 s for the first write of
	// 128 shards (10,000 pods), past the store's time limit.
	cfg.QPS, cfg.Burst = 100, 200
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	writer, fence := leader.Identity(), (func() error)(nil)
	if w.elector != nil {
		writer, fence = w.elector.Identity(), w.elector.Fence
	}
	namespace := leader.DefaultNamespace(w.sys.Kubeconfig.Default.ToRawKubeConfigLoader().RawConfig)
	return resume.NewStore(w.cfg.Resume, client, namespace, writer, fence, w.warnf)
}

// newElector makes the --leader-elect Elector (nil without it), told to the metrics.
func (w *session) newElector() (*leader.Elector, error) {
	if !w.cfg.LeaderElect.Enabled {
		return nil, nil
	}
	client, err := kubernetes.NewForConfig(afterStopConfig(w.plan.Clusters[0].Config))
	if err != nil {
		return nil, err
	}
	cfg := w.cfg.LeaderElect.Config(leader.DefaultNamespace(w.sys.Kubeconfig.Default.ToRawKubeConfigLoader().RawConfig))
	e, err := leader.New(client, cfg, w.warnf)
	if err != nil {
		return nil, diag.Usage(err)
	}
	if w.metrics != nil {
		w.metrics.SetElection(e)
	}
	return e, nil
}

// afterStopConfig is config for the requests that must still be made once Ctrl-C or
// SIGTERM came: the last checkpoint write and the lease's release, after the sinks are
// drained. Without the command's interruption of every request (its requests carry their
// own contexts and time limits).
func afterStopConfig(config *rest.Config) *rest.Config {
	c := rest.CopyConfig(config)
	c.WrapTransport = nil
	return c
}

// request is what plan.Resolve resolves: the watch, plus what the sinks and the
// checkpoint need of each cluster.
func (w *session) request() plan.Request {
	req := w.cfg.Watch
	req.Resume = w.cfg.Resume != ""
	for _, s := range w.cfg.Output.Sinks {
		req.Columns = req.Columns || s.Reads().Columns
	}
	return req
}

// keepSecretsOutOfLogs has the command cap client-go's logging when any watched type
// (followed children too) is Secrets and their values are not to be shown: from -v=8
// client-go logs response bodies, which hold them in clear.
func (w *session) keepSecretsOutOfLogs() {
	if w.cfg.Watch.ShowSecrets || w.sys.SecretsWatched == nil {
		return
	}
	for _, c := range w.plan.Clusters {
		if slices.ContainsFunc(c.Resources, informer.IsSecret) || slices.ContainsFunc(c.Children, informer.IsSecret) {
			if from := w.sys.SecretsWatched(); from > 0 {
				w.warnf("-v=%d would log Secret values (in API response bodies); logging as with -v=7 (--show-secrets allows more)", from)
			}
			return
		}
	}
}

// startMetrics serves the metrics when MetricsAddr is set, before any sink is built, so
// that an address already in use ends the run before it starts. The function it returns
// stops serving.
func (w *session) startMetrics() (stop func(), err error) {
	if w.cfg.MetricsAddr == "" {
		return func() {}, nil
	}
	w.metrics = metrics.New(w.plan.Clusters[0].Config.Host)
	srv, err := w.metrics.Serve(w.cfg.MetricsAddr)
	if err != nil {
		w.metrics = nil
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	w.infof("serving metrics on http://%s/metrics", srv.Addr())
	return srv.Close, nil
}

// openSinks opens every sink, each with its listener, and the pipeline's last step. A
// sink that cannot be opened (a file in a directory that is not writable) ends the run
// before it starts, with one line and exit code 4: better than a run without the
// archive the user asked for.
func (w *session) openSinks(rc *runConfig) (err error) {
	defer func() {
		if err != nil {
			for _, f := range w.files {
				_ = f.Close()
			}
		}
	}()
	var folding []int
	env := w.sinkEnv()
	var fence func() error
	if w.elector != nil {
		fence = w.elector.DeliveryFence(w.warnf)
	}
	for _, s := range w.cfg.Output.Sinks {
		out, err := sinkkind.Build(s, env)
		if err != nil {
			var invalid *sinkkind.InvalidError
			if errors.As(err, &invalid) {
				return diag.Usage(err)
			}
			return &sinkkind.OpenError{Name: s.Name, Err: err}
		}
		filter := w.filter(s)
		out = sink.WithFilter(out, filter)
		lc := listener.Config{Name: s.Name, Buffer: s.Buffer, OnFull: s.OnFull, Resync: s.Resync, Fence: fence}
		if w.metrics != nil {
			lc.Delivered = w.metrics.Lag(s.Name)
		}
		if filter.Fold {
			folding = append(folding, len(rc.listeners))
		}
		if s.Kind == viewsink.Kind {
			// The view shows every object: a resumed start hands it those unchanged since
			// the checkpoint too (informer.Options.Unchanged).
			rc.unchanged = append(rc.unchanged, len(rc.listeners))
		}
		rc.listeners = append(rc.listeners, listener.New(lc, out, w.warnf))
	}
	for _, s := range w.cfg.Output.InProcess {
		rc.listeners = append(rc.listeners, listener.New(listener.Config{Name: s.Name}, s.Build(w.cfg.Output.Differ), w.warnf))
	}
	backlog := pipeline.KeepBacklog
	if w.replay != nil {
		backlog = pipeline.WaitForRoom
	}
	rc.deliver = newDeliver(rc.listeners, w.cfg.resyncs(), backlog)
	if len(folding) > 0 && w.replay == nil {
		rc.folder = fold.New(fold.Options{Deliver: func(ev *event.Event) { rc.deliver.To(ev, folding) }})
	}
	if w.metrics != nil {
		w.metrics.Sinks(rc.listeners)
	}
	return nil
}

// sinkEnv is what this run gives every sink it builds.
func (w *session) sinkEnv() sinkkind.Env {
	out := w.sys.Out
	return sinkkind.Env{Stdout: out, Warn: w.warnf, Watched: w.sinkFacts(),
		Terminal: sinkkind.Terminal{Is: w.sys.Terminals.IsTerminal(out), Color: w.colorFor(out),
			Width: w.sys.Terminals.Width(out), Printed: w.headers.Add},
		Opened: func(f sinkkind.File) { w.files = append(w.files, f) },
		Differ: w.cfg.Output.Differ, ShowOld: w.cfg.Output.ShowOld}
}

// sinkFacts is what the sinks are told of what they are given: whether several types
// come (the kind leads each name), the one namespace (left out of names), the custom
// resources' printer columns and the clusters' names when there are several.
func (w *session) sinkFacts() sinkkind.Watched {
	if w.replay != nil {
		return sinkkind.Watched{ShowKind: w.replay.ShowKind, Namespace: w.replay.Namespace, Clusters: w.replay.Clusters}
	}
	return sinkkind.Watched{ShowKind: len(w.plan.Resources()) > 1 || w.cfg.Events.WithEvents || w.cfg.Watch.Owned,
		Namespace: w.plan.Namespace(), Columns: w.plan.Columns(), Clusters: w.plan.Names()}
}
