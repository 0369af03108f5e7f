package conditions

import "cmp"

// TimeoutError says the run's --timeout expired before the awaited condition was met.
type TimeoutError struct{ Err error }

func (e *TimeoutError) Error() string { return e.Err.Error() }

// InterruptedError says the run was interrupted (Ctrl-C, SIGTERM) while it waited for a
// condition that was not met: a script's `kubeevents ... --until-rollout && promote` must
// not go on.
type InterruptedError struct{ Err error }

func (e *InterruptedError) Error() string { return e.Err.Error() }

// NotMetError says --max-events (or a recording's end) ended the run before the awaited condition was met: like a
// timeout, a cap on a wait that did not end as awaited.
type NotMetError struct{ Err error }

func (e *NotMetError) Error() string { return e.Err.Error() }

// FailedError says the followed object's rollout failed (a Deployment past its
// progress deadline, a failed Job) and --until-rollout ended the run on it, or an object
// --until-ready waited for failed (What: "not ready").
type FailedError struct{ What, Message string }

func (e *FailedError) Error() string {
	return cmp.Or(e.What, "rollout failed") + ": " + e.Message
}
