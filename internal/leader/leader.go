// Package leader runs a watch under leader election (--leader-elect), as Kubernetes'
// own controllers run: replicas of kubeevents (a Deployment) share a Lease, the one that
// holds it streams, the others stand by with nothing but the Lease to poll, and a
// standby takes over when the leader goes.
//
// It is client-go's tools/leaderelection with a LeaseLock, with what a stream needs
// around it:
//
//   - The leader's run stops before the lease is given up. On a clean stop (SIGTERM)
//     the run drains its sinks and writes its last checkpoint first; only then is the
//     lease released (ReleaseOnCancel), and a standby takes over at its next try, from
//     that checkpoint: exactly once across the hand-over.
//   - A lease that is lost (not renewed within the renew deadline: the API server out of
//     reach, the Lease deleted and taken by another replica) stops the run as Ctrl-C
//     does, except that the sinks write nothing more (Fence): what they hold is held
//     back, and counted, for the replica that leads. Then Run
//     returns a *LostError and the process ends (exit 1), so that its pod restarts as a
//     standby, as Kubernetes' controllers do: the run's state (informers, sinks,
//     checkpoint) is not something to carry on from after another replica led.
//   - Fence says whether this process may still act as the leader: deliver to the
//     sinks (each listener asks it before every write) and write the shared checkpoint.
//     Not once the lease is lost, nor once its last renewal is older than the lease's
//     duration (when a standby may take it), measured on the monotonic clock: a leader
//     that was paused (SIGSTOP, a long GC pause, a frozen VM) knows, as soon as it runs
//     again, that it may no longer lead, before client-go's renew deadline says so.
//   - Rights are checked before anything else: a missing right to get, create or update
//     the Lease is one line and exit 1, not a standby that waits forever.
package leader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config is one election: the Lease and the durations of client-go's leaderelection.
type Config struct {
	Namespace, Name string
	// Identity is this process's name in the Lease: unique among the replicas
	// (Identity() by default: the host's, that is the pod's, name and a random suffix).
	Identity string
	// LeaseDuration is how long a standby waits, after the last renewal it saw, before
	// it takes the lease; RenewDeadline how long the leader tries to renew before it
	// gives up; RetryPeriod how often both try.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// client-go's (and kube-controller-manager's) defaults.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	DefaultName          = "kubeevents"
)

// Identity is a name for this process in the Lease: the host name (in a pod, the pod's
// name), then a random suffix, as Kubernetes' controllers make theirs.
func Identity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "kubeevents"
	}
	return host + "_" + string(uuid.NewUUID())
}

// Elector runs a watch under leader election. Make it with New; Run runs the watch.
type Elector struct {
	cfg    Config
	client kubernetes.Interface
	notify func(format string, args ...any)

	leading atomic.Bool
	lost    atomic.Bool
	// lastRenew is the start of the last successful renewal, lastSeen of the last answer
	// about the Lease (a standby's health): stamps, nanoseconds on the monotonic clock
	// since epoch (0: never), so that a change of the wall clock moves neither.
	lastRenew atomic.Int64
	lastSeen  atomic.Int64
	epoch     time.Time // when the Elector was made, with its monotonic reading
	now       func() time.Time

	mu     sync.Mutex
	holder string // the last leader observed
}

// New makes an Elector for cfg on client. notify says, in one line each, what a pod's
// log should show: standing by (and who leads), leading, the lease lost or released.
func New(client kubernetes.Interface, cfg Config, notify func(format string, args ...any)) (*Elector, error) {
	if cfg.Identity == "" {
		cfg.Identity = Identity()
	}
	if err := checkDurations(cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod); err != nil {
		return nil, err
	}
	if notify == nil {
		notify = func(string, ...any) {}
	}
	return &Elector{cfg: cfg, client: client, notify: notify, now: time.Now, epoch: time.Now()}, nil
}

// Lease names the Lease: NAMESPACE/NAME.
func (e *Elector) Lease() string { return e.cfg.Namespace + "/" + e.cfg.Name }

// Identity is this process's name in the Lease.
func (e *Elector) Identity() string { return e.cfg.Identity }

// LostError says the lease was lost while leading: the run was stopped (its sinks
// flushed what they held within --grace) and the process ends, exit 1, to start again
// as a standby.
type LostError struct {
	Lease  string
	Holder string // who holds it now, if known
}

func (e *LostError) Error() string {
	now := ""
	if e.Holder != "" {
		now = ", now held by " + e.Holder
	}
	return fmt.Sprintf("--leader-elect: lost the lease %s (not renewed in time%s); stopped streaming, exiting so that this replica starts again as a standby", e.Lease, now)
}

