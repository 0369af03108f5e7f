package crashcontext

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	fakerest "k8s.io/client-go/rest/fake"
	k8stesting "k8s.io/client-go/testing"
)

var t0 = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

// crashLooping is a pod whose container "app" crashed (exit 1) and waits in CrashLoopBackOff.
func crashLooping(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(name + "-uid")},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "sidecar"}, {Name: "app"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "sidecar", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			{Name: "app", RestartCount: 3,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=app"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 2, Signal: 0, Reason: "Error", Message: "config missing",
					StartedAt: metav1.NewTime(t0), FinishedAt: metav1.NewTime(t0.Add(3 * time.Second))}}},
		}},
	}
}

func warning(pod *corev1.Pod, name, reason, message string, count int32, last time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: pod.Namespace, Name: name},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: message, Count: count,
		LastTimestamp: metav1.NewTime(last),
	}
}

// logsReactor answers log requests with fn's text or error, and records their options.
func logsReactor(cs *fake.Clientset, fn func(opts *corev1.PodLogOptions) (string, error)) *[]corev1.PodLogOptions {
	var mu sync.Mutex
	seen := &[]corev1.PodLogOptions{}
	cs.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "log" {
			return false, nil, nil
		}
		opts := a.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions)
		mu.Lock()
		*seen = append(*seen, *opts)
		mu.Unlock()
		text, err := fn(opts)
		if err != nil {
			return true, nil, err
		}
		return true, &runtime.Unknown{Raw: []byte(text)}, nil
	})
	return seen
}

// slowLogs is the fake clientset with log requests answered by answer, which may take its
// time as a kubelet can (the fake's reactors run under its lock, so they cannot).
type slowLogs struct {
	kubernetes.Interface
	answer func(*http.Request) (string, error)
	count  atomic.Int32
}

func (s *slowLogs) CoreV1() corev1client.CoreV1Interface { return slowCore{s.Interface.CoreV1(), s} }

type slowCore struct {
	corev1client.CoreV1Interface
	s *slowLogs
}

func (c slowCore) Pods(ns string) corev1client.PodInterface {
	return slowPods{c.CoreV1Interface.Pods(ns), c.s, ns}
}

type slowPods struct {
	corev1client.PodInterface
	s  *slowLogs
	ns string
}

func (p slowPods) GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request {
	p.s.count.Add(1)
	c := &fakerest.RESTClient{
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		GroupVersion:         corev1.SchemeGroupVersion,
		VersionedAPIPath:     fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/log", p.ns, name),
		Client: fakerest.CreateHTTPClient(func(req *http.Request) (*http.Response, error) {
			text, err := p.s.answer(req)
			if err != nil {
				return nil, err
			}
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(text))}, nil
		}),
	}
	return c.Request()
}

// waitOr blocks until release is closed, or the request's context ends.
func waitOr(req *http.Request, release chan struct{}) error {
	select {
	case <-release:
		return nil
	case <-req.Context().Done():
		return req.Context().Err()
	}
}

func countActions(cs *fake.Clientset, verb, resource, sub string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource && a.GetSubresource() == sub {
			n++
		}
	}
	return n
}

