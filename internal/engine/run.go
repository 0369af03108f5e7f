package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/clusterstore"
	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/fold"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/metrics"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/quietio"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/transition"
	"github.com/kubeevents/kubeevents/internal/ui"
)

// Run runs one watch from start to end: it compiles what cfg holds (jq expressions,
// ignored paths), resolves what to watch against the clusters (plan.Resolve), opens the
// sinks, streams until a stop reason comes, and says how it ended. Bad usage is a
// *diag.UsageError; the other errors are the engine's own (TimeoutError, NotMetError,
// SinkFailedError, RolloutFailedError), the checkpoint's, or a failure to connect or
// watch. An interrupted run is no error.
func Run(ctx context.Context, sys System, cfg Config) (Result, error) {
	w := &session{sys: sys, cfg: cfg, headers: &headerPrinters{}}
	return w.run(ctx)
}

// session is one Run's set-up: what it compiled and resolved, and what it opened.
type session struct {
	sys System
	cfg Config

	differ  *diff.Differ
	until   *jq.Query
	queries map[string]*jq.Query // each sink's compiled expression, by sink name
	// transitions are the transitions the run names, compiled (nil: none); formats the
	// http sinks' formats, by sink name; folder folds rollouts for the sinks that fold
	// (nil: none does).
	transitions *transition.Set
	formats     map[string]*notify.Compiled
	folder      *fold.Folder
	plan        *plan.Plan
	stdout      io.Writer // what the sinks that write to stdout write through
	metrics     *metrics.Metrics
	elector     *leader.Elector // nil without --leader-elect
	headers     *headerPrinters
	files       []*sink.File // every file a sink opened
	// replay, when not nil, is where the events come from instead of a watch (RunReplay):
	// no plan is resolved, no cluster reached.
	replay *Replay
	// view is the full-screen view (--ui), nil without; diagnostics, when set, is where
	// diagnostics go instead of sys.ErrOut (through the view).
	view        *ui.View
	diagnostics io.Writer
}

