package cmd

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/gcheadroom"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sink"
)

// stopReason says why the stream ended.
type stopReason int

const (
	stopInterrupted stopReason = iota // Ctrl-C, SIGTERM
	stopCondition                     // --until, --until-deleted met
	stopLimit                         // --max-events reached
	stopTimeout                       // --timeout
	stopOutputGone                    // every sink stopped, or nobody reads stdout any more
	stopFatal                         // an error the informer cannot retry past
)

// Run starts the informers and the sinks and streams until interrupted, a condition is
// met, or an error ends it.
func (o *WatchOptions) Run(ctx context.Context) (runErr error) {
	o.capVerbosityForSecrets()
	var files []*sink.File
	defer func() {
		// A run that never got going (bad credentials, missing rights, a bad expression in
		// a later sink) leaves no empty output files behind; a real run keeps its files,
		// even empty ones.
		var sinkFailed *SinkFailedError
		var timeout *TimeoutError
		if runErr != nil && !errors.As(runErr, &sinkFailed) && !errors.As(runErr, &timeout) {
			for _, f := range files {
				f.RemoveIfUnused()
			}
		}
	}()
	listeners, failedSinks, err := o.buildListeners(&files)
	if err != nil {
		return err
	}
	if len(listeners) == 0 {
		return &SinkFailedError{Names: failedSinks}
	}

	fatal := make(chan error, 1)
	reportFatal := func(err error) {
		select {
		case fatal <- err:
		default:
		}
	}

	var conditions *conditionSink
	receivers := make([]*listener.Listener, 0, len(listeners)+1)
	receivers = append(receivers, listeners...)
	if o.until != nil || o.UntilDeleted {
		conditions = o.newConditionSink()
		// The condition listener blocks when full rather than drop: it must see every event.
		receivers = append(receivers, listener.New(listener.Config{Name: "conditions", OnFull: listener.Block}, conditions, o.warnf))
	}

	clients, err := informer.NewClients(o.restConfig)
	if err != nil {
		return err
	}
	seq := new(atomic.Uint64)
	limitReached := make(chan struct{})
	var limitOnce sync.Once
	limit := func() { limitOnce.Do(func() { close(limitReached) }) }
	informers := make([]*informer.Informer, 0, len(o.resources)+1)
	for _, res := range o.resources {
		inf, err := informer.New(res, clients, informer.Options{
			Namespace:     o.namespace,
			LabelSelector: o.LabelSelector,
			FieldSelector: o.FieldSelector,
			Names:         o.Names,
			Seq:           seq,
			WatchOnly:     o.WatchOnly,
			MetadataOnly:  o.MetadataOnly,
			ShowSecrets:   o.ShowSecrets,
			MaxEvents:     uint64(o.MaxEvents),
			Limit:         limit,
			Warn:          o.warnf,
			Fatal:         reportFatal,
		}, registrations(receivers, true))
		if err != nil {
			return err
		}
		informers = append(informers, inf)
	}
	if conditions != nil {
		conditions.informers = informers[:len(informers):len(informers)]
	}
	if o.WithEvents {
		inf, err := informer.New(coreEvents, clients, informer.Options{
			Namespace: o.namespace,
			Seq:       seq,
			WatchOnly: true, // only what happens from now on, like the changes they explain
			MaxEvents: uint64(o.MaxEvents),
			Limit:     limit,
			Related:   true,
			Accept:    involvesWatched(informers),
			Warn:      o.warnf,
			Fatal:     reportFatal,
		}, registrations(receivers, false))
		if err != nil {
			return err
		}
		informers = append(informers, inf)
	}

	o.checkNamespace(ctx)
	// An informer's own first list says that its rights are missing, but only after the
	// other informers printed what they listed, and a missing right to watch only after
	// it printed its own list: check them all before anything is printed.
	for _, inf := range informers {
		if err := inf.CheckAccess(ctx); err != nil {
			if ctx.Err() != nil {
				return nil // interrupted
			}
			if o.WithEvents && inf == informers[len(informers)-1] {
				return fmt.Errorf("--with-events: %w", err)
			}
			return err
		}
	}
	o.infof("watching %s %s — %d informer%s, %d sink%s (%s); Ctrl-C to stop",
		resourceList(o.resources), o.where(), len(informers), plural(len(informers)),
		len(listeners), plural(len(listeners)), sinkNames(listeners))

	// Delivery starts only now: an error above returns before any goroutine runs.
	for _, l := range receivers {
		go l.Run()
	}
	if conditions != nil {
		conditionListener := receivers[len(receivers)-1]
		defer func() { conditionListener.Close(); <-conditionListener.Done() }()
	}
	for _, inf := range informers {
		inf.Start()
	}
	var heap struct {
		sync.Mutex
		returned bool
		stop     func()
	}
	defer func() {
		heap.Lock()
		defer heap.Unlock()
		heap.returned = true
		if heap.stop != nil {
			heap.stop()
		}
	}()
	go func() {
		for _, inf := range informers {
			if !inf.WaitForSync(ctx) {
				return
			}
		}
		// The initial list arrives as whole responses that are decoded at once: the heap
		// peaks far above what the cache then holds. Give that memory back now, once,
		// rather than holding it as RSS for the life of the watch.
		debug.FreeOSMemory()
		// From now on the heap is the cache plus events in flight: keep some headroom
		// between collections, so a small cache is not marked every few hundred events.
		heap.Lock()
		defer heap.Unlock()
		if !heap.returned {
			heap.stop = gcheadroom.Keep(gcheadroom.DefaultHeadroom)
		}
	}()
	if conditions != nil && o.UntilDeleted {
		go func() {
			for _, inf := range informers {
				if !inf.WaitForSync(ctx) {
					return
				}
			}
			conditions.synced()
		}()
	}

	readerGone := make(chan struct{})
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	if onlyStdout(o.sinks) {
		watchReaderGone(watchCtx, o.Streams.Out, func() { close(readerGone) })
	}

	reason, runErr := o.wait(ctx, fatal, conditions, limitReached, readerGone, listeners)

	// The event that met a condition must reach every sink before the informers stop.
	switch reason {
	case stopCondition:
		o.awaitSeen(listeners, conditions.metSeq(), o.Grace)
	case stopLimit:
		o.awaitSeen(listeners, uint64(o.MaxEvents), o.Grace)
	}
	deadline := time.Now().Add(o.Grace)
	stopInformers(informers, receivers, deadline)
	made := seq.Load()
	if o.MaxEvents > 0 {
		made = min(made, uint64(o.MaxEvents)) // numbers beyond it were drawn, not used
	}
	for _, l := range listeners {
		l.Missed(made)
	}
	// At least a moment, for sinks that are only finishing: a deadline spent waiting for
	// a blocked handler (stopInformers) is no reason to cut them short.
	late := listener.Drain(listeners, max(time.Until(deadline), time.Second))
	for _, l := range late {
		o.warnf("sink %q did not finish writing within --grace %s; %s events it still held were dropped",
			l.Name(), o.Grace, thousands(l.Stats().Dropped))
	}
	o.summary(listeners, seq.Load())

	for _, l := range listeners {
		if err := l.Err(); err != nil && !errors.Is(err, listener.ErrOutputClosed) {
			failedSinks = append(failedSinks, l.Name())
		}
	}
	switch {
	case runErr != nil:
		return runErr
	case len(failedSinks) > 0:
		return &SinkFailedError{Names: failedSinks}
	}
	return nil
}