// A crash loop: the previous instance's last lines, asked for with tailLines and the
// container's name; its exit; the wait; the pod's own Warning Events, most recent last.
func TestFetchCrashLoop(t *testing.T) {
	pod := crashLooping("web-1")
	other := crashLooping("web-2")
	normal := warning(pod, "e-normal", "Pulled", "pulled", 1, t0)
	normal.Type = corev1.EventTypeNormal
	cs := fake.NewClientset(
		warning(pod, "e1", "BackOff", "Back-off restarting failed container app", 7, t0.Add(5*time.Minute)),
		warning(pod, "e2", "Unhealthy", "Readiness probe failed", 2, t0.Add(time.Minute)),
		warning(pod, "e3", "FailedMount", "old news", 1, t0),
		normal,
		warning(other, "e-other", "BackOff", "another pod's", 1, t0.Add(time.Hour)),
	)
	seen := logsReactor(cs, func(*corev1.PodLogOptions) (string, error) {
		return "starting\nconnecting to db:5432\npanic: dial tcp: connection refused\n", nil
	})
	opts := DefaultOptions()
	opts.Warnings = 2
	c := New(cs, opts, nil).Fetch(context.Background(), pod, "app")

	if len(*seen) != 1 {
		t.Fatalf("%d log requests, want 1", len(*seen))
	}
	if got := (*seen)[0]; got.Container != "app" || !got.Previous || got.TailLines == nil || *got.TailLines != 20 {
		t.Errorf("log request options %+v, want container app, previous, tailLines 20", got)
	}
	want := Context{
		Container: "app",
		Log:       &Log{Previous: true, Lines: []string{"starting", "connecting to db:5432", "panic: dial tcp: connection refused"}},
		LastTermination: &Termination{ExitCode: 2, Reason: "Error", Message: "config missing",
			StartedAt: t0, FinishedAt: t0.Add(3 * time.Second)},
		Waiting: &Waiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=app"},
		Warnings: []Warning{
			{Reason: "Unhealthy", Message: "Readiness probe failed", Count: 2, Last: t0.Add(time.Minute)},
			{Reason: "BackOff", Message: "Back-off restarting failed container app", Count: 7, Last: t0.Add(5 * time.Minute)},
		},
	}
	if g, w := mustJSON(t, c), mustJSON(t, want); g != w {
		t.Errorf("context\n got %s\nwant %s", g, w)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A container that ended and was not restarted (a failed pod): its own log, not the
// previous one's; container "" picks it.
func TestFetchEndedContainer(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "job-x"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}, InitContainers: []corev1.Container{{Name: "init"}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", FinishedAt: metav1.NewTime(t0)}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Signal: 9, Reason: "OOMKilled", FinishedAt: metav1.NewTime(t0.Add(time.Minute))}}}},
		},
	}
	cs := fake.NewClientset()
	seen := logsReactor(cs, func(*corev1.PodLogOptions) (string, error) { return "allocating\n", nil })
	c := New(cs, DefaultOptions(), nil).Fetch(context.Background(), pod, "")
	if c.Container != "main" || len(*seen) != 1 || (*seen)[0].Previous || (*seen)[0].Container != "main" {
		t.Fatalf("container %q, requests %+v: want main's own log", c.Container, *seen)
	}
	if c.Log == nil || c.Log.Previous || !slices.Equal(c.Log.Lines, []string{"allocating"}) {
		t.Errorf("log %+v", c.Log)
	}
	if lt := c.LastTermination; lt == nil || lt.ExitCode != 137 || lt.Signal != 9 || lt.Reason != "OOMKilled" {
		t.Errorf("termination %+v", lt)
	}
	if c.Warnings != nil || c.WarningsError != "" {
		t.Errorf("warnings %+v %q, want none", c.Warnings, c.WarningsError)
	}
}

// An image that cannot be pulled: the container never ran, so no log is asked for; the
// wait and the Warning Events say what is wrong.
func TestFetchImagePull(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-3", UID: "u3"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "nginx:nope"`}}}}},
	}
	cs := fake.NewClientset(warning(pod, "e1", "Failed", `Failed to pull image "nginx:nope": not found`, 3, t0))
	logsReactor(cs, func(*corev1.PodLogOptions) (string, error) { return "", fmt.Errorf("no log request expected") })
	c := New(cs, DefaultOptions(), nil).Fetch(context.Background(), pod, "app")
	if n := countActions(cs, "get", "pods", "log"); n != 0 {
		t.Errorf("%d log requests for a container that never ran", n)
	}
	if c.Log != nil || c.LogError != "" || c.LastTermination != nil {
		t.Errorf("log %+v %q termination %+v, want none", c.Log, c.LogError, c.LastTermination)
	}
	if c.Waiting == nil || c.Waiting.Reason != "ImagePullBackOff" || len(c.Warnings) != 1 || c.Warnings[0].Reason != "Failed" {
		t.Errorf("waiting %+v warnings %+v", c.Waiting, c.Warnings)
	}
}

// Lines 0 and Warnings 0 ask nothing of the cluster.
func TestFetchNothingAsked(t *testing.T) {
	cs := fake.NewClientset()
	c := New(cs, Options{}, nil).Fetch(context.Background(), crashLooping("web-1"), "app")
	if n := len(cs.Actions()); n != 0 {
		t.Errorf("%d requests, want none: %v", n, cs.Actions())
	}
	if c.Log != nil || c.Warnings != nil || c.LastTermination == nil || c.LastTermination.ExitCode != 2 {
		t.Errorf("context %+v", c)
	}
}

