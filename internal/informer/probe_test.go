package informer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/resource"
)

// fakeCheck is a probe check whose server becomes ready at readyAt, answering 429 with
// retryAfter before then if retryAfter is set; it records when each probe ran.
type fakeCheck struct {
	mu         sync.Mutex
	readyAt    time.Time
	retryAfter time.Duration
	probes     []time.Time
}

func (f *fakeCheck) check(context.Context) (bool, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	f.probes = append(f.probes, now)
	if now.Before(f.readyAt) {
		return false, f.retryAfter
	}
	return true, 0
}

func (f *fakeCheck) probeTimes(start time.Time) []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ds []time.Duration
	for _, p := range f.probes {
		ds = append(ds, p.Sub(start))
	}
	return ds
}

func TestServerProbeReleasesEveryWaiterAtTwoProbesASecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fc := &fakeCheck{readyAt: start.Add(2200 * time.Millisecond)}
		p := &serverProbe{check: fc.check, interval: probeInterval, ready: make(chan struct{})}
		released := make([]time.Duration, 3)
		var wg sync.WaitGroup
		for i := range released {
			wg.Go(func() {
				if err := p.wait(context.Background()); err != nil {
					t.Errorf("wait: %v", err)
				}
				released[i] = time.Since(start)
			})
		}
		wg.Wait()
		// One probe at a time for all three waiters, every 500 ms, until the one after
		// the server became ready at 2.2 s.
		want := []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 2 * time.Second, 2500 * time.Millisecond}
		if got := fc.probeTimes(start); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("probes at %v, want %v", got, want)
		}
		for i, r := range released {
			if r != 2500*time.Millisecond {
				t.Errorf("waiter %d released at %v, want 2.5s (the first probe that found the server ready)", i, r)
			}
		}

		// A later outage: the first probe comes at once, but never sooner than 500 ms
		// after the last one.
		time.Sleep(100 * time.Millisecond) // 2.6 s
		fc.mu.Lock()
		fc.readyAt = time.Now().Add(800 * time.Millisecond)
		fc.mu.Unlock()
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		want = append(want, 3*time.Second, 3500*time.Millisecond)
		if got := fc.probeTimes(start); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("probes at %v, want %v", got, want)
		}
	})
}

// On a path that silently stopped carrying packets, a check hangs until its timeout. The
// next check does not wait for it: the first one after the path is back finds the server,
// at the usual pace of two a second.
func TestServerProbeDoesNotWaitForAHungCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		pathBack := start.Add(1200 * time.Millisecond)
		var mu sync.Mutex
		var began []time.Duration
		check := func(ctx context.Context) (bool, time.Duration) {
			mu.Lock()
			began = append(began, time.Since(start))
			mu.Unlock()
			if time.Now().Before(pathBack) {
				time.Sleep(probeTimeout) // no answer: the check's own timeout ends it
				return false, 0
			}
			return true, 0
		}
		p := &serverProbe{check: check, interval: probeInterval, ready: make(chan struct{})}
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if released := time.Since(start); released != 1500*time.Millisecond {
			t.Errorf("released at %v, want 1.5s (the first check after the path came back at 1.2s)", released)
		}
		time.Sleep(probeTimeout) // the hung checks end
		mu.Lock()
		defer mu.Unlock()
		want := []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond}
		if fmt.Sprint(began) != fmt.Sprint(want) {
			t.Errorf("checks began at %v, want %v", began, want)
		}
	})
}

func TestServerProbeHonoursRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fc := &fakeCheck{readyAt: start.Add(4 * time.Second), retryAfter: 3 * time.Second}
		p := &serverProbe{check: fc.check, interval: probeInterval, ready: make(chan struct{})}
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := []time.Duration{0, 3 * time.Second, 6 * time.Second}
		if got := fc.probeTimes(start); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("probes at %v, want %v (3 s apart, as Retry-After asks)", got, want)
		}

		// A Retry-After beyond client-go's own backoff cap is capped.
		time.Sleep(time.Second) // past the last probe's Retry-After
		fc.mu.Lock()
		fc.readyAt, fc.retryAfter, fc.probes = time.Now().Add(time.Minute), time.Hour, nil
		fc.mu.Unlock()
		start = time.Now()
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		want = []time.Duration{0, maxRetryAfter, 2 * maxRetryAfter}
		if got := fc.probeTimes(start); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("probes at %v, want %v", got, want)
		}
	})
}

func TestServerProbeEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fc := &fakeCheck{readyAt: start.Add(time.Hour)}
		p := &serverProbe{check: fc.check, interval: probeInterval, ready: make(chan struct{})}
		ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
		defer cancel()
		if err := p.wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("wait = %v, want the context's error", err)
		}
		if took := time.Since(start); took != 1200*time.Millisecond {
			t.Errorf("wait returned after %v, want when the context ended (1.2s)", took)
		}
		// Nobody waits any more: the probing stops after the probe under way.
		synctest.Wait()
		time.Sleep(time.Minute)
		if got := fc.probeTimes(start); len(got) != 3 {
			t.Errorf("probes at %v, want 3 (none after the waiter left)", got)
		}
	})
}

// switchableServer is an HTTP server on a fixed address that can be switched off
// (connections refused) and on again, and told to answer 429.
type switchableServer struct {
	t    *testing.T
	addr string

	mu         sync.Mutex
	srv        *http.Server
	tooMany    bool // answer everything with 429 and Retry-After: 1
	readyzHits int
}

func newSwitchableServer(t *testing.T, handler http.Handler) *switchableServer {
	s := &switchableServer{t: t}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln, handler)
	t.Cleanup(s.off)
	return s
}

func (s *switchableServer) serve(ln net.Listener, handler http.Handler) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		tooMany := s.tooMany
		if r.URL.Path == "/readyz" {
			s.readyzHits++
		}
		s.mu.Unlock()
		if tooMany {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
		handler.ServeHTTP(w, r)
	})}
	s.srv = srv
	go func() { _ = srv.Serve(ln) }()
}

func (s *switchableServer) off() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		_ = s.srv.Close()
		s.srv = nil
	}
}

func (s *switchableServer) on(handler http.Handler) {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serve(ln, handler)
}

func (s *switchableServer) hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readyzHits
}

func (s *switchableServer) setTooMany(b bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tooMany = b
}

func (s *switchableServer) client(t *testing.T) rest.Interface {
	c, err := rest.UnversionedRESTClientFor(&rest.Config{Host: "http://" + s.addr,
		ContentConfig: rest.ContentConfig{NegotiatedSerializer: scheme.Codecs.WithoutConversion()}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReadyzCheck(t *testing.T) {
	var mu sync.Mutex
	code, retryAfter := http.StatusOK, ""
	srv := newSwitchableServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
	}))
	check := readyzCheck(srv.client(t))
	for _, c := range []struct {
		code       int
		retryAfter string
		ready      bool
		wait       time.Duration
	}{
		{http.StatusOK, "", true, 0},
		{http.StatusInternalServerError, "", false, 0}, // readyz checks failing
		{http.StatusTooManyRequests, "3", false, 3 * time.Second},
		{http.StatusServiceUnavailable, "2", false, 2 * time.Second},
		{http.StatusForbidden, "", true, 0}, // answers, but not to this user
	} {
		mu.Lock()
		code, retryAfter = c.code, c.retryAfter
		mu.Unlock()
		if ready, wait := check(context.Background()); ready != c.ready || wait != c.wait {
			t.Errorf("HTTP %d (Retry-After %q): ready %v, wait %v; want %v, %v", c.code, c.retryAfter, ready, wait, c.ready, c.wait)
		}
	}
	srv.off()
	if ready, _ := check(context.Background()); ready {
		t.Errorf("a server that is off was found ready")
	}
}