// stopInformers stops the informers, so that no event is made after those the sinks are
// about to drain. An informer stops only once its handlers return, and a handler that
// feeds a full sink under on-full=block (or coalesce) waits for room: if the informers
// have not stopped by the deadline, the receivers are closed, which makes such waiting
// handlers give up (their events count as dropped), and the informers can stop.
func stopInformers(informers []*informer.Informer, receivers []*listener.Listener, deadline time.Time) {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for _, inf := range informers {
			inf.Stop()
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

// onlyStdout reports whether every sink writes to stdout: then nobody reading it any
// more ends the command. With other sinks the stdout sink just stops quietly at its next
// write, and the rest go on.
func onlyStdout(sinks []config.Sink) bool {
	for _, s := range sinks {
		if s.Type == config.KindFile || s.Type == config.KindJQ && s.Output != "" && s.Output != "-" {
			return false
		}
	}
	return true
}

// registrations registers every receiver with an informer, each with its own resync
// period when resync is set (Events interleaved by --with-events are never re-sent).
func registrations(receivers []*listener.Listener, resync bool) []informer.Registration {
	regs := make([]informer.Registration, 0, len(receivers))
	for _, l := range receivers {
		reg := informer.Registration{Receiver: l}
		if resync {
			reg.Resync = l.Config().Resync
		}
		regs = append(regs, reg)
	}
	return regs
}

// coreEvents is the resource --with-events watches besides the user's types.
var coreEvents = informer.Resource{
	GVR:        schema.GroupVersionResource{Version: "v1", Resource: "events"},
	GVK:        schema.GroupVersionKind{Version: "v1", Kind: "Event"},
	Namespaced: true,
}

// involvesWatched accepts the core Events whose involvedObject is in one of the watched
// informers' caches.
func involvesWatched(watched []*informer.Informer) func(obj any) bool {
	return func(obj any) bool {
		ev, ok := obj.(*corev1.Event)
		if !ok {
			return false
		}
		ref := ev.InvolvedObject
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return false
		}
		key := ref.Name
		if ref.Namespace != "" {
			key = ref.Namespace + "/" + ref.Name
		}
		for _, inf := range watched {
			if inf.Resource.GVK.Kind != ref.Kind || inf.Resource.GVK.Group != gv.Group {
				continue
			}
			if _, exists, _ := inf.Store().GetByKey(key); exists {
				return true
			}
		}
		return false
	}
}

// wait blocks until the stream should end and says why.
func (o *WatchOptions) wait(ctx context.Context, fatal <-chan error, conditions *conditionSink, limit, readerGone <-chan struct{}, listeners []*listener.Listener) (stopReason, error) {
	var timeout <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var met <-chan struct{}
	if conditions != nil {
		met = conditions.met
	}
	allStopped := make(chan struct{})
	go func() {
		for _, l := range listeners {
			<-l.Done()
		}
		close(allStopped)
	}()
	select {
	case <-ctx.Done():
		return stopInterrupted, nil
	case err := <-fatal:
		return stopFatal, err
	case <-met:
		return stopCondition, nil
	case <-limit:
		return stopLimit, nil
	case <-allStopped:
		return stopOutputGone, nil
	case <-readerGone:
		return stopOutputGone, nil
	case <-timeout:
		if o.until != nil || o.UntilDeleted {
			return stopTimeout, &TimeoutError{Err: fmt.Errorf("timed out after %s before %s was met", o.Timeout, o.awaited())}
		}
		return stopTimeout, nil
	}
}

func (o *WatchOptions) awaited() string {
	if o.UntilDeleted {
		return "--until-deleted"
	}
	return "--until"
}

// awaitSeen waits until every listener has been handed the event numbered seq (client-go
// hands each change to each handler on its own goroutine), for at most grace.
func (o *WatchOptions) awaitSeen(listeners []*listener.Listener, seq uint64, grace time.Duration) {
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

func isSecret(res informer.Resource) bool {
	return res.GVK.Group == "" && res.GVK.Kind == "Secret"
}

// capVerbosityForSecrets keeps Secret values out of client-go's logs: from -v=8 it logs
// response bodies, which hold them in clear, before any redaction can happen.
func (o *WatchOptions) capVerbosityForSecrets() {
	if o.ShowSecrets || o.Verbosity == nil || *o.Verbosity < 8 {
		return
	}
	for _, res := range o.resources {
		if isSecret(res) {
			var level klog.Level
			_ = level.Set("7")
			o.warnf("-v=%d would log Secret values (in API response bodies); logging as with -v=7 (--show-secrets allows more)", *o.Verbosity)
			return
		}
	}
}

// buildListeners opens every sink. A sink that cannot be opened (a file in a directory
// that is not writable) is reported and left out; the others go on. Every file it
// opens is added to files.
func (o *WatchOptions) buildListeners(files *[]*sink.File) ([]*listener.Listener, []string, error) {
	var ls []*listener.Listener
	var failed []string
	for _, s := range o.sinks {
		out, err := o.newSink(s, files)
		if err != nil {
			var usage *UsageError
			if errors.As(err, &usage) {
				return nil, nil, err
			}
			o.warnf("sink %q: %v", s.Name, err)
			failed = append(failed, s.Name)
			continue
		}
		policy, err := listener.ParsePolicy(s.OnFull)
		if err != nil {
			return nil, nil, &UsageError{Err: fmt.Errorf("sink %q: %v", s.Name, err)}
		}
		ls = append(ls, listener.New(listener.Config{Name: s.Name, Buffer: s.Buffer, OnFull: policy, Resync: s.Resync}, out, o.warnf))
	}
	return ls, failed, nil
}

func (o *WatchOptions) newSink(s config.Sink, files *[]*sink.File) (listener.Sink, error) {
	filter := sink.Filter{ChangesOnly: o.ChangesOnly, Differ: o.differ}
	showKind := len(o.resources) > 1 || o.WithEvents
	switch s.Type {
	case config.KindTerminal:
		p, err := render.NewPrinter(render.Options{
			Format: render.Format(s.Format), Color: o.colorFor(o.Streams.Out), Timestamps: o.Timestamps,
			ShowKind: showKind, Diff: o.differ, ShowOld: o.ShowOld,
		})
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("sink %q: %v", s.Name, err)}
		}
		return sink.NewPrinter(o.Streams.Out, p, filter, "stdout", nil), nil
	case config.KindFile:
		f, err := sink.OpenFile(s.Path, sink.Rotation(s.Rotate), o.warnf)
		if err != nil {
			return nil, err
		}
		*files = append(*files, f)
		p, err := render.NewPrinter(render.Options{
			Format: render.Format(s.Format), Timestamps: true, ShowKind: showKind, Diff: o.differ, ShowOld: o.ShowOld,
		})
		if err != nil {
			f.Close()
			return nil, &UsageError{Err: fmt.Errorf("sink %q: %v", s.Name, err)}
		}
		return sink.NewPrinter(f, p, filter, "file "+s.Path, f.Close), nil
	case config.KindJQ:
		opts := sink.JQOptions{Name: s.Name, Query: o.queries[s.Name], Differ: o.differ, ShowOld: o.ShowOld, Raw: s.Raw,
			Filter: filter, Out: o.Streams.Out, Terminal: isTerminal(o.Streams.Out), Describe: "stdout", Warn: o.warnf}
		if s.Output != "" && s.Output != "-" {
			f, err := sink.OpenFile(s.Output, sink.Rotation{}, o.warnf)
			if err != nil {
				return nil, err
			}
			*files = append(*files, f)
			opts.Out, opts.Terminal, opts.Describe, opts.CloseFn = f, false, "file "+s.Output, f.Close
		}
		return sink.NewJQ(opts), nil
	}
	return nil, &UsageError{Err: fmt.Errorf("sink %q: unknown kind %q", s.Name, s.Type)}
}