// Without the right to read logs: said once however many pods, each context says it
// went without, and the Warning Events still come.
func TestFetchLogsForbiddenSaidOnce(t *testing.T) {
	a, b := crashLooping("web-1"), crashLooping("web-2")
	cs := fake.NewClientset(warning(a, "e1", "BackOff", "back-off", 1, t0))
	logsReactor(cs, func(*corev1.PodLogOptions) (string, error) {
		return "", apierrors.NewForbidden(schema.GroupResource{Resource: "pods/log"}, "web-1",
			fmt.Errorf(`User "watcher" cannot get resource "pods/log" in API group "" in the namespace "shop"`))
	})
	var notices []string
	f := New(cs, DefaultOptions(), func(line string) { notices = append(notices, line) })
	ca := f.Fetch(context.Background(), a, "app")
	cb := f.Fetch(context.Background(), b, "app")
	if len(notices) != 1 || !strings.Contains(notices[0], "not allowed to get pods/log in namespace shop") {
		t.Errorf("notices %q, want one that names pods/log and the namespace", notices)
	}
	for _, c := range []Context{ca, cb} {
		if c.Log != nil || c.LogError != "not allowed to get pods/log" {
			t.Errorf("log %+v, error %q", c.Log, c.LogError)
		}
	}
	if len(ca.Warnings) != 1 || ca.LastTermination == nil {
		t.Errorf("without logs the rest goes missing: %+v", ca)
	}
}

// Without the right to list events, likewise.
func TestFetchEventsForbiddenSaidOnce(t *testing.T) {
	cs := fake.NewClientset()
	logsReactor(cs, func(*corev1.PodLogOptions) (string, error) { return "boom\n", nil })
	cs.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", fmt.Errorf("no"))
	})
	var notices []string
	f := New(cs, DefaultOptions(), func(line string) { notices = append(notices, line) })
	f.Fetch(context.Background(), crashLooping("web-1"), "app")
	c := f.Fetch(context.Background(), crashLooping("web-2"), "app")
	if len(notices) != 1 || !strings.Contains(notices[0], "not allowed to list events in namespace shop") {
		t.Errorf("notices %q", notices)
	}
	if c.WarningsError != "not allowed to list events" || c.Log == nil || c.Log.Lines[0] != "boom" {
		t.Errorf("context %+v", c)
	}
}

// The API server's own words, when it refuses for another reason (a previous log the
// node no longer has).
func TestFetchServerMessage(t *testing.T) {
	cs := fake.NewClientset()
	msg := `previous terminated container "app" in pod "web-1" not found`
	logsReactor(cs, func(*corev1.PodLogOptions) (string, error) { return "", apierrors.NewBadRequest(msg) })
	var notices []string
	c := New(cs, DefaultOptions(), func(line string) { notices = append(notices, line) }).Fetch(context.Background(), crashLooping("web-1"), "app")
	if c.LogError != msg || c.Log != nil || len(notices) != 0 {
		t.Errorf("log error %q, notices %q; want %q and no notice", c.LogError, notices, msg)
	}
}

// A log request that does not answer: the call returns at the bound with what it has
// (the Warning Events), saying it went without the log.
func TestFetchTimeBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := crashLooping("web-1")
		release := make(chan struct{})
		cs := &slowLogs{Interface: fake.NewClientset(warning(pod, "e1", "BackOff", "back-off", 1, t0)),
			answer: func(req *http.Request) (string, error) { return "late\n", waitOr(req, release) }}
		opts := DefaultOptions()
		opts.Timeout = 1500 * time.Millisecond
		start := time.Now()
		c := New(cs, opts, nil).Fetch(context.Background(), pod, "app")
		if took := time.Since(start); took != 1500*time.Millisecond {
			t.Errorf("returned after %s, want the bound 1.5s", took)
		}
		if c.Log != nil || c.LogError != "no answer within 1.5s" {
			t.Errorf("log %+v error %q", c.Log, c.LogError)
		}
		if len(c.Warnings) != 1 {
			t.Errorf("warnings %+v: what came in time is kept", c.Warnings)
		}
		close(release)
	})
}

