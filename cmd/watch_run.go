package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/clusterstore"
	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/sink"
)

// Run serves the metrics and health, and streams: at once, or with --leader-elect
// while this replica holds the lease (a standby builds nothing until then).
func (o *WatchOptions) Run(ctx context.Context) error {
	o.capVerbosityForSecrets()
	stopMetrics, err := o.startMetrics()
	if err != nil {
		return err
	}
	defer stopMetrics()
	if err := o.newElector(); err != nil {
		return err
	}
	return leader.Around(ctx, o.elector, o.stream)
}

// newElector makes the --leader-elect Elector (none without it), told to the metrics.
func (o *WatchOptions) newElector() error {
	if !o.LeaderElect.Enabled {
		return nil
	}
	if len(o.clusters) > 0 {
		return usageErrorf("--leader-elect takes one cluster, the one whose Lease it holds; drop --context's list or --all-contexts")
	}
	client, err := kubernetes.NewForConfig(afterStopConfig(o.restConfig))
	if err != nil {
		return err
	}
	cfg := o.LeaderElect.Config(leader.DefaultNamespace(o.clientGetter.ToRawKubeConfigLoader().RawConfig))
	if o.elector, err = leader.New(client, cfg, o.warnf); err != nil {
		return &UsageError{Err: err}
	}
	if o.metrics != nil {
		o.metrics.SetElection(o.elector)
	}
	return nil
}

// stream builds the sinks, hands the watch to the engine, and says how it ended.
func (o *WatchOptions) stream(ctx context.Context) (runErr error) {
	var files []*sink.File
	defer func() {
		// A run that never got going (bad credentials, missing rights, a bad expression in
		// a later sink) leaves no empty output files behind; a real run keeps its files,
		// even empty ones.
		var sinkFailed *engine.SinkFailedError
		var timeout *engine.TimeoutError
		var notMet *engine.NotMetError
		var rolloutFailed *engine.RolloutFailedError
		if runErr != nil && !errors.As(runErr, &sinkFailed) && !errors.As(runErr, &timeout) && !errors.As(runErr, &notMet) && !errors.As(runErr, &rolloutFailed) {
			for _, f := range files {
				f.RemoveIfUnused()
			}
		}
	}()
	if len(o.clusters) == 0 {
		o.printerCols = o.printerColumns(ctx)
	}
	for _, c := range o.clusters { // each cluster's CRDs: one may serve a type the others lack
		for gk, cols := range c.options.printerColumns(ctx) {
			if o.printerCols == nil {
				o.printerCols = render.PrinterColumns{}
			}
			o.printerCols[gk] = cols
		}
	}
	o.headerPrinters = &headerPrinters{}
	listeners, err := o.buildListeners(&files)
	if err != nil {
		return err
	}
	if o.metrics != nil {
		o.metrics.Sinks(listeners)
	}
	var clients informer.Clients
	cfg := o.engineConfig(listeners)
	if len(o.clusters) > 0 {
		if cfg.Clusters, err = o.engineClusters(ctx); err != nil {
			return err
		}
	} else if clients, err = o.newClients(o.watchConfig(o.restConfig)); err != nil {
		return err
	}
	if o.metrics != nil {
		cfg.Observer = o.metrics
	}
	if o.Owned.Owned {
		// Before the namespace check: an object that is not there says it all.
		if cfg.Owned, err = o.ownedConfig(ctx, clients); err != nil {
			return err
		}
	}
	if cfg.Resume, err = o.resume(ctx, clients, cfg.Clusters); err != nil {
		return err
	}
	if len(o.clusters) == 0 {
		cfg.NamespaceMissing = o.checkNamespace(ctx)
	}
	if onlyStdout(o.sinks) {
		gone := make(chan struct{})
		watchCtx, stopWatching := context.WithCancel(ctx)
		defer stopWatching()
		watchReaderGone(watchCtx, o.Streams.Out, func() { close(gone) })
		cfg.OutputGone = gone
	}
	// Start-up is behind (every API group's types registered, flags, config, discovery):
	// its pages of the executable need not stay while the list comes in.
	releaseStartupPages()
	res, err := engine.Run(ctx, clients, cfg)
	if !res.Started {
		return err // the error says why; interrupted while connecting, quietly
	}
	for _, l := range res.Late {
		o.warnf("sink %q did not finish writing within --grace %s; %s it still held were dropped",
			l.Name(), o.Grace, diag.Events(l.Stats().Dropped))
	}
	o.summary(listeners, res.Made, res.Unchanged, res.Clusters)
	return err
}

