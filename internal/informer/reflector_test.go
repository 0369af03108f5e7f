package informer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
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
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// These tests drive client-go's real reflector, through the two informers kubeevents
// builds (NewInformerWithOptions for one or several lanes, NewSharedIndexInformerWithOptions
// otherwise), against a scripted ListerWatcher, in a synctest bubble: each asserts one of
// the behaviours reflector.go lists, and fails where a client-go other than
// clientGoVersion behaves otherwise.

// TestClientGoIsThePinnedOne fails on a client-go other than the one reflector.go was
// written against: run the TestReflector tests, revisit the pieces whose behaviour
// changed, and then move clientGoVersion.
func TestClientGoIsThePinnedOne(t *testing.T) {
	// A test binary carries no dependency versions (debug.ReadBuildInfo): go.mod says.
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var required []string
	for line := range strings.Lines(string(gomod)) {
		fields := strings.Fields(line)
		if slices.Contains(fields, "k8s.io/client-go") {
			required = append(required, strings.Join(fields, " "))
		}
	}
	if want := "k8s.io/client-go " + clientGoVersion; !slices.Equal(required, []string{want}) {
		t.Errorf("go.mod says %q of client-go, reflector.go was written against %q: see its comment", required, want)
	}
}

// lwCall is one call the reflector made of its ListerWatcher.
type lwCall struct {
	op   string // "list" or "watch"
	at   time.Duration
	opts metav1.ListOptions
}

// scriptedLW answers the reflector's calls with list and watch, given the number of the
// call among those of its kind (0 for the first), and notes every call.
type scriptedLW struct {
	start  time.Time
	list   func(n int, opts metav1.ListOptions) (runtime.Object, error)
	watch  func(n int, opts metav1.ListOptions) (watch.Interface, error)
	called chan struct{}

	mu             sync.Mutex
	calls          []lwCall
	lists, watches int
}

func newScriptedLW(list func(int, metav1.ListOptions) (runtime.Object, error), wat func(int, metav1.ListOptions) (watch.Interface, error)) *scriptedLW {
	return &scriptedLW{start: time.Now(), list: list, watch: wat, called: make(chan struct{}, 1000)}
}

func (l *scriptedLW) note(op string, opts metav1.ListOptions) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, lwCall{op: op, at: time.Since(l.start), opts: opts})
	l.called <- struct{}{}
	n := l.lists
	if op == "list" {
		l.lists++
	} else {
		n = l.watches
		l.watches++
	}
	return n
}

func (l *scriptedLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.list(l.note("list", opts), opts)
}

func (l *scriptedLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.watch(l.note("watch", opts), opts)
}

// IsWatchListSemanticsUnSupported: as the watchReporter, list rather than stream.
func (l *scriptedLW) IsWatchListSemanticsUnSupported() bool { return true }

// waitCalls returns the first n calls once they were made.
func (l *scriptedLW) waitCalls(t *testing.T, n int) []lwCall {
	t.Helper()
	for {
		l.mu.Lock()
		if len(l.calls) >= n {
			calls := slices.Clone(l.calls[:n])
			l.mu.Unlock()
			return calls
		}
		l.mu.Unlock()
		select {
		case <-l.called:
		case <-time.After(10 * time.Minute):
			t.Fatalf("the reflector made %d calls in 10 minutes, want %d", len(l.calls), n)
		}
	}
}

// scriptedWatch hands on events, then ends after endAfter (never by itself if negative).
type scriptedWatch struct {
	ch   chan watch.Event
	stop chan struct{}
	once sync.Once
}

func newScriptedWatch(endAfter time.Duration, events ...watch.Event) *scriptedWatch {
	return newDelayedWatch(0, endAfter, events...)
}

// newDelayedWatch is a scriptedWatch that hands on its events only after running for
// before.
func newDelayedWatch(before, endAfter time.Duration, events ...watch.Event) *scriptedWatch {
	w := &scriptedWatch{ch: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.ch)
		select {
		case <-time.After(before):
		case <-w.stop:
			return
		}
		for _, ev := range events {
			select {
			case w.ch <- ev:
			case <-w.stop:
				return
			}
		}
		if endAfter < 0 {
			<-w.stop
			return
		}
		select {
		case <-time.After(endAfter):
		case <-w.stop:
		}
	}()
	return w
}

