// Package crashcontext fetches what a container's crash left behind, for an event that
// tells of it (a crash loop, an OOMKill, a failed container, an image that cannot be
// pulled): the last lines of the log of the container instance that ended, how it ended
// (exit code, reason, signal, termination message), what it waits for now, and the pod's
// recent Warning Events. A reader of the alert then has the crash's own words without
// going to a terminal for `kubectl logs --previous` and `kubectl describe`.
//
// A Fetcher makes at most one log request and one event list per call, for one pod,
// within a time bound (DefaultTimeout) and with a bounded number of calls in flight;
// concurrent calls for the same crash share one fetch. Past the bound a call returns
// what it has, and says what it went without. Without the right to read logs (or to list
// events) it says so once, through the notice function, and goes on without them.
//
// Everything a Context holds is text from the cluster and the container, kept as it came:
// log lines are whatever the container wrote (control characters, terminal escapes,
// invalid UTF-8 included), reasons and messages whatever the kubelet, a controller or
// the API server said. It is data: whatever prints it to a terminal escapes it
// (internal/escape), as it does every other string taken from an object.
package crashcontext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Defaults of Options.
const (
	DefaultLines       = 20
	DefaultWarnings    = 5
	DefaultTimeout     = time.Second
	DefaultConcurrency = 4
	DefaultMaxLogBytes = 64 << 10
	DefaultLate        = 10 * time.Second
)

// Options says how much a Fetcher fetches, and how long and how many at once.
type Options struct {
	// Lines is how many of the log's last lines to ask for (tailLines); 0 asks for no
	// log at all.
	Lines int
	// Warnings is how many of the pod's most recent Warning Events to keep; 0 lists none.
	Warnings int
	// Timeout bounds one call, the wait for a free slot included; <= 0 is DefaultTimeout.
	Timeout time.Duration
	// Concurrency is how many fetches one Fetcher runs at once; <= 0 is
	// DefaultConcurrency. Calls beyond it wait for a slot within their Timeout.
	Concurrency int
	// MaxLogBytes bounds the log text kept: the last MaxLogBytes bytes of what the
	// server sends, in whole lines; <= 0 is DefaultMaxLogBytes.
	MaxLogBytes int
	// Late is how much longer than Timeout a fetch begun by Start may go on, for a sink
	// that can add what came late to what it sent; <= 0 is DefaultLate.
	Late time.Duration
}

// DefaultOptions are the options of an alert's context: 20 log lines, 5 Warning Events,
// within one second, four pods at a time.
func DefaultOptions() Options {
	return Options{Lines: DefaultLines, Warnings: DefaultWarnings, Timeout: DefaultTimeout,
		Concurrency: DefaultConcurrency, MaxLogBytes: DefaultMaxLogBytes, Late: DefaultLate}
}

// Context is what one container's crash left behind, and its parts: the event's own
// types (package event), which the events carry to every sink.
type (
	Context     = event.CrashContext
	Log         = event.CrashLog
	Termination = event.Termination
	Waiting     = event.Waiting
	Warning     = event.Warning
)

// Fetcher fetches crash contexts from one cluster. Its methods are safe for concurrent use.
type Fetcher struct {
	client kubernetes.Interface
	opts   Options
	notice func(string)
	slots  chan struct{}

	logsDenied, eventsDenied sync.Once

	mu       sync.Mutex
	inflight map[fetchKey]*fetch
}

// New makes a Fetcher that asks the cluster through client. notice (nil for none) gets
// one line, once per Fetcher, when the client may not read logs, and once when it may
// not list events: what is missing from every context from then on, and what right
// would give it.
func New(client kubernetes.Interface, opts Options, notice func(line string)) *Fetcher {
	def := DefaultOptions()
	if opts.Timeout <= 0 {
		opts.Timeout = def.Timeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = def.Concurrency
	}
	if opts.MaxLogBytes <= 0 {
		opts.MaxLogBytes = def.MaxLogBytes
	}
	if opts.Late <= 0 {
		opts.Late = def.Late
	}
	opts.Lines, opts.Warnings = max(opts.Lines, 0), max(opts.Warnings, 0)
	if notice == nil {
		notice = func(string) {}
	}
	return &Fetcher{client: client, opts: opts, notice: notice,
		slots: make(chan struct{}, opts.Concurrency), inflight: map[fetchKey]*fetch{}}
}