func TestUnreachable(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("Get \"https://x\": %w", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), true},
		{errors.New("unexpected EOF"), false}, // not io.ErrUnexpectedEOF itself: some other failure
		{apierrors.NewServiceUnavailable("shutting down"), true},
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewTimeoutError("timeout", 1), true},
		{apierrors.NewForbidden(gr, "", errors.New("no")), false},
		{apierrors.NewUnauthorized("who"), false},
		{apierrors.NewNotFound(gr, ""), false},
		{apierrors.NewResourceExpired("too old resource version"), false},
		{context.Canceled, false},
	} {
		if got := unreachable(c.err); got != c.want {
			t.Errorf("unreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestListRetriedUntilTheServerAnswers: once the first watch was established, a list
// that finds the server off waits for it, and says the watch was lost once; it
// returns when the server answers again, and at once on an answer such as 403, or when
// the informer stops.
func TestListRetriedUntilTheServerAnswers(t *testing.T) {
	var mu sync.Mutex
	listCode := http.StatusOK
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		code := listCode
		mu.Unlock()
		switch {
		case r.URL.Path == "/readyz":
			_, _ = w.Write([]byte("ok"))
		case code != http.StatusOK:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":"Forbidden","message":"no"}`, code)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`))
		}
	})
	srv := newSwitchableServer(t, handler)
	client := srv.client(t)
	// probed says each probe's result, so the test knows the list waited through it.
	probed := make(chan bool)
	readyz := readyzCheck(client)
	check := func(ctx context.Context) (bool, time.Duration) {
		ready, _ := readyz(ctx)
		probed <- ready
		return ready, 0 // Retry-After is TestServerProbeHonoursRetryAfter's
	}
	var warnings []string
	var warnMu sync.Mutex
	w := &watchReporter{
		inner: &cache.ListWatch{ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			list := &corev1.ConfigMapList{}
			err := client.Get().AbsPath("/api/v1/configmaps").Do(ctx).Into(list)
			return list, err
		}},
		resource: resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
		store:    func() cache.Store { return cache.NewStore(cache.MetaNamespaceKeyFunc) },
		warn: func(format string, args ...any) {
			warnMu.Lock()
			defer warnMu.Unlock()
			warnings = append(warnings, fmt.Sprintf(format, args...))
		},
		fatal:    func(err error) { t.Errorf("fatal after the first watch: %v", err) },
		probe:    &serverProbe{check: check, interval: 10 * time.Millisecond, ready: make(chan struct{})},
		watching: true,
	}
	type result struct {
		obj runtime.Object
		err error
	}
	list := func(ctx context.Context) <-chan result {
		done := make(chan result, 1)
		go func() {
			obj, err := w.ListWithContext(ctx, metav1.ListOptions{})
			done <- result{obj, err}
		}()
		return done
	}

	srv.off()
	done := list(context.Background())
	// The list waits while the server is off, and while it answers 429: two probes
	// that found it so, and the list still waits.
	for range 2 {
		if nextProbe(t, probed, done) {
			t.Fatal("a server that is off was found ready")
		}
	}
	pending(t, done)
	srv.setTooMany(true)
	srv.on(handler)
	for srv.hits() == 0 { // until a probe has been answered 429
		if nextProbe(t, probed, done) {
			t.Fatal("a server answering 429 was found ready")
		}
	}
	pending(t, done)
	srv.setTooMany(false)
	go func() {
		for range probed { // the probes from now on
		}
	}()
	srv.setTooMany(false)
	if r := <-done; r.err != nil {
		t.Errorf("list after the server came back: %v", r.err)
	}
	warnMu.Lock()
	got := strings.Join(warnings, "\n")
	warnMu.Unlock()
	if want := "watch of configmaps lost; re-listing…\n"; !strings.HasPrefix(got, want) || strings.Count(got, "lost") != 1 {
		t.Errorf("notices:\n%s\nwant one lost notice", got)
	}

	// An answer that is not about reaching the server is the caller's at once.
	mu.Lock()
	listCode = http.StatusForbidden
	mu.Unlock()
	if r := <-list(context.Background()); !apierrors.IsForbidden(r.err) {
		t.Errorf("list answered 403: err = %v, want the 403", r.err)
	}

	// Stopping the informer ends the wait.
	srv.off()
	ctx, cancel := context.WithCancel(context.Background())
	done = list(ctx)
	waitFor(t, func() bool { return w.probe.waitingNow() == 1 })
	pending(t, done)
	cancel()
	select {
	case r := <-done:
		if r.err == nil {
			t.Errorf("list of a stopped informer succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stopping the informer did not end the wait for the server")
	}
}

// TestNoWaitBeforeTheFirstWatch: a server that cannot be reached at start-up ends the
// command, as before.
func TestNoWaitBeforeTheFirstWatch(t *testing.T) {
	srv := newSwitchableServer(t, http.NotFoundHandler())
	client := srv.client(t)
	srv.off()
	var fatal error
	w := &watchReporter{
		inner: &cache.ListWatch{ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			list := &corev1.ConfigMapList{}
			return list, client.Get().AbsPath("/api/v1/configmaps").Do(ctx).Into(list)
		}},
		resource: resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
		warn:     func(string, ...any) {},
		fatal:    func(err error) { fatal = err },
		probe:    &serverProbe{check: readyzCheck(client), interval: 10 * time.Millisecond, ready: make(chan struct{})},
	}
	if _, err := w.ListWithContext(context.Background(), metav1.ListOptions{}); err == nil || fatal == nil {
		t.Errorf("list of a server that is off before the first watch: err %v, fatal %v; want both", err, fatal)
	}
}