// firstWatch answers the first watch call with a watch that hands on events and ends
// after endAfter, and every later one with a watch that runs until stopped.
func firstWatch(endAfter time.Duration, events ...watch.Event) func(int, metav1.ListOptions) (watch.Interface, error) {
	return func(n int, _ metav1.ListOptions) (watch.Interface, error) {
		if n == 0 {
			return newScriptedWatch(endAfter, events...), nil
		}
		return newScriptedWatch(-1), nil
	}
}

func (w *scriptedWatch) ResultChan() <-chan watch.Event { return w.ch }
func (w *scriptedWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }

// informerKinds are the two informers kubeevents builds; run starts one on lw and returns
// its store and the function that stops it and waits until it stopped.
var informerKinds = []struct {
	name string
	run  func(lw cache.ListerWatcher) (cache.Store, func())
}{
	{"NewInformerWithOptions", func(lw cache.ListerWatcher) (cache.Store, func()) {
		store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: &corev1.ConfigMap{},
			Handler: cache.ResourceEventHandlerFuncs{}})
		return store, started(ctrl.RunWithContext)
	}},
	{"NewSharedIndexInformerWithOptions", func(lw cache.ListerWatcher) (cache.Store, func()) {
		inf := cache.NewSharedIndexInformerWithOptions(lw, &corev1.ConfigMap{}, cache.SharedIndexInformerOptions{})
		_ = inf.SetWatchErrorHandlerWithContext(func(context.Context, *cache.Reflector, error) {})
		return inf.GetStore(), started(inf.RunWithContext)
	}},
}

func started(run func(context.Context)) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// eachInformer runs test in a synctest bubble once for each informer kind.
func eachInformer(t *testing.T, test func(t *testing.T, run func(cache.ListerWatcher) (cache.Store, func()))) {
	// client-go's error handlers pause between errors by the time since the last one,
	// kept across bubbles, whose clocks all start at the same instant: a later bubble would
	// be paused for as long as earlier ones ran.
	handlers := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{func(context.Context, error, string, ...any) {}}
	t.Cleanup(func() { utilruntime.ErrorHandlers = handlers })
	for _, kind := range informerKinds {
		t.Run(kind.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { test(t, kind.run) })
		})
	}
}

func configMapList(rv string, items ...corev1.ConfigMap) *corev1.ConfigMapList {
	return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: items}
}

// listAt lists one ConfigMap at resourceVersion rv, every time.
func listAt(rv string) func(int, metav1.ListOptions) (runtime.Object, error) {
	return func(int, metav1.ListOptions) (runtime.Object, error) {
		return configMapList(rv, *configMap("a", rv)), nil
	}
}

var (
	goneEvent = watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired("too old resource version: 10 (20)").ErrStatus}
	// lostEvent is the ERROR client-go's StreamWatcher (and package decode) make of a watch
	// whose connection was lost.
	lostEvent = watch.Event{Type: watch.Error, Object: apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding").
			AsObject(errors.New("unable to decode an event from the watch stream: http2: client connection lost"))}
	connectionRefused = &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
)

// backoffWindow is where the reflector's n-th wait (1 for the first) falls: its backoff
// step, and up to as much again at random.
func backoffWindow(n int) (low, high time.Duration) {
	d := reflectorBackoff.Duration
	for range n - 1 {
		d = min(time.Duration(float64(d)*reflectorBackoff.Factor), reflectorBackoff.Cap)
	}
	return d, d + time.Duration(float64(d)*reflectorBackoff.Jitter)
}

func checkWaited(t *testing.T, what string, waited time.Duration, n int) {
	t.Helper()
	if low, high := backoffWindow(n); waited < low || waited >= high {
		t.Errorf("%s: the reflector waited %s, want its backoff's step %d, in [%s, %s)", what, waited, n, low, high)
	}
}