// fetchKey names one crash: calls for it while a fetch of it is in flight share that one.
type fetchKey struct {
	namespace, pod, uid, container string
	previous                       bool
	finished                       time.Time
}

// fetch is one fetch in flight: its results, filled in as its two requests answer.
type fetch struct {
	deadline time.Time
	timeout  time.Duration // its bound, said when an answer did not come within it
	done     chan struct{}

	mu            sync.Mutex
	logDone       bool
	log           *Log
	logErr        string
	warningsDone  bool
	warnings      []Warning
	warningsError string
}

// Fetch returns the context of container's crash in pod; container "" is Culprit's
// choice. The pod is the state the event shows (its status says which container
// instance ended and how); the log and the Warning Events are asked of the cluster,
// within Options.Timeout, or ctx's end if that comes first. It never fails: what it
// could not get, its Context says it went without.
func (f *Fetcher) Fetch(ctx context.Context, pod *corev1.Pod, container string) Context {
	return f.fetchWithin(ctx, pod, container, f.opts.Timeout)
}

// Start begins fetching the context of container's crash in pod for an event on its way
// to the sinks: they wait for it (event.PendingContext.Wait) until Options.Timeout from
// now, and go without what has not come by then; the fetch goes on for Options.Late
// more, for a sink that can add it to what it sent.
func (f *Fetcher) Start(ctx context.Context, pod *corev1.Pod, container string) *event.PendingContext {
	if container == "" {
		container = Culprit(pod)
	}
	early, wantLog, wantWarnings := f.local(pod, container)
	late := fmt.Sprintf("no answer within %s", f.opts.Timeout)
	if wantLog {
		early.LogError = late
	}
	if wantWarnings {
		early.WarningsError = late
	}
	p := event.NewPendingContext(time.Now().Add(f.opts.Timeout), &early)
	if !wantLog && !wantWarnings {
		p.Done(&early)
		return p
	}
	go func() {
		c := f.fetchWithin(ctx, pod, container, f.opts.Timeout+f.opts.Late)
		p.Done(&c)
	}()
	return p
}

// local is what the pod's status says of container's crash, without asking the cluster,
// and whether its log and the Warning Events are to be asked for.
func (f *Fetcher) local(pod *corev1.Pod, container string) (c Context, wantLog, wantWarnings bool) {
	c = Context{Container: container}
	st := containerStatus(pod, container)
	var ended *corev1.ContainerStateTerminated
	if st != nil {
		switch {
		case st.State.Terminated != nil:
			ended = st.State.Terminated
		case st.LastTerminationState.Terminated != nil:
			ended = st.LastTerminationState.Terminated
		}
		if w := st.State.Waiting; w != nil {
			c.Waiting = &Waiting{Reason: w.Reason, Message: w.Message}
		}
	}
	if ended != nil {
		c.LastTermination = &Termination{ExitCode: ended.ExitCode, Signal: ended.Signal,
			Reason: ended.Reason, Message: ended.Message,
			StartedAt: ended.StartedAt.Time, FinishedAt: ended.FinishedAt.Time}
	}
	return c, f.opts.Lines > 0 && ended != nil, f.opts.Warnings > 0
}

