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
		var notMet *NotMetError
		if runErr != nil && !errors.As(runErr, &sinkFailed) && !errors.As(runErr, &timeout) && !errors.As(runErr, &notMet) {
			for _, f := range files {
				f.RemoveIfUnused()
			}
		}
	}()
	listeners, err := o.buildListeners(&files)
	if err != nil {
		return err
	}

	fatal := make(chan error, 1)
	reportFatal := func(err error) {
		select {
		case fatal <- err:
		default:
		}
	}

	var conditions *exitConditions
	var until *informer.Until
	if o.until != nil || o.UntilDeleted {
		conditions = o.newConditions()
		until = conditions.until
	}
	unchanged, skip := o.changesOnly()

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
			Skip:          skip,
			Until:         until,
			Warn:          o.warnf,
			Fatal:         reportFatal,
		}, registrations(listeners, true))
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
			Skip:      skip,
			Until:     until,
			Related:   true,
			Accept:    involvesWatched(informers),
			Warn:      o.warnf,
			Fatal:     reportFatal,
		}, registrations(listeners, false))
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
	o.infof("watching %s — %d informer%s, %d sink%s (%s); Ctrl-C to stop",
		o.watched(), len(informers), plural(len(informers)),
		len(listeners), plural(len(listeners)), sinkNames(listeners))

	// Delivery starts only now: an error above returns before any goroutine runs.
	for _, l := range listeners {
		go l.Run()
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
		last, _ := until.MetAt()
		o.awaitSeen(listeners, last, o.Grace)
	case stopLimit:
		o.awaitSeen(listeners, uint64(o.MaxEvents), o.Grace)
	}
	deadline := time.Now().Add(o.Grace)
	stopInformers(informers, listeners, deadline)
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
		o.warnf("sink %q did not finish writing within --grace %s; %s it still held were dropped",
			l.Name(), o.Grace, eventCount(l.Stats().Dropped))
	}
	o.summary(listeners, made, unchanged.Load())

	var failedSinks []string
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
		if !writesStdout(s) {
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
func (o *WatchOptions) wait(ctx context.Context, fatal <-chan error, conditions *exitConditions, limit, readerGone <-chan struct{}, listeners []*listener.Listener) (stopReason, error) {
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
		if conditions == nil {
			return stopLimit, nil
		}
		// The informer asks the condition about an event before it counts it against
		// --max-events: if the last event met it, it is met by now.
		if _, met := conditions.until.MetAt(); met {
			return stopCondition, nil
		}
		return stopLimit, &NotMetError{Err: fmt.Errorf("--max-events %d reached before %s was met", o.MaxEvents, o.awaited())}
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
		policy, err := listener.ParsePolicy(s.OnFull)
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("sink %q: %v", s.Name, err)}
		}
		ls = append(ls, listener.New(listener.Config{Name: s.Name, Buffer: s.Buffer, OnFull: policy, Resync: s.Resync}, out, o.warnf))
	}
	return ls, nil
}