// Behaviours 1 and 2: a watch that ends before any event is taken for a failure exactly
// when rules.TakesForFailure says so: the reflector then waits its backoff and re-lists;
// otherwise it opens the next watch at once, from where the last one was. A watch that
// had an event is opened again at once, from that event's resourceVersion.
func TestReflectorTakesAShortWatchForAFailure(t *testing.T) {
	for _, ranFor := range []time.Duration{0, shortWatch - time.Millisecond, shortWatch, 5 * time.Minute} {
		t.Run(ranFor.String(), func(t *testing.T) {
			eachInformer(t, func(t *testing.T, run func(cache.ListerWatcher) (cache.Store, func())) {
				lw := newScriptedLW(listAt("10"), firstWatch(ranFor))
				_, stop := run(lw)
				defer stop()
				calls := lw.waitCalls(t, 3)
				next, failed := calls[2], rules.TakesForFailure(ranFor)
				waited := next.at - calls[1].at - ranFor
				switch {
				case failed && next.op != "list":
					t.Errorf("after a watch that ended after %s with no event, the reflector's next call was a %s, want a re-list (rules.TakesForFailure says so)", ranFor, next.op)
				case failed:
					checkWaited(t, "before the re-list", waited, 1)
				case next.op != "watch" || waited != 0 || next.opts.ResourceVersion != "10":
					t.Errorf("after a watch that ended after %s with no event, the reflector's next call was a %s at resourceVersion %q, %s later; want a watch at 10 at once (rules.TakesForFailure says it is no failure)",
						ranFor, next.op, next.opts.ResourceVersion, waited)
				}
			})
		})
	}
	t.Run("after an event", func(t *testing.T) {
		eachInformer(t, func(t *testing.T, run func(cache.ListerWatcher) (cache.Store, func())) {
			lw := newScriptedLW(listAt("10"), firstWatch(0, watch.Event{Type: watch.Modified, Object: configMap("a", "11")}))
			_, stop := run(lw)
			defer stop()
			calls := lw.waitCalls(t, 3)
			if next := calls[2]; next.op != "watch" || next.at != calls[1].at || next.opts.ResourceVersion != "11" {
				t.Errorf("after a watch that handed on an event at 11 and ended at once, the next call was a %s at %q, %s later; want a watch at 11 at once",
					next.op, next.opts.ResourceVersion, next.at-calls[1].at)
			}
		})
	})
}

// Behaviours 1 and 3: the events of rules.ContinueAt, handed on by a watch that then ends
// at once, have the reflector open its next watch at their resourceVersion, at once: what
// the ended-early BOOKMARK and the re-list in place hand on.
func TestReflectorContinuesAtABookmark(t *testing.T) {
	eachInformer(t, func(t *testing.T, run func(cache.ListerWatcher) (cache.Store, func())) {
		continueAt, err := rules.ContinueAt(&corev1.ConfigMap{}, "15")
		if err != nil {
			t.Fatal(err)
		}
		lw := newScriptedLW(listAt("10"), firstWatch(0, continueAt...))
		_, stop := run(lw)
		defer stop()
		calls := lw.waitCalls(t, 3)
		if next := calls[2]; next.op != "watch" || next.at != calls[1].at || next.opts.ResourceVersion != "15" {
			t.Errorf("after a watch that handed on rules.ContinueAt(15) and ended at once, the next call was a %s at %q, %s later; want a watch at 15 at once",
				next.op, next.opts.ResourceVersion, next.at-calls[1].at)
		}
	})
}

// Behaviour 4: a watch that ends with an ERROR event, 410 Gone or the 500 of a lost
// connection, has the reflector wait its backoff and re-list, from the resourceVersion it
// had, in one piece (no limit): what the re-list in place and connectionLost spare it.
func TestReflectorRelistsAfterAnError(t *testing.T) {
	if !isGone(goneEvent.Object) || !connectionLost(lostEvent.Object) {
		t.Fatal("the test's ERROR events are not those the watchReporter acts on")
	}
	for name, ev := range map[string]watch.Event{"410 Gone": goneEvent, "connection lost": lostEvent} {
		t.Run(name, func(t *testing.T) {
			eachInformer(t, func(t *testing.T, run func(cache.ListerWatcher) (cache.Store, func())) {
				lw := newScriptedLW(listAt("10"), firstWatch(0, ev))
				_, stop := run(lw)
				defer stop()
				calls := lw.waitCalls(t, 3)
				next := calls[2]
				if next.op != "list" || next.opts.ResourceVersion != "10" || next.opts.Limit != 0 || next.opts.Continue != "" {
					t.Fatalf("after a watch that ended with %s, the next call was a %s with %+v, want a list at resourceVersion 10 without limit", name, next.op, next.opts)
				}
				checkWaited(t, "before the re-list", next.at-calls[1].at, 1)
			})
		})
	}
}