// summary prints the exit line: how many events, and what became of them per sink.
func (o *WatchOptions) summary(listeners []*listener.Listener, events uint64) {
	parts := make([]string, 0, len(listeners))
	for _, l := range listeners {
		parts = append(parts, l.Stats().Summary(l.Name()))
	}
	o.infof("stopped after %s events — %s", thousands(events), strings.Join(parts, "; "))
	// Losses are worth saying even when nobody asked for the summary.
	for _, l := range listeners {
		if st := l.Stats(); st.Dropped > 0 && !o.summaryShown() {
			o.warnf("sink %q dropped %s events (buffer %d, on-full=%s)", l.Name(), thousands(st.Dropped), l.Config().Buffer, l.Config().OnFull)
		}
	}
}

func (o *WatchOptions) summaryShown() bool {
	return (o.Verbosity != nil && *o.Verbosity >= 1) || isTerminal(o.Streams.ErrOut)
}

func (o *WatchOptions) where() string {
	if o.namespace == "" {
		return "in all namespaces"
	}
	return "in " + o.namespace
}

func resourceList(rs []informer.Resource) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.String()
	}
	return strings.Join(names, ", ")
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

// thousands formats n with comma separators, like the counts in every diagnostic.
func thousands(n uint64) string { return englishNumbers.Sprint(n) }