// ForbiddenError says a right on the Lease is missing.
type ForbiddenError struct {
	Lease string
	Verbs []string
	Err   error // the API server's answer, when it gave one
}

func (e *ForbiddenError) Error() string {
	ns, _, _ := strings.Cut(e.Lease, "/")
	return fmt.Sprintf("--leader-elect: not allowed to %s the lease %s; grant get, create and update on leases.coordination.k8s.io in namespace %s (the chart's Role does)",
		strings.Join(e.Verbs, ", "), e.Lease, ns)
}
func (e *ForbiddenError) Unwrap() error { return e.Err }

// Around runs run under e's election, or plainly when e is nil (no --leader-elect):
// the one call a command makes around its run.
func Around(ctx context.Context, e *Elector, run func(ctx context.Context) error) error {
	if e == nil {
		return run(ctx)
	}
	return e.Run(ctx, run)
}

// Run waits to lead, then runs run with a context that ends when ctx does (SIGTERM) or
// the lease is lost, and gives the lease up once run has returned. Ended while standing
// by, it returns nil at once. It returns run's error, or a *LostError if the lease was
// lost (run's own error, if any, is said first), or a *ForbiddenError before anything if
// the Lease's rights are missing.
func (e *Elector) Run(ctx context.Context, run func(ctx context.Context) error) error {
	if err := e.checkRights(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	lock := &trackingLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: e.cfg.Namespace, Name: e.cfg.Name},
		Client:     e.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.cfg.Identity},
	}, e: e}
	leading := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: e.cfg.LeaseDuration,
		RenewDeadline: e.cfg.RenewDeadline,
		RetryPeriod:   e.cfg.RetryPeriod,
		// Released only once run has returned: electing ends after it (electCtx).
		ReleaseOnCancel: true,
		Name:            e.Lease(),
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(c context.Context) { leading <- c },
			OnStoppedLeading: func() {},
			OnNewLeader:      e.newLeader,
		},
	})
	if err != nil {
		return fmt.Errorf("--leader-elect: %w", err)
	}
	// The election's context is not ctx: a SIGTERM must stop the run first, and give
	// the lease up only after it.
	electCtx, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	elected := make(chan struct{})
	go func() {
		defer close(elected)
		le.Run(electCtx)
	}()
	var leadCtx context.Context
	select {
	case <-ctx.Done(): // stopped while standing by
		stopElecting()
		<-elected
		return nil
	case <-elected: // cannot happen before electCtx ends
		return nil
	case leadCtx = <-leading:
	}
	e.leading.Store(true)
	e.notify("--leader-elect: leading (lease %s, as %s)", e.Lease(), e.cfg.Identity)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var stopping atomic.Bool
	go func() {
		select {
		case <-leadCtx.Done():
			if !stopping.Load() {
				e.lost.Store(true)
				e.leading.Store(false)
				e.notify("--leader-elect: the lease %s was not renewed within %s; stopping the sinks", e.Lease(), e.cfg.RenewDeadline)
			}
			stopRun()
		case <-runCtx.Done():
		}
	}()
	runErr := run(runCtx)
	stopping.Store(true)
	stopElecting() // gives the lease up (unless lost)
	<-elected
	e.leading.Store(false)
	if e.lost.Load() {
		if runErr != nil {
			e.notify("%v", runErr)
		}
		return &LostError{Lease: e.Lease(), Holder: e.otherHolder()}
	}
	e.notify("--leader-elect: released the lease %s", e.Lease())
	return runErr
}

func (e *Elector) newLeader(identity string) {
	e.mu.Lock()
	e.holder = identity
	e.mu.Unlock()
	if identity != e.cfg.Identity && !e.leading.Load() && !e.lost.Load() {
		e.notify("--leader-elect: standing by; the lease %s is held by %s", e.Lease(), identity)
	}
}

func (e *Elector) otherHolder() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.holder == e.cfg.Identity {
		return ""
	}
	return e.holder
}

// Fence says whether this process may still act as the leader (deliver to its sinks,
// write the shared checkpoint): nil while it leads and its last renewal started less
// than the lease's duration ago, on the monotonic clock, after which a standby may take
// the lease. It is cheap (atomic loads and a clock reading): asked before every write.
func (e *Elector) Fence() error {
	switch {
	case e.lost.Load():
		return fmt.Errorf("the lease %s was lost", e.Lease())
	case !e.leading.Load():
		return fmt.Errorf("not leading (lease %s)", e.Lease())
	}
	if since := e.since(e.lastRenew.Load()); since >= e.cfg.LeaseDuration {
		return fmt.Errorf("the lease %s was last renewed %s ago, past its duration %s: another replica may lead", e.Lease(), since.Round(time.Millisecond), e.cfg.LeaseDuration)
	}
	return nil
}