// fetchWithin is Fetch within timeout.
func (f *Fetcher) fetchWithin(ctx context.Context, pod *corev1.Pod, container string, timeout time.Duration) Context {
	if container == "" {
		container = Culprit(pod)
	}
	c, wantLog, wantWarnings := f.local(pod, container)
	if !wantLog && !wantWarnings {
		return c
	}
	if ctx.Err() != nil {
		// Stopping already: ask nothing.
		if wantLog {
			c.LogError = "stopped before an answer came"
		}
		if wantWarnings {
			c.WarningsError = "stopped before an answer came"
		}
		return c
	}
	previous := false
	var finished time.Time
	if st := containerStatus(pod, container); st != nil && st.State.Terminated == nil && st.LastTerminationState.Terminated != nil {
		previous = true
	}
	if c.LastTermination != nil {
		finished = c.LastTermination.FinishedAt
	}
	key := fetchKey{namespace: pod.Namespace, pod: pod.Name, uid: string(pod.UID), container: container, previous: previous, finished: finished}
	f.mu.Lock()
	ft, joined := f.inflight[key]
	if !joined {
		ft = &fetch{deadline: time.Now().Add(timeout), timeout: timeout, done: make(chan struct{})}
		f.inflight[key] = ft
		go f.run(ctx, key, ft, pod, wantLog, wantWarnings)
	}
	f.mu.Unlock()

	// The bound holds whatever the client does: a request still out at the deadline is
	// left to end on its context, and this call goes without its answer.
	deadline := ft.deadline
	if own := time.Now().Add(timeout); own.Before(deadline) {
		deadline = own
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	late := fmt.Sprintf("no answer within %s", timeout)
	select {
	case <-ft.done:
	case <-timer.C:
	case <-ctx.Done():
		late = "stopped before an answer came"
	}
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if wantLog {
		switch {
		case !ft.logDone:
			c.LogError = late
		case ft.logErr != "":
			c.LogError = ft.logErr
		default:
			c.Log = ft.log
		}
	}
	if wantWarnings {
		switch {
		case !ft.warningsDone:
			c.WarningsError = late
		case ft.warningsError != "":
			c.WarningsError = ft.warningsError
		default:
			c.Warnings = ft.warnings
		}
	}
	return c
}

// run makes one fetch's requests, within its deadline and a slot, and then lets the
// next call for the same crash make its own.
func (f *Fetcher) run(parent context.Context, key fetchKey, ft *fetch, pod *corev1.Pod, wantLog, wantWarnings bool) {
	// The fetch is shared: the call that started it may end first without ending it.
	ctx, cancel := context.WithDeadline(context.WithoutCancel(parent), ft.deadline)
	defer func() {
		cancel()
		f.mu.Lock()
		delete(f.inflight, key)
		f.mu.Unlock()
		close(ft.done)
	}()
	select {
	case f.slots <- struct{}{}:
		defer func() { <-f.slots }()
	case <-ctx.Done():
		return
	}
	var wg sync.WaitGroup
	if wantLog {
		wg.Go(func() {
			log, errText := f.fetchLog(ctx, pod, key.container, key.previous, ft.timeout)
			ft.mu.Lock()
			ft.log, ft.logErr, ft.logDone = log, errText, true
			ft.mu.Unlock()
		})
	}
	if wantWarnings {
		wg.Go(func() {
			warnings, errText := f.fetchWarnings(ctx, pod, ft.timeout)
			ft.mu.Lock()
			ft.warnings, ft.warningsError, ft.warningsDone = warnings, errText, true
			ft.mu.Unlock()
		})
	}
	wg.Wait()
}

// fetchLog asks for the container's last lines: one request.
func (f *Fetcher) fetchLog(ctx context.Context, pod *corev1.Pod, container string, previous bool, timeout time.Duration) (*Log, string) {
	tail := int64(f.opts.Lines)
	req := f.client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: container, Previous: previous, TailLines: &tail})
	stream, err := req.Stream(ctx)
	if err != nil {
		return nil, f.problem(ctx, err, timeout, pod.Namespace, &f.logsDenied, "get pods/log",
			"crash context: not allowed to get pods/log in namespace %s: alerts go without the crash's log lines (grant get on pods/log to read them)")
	}
	defer stream.Close()
	text, cut, err := readTail(stream, f.opts.MaxLogBytes)
	if err != nil {
		return nil, f.problem(ctx, err, timeout, pod.Namespace, &f.logsDenied, "get pods/log", "")
	}
	return &Log{Previous: previous, Lines: splitLines(text), Cut: cut}, ""
}