// resume reads the --resume checkpoint, if there is one, and checks that each cluster's
// section belongs to this watch. A checkpoint that does not (or is not a whole one) is
// refused, never overwritten: it may be another watch's, whose next start would then
// replay everything. With several clusters (clusters), each has its own section; one
// new to the file starts afresh, said in one line.
func (o *WatchOptions) resume(ctx context.Context, clients informer.Clients, clusters []engine.Cluster) (*engine.Resume, error) {
	if o.Resume == "" {
		return nil, nil
	}
	store, err := o.resumeStore()
	if err != nil {
		return nil, err
	}
	var file *checkpoint.File
	if !o.ResumeReset {
		if file, err = store.Load(ctx); err != nil {
			var corrupt *checkpoint.CorruptError
			var notOurs *clusterstore.NotOursError
			_, inCluster := store.(*clusterstore.Store)
			if errors.As(err, &corrupt) || inCluster && !errors.As(err, &notOurs) {
				return nil, err // corrupt (exit 2), or the API server's answer (exit 1)
			}
			return nil, &UsageError{Err: err} // a directory, a file that cannot be read
		}
	}
	resume := &engine.Resume{Path: store.Name(), Store: store, Clusters: map[string]engine.ClusterResume{}}
	var used []*checkpoint.Saved
	add := func(name, server string, clients informer.Clients, namespace string, resources []resource.Resource) error {
		watch := o.checkpointWatch(server, clusterUID(ctx, clients), namespace, resources)
		saved, err := file.For(name, watch)
		if err != nil {
			return err
		}
		if slices.Contains(used, saved) {
			saved = nil // a run of one cluster's section, taken by another context of it
		}
		if saved == nil && file != nil {
			o.warnf(engine.ClusterNotice+"--resume %s has no checkpoint of this cluster yet; starting afresh for it", name, store.Name())
		}
		if saved != nil {
			used = append(used, saved)
		}
		resume.Clusters[name] = engine.ClusterResume{Watch: watch, Saved: saved}
		return nil
	}
	if len(clusters) == 0 {
		if err := add("", o.restConfig.Host, clients, o.namespace, o.resources); err != nil {
			return nil, err
		}
	}
	for i, c := range clusters {
		if err := add(c.Name, o.clusters[i].restConfig.Host, c.Clients, c.Namespace, c.Resources); err != nil {
			return nil, err
		}
	}
	resume.Kept = file.Others(used)
	return resume, nil
}

// resumeStore is where --resume keeps the checkpoint: the file, or with secret:NAME or
// configmap:NAME objects in the cluster (the first cluster's, with several), in the
// pod's namespace unless NAMESPACE/ is given, fenced by --leader-elect's lease.
func (o *WatchOptions) resumeStore() (checkpoint.Store, error) {
	ref, inCluster, err := clusterstore.ParseRef(o.Resume)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	if !inCluster {
		return checkpoint.FileStore{Path: o.Resume}, nil
	}
	if ref.Namespace == "" {
		ref.Namespace = leader.DefaultNamespace(o.clientGetter.ToRawKubeConfigLoader().RawConfig)
	}
	cfg := afterStopConfig(o.restConfig)
	cfg.ContentType = "application/vnd.kubernetes.protobuf" // the shards travel as bytes, not base64
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	opts := clusterstore.Options{Client: client, Ref: ref, Warn: o.warnf, Writer: leader.Identity()}
	if o.elector != nil {
		opts.Fence, opts.Writer = o.elector.Fence, o.elector.Identity()
	}
	return clusterstore.New(opts), nil
}

// afterStopConfig is config for the requests that must still be made once Ctrl-C or
// SIGTERM came: the last checkpoint write and the lease's release, after the sinks are
// drained. Without the interruption of configureClients (its requests carry their own
// contexts and time limits).
func afterStopConfig(config *rest.Config) *rest.Config {
	c := rest.CopyConfig(config)
	c.WrapTransport = nil
	return c
}