var englishNumbers = message.NewPrinter(language.English)

// conditionSink watches the stream for the exit conditions --until and --until-deleted
// (--max-events is counted where events are numbered, in the informer). It is a listener of its own, so it sees every event in order without
// holding up the real sinks.
type conditionSink struct {
	o         *WatchOptions
	informers []*informer.Informer
	filter    sink.Filter

	mu       sync.Mutex
	counted  int
	seq      uint64
	met      chan struct{}
	once     sync.Once
	isSynced bool
}

func (o *WatchOptions) newConditionSink() *conditionSink {
	return &conditionSink{o: o, met: make(chan struct{}), filter: sink.Filter{ChangesOnly: o.ChangesOnly, Differ: o.differ}}
}

func (c *conditionSink) Write(ev *informer.Event) error {
	if ev.Type == informer.Sync || c.filter.Skip(ev) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.o.until != nil && c.untilTrue(ev):
		c.fire(ev.Seq)
	case c.o.UntilDeleted && c.isSynced && ev.Type == informer.Deleted && c.allDeleted():
		c.fire(ev.Seq)
	}
	return nil
}

func (c *conditionSink) untilTrue(ev *informer.Event) bool {
	input, err := render.EnvelopeValue(ev, c.o.differ, c.o.ShowOld)
	if err != nil {
		return false
	}
	outs, err := c.o.until.Run(context.Background(), input)
	if err != nil {
		return false // reported by no one: --until errors are the user's expression failing on some events
	}
	for _, v := range outs {
		if render.Truthy(v) {
			return true
		}
	}
	return false
}

// synced is called once every informer has its initial list: named objects that do not
// exist then count as deleted already, as with `kubectl wait --for=delete`.
func (c *conditionSink) synced() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.isSynced = true
	if c.allDeleted() {
		c.fire(0)
	}
}

// allDeleted reports whether no informer's cache holds any of the named objects.
func (c *conditionSink) allDeleted() bool {
	for _, inf := range c.informers {
		store := inf.Store()
		for _, name := range c.o.Names {
			key := name
			if inf.Resource.Namespaced {
				key = c.o.namespace + "/" + name
			}
			if _, exists, _ := store.GetByKey(key); exists {
				return false
			}
		}
	}
	return true
}

func (c *conditionSink) fire(seq uint64) {
	c.once.Do(func() {
		c.seq = seq
		close(c.met)
	})
}

func (c *conditionSink) metSeq() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

func (c *conditionSink) Close() error { return nil }
