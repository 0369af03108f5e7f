package engine

import (
	"errors"

	"github.com/kubeevents/kubeevents/internal/conditions"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
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

// startedErr reports whether err ends a run that streamed (its files are kept).
func startedErr(err error) bool {
	var sinkFailed *sinkkind.FailedError
	var timeout *conditions.TimeoutError
	var notMet *conditions.NotMetError
	var rolloutFailed *conditions.FailedError
	var interrupted *conditions.InterruptedError
	return errors.As(err, &sinkFailed) || errors.As(err, &timeout) || errors.As(err, &notMet) ||
		errors.As(err, &rolloutFailed) || errors.As(err, &interrupted)
}