func (w *session) run(ctx context.Context) (_ Result, runErr error) {
	if err := w.compile(); err != nil {
		return Result{}, err
	}
	if err := w.checkView(); err != nil {
		return Result{}, err
	}
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

// stream opens the sinks, builds the clients, streams and says how it ended.
func (w *session) stream(ctx context.Context) (Result, error) {
	listeners, err := w.buildListeners()
	if err != nil {
		return Result{}, err
	}
	rc, err := w.runConfig(ctx, listeners)
	if err != nil {
		return Result{}, err
	}
	stopWatchingOutput := w.watchOutput(ctx, &rc)
	defer stopWatchingOutput()
	if w.sys.Starting != nil {
		w.sys.Starting()
	}
	res, err := stream(ctx, rc)
	err = w.stopView(err)
	if !res.Started {
		return res, err // the error says why; interrupted while connecting, quietly
	}
	for _, l := range res.Late {
		w.warnf("sink %q did not finish writing within --grace %s; dropped the %s it still held", l.Name, w.cfg.Grace, diag.Events(l.Dropped))
	}
	w.summary(rc.Listeners, res)
	return res, err
}

// newElector makes the --leader-elect Elector (nil without it), told to the metrics.
func (w *session) newElector() (*leader.Elector, error) {
	if !w.cfg.LeaderElect.Enabled {
		return nil, nil
	}
	if w.plan.Several {
		return nil, diag.Usagef("--leader-elect takes one cluster, the one whose Lease it holds; drop --context's list or --all-contexts")
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

// startedErr reports whether err ends a run that streamed (its files are kept).
func startedErr(err error) bool {
	var sinkFailed *SinkFailedError
	var timeout *TimeoutError
	var notMet *NotMetError
	var rolloutFailed *RolloutFailedError
	var interrupted *InterruptedError
	return errors.As(err, &sinkFailed) || errors.As(err, &timeout) || errors.As(err, &notMet) ||
		errors.As(err, &rolloutFailed) || errors.As(err, &interrupted)
}

// request is what plan.Resolve resolves: the watch, plus what the sinks and the
// checkpoint need of each cluster.
func (w *session) request() plan.Request {
	req := w.cfg.Watch
	req.Resume = w.cfg.Resume != ""
	if ref, ok, err := clusterstore.ParseRef(w.cfg.Resume); ok && err == nil && ref.Kind == clusterstore.ConfigMaps {
		req.ConfigMapCheckpoint = w.cfg.Resume
	}
	for _, s := range w.cfg.Sinks {
		req.Columns = req.Columns || s.Format == string(render.FormatPretty) || s.Format == string(render.FormatWide)
	}
	return req
}

// compile compiles the jq expressions and the ignored paths once, so that their errors
// come before anything connects.
func (w *session) compile() error {
	if !w.cfg.NoDiff {
		var ignores []diff.IgnorePath
		for _, p := range w.cfg.IgnorePaths {
			ip, err := diff.ParseIgnorePath(p)
			if err != nil {
				return diag.Usagef("--ignore-path %q: %v", p, err)
			}
			ignores = append(ignores, ip)
		}
		w.differ = diff.NewDiffer(ignores)
		if w.cfg.NoFastPaths {
			w.differ = w.differ.WithoutFastPaths()
		}
	}
	if w.cfg.Until != "" {
		q, err := jq.Compile(w.cfg.Until)
		if err != nil {
			return diag.Usagef("--until: %v", err)
		}
		w.until = q
	}
	w.queries = map[string]*jq.Query{}
	for _, s := range w.cfg.Sinks {
		if s.Type != config.KindJQ && s.Expr == "" { // exec and http sinks may have one
			continue
		}
		q, err := jq.Compile(s.Expr)
		switch {
		case err != nil && s.Origin == "--jq":
			return diag.Usagef("--jq: %v", err)
		case err != nil:
			return diag.Usagef("sink %q: %v", s.Name, err)
		}
		w.queries[s.Name] = q
	}
	return w.compileSignal()
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

// buildListeners opens every sink. A sink that cannot be opened (a file in a directory
// that is not writable) ends the run before it starts, with one line and exit code 4:
// better than a run without the archive the user asked for.
func (w *session) buildListeners() (_ []*listener.Listener, err error) {
	defer func() {
		if err != nil {
			for _, f := range w.files {
				_ = f.Close()
			}
		}
	}()
	var ls, folding []*listener.Listener
	fence := w.deliveryFence()
	for _, s := range w.cfg.Sinks {
		out, err := w.newSink(s)
		if err != nil {
			var invalid *config.InvalidSinkError
			var notRegular *sink.NotRegularError
			switch {
			case errors.As(err, &invalid):
				return nil, diag.Usage(err)
			case errors.As(err, &notRegular):
				return nil, diag.Usagef("sink %q: %v; %s", s.Name, err, config.DropRotation(s))
			}
			return nil, &SinkOpenError{Name: s.Name, Err: err}
		}
		filter := w.filter(s)
		out = sink.WithFilter(out, filter)
		lc := listener.Config{Name: s.Name, Buffer: s.Buffer, OnFull: s.OnFull, Resync: s.Resync, Fence: fence}
		w.viewListener(s, &lc)
		if w.metrics != nil {
			lc.Delivered = w.metrics.Lag(s.Name)
		}
		l := listener.New(lc, out, w.warnf)
		ls = append(ls, l)
		if filter.Fold {
			folding = append(folding, l)
		}
	}
	for _, s := range w.cfg.InProcess {
		ls = append(ls, listener.New(listener.Config{Name: s.Name}, s.Build(w.differ), w.warnf))
	}
	w.folder = newFolder(folding)
	if w.metrics != nil {
		w.metrics.Sinks(ls)
	}
	return ls, nil
}

// deliveryFence is what every sink's listener asks before it writes (nil without
// --leader-elect): the Elector's Fence, said once each time it closes and opens again.
// A leader that was paused past its lease's duration (a GC pause, a frozen VM, SIGSTOP)
// holds back what it has not written yet, rather than deliver it while another replica
// may lead; the one that leads delivers it from the checkpoint.
func (w *session) deliveryFence() func() error {
	if w.elector == nil {
		return nil
	}
	var closed atomic.Bool
	return func() error {
		err := w.elector.Fence()
		switch {
		case err != nil && closed.CompareAndSwap(false, true):
			w.warnf("--leader-elect: %v; holding back what the sinks have not written (another replica may lead)", err)
		case err == nil && closed.CompareAndSwap(true, false):
			w.warnf("--leader-elect: the lease %s was renewed; delivering again", w.elector.Lease())
		}
		return err
	}
}

// SinkOpenError says a sink could not be opened at start-up (a file in a directory that
// cannot be written): the run ends before it starts, exit code 4, with this one line.
type SinkOpenError struct {
	Name string
	Err  error
}

func (e *SinkOpenError) Error() string { return fmt.Sprintf("sink %q: %v", e.Name, e.Err) }
func (e *SinkOpenError) Unwrap() error { return e.Err }

// newSink builds the sink's writer as its kind says, with what this run gives every sink.
func (w *session) newSink(s config.Sink) (listener.Sink, error) {
	out := w.sys.Out
	tty := w.sys.Terminals.IsTerminal(out)
	facts := w.sinkFacts()
	return config.Build(s, config.BuildEnv{
		Stdout: w.stdoutWriter(), Color: w.colorFor(out), Terminal: tty,
		TerminalWidth: w.sys.Terminals.Width(out), Timestamps: w.cfg.Timestamps,
		ShowKind:  facts.ShowKind,
		Namespace: facts.Namespace,
		Differ:    w.differ, ShowOld: w.cfg.ShowOld,
		Query: w.queries[s.Name], Format: w.formats[s.Name], Warn: w.warnf,
		Headers: tty, PrinterColumns: facts.Columns, TerminalPrinter: w.headers.add,
		Clusters: facts.Clusters, WatchEvents: w.cfg.OutputWatchEvents, View: w.viewSink(),
		Opened: func(f *sink.File) { w.files = append(w.files, f) },
	})
}

// sinkFacts is what the sinks are told of what they are given: whether several types
// come (the kind leads each name), the one namespace (left out of names), the custom
// resources' printer columns and the clusters' names when there are several.
type sinkFacts struct {
	ShowKind  bool
	Namespace string
	Columns   kubectl.PrinterColumns
	Clusters  []string
}

func (w *session) sinkFacts() sinkFacts {
	if w.replay != nil {
		return sinkFacts{ShowKind: w.replay.ShowKind, Namespace: w.replay.Namespace, Clusters: w.replay.Clusters}
	}
	return sinkFacts{ShowKind: len(w.plan.Resources()) > 1 || w.cfg.WithEvents || w.cfg.Watch.Owned,
		Namespace: w.plan.Namespace(), Columns: w.plan.Columns(), Clusters: w.plan.Names()}
}

// stdoutWriter is what the sinks that write to the standard output write through:
// quietio's writer (one for all of them) when it is a pipe, a socket or a device, unless
// the user turned that off.
func (w *session) stdoutWriter() io.Writer {
	if w.stdout == nil {
		w.stdout = w.sys.Out
		if !w.cfg.PlainStdout {
			w.stdout = quietio.Writer(w.sys.Out)
		}
	}
	return w.stdout
}

// colorFor decides colour for one output stream: never a global switch, since stdout
// and stderr may differ (stdout piped, stderr a terminal).
func (w *session) colorFor(out io.Writer) bool {
	switch w.cfg.Color {
	case "always":
		return true
	case "never":
		return false
	}
	if _, ok := w.sys.LookupEnv("NO_COLOR"); ok {
		return false
	}
	if term, _ := w.sys.LookupEnv("TERM"); term == "dumb" {
		return false
	}
	return w.sys.Terminals.IsTerminal(out)
}

// clientConfig is a cluster's config for the informers' clients: their connection is
// dialled by quietio, whose reads and writes do not wake the Go runtime's monitor thread
// on every event, unless the user turned that off or the config has a dialer of its own.
func (w *session) clientConfig(c *rest.Config) *rest.Config {
	if w.cfg.PlainIO || c.Dial != nil {
		return c
	}
	c = rest.CopyConfig(c)
	c.Dial = quietio.Dial
	return c
}

// runConfig builds every cluster's clients, the followed object's tree (--owned) and the
// checkpoint (--resume): the watch, ready to stream.
func (w *session) runConfig(ctx context.Context, listeners []*listener.Listener) (runConfig, error) {
	if w.replay != nil {
		return runConfig{Config: w.cfg, Differ: w.differ, UntilQuery: w.until, Transitions: w.transitions, Listeners: listeners, Warn: w.warn,
			Source: w.replay.Source, Started: w.replayStarted(listeners)}, nil
	}
	rc := runConfig{Config: w.cfg, Several: w.plan.Several, Differ: w.differ, UntilQuery: w.until,
		Transitions: w.transitions, Folder: w.folder,
		Listeners: listeners, Warn: w.warn, Started: w.started(listeners), Synced: w.synced}
	if w.metrics != nil {
		rc.Observer = w.metrics
	}
	for _, c := range w.plan.Clusters {
		clients, err := w.sys.NewClients(w.clientConfig(c.Config))
		if err != nil {
			if w.plan.Several {
				err = fmt.Errorf(plan.ClusterNotice+"%w", c.Name, err)
			}
			return rc, err
		}
		rc.Clusters = append(rc.Clusters, Cluster{Name: c.Name, Clients: clients, Resources: c.Resources,
			Namespaces: c.Namespaces, Missing: c.Missing})
	}
	if w.cfg.Watch.Owned {
		// Before the checkpoint: an object that is not there says it all.
		var err error
		if rc.Owned, err = w.ownedConfig(ctx, rc.Clusters[0].Clients); err != nil {
			return rc, err
		}
	}
	var err error
	rc.Resume, err = w.resume(ctx)
	return rc, err
}

// watchOutput ends the run once the standard output's reader is gone (`| head -1`),
// whatever the other sinks: a stream the user piped into a reader that quit is done. It
// says so unless every sink wrote only to stdout. It returns what stops its watching.
func (w *session) watchOutput(ctx context.Context, rc *runConfig) (stop func()) {
	var stdoutSinks []*listener.Listener
	for i, s := range w.cfg.Sinks {
		if s.WritesStdout() {
			stdoutSinks = append(stdoutSinks, rc.Listeners[i])
		}
	}
	if len(stdoutSinks) == 0 {
		return func() {}
	}
	gone := make(chan struct{})
	watchCtx, cancel := context.WithCancel(ctx)
	var once bool
	closeGone := func() {
		if once {
			return
		}
		once = true
		if len(stdoutSinks) < len(rc.Listeners) {
			w.warnf("the standard output was closed (its reader is gone); stopping, the other sinks write what they hold")
		}
		close(gone)
	}
	signals := make(chan struct{}, len(stdoutSinks)+1)
	watchReaderGone(watchCtx, w.sys.Out, func() { signals <- struct{}{} })
	for _, l := range stdoutSinks {
		go func() {
			select {
			case <-l.Done():
				if errors.Is(l.Err(), listener.ErrOutputClosed) {
					signals <- struct{}{}
				}
			case <-watchCtx.Done():
			}
		}()
	}
	go func() {
		select {
		case <-signals:
			closeGone()
		case <-watchCtx.Done():
		}
	}()
	rc.OutputGone = gone
	return cancel
}

// started is said once every informer's rights were checked.
func (w *session) started(listeners []*listener.Listener) func() {
	return func() {
		if w.view != nil {
			w.view.Start() // the start line goes to its bottom line
		}
		informers := w.informerCount()
		names := make([]string, len(listeners))
		for i, l := range listeners {
			names[i] = l.Name()
		}
		w.infof("watching %s — %d informer%s, %d sink%s (%s); Ctrl-C to stop",
			w.watched(), informers, diag.Plural(informers), len(listeners), diag.Plural(len(listeners)), strings.Join(names, ", "))
	}
}

// synced is called once every informer has its initial list.
func (w *session) synced() (undo func()) {
	if w.metrics != nil {
		w.metrics.Synced(true) // ready (/readyz)
	}
	if flag := w.initialListHidden(); flag != "" {
		// "watching" is said before the initial list; without this a script that waits
		// for it and then makes a change cannot know whether the change falls in the
		// list (not shown) or after it.
		w.infof("%s listed (not shown: %s); changes from here on are shown", w.watched(), flag)
	}
	if w.sys.Synced == nil {
		return func() {}
	}
	return w.sys.Synced()
}

// initialListHidden names the flag that keeps the initial list (ADDED events of the
// objects that exist at start-up) from every sink: --watch-only, or --event-types without
// ADDED; "" when the list is shown.
func (w *session) initialListHidden() string {
	if w.cfg.WatchOnly {
		return "--watch-only"
	}
	types := w.cfg.EventTypes
	if len(types) == 0 || slices.Contains(types, event.Added) {
		return ""
	}
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return "--event-types " + strings.Join(names, ",")
}

// informerCount is how many informers the watch takes, in every cluster.
func (w *session) informerCount() int {
	n := 0
	for _, c := range w.plan.Clusters {
		perNamespace := max(len(c.Namespaces), 1)
		for _, r := range c.Resources {
			if r.Namespaced {
				n += perNamespace
			} else {
				n++
			}
		}
		n += len(c.Children)
		if w.cfg.WithEvents {
			n += perNamespace
		}
		if w.folder != nil {
			n += len(fold.Workloads) * perNamespace
		}
	}
	return n
}

// warnf prints one diagnostic line on stderr; safe from any goroutine.
func (w *session) warnf(format string, args ...any) {
	out := w.sys.ErrOut
	if w.diagnostics != nil {
		out = w.diagnostics
	}
	fmt.Fprintf(out, "kubeevents: "+format+"\n", args...)
}

// warn is warnf for the stream: a re-sync notice also has the terminal's header lines
// printed again (the notice scrolled the last one away).
func (w *session) warn(format string, args ...any) {
	w.warnf(format, args...)
	w.headers.warned(format)
}

// infof prints a diagnostic that only a person at a terminal (or -v) wants.
func (w *session) infof(format string, args ...any) {
	if w.summaryShown() {
		w.warnf(format, args...)
	}
}

// debugf prints a diagnostic only with -v=2 and up.
func (w *session) debugf(format string, args ...any) {
	if w.sys.Verbosity >= 2 {
		w.warnf(format, args...)
	}
}

func (w *session) summaryShown() bool {
	return w.sys.Verbosity >= 1 || w.sys.Terminals.IsTerminal(w.sys.ErrOut)
}