// The bound holds even against a client that ignores its context.
func TestFetchTimeBoundDeaf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		cs := &slowLogs{Interface: fake.NewClientset(),
			answer: func(*http.Request) (string, error) { <-release; return "late\n", nil }}
		start := time.Now()
		c := New(cs, DefaultOptions(), nil).Fetch(context.Background(), crashLooping("web-1"), "app")
		if took := time.Since(start); took != time.Second || c.LogError != "no answer within 1s" {
			t.Errorf("after %s: %q", took, c.LogError)
		}
		close(release)
	})
}

// The caller's context ending ends the wait.
func TestFetchCallerStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		cs := &slowLogs{Interface: fake.NewClientset(),
			answer: func(req *http.Request) (string, error) { return "late\n", waitOr(req, release) }}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		c := New(cs, DefaultOptions(), nil).Fetch(ctx, crashLooping("web-1"), "app")
		if took := time.Since(start); took != 100*time.Millisecond || c.LogError != "stopped before an answer came" {
			t.Errorf("after %s: %q", took, c.LogError)
		}
		close(release)
	})
}

// A call made while stopping asks nothing.
func TestFetchStopped(t *testing.T) {
	cs := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := New(cs, DefaultOptions(), nil).Fetch(ctx, crashLooping("web-1"), "app")
	if n := len(cs.Actions()); n != 0 || c.LogError != "stopped before an answer came" || c.LastTermination == nil {
		t.Errorf("%d requests, context %+v", n, c)
	}
}

// At most Concurrency fetches run at once; the others wait for a slot, within their bound.
func TestFetchConcurrencyBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var in, most atomic.Int32
		cs := &slowLogs{Interface: fake.NewClientset(), answer: func(req *http.Request) (string, error) {
			n := in.Add(1)
			defer in.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			return "x\n", waitOr(req, release)
		}}
		opts := DefaultOptions()
		opts.Concurrency, opts.Timeout = 2, time.Minute
		f := New(cs, opts, nil)
		results := make([]Context, 5)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() { results[i] = f.Fetch(context.Background(), crashLooping(fmt.Sprintf("web-%d", i)), "app") })
		}
		synctest.Wait()
		if n := in.Load(); n != 2 {
			t.Errorf("%d log requests in flight, want 2", n)
		}
		close(release)
		wg.Wait()
		if m := most.Load(); m != 2 {
			t.Errorf("at most %d in flight, want 2", m)
		}
		for i, c := range results {
			if c.Log == nil || c.Log.Lines[0] != "x" {
				t.Errorf("pod %d: %+v %q", i, c.Log, c.LogError)
			}
		}
	})
}

// A call that finds no free slot within its bound goes without.
func TestFetchNoSlotInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		// The first fetch holds its slot past its own bound: its client ignores the context.
		cs := &slowLogs{Interface: fake.NewClientset(), answer: func(*http.Request) (string, error) {
			<-release
			return "x\n", nil
		}}
		opts := DefaultOptions()
		opts.Concurrency = 1
		f := New(cs, opts, nil)
		var wg sync.WaitGroup
		wg.Go(func() { f.Fetch(context.Background(), crashLooping("web-1"), "app") })
		synctest.Wait()
		time.Sleep(500 * time.Millisecond)
		c := f.Fetch(context.Background(), crashLooping("web-2"), "app")
		if c.LogError != "no answer within 1s" || c.WarningsError != "no answer within 1s" || cs.count.Load() != 1 {
			t.Errorf("%q %q after %d log requests", c.LogError, c.WarningsError, cs.count.Load())
		}
		close(release)
		wg.Wait()
	})
}

// Calls for the same crash while one is in flight share its requests; a later call
// makes its own.
func TestFetchSharedWhileInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := crashLooping("web-1")
		release := make(chan struct{})
		fc := fake.NewClientset()
		cs := &slowLogs{Interface: fc, answer: func(req *http.Request) (string, error) {
			return "last words\n", waitOr(req, release)
		}}
		f := New(cs, DefaultOptions(), nil)
		var wg sync.WaitGroup
		results := make([]Context, 3)
		for i := range results {
			wg.Go(func() { results[i] = f.Fetch(context.Background(), pod, "app") })
			synctest.Wait()
		}
		close(release)
		wg.Wait()
		if n := cs.count.Load(); n != 1 {
			t.Errorf("%d log requests for three calls in flight together, want 1", n)
		}
		if n := countActions(fc, "list", "events", ""); n != 1 {
			t.Errorf("%d event lists, want 1", n)
		}
		for _, c := range results {
			if c.Log == nil || c.Log.Lines[0] != "last words" {
				t.Errorf("%+v %q", c.Log, c.LogError)
			}
		}
		f.Fetch(context.Background(), pod, "app")
		if n := cs.count.Load(); n != 2 {
			t.Errorf("%d log requests after a later call, want 2", n)
		}
	})
}