// Behaviour 5: a failed call has the reflector wait its backoff before the next one: a
// watch refused a connection is tried again, any other failed watch or list re-lists.
// The readiness probes hold such calls until the server answers instead.
func TestReflectorBacksOffAfterAFailedCall(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("the server is shutting down")
	cases := []struct {
		name            string
		listErr, watErr error
		next            string
	}{
		{"watch refused a connection", nil, connectionRefused, "watch"},
		{"watch answered 503", nil, unavailable, "list"},
		{"re-list refused a connection", connectionRefused, unavailable, "list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachInformer(t, func(t *testing.T, run func(cache.ListerWatcher) (cache.Store, func())) {
				lw := newScriptedLW(func(n int, _ metav1.ListOptions) (runtime.Object, error) {
					if n == 1 && c.listErr != nil {
						return nil, c.listErr
					}
					return configMapList("10", *configMap("a", "10")), nil
				}, func(n int, _ metav1.ListOptions) (watch.Interface, error) {
					if n == 0 {
						return nil, c.watErr
					}
					return newScriptedWatch(-1), nil
				})
				_, stop := run(lw)
				defer stop()
				calls := lw.waitCalls(t, 3)
				if calls[2].op != c.next {
					t.Fatalf("after the failure the next call was a %s, want a %s", calls[2].op, c.next)
				}
				checkWaited(t, "after the first failure", calls[2].at-calls[1].at, 1)
				if c.listErr == nil {
					return
				}
				// The re-list failed too: the next wait is the backoff's second step.
				calls = lw.waitCalls(t, 4)
				if calls[3].op != "list" {
					t.Fatalf("after a failed re-list the next call was a %s, want a list", calls[3].op)
				}
				checkWaited(t, "after the failed re-list", calls[3].at-calls[2].at, 2)
			})
		})
	}
}

// Behaviour 6: every wait comes from one backoff that doubles with every failure, whatever
// ran in between (a watch that ran for a minute does not reset it), and starts again from
// its first step once two minutes have passed since it last did.
func TestReflectorBackoff(t *testing.T) {
	// Each watch ends with 410 Gone after running for its time; the reflector re-lists
	// after each.
	runs := []time.Duration{0, 0, time.Minute, time.Minute, 0}
	wantStep := []int{1, 2, 3, 1, 2} // the fourth wait comes more than 2 minutes after the start
	eachInformer(t, func(t *testing.T, run func(cache.ListerWatcher) (cache.Store, func())) {
		lw := newScriptedLW(listAt("10"), func(n int, _ metav1.ListOptions) (watch.Interface, error) {
			if n < len(runs) {
				return newDelayedWatch(runs[n], 0, goneEvent), nil
			}
			return newScriptedWatch(-1), nil
		})
		_, stop := run(lw)
		defer stop()
		calls := lw.waitCalls(t, 2*len(runs)+1)
		for i, ran := range runs {
			watched, relisted := calls[2*i+1], calls[2*i+2]
			if watched.op != "watch" || relisted.op != "list" {
				t.Fatalf("calls %d and %d were a %s and a %s, want a watch and a list", 2*i+1, 2*i+2, watched.op, relisted.op)
			}
			checkWaited(t, fmt.Sprintf("re-list %d (after %s)", i+1, watched.at+ran), relisted.at-watched.at-ran, wantStep[i])
		}
		if reset := calls[7].at + runs[3]; reset <= reflectorBackoffReset {
			t.Errorf("the fourth watch ended %s after the start, want more than %s for this test to see the reset", reset, reflectorBackoffReset)
		}
	})
}