// checkpointWatch is what one cluster's checkpoint belongs to.
func (o *WatchOptions) checkpointWatch(server, uid, namespace string, resources []resource.Resource) checkpoint.Watch {
	watch := checkpoint.Watch{
		Server:        server,
		Cluster:       uid,
		Namespace:     namespace,
		LabelSelector: o.LabelSelector,
		FieldSelector: o.FieldSelector,
		Names:         o.Names,
		MetadataOnly:  o.MetadataOnly,
		ShowSecrets:   o.ShowSecrets,
	}
	for _, r := range resources {
		watch.Resources = append(watch.Resources, checkpoint.ResourceName(r.GVR))
	}
	return watch
}

// clusterUID is the cluster's identity for the checkpoint: the UID of its kube-system
// namespace, or "" if it cannot be read (no right to get namespaces).
func clusterUID(ctx context.Context, clients informer.Clients) string {
	if clients.Metadata == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ns, err := clients.Metadata.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return string(ns.GetUID())
}

// engineConfig is the watch the options describe, for the engine.
func (o *WatchOptions) engineConfig(listeners []*listener.Listener) engine.Config {
	informers := o.informerCount(o.resources)
	if len(o.clusters) > 0 {
		informers = 0
		for _, c := range o.clusters {
			informers += o.informerCount(c.resources)
		}
	}
	return engine.Config{
		Resources:         o.resources,
		Namespace:         o.namespace,
		Namespaces:        o.namespaces,
		ExcludeNamespaces: o.ExcludeNamespaces,
		LabelSelector:     o.LabelSelector,
		FieldSelector:     o.FieldSelector,
		Names:             o.Names,
		WatchOnly:         o.WatchOnly,
		MetadataOnly:      o.MetadataOnly,
		ShowSecrets:       o.ShowSecrets,
		WithEvents:        o.WithEvents,
		ChangesOnly:       o.ChangesOnly,
		EventTypes:        o.eventTypes(),
		Differ:            o.differ,
		ShowOld:           o.ShowOld,
		NoFastPaths:       o.noFastPaths,
		MaxEvents:         uint64(o.MaxEvents),
		Until:             o.until,
		UntilDeleted:      o.UntilDeleted,
		Timeout:           o.Timeout,
		Grace:             o.Grace,
		Listeners:         listeners,
		Warn: func(format string, args ...any) {
			o.warnf(format, args...)
			o.headerPrinters.warned(format)
		},
		Synced: func() (undo func()) {
			if flag := o.initialListHidden(); flag != "" {
				// "watching" is said before the initial list; without this a script that
				// waits for it and then makes a change cannot know whether the change
				// falls in the list (not shown) or after it.
				o.infof("%s listed (not shown: %s); changes from here on are shown", o.watched(), flag)
			}
			if o.metrics != nil {
				o.metrics.Synced(true) // ready (/readyz)
			}
			return tuneRuntimeForWatching()
		},
		Started: func() {
			o.infof("watching %s — %d informer%s, %d sink%s (%s); Ctrl-C to stop",
				o.watched(), informers, plural(informers),
				len(listeners), plural(len(listeners)), sinkNames(listeners))
		},
	}
}

// informerCount is how many informers watching resources in one cluster takes.
func (o *WatchOptions) informerCount(resources []resource.Resource) int {
	informers := 0
	for _, r := range resources {
		if r.Namespaced && len(o.namespaces) > 0 {
			informers += len(o.namespaces)
		} else {
			informers++
		}
	}
	informers += len(o.Owned.children)
	if o.WithEvents {
		informers++
	}
	return informers
}

// onlyStdout reports whether every sink writes to stdout: then nobody reading it any
// more ends the command. With other sinks the stdout sink just stops quietly at its next
// write, and the rest go on.
func onlyStdout(sinks []config.Sink) bool {
	for _, s := range sinks {
		if !s.WritesStdout() {
			return false
		}
	}
	return true
}

// buildListeners opens every sink. A sink that cannot be opened (a file in a directory
// that is not writable) ends the run before it starts, with one line and exit code 4:
// better than a run without the archive the user asked for. Every file it opens is added
// to files, and closed again when it fails.
func (o *WatchOptions) buildListeners(files *[]*sink.File) (_ []*listener.Listener, err error) {
	defer func() {
		if err != nil {
			for _, f := range *files {
				_ = f.Close()
			}
		}
	}()
	var ls []*listener.Listener
	for _, s := range o.sinks {
		out, err := o.newSink(s, files)
		if err != nil {
			var usage *UsageError
			var notRegular *sink.NotRegularError
			switch {
			case errors.As(err, &usage):
				return nil, err
			case errors.As(err, &notRegular):
				return nil, usageErrorf("sink %q: %v; %s", s.Name, err, dropRotation(s))
			}
			return nil, &SinkOpenError{Name: s.Name, Err: err}
		}
		out = sink.WithEventTypes(out, s.EventTypes)
		lc := listener.Config{Name: s.Name, Buffer: s.Buffer, OnFull: s.OnFull, Resync: s.Resync}
		if o.metrics != nil {
			lc.Delivered = o.metrics.Lag(s.Name)
		}
		ls = append(ls, listener.New(lc, out, o.warnf))
	}
	return ls, nil
}

