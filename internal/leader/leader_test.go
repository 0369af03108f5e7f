package leader

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// fast durations: client-go's rules hold (lease > renew > 1.2 retry), with room for
// renewals delayed by a loaded machine and the race detector.
func testConfig(id string) Config {
	return Config{Namespace: "kubeevents", Name: "kubeevents", Identity: id,
		LeaseDuration: 3 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}
}

// allow answers every SelfSubjectAccessReview with allowed, except for denied verbs.
func allow(client *fake.Clientset, denied ...string) {
	client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		review := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		review.Status.Allowed = true
		for _, v := range denied {
			if review.Spec.ResourceAttributes.Verb == v {
				review.Status.Allowed = false
			}
		}
		return true, review, nil
	})
}

type notes struct {
	mu    sync.Mutex
	lines []string
}

func (n *notes) add(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lines = append(n.lines, fmt.Sprintf(format, args...))
}

func (n *notes) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.lines, "\n")
}

func holder(t *testing.T, client *fake.Clientset) string {
	t.Helper()
	l, err := client.CoordinationV1().Leases("kubeevents").Get(context.Background(), "kubeevents", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// waitFor polls cond until it holds, for at most 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The leader runs; a clean stop (ctx, as SIGTERM) stops the run first, and the lease is
// released only once the run has returned, while it still held it to the end.
func TestLeadsThenReleasesAfterTheRun(t *testing.T) {
	client := fake.NewClientset()
	allow(client)
	var log notes
	e, err := New(client, testConfig("one"), log.add)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	started := make(chan struct{})
	heldAtEnd := ""
	done := make(chan error)
	go func() {
		done <- e.Run(ctx, func(runCtx context.Context) error {
			close(started)
			<-runCtx.Done()
			// The run's last act (the sinks drained, the checkpoint written) happens
			// under the lease.
			heldAtEnd = holder(t, client)
			if err := e.Fence(); err != nil {
				t.Errorf("Fence while finishing a clean stop: %v", err)
			}
			return nil
		})
	}()
	<-started
	if !e.Leading() || e.Healthy() != nil || e.Fence() != nil {
		t.Errorf("leading %v, healthy %v, fence %v", e.Leading(), e.Healthy(), e.Fence())
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if heldAtEnd != "one" {
		t.Errorf("the lease was held by %q as the run ended, want one", heldAtEnd)
	}
	if h := holder(t, client); h != "" {
		t.Errorf("after Run the lease is held by %q, want it released", h)
	}
	if !strings.Contains(log.String(), "--leader-elect: leading (lease kubeevents/kubeevents, as one)") ||
		!strings.Contains(log.String(), "released the lease kubeevents/kubeevents") {
		t.Errorf("said:\n%s", log.String())
	}
}

// A standby polls the Lease another replica holds, is healthy, never runs, and stops at
// once when told.
func TestStandbyStopsAtOnce(t *testing.T) {
	now := metav1.NewMicroTime(time.Now())
	client := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kubeevents", Name: "kubeevents"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("other"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now}})
	allow(client)
	var log notes
	e, _ := New(client, testConfig("two"), log.add)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- e.Run(ctx, func(context.Context) error {
			t.Error("a standby ran")
			return nil
		})
	}()
	waitFor(t, "the standby to see the lease", func() bool { return e.Healthy() == nil })
	if !strings.Contains(log.String(), "standing by; the lease kubeevents/kubeevents is held by other") {
		t.Errorf("said:\n%s", log.String())
	}
	if e.Fence() == nil {
		t.Error("a standby's Fence allows writes")
	}
	start := time.Now()
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("a standby took %s to stop", took)
	}
	if h := holder(t, client); h != "other" {
		t.Errorf("the standby changed the holder to %q", h)
	}
}

// A lease that cannot be renewed stops the run within the renew deadline, as a clean
// stop would, and Run says it was lost; Fence refuses writes from then on.
func TestLostLeaseStopsTheRun(t *testing.T) {
	client := fake.NewClientset()
	allow(client)
	var mu sync.Mutex
	failing := false
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	var log notes
	e, _ := New(client, testConfig("one"), log.add)
	started := make(chan struct{})
	var stoppedAt time.Time
	var fenceAtEnd error
	done := make(chan error)
	go func() {
		done <- e.Run(context.Background(), func(runCtx context.Context) error {
			close(started)
			<-runCtx.Done()
			stoppedAt = time.Now()
			fenceAtEnd = e.Fence()
			return errors.New("sink \"hook\" failed (see above)")
		})
	}()
	<-started
	mu.Lock()
	failing = true
	failedAt := time.Now()
	mu.Unlock()
	err := <-done
	var lost *LostError
	if !errors.As(err, &lost) {
		t.Fatalf("Run: %v, want a LostError", err)
	}
	want := "--leader-elect: lost the lease kubeevents/kubeevents (not renewed in time); stopped streaming, exiting so that this replica starts again as a standby"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	// Renewals fail for the renew deadline, after the retry period of the last good one.
	if took := stoppedAt.Sub(failedAt); took > testConfig("").RenewDeadline+2*testConfig("").RetryPeriod+time.Second {
		t.Errorf("the run stopped %s after renewals began to fail", took)
	}
	if fenceAtEnd == nil || e.Fence() == nil {
		t.Error("Fence allows writes after the lease was lost")
	}
	if !strings.Contains(log.String(), "was not renewed within 1.5s; stopping the sinks") || !strings.Contains(log.String(), `sink "hook" failed`) {
		t.Errorf("said:\n%s", log.String())
	}
}

// Fence refuses once the last renewal is older than the lease's duration, even before
// client-go gives up renewing.
func TestFenceByTime(t *testing.T) {
	e, _ := New(fake.NewClientset(), testConfig("one"), nil)
	now := time.Now()
	e.now = func() time.Time { return now }
	e.leading.Store(true)
	e.lastRenew.Store(e.stamp(now.Add(-2900 * time.Millisecond)))
	if err := e.Fence(); err != nil {
		t.Errorf("renewed 2.9s ago: %v", err)
	}
	e.lastRenew.Store(e.stamp(now.Add(-3 * time.Second)))
	if err := e.Fence(); err == nil || !strings.Contains(err.Error(), "was last renewed 3s ago, past its duration 3s") {
		t.Errorf("renewed 3s ago: %v", err)
	}
}

// Missing rights on the Lease are one line before anything runs.
func TestForbidden(t *testing.T) {
	client := fake.NewClientset()
	allow(client, "create", "update")
	e, _ := New(client, testConfig("one"), nil)
	err := e.Run(context.Background(), func(context.Context) error {
		t.Error("ran without the rights")
		return nil
	})
	want := "--leader-elect: not allowed to create, update the lease kubeevents/kubeevents; grant get, create and update on leases.coordination.k8s.io in namespace kubeevents (the chart's Role does)"
	var forbidden *ForbiddenError
	if !errors.As(err, &forbidden) || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}

// Around without an Elector is the run itself.
func TestAroundWithoutElection(t *testing.T) {
	ran := false
	if err := Around(context.Background(), nil, func(context.Context) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("ran %v, %v", ran, err)
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{args: nil},
		{args: []string{"--leader-elect"}},
		{args: []string{"--leader-elect-name", "x"}, err: "--leader-elect-name applies with --leader-elect only; add --leader-elect"},
		{args: []string{"--leader-elect", "--leader-elect-namespace", "Bad NS"}, err: `--leader-elect-namespace "Bad NS": a lowercase RFC 1123 label`},
		{args: []string{"--leader-elect", "--leader-elect-name", "a_b"}, err: `--leader-elect-name "a_b": a lowercase RFC 1123 subdomain`},
		{args: []string{"--leader-elect", "--leader-elect-lease-duration", "5s"}, err: "--leader-elect-lease-duration 5s must be longer than --leader-elect-renew-deadline 10s"},
		{args: []string{"--leader-elect", "--leader-elect-retry-period", "9s"}, err: "--leader-elect-renew-deadline 10s must be longer than 1.2 times --leader-elect-retry-period 9s"},
		{args: []string{"--leader-elect", "--leader-elect-retry-period", "0s"}, err: "must be positive durations"},
	} {
		var f Flags
		fs := newFlagSet(&f)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := f.Validate(func(name string) bool { return fs.Changed(name) })
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.err)
		}
	}
	var f Flags
	fs := newFlagSet(&f)
	_ = fs.Parse([]string{"--leader-elect"})
	if c := f.Config("shop"); c.Namespace != "shop" || c.Name != "kubeevents" || c.LeaseDuration != 15*time.Second || c.RenewDeadline != 10*time.Second || c.RetryPeriod != 2*time.Second {
		t.Errorf("defaults: %+v", c)
	}
}

func newFlagSet(f *Flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.AddFlags(fs)
	return fs
}
