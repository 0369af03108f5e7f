package engine

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kubeevents/kubeevents/internal/watch"
)

// StopReason says why a run ended.
type StopReason int

const (
	StopInterrupted StopReason = iota // the context ended: Ctrl-C, SIGTERM
	StopCondition                     // Until or UntilDeleted was met
	StopLimit                         // MaxEvents were made
	StopTimeout                       // Timeout expired
	StopOutputGone                    // every sink stopped, or nobody reads stdout any more
	StopFatal                         // an error the informers cannot retry past
	StopInputEnd                      // the Source's input ended (a recording read to its end)
)

// Result is what became of a run's events.
type Result struct {
	// Started says that the stream started: the rights were checked and delivery began.
	// A run that did not start (an error, or interrupted while connecting) printed
	// nothing, and its other fields are zero.
	Started   bool
	Reason    StopReason
	Made      uint64 // events made, each handed to every listener (at most MaxEvents)
	Unchanged uint64 // updates that ChangesOnly left out before they were numbered
	// Late are the sinks that did not finish writing within Grace; what they still held
	// counts as dropped in their stats.
	Late []Late
	// Clusters says what each of several clusters gave; nil with one.
	Clusters []watch.Result
}

// Late is a sink that did not finish writing within Grace, and how many events it still
// held then (dropped).
type Late struct {
	Name    string
	Dropped uint64
}

// TimeoutError says Timeout expired before the awaited condition was met.
type TimeoutError struct{ Err error }

func (e *TimeoutError) Error() string { return e.Err.Error() }

// InterruptedError says the run was interrupted (Ctrl-C, SIGTERM) while it waited for a
// condition that was not met: a script's `kubeevents ... --until-rollout && promote` must
// not go on.
type InterruptedError struct{ Err error }

func (e *InterruptedError) Error() string { return e.Err.Error() }

// NotMetError says MaxEvents ended the run before the awaited condition was met: like a
// timeout, a cap on a wait that did not end as awaited.
type NotMetError struct{ Err error }

func (e *NotMetError) Error() string { return e.Err.Error() }

// RolloutFailedError says the followed object's rollout failed (a Deployment past its
// progress deadline, a failed Job) and --until-rollout ended the run on it, or an object
// --until-ready waited for failed (What: "not ready").
type RolloutFailedError struct{ What, Message string }

func (e *RolloutFailedError) Error() string {
	return cmp.Or(e.What, "rollout failed") + ": " + e.Message
}

// SinkFailedError says one or more sinks stopped on an error while the rest went on. Each
// failure was reported when it happened.
type SinkFailedError struct{ Names []string }

func (e *SinkFailedError) Error() string {
	quoted := make([]string, len(e.Names))
	for i, n := range e.Names {
		quoted[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("sink %s failed (see above)", strings.Join(quoted, ", "))
}

// SinkOpenError says a sink could not be opened at start-up (a file in a directory that
// cannot be written): the run ends before it starts, exit code 4, with this one line.
type SinkOpenError struct {
	Name string
	Err  error
}

func (e *SinkOpenError) Error() string { return fmt.Sprintf("sink %q: %v", e.Name, e.Err) }
func (e *SinkOpenError) Unwrap() error { return e.Err }

// startedErr reports whether err ends a run that streamed (its files are kept).
func startedErr(err error) bool {
	var sinkFailed *SinkFailedError
	var timeout *TimeoutError
	var notMet *NotMetError
	var rolloutFailed *RolloutFailedError
	var interrupted *InterruptedError
	return errors.As(err, &sinkFailed) || errors.As(err, &timeout) || errors.As(err, &notMet) ||
		errors.As(err, &rolloutFailed) || errors.As(err, &interrupted)
}