// Text is kept as the container wrote it: escaping is the printer's.
func TestFetchKeepsTextAsData(t *testing.T) {
	cs := fake.NewClientset()
	raw := "ok\n\x1b[31mred\x1b[0m \xff\r\n\u202eevil\n"
	logsReactor(cs, func(*corev1.PodLogOptions) (string, error) { return raw, nil })
	c := New(cs, DefaultOptions(), nil).Fetch(context.Background(), crashLooping("web-1"), "app")
	if got := strings.Join(c.Log.Lines, "\n") + "\n"; got != raw {
		t.Errorf("lines %q, want the text as it came %q", got, raw)
	}
}

// More than MaxLogBytes: the last bytes are kept, in whole lines, and marked cut.
func TestFetchMaxLogBytes(t *testing.T) {
	cs := fake.NewClientset()
	logsReactor(cs, func(*corev1.PodLogOptions) (string, error) { return "aaaa\nbbbb\ncccc\n", nil })
	opts := DefaultOptions()
	opts.MaxLogBytes = 12
	c := New(cs, opts, nil).Fetch(context.Background(), crashLooping("web-1"), "app")
	if c.Log == nil || !c.Log.Cut || !slices.Equal(c.Log.Lines, []string{"bbbb", "cccc"}) {
		t.Errorf("log %+v, want the last two whole lines, cut", c.Log)
	}
}

func TestReadTail(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
		cut   bool
	}{
		{"a\nb\n", 10, "a\nb\n", false},
		{"a\nb\n", 4, "a\nb\n", false},
		{"aa\nbb\n", 3, "bb\n", true}, // starts right after a line end: whole
		{"aa\nbb\n", 4, "bb\n", true}, // starts inside "aa": that line goes
		{"aaaaaa\n", 3, "", true},     // one line longer than the limit
		{strings.Repeat("x", 100000) + "\nlast\n", 10, "last\n", true},
		{strings.Repeat("line\n", 30000), 10, "line\nline\n", true},
	} {
		got, cut, err := readTail(strings.NewReader(tc.in), tc.limit)
		if err != nil || string(got) != tc.want || cut != tc.cut {
			t.Errorf("readTail(%.20q…, %d) = %q, %v, %v; want %q, %v", tc.in, tc.limit, got, cut, err, tc.want, tc.cut)
		}
	}
}

func TestCulprit(t *testing.T) {
	term := func(at time.Time) *corev1.ContainerStateTerminated {
		return &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(at)}
	}
	pod := func(ann map[string]string, sts ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "first"}, {Name: "second"}}},
			Status: corev1.PodStatus{ContainerStatuses: sts}}
	}
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"latest termination": {pod(nil,
			corev1.ContainerStatus{Name: "first", LastTerminationState: corev1.ContainerState{Terminated: term(t0)}},
			corev1.ContainerStatus{Name: "second", State: corev1.ContainerState{Terminated: term(t0.Add(time.Second))}}), "second"},
		"waiting": {pod(nil,
			corev1.ContainerStatus{Name: "first", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
			corev1.ContainerStatus{Name: "second", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}), "second"},
		"default container": {pod(map[string]string{"kubectl.kubernetes.io/default-container": "second"}), "second"},
		"first":             {pod(nil), "first"},
	} {
		if got := Culprit(tc.pod); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

func TestPodFrom(t *testing.T) {
	typed := crashLooping("web-1")
	if p, ok := PodFrom(typed); !ok || p != typed {
		t.Errorf("typed pod: %v", ok)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	p, ok := PodFrom(u)
	if !ok || p.Name != "web-1" || Culprit(p) != "app" {
		t.Errorf("unstructured pod: %v %+v", ok, p)
	}
	u.SetKind("ConfigMap")
	if _, ok := PodFrom(u); ok {
		t.Error("a ConfigMap taken for a pod")
	}
}