// fetchWarnings lists the pod's Warning Events and keeps the most recent: one request.
func (f *Fetcher) fetchWarnings(ctx context.Context, pod *corev1.Pod, timeout time.Duration) ([]Warning, string) {
	sel := fields.Set{"involvedObject.name": pod.Name, "type": corev1.EventTypeWarning}
	if pod.UID != "" {
		sel["involvedObject.uid"] = string(pod.UID)
	}
	list, err := f.client.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return nil, f.problem(ctx, err, timeout, pod.Namespace, &f.eventsDenied, "list events",
			"crash context: not allowed to list events in namespace %s: alerts go without the pod's Warning Events (grant list on events to read them)")
	}
	var kept []corev1.Event
	for _, e := range list.Items {
		// The server filters by the field selector; a cache or a fake may not.
		if e.Type != corev1.EventTypeWarning || e.InvolvedObject.Name != pod.Name ||
			(pod.UID != "" && e.InvolvedObject.UID != pod.UID) || (e.InvolvedObject.Kind != "" && e.InvolvedObject.Kind != "Pod") {
			continue
		}
		kept = append(kept, e)
	}
	slices.SortStableFunc(kept, func(a, b corev1.Event) int { return lastSeen(a).Compare(lastSeen(b)) })
	if len(kept) > f.opts.Warnings {
		kept = kept[len(kept)-f.opts.Warnings:]
	}
	var warnings []Warning
	for _, e := range kept {
		n := e.Count
		if e.Series != nil && e.Series.Count > n {
			n = e.Series.Count
		}
		warnings = append(warnings, Warning{Reason: e.Reason, Message: e.Message, Count: max(n, 1), Last: lastSeen(e)})
	}
	return warnings, ""
}

// lastSeen is when an Event last happened, whichever API wrote it.
func lastSeen(e corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// problem is the one line a Context gives for a request that failed. A refusal for want
// of rights is also said once through the notice (denied, when deniedNotice is not "").
func (f *Fetcher) problem(ctx context.Context, err error, timeout time.Duration, namespace string, once *sync.Once, what, deniedNotice string) string {
	switch {
	case apierrors.IsForbidden(err):
		if deniedNotice != "" {
			once.Do(func() { f.notice(fmt.Sprintf(deniedNotice, namespace)) })
		}
		return "not allowed to " + what
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", timeout)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// readTail reads r to its end and returns its last limit bytes at most, in whole lines
// (cut is true when something before them was dropped).
func readTail(r io.Reader, limit int) (text []byte, cut bool, err error) {
	var buf []byte
	chunk := make([]byte, 32<<10)
	for {
		n, rerr := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		// One byte more than the limit is kept, to know whether the text kept starts a line.
		if len(buf) > 2*limit+1 {
			buf, cut = append(buf[:0], buf[len(buf)-limit-1:]...), true
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, false, rerr
		}
	}
	if len(buf) <= limit {
		return buf, cut, nil
	}
	lineStart := buf[len(buf)-limit-1] == '\n'
	buf = buf[len(buf)-limit:]
	if !lineStart {
		// The first line is partial: its start went with what was dropped.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			buf = buf[:0]
		}
	}
	return buf, true, nil
}

// splitLines splits a log into its lines, without their ends.
func splitLines(text []byte) []string {
	s := strings.TrimSuffix(string(text), "\n")
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "\n")
}

// containerStatus finds the status of the named container, init and ephemeral ones included.
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// Culprit is the container of pod whose trouble an event most likely tells of: the one
// that ended most recently (its current or its last termination), else the first that
// waits for a reason other than starting (CrashLoopBackOff, ImagePullBackOff), else the
// pod's default container (kubectl's annotation), else its first.
func Culprit(pod *corev1.Pod) string {
	var name string
	var latest time.Time
	var waiting string
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for _, st := range list {
			for _, t := range []*corev1.ContainerStateTerminated{st.State.Terminated, st.LastTerminationState.Terminated} {
				if t != nil && (name == "" || t.FinishedAt.After(latest)) {
					name, latest = st.Name, t.FinishedAt.Time
				}
			}
			if w := st.State.Waiting; w != nil && waiting == "" && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
				waiting = st.Name
			}
		}
	}
	switch {
	case name != "":
		return name
	case waiting != "":
		return waiting
	case pod.Annotations["kubectl.kubernetes.io/default-container"] != "":
		return pod.Annotations["kubectl.kubernetes.io/default-container"]
	case len(pod.Spec.Containers) > 0:
		return pod.Spec.Containers[0].Name
	}
	return ""
}

// PodFrom is the pod an event's object is, typed or unstructured.
func PodFrom(obj runtime.Object) (*corev1.Pod, bool) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o, true
	case runtime.Unstructured:
		if o.GetObjectKind().GroupVersionKind().Kind != "Pod" {
			return nil, false
		}
		var pod corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), &pod); err != nil {
			return nil, false
		}
		return &pod, true
	}
	return nil, false
}