func (o *WatchOptions) newSink(s config.Sink, files *[]*sink.File) (listener.Sink, error) {
	filter := sink.Filter{ChangesOnly: o.ChangesOnly, Differ: o.differ}
	showKind := len(o.resources) > 1 || o.WithEvents
	switch s.Type {
	case config.KindTerminal:
		p, err := render.NewPrinter(render.Options{
			Format: render.Format(s.Format), Color: o.colorFor(o.Streams.Out), Timestamps: o.Timestamps,
			ShowKind: showKind, Diff: o.differ, ShowOld: o.ShowOld,
			// The command line says the namespace to whoever reads the terminal; a file
			// is read without it, so file sinks keep it in every name.
			Namespace: o.namespace, TerminalWidth: terminalWidth(o.Streams.Out),
		})
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("sink %q: %v", s.Name, err)}
		}
		return sink.NewPrinter(o.Streams.Out, p, filter, "stdout", nil), nil
	case config.KindFile:
		p, err := render.NewPrinter(render.Options{
			Format: render.Format(s.Format), Timestamps: true, ShowKind: showKind, Diff: o.differ, ShowOld: o.ShowOld,
		})
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("sink %q: %v", s.Name, err)}
		}
		if s.Path == config.Stdout {
			// Written as files are (full times, no colour), to stdout, which is not ours to
			// close.
			return sink.NewPrinter(o.Streams.Out, p, filter, "stdout", nil), nil
		}
		f, err := sink.OpenFile(s.Path, sink.Rotation(s.Rotate), o.warnf)
		if err != nil {
			return nil, err
		}
		*files = append(*files, f)
		return sink.NewPrinter(f, p, filter, "file "+s.Path, f.Close), nil
	case config.KindJQ:
		opts := sink.JQOptions{Name: s.Name, Query: o.queries[s.Name], Differ: o.differ, ShowOld: o.ShowOld, Raw: s.Raw,
			Filter: filter, Out: o.Streams.Out, Terminal: isTerminal(o.Streams.Out), Describe: "stdout", Warn: o.warnf}
		if s.Output != "" && s.Output != config.Stdout {
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

// summary prints the exit line: how many events were made, what became of them per sink,
// and how many updates --changes-only left out before they became events.
func (o *WatchOptions) summary(listeners []*listener.Listener, events, unchanged uint64) {
	parts := make([]string, 0, len(listeners))
	for _, l := range listeners {
		parts = append(parts, l.Stats().Summary(l.Name()))
	}
	leftOut := ""
	if unchanged > 0 {
		leftOut = fmt.Sprintf(" (%s unchanged update%s left out by --changes-only)", thousands(unchanged), plural(int(unchanged)))
	}
	o.infof("stopped after %s%s — %s", eventCount(events), leftOut, strings.Join(parts, "; "))
	// Losses are worth saying even when nobody asked for the summary.
	for _, l := range listeners {
		if st := l.Stats(); st.Dropped > 0 && !o.summaryShown() {
			o.warnf("sink %q dropped %s (buffer %d, on-full=%s)", l.Name(), eventCount(st.Dropped), l.Config().Buffer, l.Config().OnFull)
		}
	}
}

func (o *WatchOptions) summaryShown() bool {
	return (o.Verbosity != nil && *o.Verbosity >= 1) || isTerminal(o.Streams.ErrOut)
}

// watched says what is watched where: the namespace only for namespaced types
// ("pods, configmaps in default; nodes (cluster-scoped)").
func (o *WatchOptions) watched() string {
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
		if o.namespace != "" {
			where = "in " + o.namespace
		}
		parts = append(parts, strings.Join(namespaced, ", ")+" "+where)
	}
	if len(cluster) > 0 {
		parts = append(parts, strings.Join(cluster, ", ")+" (cluster-scoped)")
	}
	return strings.Join(parts, "; ")
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

// eventCount is "1 event", "1,024 events".
func eventCount(n uint64) string {
	if n == 1 {
		return "1 event"
	}
	return thousands(n) + " events"
}

// thousands formats n with comma separators, like the counts in every diagnostic.
func thousands(n uint64) string { return englishNumbers.Sprint(n) }

var englishNumbers = message.NewPrinter(language.English)

// changesOnly is the informers' Skip for --changes-only (nil without it): it leaves out
// MODIFIED events whose diff is empty after the ignored paths before they are numbered,
// so they leave no gap in seq and do not count against --max-events, and counts them.
func (o *WatchOptions) changesOnly() (*atomic.Uint64, func(*informer.Event) bool) {
	unchanged := new(atomic.Uint64)
	if !o.ChangesOnly {
		return unchanged, nil
	}
	filter := sink.Filter{ChangesOnly: true, Differ: o.differ}
	return unchanged, func(ev *informer.Event) bool {
		if !filter.Skip(ev) {
			return false
		}
		unchanged.Add(1)
		return true
	}
}

// exitConditions decides the exit conditions --until and --until-deleted (--max-events is
// counted where events are numbered, in the informer). The informers ask it about each
// event as they number it (informer.Until), before any sink has it: no event is made
// after the one that met a condition, even in the middle of the initial list.
type exitConditions struct {
	o         *WatchOptions
	informers []*informer.Informer
	until     *informer.Until
	met       chan struct{} // closed once a condition is met
	isSynced  atomic.Bool
}

func (o *WatchOptions) newConditions() *exitConditions {
	c := &exitConditions{o: o, met: make(chan struct{})}
	c.until = &informer.Until{Met: c.metBy, Done: func() { close(c.met) }}
	return c
}

// metBy runs on an informer's goroutine, once per event, in the order they are numbered.
// For --until-deleted the informer's cache no longer holds a deleted object when it is
// asked.
func (c *exitConditions) metBy(ev *informer.Event) bool {
	return c.o.until != nil && c.untilTrue(ev) ||
		c.o.UntilDeleted && ev.Type == informer.Deleted && c.isSynced.Load() && c.allDeleted()
}

func (c *exitConditions) untilTrue(ev *informer.Event) bool {
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
func (c *exitConditions) synced() {
	c.isSynced.Store(true)
	if c.allDeleted() {
		c.until.Meet()
	}
}

// allDeleted reports whether no informer's cache holds any of the named objects.
func (c *exitConditions) allDeleted() bool {
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