// newSink builds the sink's writer as its kind says, with what this run gives every sink.
func (o *WatchOptions) newSink(s config.Sink, files *[]*sink.File) (listener.Sink, error) {
	out, err := config.Build(s, config.BuildEnv{
		Stdout: o.stdout(), Color: o.colorFor(o.Streams.Out), Terminal: o.terminals.IsTerminal(o.Streams.Out),
		TerminalWidth: o.terminals.Width(o.Streams.Out), Timestamps: o.Timestamps,
		ShowKind: len(o.resources) > 1 || o.WithEvents || o.Owned.Owned, Namespace: o.namespace,
		Differ: o.differ, ShowOld: o.ShowOld,
		Query: o.queries[s.Name], Warn: o.warnf,
		Headers: o.terminals.IsTerminal(o.Streams.Out), PrinterColumns: o.printerCols, TerminalPrinter: o.headerPrinters.add,
		Clusters: o.clusterNames(),
		Opened:   func(f *sink.File) { *files = append(*files, f) },
	})
	var invalid *config.InvalidSinkError
	if errors.As(err, &invalid) {
		return nil, &UsageError{Err: err}
	}
	return out, err
}

// summary prints the exit line: how many events were made, what became of them per sink,
// and how many updates --changes-only left out before they became events.
func (o *WatchOptions) summary(listeners []*listener.Listener, events, unchanged uint64, clusters []engine.ClusterResult) {
	parts := make([]string, 0, len(listeners))
	for _, l := range listeners {
		parts = append(parts, l.Stats().Summary(l.Name()))
	}
	leftOut := ""
	if unchanged > 0 {
		leftOut = fmt.Sprintf(" (%s unchanged update%s left out by --changes-only)", diag.Count(unchanged), plural(int(unchanged)))
	}
	o.infof("stopped after %s%s%s — %s", diag.Events(events), clustersSummary(clusters), leftOut, strings.Join(parts, "; "))
	// Losses are worth saying even when nobody asked for the summary.
	for _, l := range listeners {
		if st := l.Stats(); st.Dropped > 0 && !o.summaryShown() {
			o.warnf("sink %q dropped %s (buffer %d, on-full=%s)", l.Name(), diag.Events(st.Dropped), l.Config().Buffer, l.Config().OnFull)
		}
	}
}

func (o *WatchOptions) summaryShown() bool {
	return (o.Verbosity != nil && *o.Verbosity >= 1) || o.terminals.IsTerminal(o.Streams.ErrOut)
}

// watched says what is watched where: the namespace only for namespaced types
// ("pods, configmaps in default; nodes (cluster-scoped)").
func (o *WatchOptions) watched() string {
	if o.Owned.Owned {
		return o.followed()
	}
	var namespaced, cluster []string
	for _, r := range o.resources {
		if r.Namespaced {
			namespaced = append(namespaced, r.String())
		} else {
			cluster = append(cluster, r.String())
		}
	}
	var parts []string
	if len(namespaced) > 0 {
		where := "in all namespaces"
		if len(o.namespaces) > 0 {
			where = "in " + strings.Join(o.namespaces, ", ")
		} else if o.namespacesDiffer {
			where = "in each context's namespace"
		} else if o.namespace != "" {
			where = "in " + o.namespace
		}
		parts = append(parts, strings.Join(namespaced, ", ")+" "+where)
	}
	if len(cluster) > 0 {
		parts = append(parts, strings.Join(cluster, ", ")+" (cluster-scoped)")
	}
	watched := strings.Join(parts, "; ")
	if len(o.clusters) > 0 {
		watched += ", in clusters " + strings.Join(o.clusterNames(), ", ")
	}
	return watched
}

func sinkNames(ls []*listener.Listener) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Name()
	}
	return strings.Join(names, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
