package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sink"
)

var metaGetOptions = metav1.GetOptions{}

// stopReason says why the stream ended.
type stopReason int

const (
	stopInterrupted stopReason = iota // Ctrl-C, SIGTERM
	stopCondition                     // --until, --until-deleted met
	stopLimit                         // --max-events reached
	stopTimeout                       // --timeout
	stopOutputGone                    // every sink stopped (stdout closed, ...)
	stopFatal                         // an error the informer cannot retry past
)

// Run starts the informers and the sinks and streams until interrupted, a condition is
// met, or an error ends it.
func (o *WatchOptions) Run(ctx context.Context) error {
	listeners, failedSinks, err := o.buildListeners()
	if err != nil {
		return err
	}
	if len(listeners) == 0 {
		return &SinkFailedError{Names: failedSinks}
	}
	for _, l := range listeners {
		go l.Run()
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
		cl := listener.New(listener.Config{Name: "conditions", OnFull: listener.Block}, conditions, o.warnf)
		go cl.Run()
		receivers = append(receivers, cl)
		defer func() { cl.Close(); <-cl.Done() }()
	}

	clients, err := informer.NewClients(o.restConfig)
	if err != nil {
		return err
	}
	seq := new(atomic.Uint64)
	limitReached := make(chan struct{})
	var limitOnce sync.Once
	informers := make([]*informer.Informer, 0, len(o.resources))
	for _, res := range o.resources {
		regs := make([]informer.Registration, 0, len(receivers))
		for _, l := range receivers {
			regs = append(regs, informer.Registration{Receiver: l, Resync: l.Config().Resync})
		}
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
			Limit:         func() { limitOnce.Do(func() { close(limitReached) }) },
			Warn:          o.warnf,
			Fatal:         reportFatal,
		}, regs)
		if err != nil {
			return err
		}
		informers = append(informers, inf)
	}
	if conditions != nil {
		conditions.informers = informers
	}

	o.checkNamespace(ctx)
	o.infof("watching %s %s — %d informer%s, %d sink%s (%s); Ctrl-C to stop",
		resourceList(o.resources), o.where(), len(informers), plural(len(informers)),
		len(listeners), plural(len(listeners)), sinkNames(listeners))

	for _, inf := range informers {
		inf.Start()
	}
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

	reason, runErr := o.wait(ctx, fatal, conditions, limitReached, listeners)

	// The event that met a condition must reach every sink before the informers stop.
	switch reason {
	case stopCondition:
		o.awaitSeen(listeners, conditions.metSeq(), o.Grace)
	case stopLimit:
		o.awaitSeen(listeners, uint64(o.MaxEvents), o.Grace)
	}
	for _, inf := range informers {
		inf.Stop()
	}
	late := listener.Drain(listeners, o.Grace)
	for _, l := range late {
		o.warnf("sink %q did not finish writing within --grace %s; %s events it still held were dropped",
			l.Name(), o.Grace, thousandsInt(l.Stats().Dropped))
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

// wait blocks until the stream should end and says why.
func (o *WatchOptions) wait(ctx context.Context, fatal <-chan error, conditions *conditionSink, limit <-chan struct{}, listeners []*listener.Listener) (stopReason, error) {
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
		for !l.Seen(seq) && time.Now().Before(deadline) {
			select {
			case <-l.Done():
				goto next
			case <-time.After(5 * time.Millisecond):
			}
		}
	next:
	}
}

// buildListeners opens every sink. A sink that cannot be opened (a file in a directory
// that is not writable) is reported and left out; the others go on.
func (o *WatchOptions) buildListeners() ([]*listener.Listener, []string, error) {
	var ls []*listener.Listener
	var failed []string
	for _, s := range o.sinks {
		out, err := o.newSink(s)
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

func (o *WatchOptions) newSink(s config.Sink) (listener.Sink, error) {
	filter := sink.Filter{ChangesOnly: o.ChangesOnly, Differ: o.differ}
	showKind := len(o.resources) > 1
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
		p, err := render.NewPrinter(render.Options{
			Format: render.Format(s.Format), Timestamps: true, ShowKind: showKind, Diff: o.differ, ShowOld: o.ShowOld,
		})
		if err != nil {
			f.Close()
			return nil, &UsageError{Err: fmt.Errorf("sink %q: %v", s.Name, err)}
		}
		return sink.NewPrinter(f, p, filter, "file "+s.Path, f.Close), nil
	case config.KindJQ:
		q := o.stdoutJQ
		if s.Origin != "--jq" || q == nil {
			var err error
			if q, err = render.CompileJQ(s.Expr); err != nil {
				return nil, &UsageError{Err: fmt.Errorf("sink %q: %v", s.Name, err)}
			}
		}
		opts := sink.JQOptions{Name: s.Name, Query: q, Differ: o.differ, ShowOld: o.ShowOld, Raw: s.Raw,
			Filter: filter, Out: o.Streams.Out, Describe: "stdout", Warn: o.warnf}
		if s.Output != "" && s.Output != "-" {
			f, err := sink.OpenFile(s.Output, sink.Rotation{}, o.warnf)
			if err != nil {
				return nil, err
			}
			opts.Out, opts.Describe, opts.CloseFn = f, "file "+s.Output, f.Close
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
	o.infof("stopped after %s events — %s", thousandsInt(events), strings.Join(parts, "; "))
	// Losses are worth saying even when nobody asked for the summary.
	for _, l := range listeners {
		if st := l.Stats(); st.Dropped > 0 && !o.summaryShown() {
			o.warnf("sink %q dropped %s events (buffer %d, on-full=%s)", l.Name(), thousandsInt(st.Dropped), l.Config().Buffer, l.Config().OnFull)
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

func thousandsInt(n uint64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

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