// stamp is t as lastRenew and lastSeen keep it: nanoseconds since epoch, on the
// monotonic clock when t has its reading (time.Now's); never 0, which means never.
func (e *Elector) stamp(t time.Time) int64 {
	if n := int64(t.Sub(e.epoch)); n != 0 {
		return n
	}
	return 1
}

// since is how long ago stamp was, on the monotonic clock.
func (e *Elector) since(stamp int64) time.Duration {
	return time.Duration(e.stamp(e.now()) - stamp)
}

// Leading reports whether this process leads now.
func (e *Elector) Leading() bool { return e.leading.Load() }

// Healthy says whether the election works: nil while leading, and for a standby once
// it has had an answer about the Lease within the lease's duration.
func (e *Elector) Healthy() error {
	if e.leading.Load() {
		return nil
	}
	if e.lost.Load() {
		return fmt.Errorf("lost the lease %s", e.Lease())
	}
	seen := e.lastSeen.Load()
	if seen == 0 {
		return fmt.Errorf("no answer about the lease %s yet", e.Lease())
	}
	if since := e.since(seen); since > e.cfg.LeaseDuration {
		return fmt.Errorf("no answer about the lease %s for %s", e.Lease(), since.Round(time.Second))
	}
	return nil
}

// trackingLock is the LeaseLock, noting when the lease was last renewed (for Fence) and
// when the API server last answered about it (for Healthy).
type trackingLock struct {
	resourcelock.Interface
	e *Elector
}

func (l *trackingLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := l.Interface.Get(ctx)
	if err == nil || apierrors.IsNotFound(err) {
		l.e.lastSeen.Store(l.e.stamp(l.e.now()))
	}
	return rec, raw, err
}

func (l *trackingLock) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return l.write(rec, func() error { return l.Interface.Create(ctx, rec) })
}

func (l *trackingLock) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return l.write(rec, func() error { return l.Interface.Update(ctx, rec) })
}

// write notes a renewal by its start: the lease runs from no later than that.
func (l *trackingLock) write(rec resourcelock.LeaderElectionRecord, do func() error) error {
	start := l.e.now()
	err := do()
	if err == nil {
		l.e.lastSeen.Store(l.e.stamp(start))
		if rec.HolderIdentity == l.e.cfg.Identity {
			l.e.lastRenew.Store(l.e.stamp(start))
		}
	}
	return err
}

// checkRights asks the API server whether this user may get, create and update the
// Lease (SelfSubjectAccessReview, which every authenticated user may make). Where that
// cannot be asked, a get of the Lease stands in for it.
func (e *Elector) checkRights(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*e.cfg.RenewDeadline)
	defer cancel()
	var denied []string
	for _, verb := range []string{"get", "create", "update"} {
		name := e.cfg.Name
		if verb == "create" {
			name = "" // RBAC cannot restrict create by name
		}
		review, err := e.client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: e.cfg.Namespace, Verb: verb, Group: coordinationv1.GroupName, Resource: "leases", Name: name}},
		}, metav1.CreateOptions{})
		if err != nil {
			return e.getLease(ctx)
		}
		if !review.Status.Allowed {
			denied = append(denied, verb)
		}
	}
	if len(denied) > 0 {
		return &ForbiddenError{Lease: e.Lease(), Verbs: denied}
	}
	return nil
}

func (e *Elector) getLease(ctx context.Context) error {
	_, err := e.client.CoordinationV1().Leases(e.cfg.Namespace).Get(ctx, e.cfg.Name, metav1.GetOptions{})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsForbidden(err):
		return &ForbiddenError{Lease: e.Lease(), Verbs: []string{"get"}, Err: err}
	}
	return fmt.Errorf("--leader-elect: cannot read the lease %s: %w", e.Lease(), err)
}

// checkDurations applies client-go's rules to the durations, in the flags' words.
func checkDurations(lease, renew, retry time.Duration) error {
	switch {
	case lease <= 0 || renew <= 0 || retry <= 0:
		return errors.New("--leader-elect-lease-duration, --leader-elect-renew-deadline and --leader-elect-retry-period must be positive durations, e.g. 15s, 10s and 2s")
	case lease <= renew:
		return fmt.Errorf("--leader-elect-lease-duration %s must be longer than --leader-elect-renew-deadline %s (a standby takes the lease only after the leader gave up renewing it)", lease, renew)
	case renew <= time.Duration(leaderelection.JitterFactor*float64(retry)):
		return fmt.Errorf("--leader-elect-renew-deadline %s must be longer than %.1f times --leader-elect-retry-period %s", renew, leaderelection.JitterFactor, retry)
	}
	return nil
}