// Behaviour 7: the reflector lists first (its ListerWatcher opts out of watch-list), at
// resourceVersion 0 in pages, asks for each next page with its continue token, keeps the
// cache as it was until the whole list is in, and after that lists only to re-list, from
// a first page without a continue token (in pages only if the first list came in pages):
// what the watchReporter counts a re-sync by, and mostRecentPages rewrites.
func TestReflectorListsAfterTheFirstWatchOnlyToRelist(t *testing.T) {
	eachInformer(t, func(t *testing.T, run func(cache.ListerWatcher) (cache.Store, func())) {
		var store cache.Store
		var cachedDuringRelist []string
		lw := newScriptedLW(func(n int, opts metav1.ListOptions) (runtime.Object, error) {
			switch n {
			case 0:
				l := configMapList("10", *configMap("a", "10"))
				l.Continue = "page-2"
				return l, nil
			case 1:
				return configMapList("10", *configMap("b", "10")), nil
			}
			cachedDuringRelist = store.ListKeys()
			return configMapList("20", *configMap("c", "20")), nil
		}, firstWatch(0, goneEvent))
		store, stop := run(lw)
		defer stop()
		calls := lw.waitCalls(t, 5)
		var got []string
		for _, c := range calls {
			got = append(got, fmt.Sprintf("%s rv=%q limit=%d continue=%q", c.op, c.opts.ResourceVersion, c.opts.Limit, c.opts.Continue))
		}
		want := []string{
			`list rv="0" limit=500 continue=""`,
			`list rv="" limit=500 continue="page-2"`,
			`watch rv="10" limit=0 continue=""`,
			`list rv="10" limit=500 continue=""`, // in pages, as the first list came
			`watch rv="20" limit=0 continue=""`,
		}
		if !slices.Equal(got, want) {
			t.Errorf("the reflector's calls:\n%q\nwant\n%q", got, want)
		}
		slices.Sort(cachedDuringRelist)
		if !slices.Equal(cachedDuringRelist, []string{"ns/a", "ns/b"}) {
			t.Errorf("during the re-list the cache held %q, want what it held before (ns/a, ns/b)", cachedDuringRelist)
		}
	})
}

// Without IsWatchListSemanticsUnSupported, the reflector of this client-go streams its
// first state through a watch (WatchListClient is on by default): the watchReporter's
// opt-out is what keeps its lists countable.
func TestReflectorStreamsUnlessToldNot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(listAt("10"), func(int, metav1.ListOptions) (watch.Interface, error) { return newScriptedWatch(-1), nil })
		_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: &cache.ListWatch{
			ListWithContextFunc:  func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) { return lw.List(o) },
			WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) { return lw.Watch(o) },
		}, ObjectType: &corev1.ConfigMap{}, Handler: cache.ResourceEventHandlerFuncs{}})
		stop := started(ctrl.RunWithContext)
		defer stop()
		first := lw.waitCalls(t, 1)[0]
		if first.op != "watch" || first.opts.SendInitialEvents == nil || !*first.opts.SendInitialEvents {
			t.Errorf("a reflector that was not told otherwise began with a %s (%+v), want a watch-list (sendInitialEvents)", first.op, first.opts)
		}
	})
}

// watchtools.RetryWatcher, which would re-open an ended watch itself, does not hand
// BOOKMARKs on: behind it the reflector's resourceVersion would not move. (If this fails,
// RetryWatcher may now serve where the ended-early BOOKMARK does: see reflector.go.)
func TestRetryWatcherDropsBookmarks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		continueAt, err := rules.ContinueAt(&corev1.ConfigMap{}, "6")
		if err != nil {
			t.Fatal(err)
		}
		events := append([]watch.Event{{Type: watch.Added, Object: configMap("a", "5")}}, continueAt...)
		events = append(events, watch.Event{Type: watch.Added, Object: configMap("b", "7")})
		var opened []string
		rw, err := watchtools.NewRetryWatcherWithContext(context.Background(), "1", &cache.ListWatch{
			WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				opened = append(opened, opts.ResourceVersion)
				if len(opened) == 1 {
					return newScriptedWatch(-1, events...), nil
				}
				return newScriptedWatch(-1), nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		defer rw.Stop()
		var got []string
		for len(got) < 2 {
			ev := <-rw.ResultChan()
			got = append(got, fmt.Sprintf("%s@%s", ev.Type, resourceVersion(ev.Object)))
		}
		synctest.Wait()
		select {
		case ev := <-rw.ResultChan():
			got = append(got, fmt.Sprintf("%s@%s", ev.Type, resourceVersion(ev.Object)))
		default:
		}
		if want := []string{"ADDED@5", "ADDED@7"}; !slices.Equal(got, want) {
			t.Errorf("RetryWatcher handed on %q, want %q (the BOOKMARK at 6 dropped)", got, want)
		}
	})
}