func (p *serverProbe) waitingNow() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}

// nextProbe returns the next probe's result; it fails the test if the list returns
// rather than waiting for the probe.
func nextProbe[T any](t *testing.T, probed <-chan bool, done <-chan T) bool {
	t.Helper()
	select {
	case ready := <-probed:
		return ready
	case r := <-done:
		t.Fatalf("the list returned (%v) rather than wait for the server", r)
		return false
	}
}

// pending fails the test if the list is done.
func pending[T any](t *testing.T, done <-chan T) {
	t.Helper()
	select {
	case r := <-done:
		t.Fatalf("the list returned (%v) while the server could not serve it", r)
	default:
	}
}

// waitFor polls cond (for tests against a real server, where time is real).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The readiness probes, on and off (Recovery.NoReadinessProbe): NewClients gives the
// informers a probe only when on; without one, a list that cannot reach the server fails
// at once, and client-go's reflector waits its backoff before the next (reflector.go,
// behaviour 5), where with one the list waits for the server (TestListRetriedUntilTheServerAnswers).
func TestReadinessProbeSwitch(t *testing.T) {
	for _, off := range []bool{false, true} {
		clients, err := NewClients(&rest.Config{Host: "http://127.0.0.1:1"}, Recovery{NoReadinessProbe: off})
		if err != nil {
			t.Fatal(err)
		}
		if hasProbe := clients.probe != nil; hasProbe == off {
			t.Errorf("NoReadinessProbe %v: the informers have a readiness probe: %v", off, hasProbe)
		}
	}

	calls := 0
	w := &watchReporter{
		inner: &cache.ListWatch{ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			calls++
			return nil, connectionRefused
		}},
		resource: resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
		warn:     func(string, ...any) {},
		fatal:    func(err error) { t.Errorf("fatal after the first watch: %v", err) },
		watching: true,
	}
	if _, err := w.ListWithContext(context.Background(), metav1.ListOptions{}); !errors.Is(err, syscall.ECONNREFUSED) || calls != 1 {
		t.Errorf("without a probe, a list refused a connection returned %v after %d calls, want the refusal after one", err, calls)
	}
}
