package cmd

import (
	"errors"
	"fmt"
	"io"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/clusterstore"
	"github.com/kubeevents/kubeevents/internal/conditions"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/recording"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// Exit codes, documented in README: scripts tell the outcomes apart by them.
const (
	ExitOK         = 0 // a condition was met, the stream was interrupted, or --timeout ended a plain watch
	ExitError      = 1 // the watch could not start or failed, or the rollout --until-rollout waited for failed; also --leader-elect's lease lost (leader.LostError: the run was stopped cleanly, and the pod restarts as a standby) or not allowed (leader.ForbiddenError)
	ExitUsage      = 2 // bad flags, arguments or configuration, or a recording replay cannot read
	ExitTimeout    = 3 // --timeout, --max-events or an interruption (Ctrl-C, SIGTERM) ended the run before --until / --until-deleted / --until-rollout was met
	ExitSinkFailed = 4 // a sink (or the --resume checkpoint) could not be opened or written, or a sink failed to write while the others ran to the end
)

// UsageError is bad input from the command line or the config file: exit code 2. The
// engine and the plan report bad usage they find while connecting with the same type.
type UsageError = diag.UsageError

func usageErrorf(format string, args ...any) error { return diag.Usagef(format, args...) }

// ExitCode reports err on errOut, one "kubeevents: " line (a jq syntax error adds its
// caret lines), and returns the exit code for it. This is the one place errors become
// exit codes.
func ExitCode(err error, errOut io.Writer) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(errOut, "kubeevents: %s\n", err)
	var usage *UsageError
	var timeout *conditions.TimeoutError
	var notMet *conditions.NotMetError
	var interrupted *conditions.InterruptedError
	var sinkFailed *sinkkind.FailedError
	var sinkOpen *sinkkind.OpenError
	var corrupt *checkpoint.CorruptError
	var mismatch *checkpoint.MismatchError
	var checkpointWrite *checkpoint.WriteError
	var notOurs *clusterstore.NotOursError
	var badLine *recording.BadLineError
	switch {
	case errors.As(err, &usage), errors.As(err, &corrupt), errors.As(err, &mismatch), errors.As(err, &notOurs), errors.As(err, &badLine):
		return ExitUsage
	case errors.As(err, &timeout), errors.As(err, &notMet), errors.As(err, &interrupted):
		return ExitTimeout
	case errors.As(err, &sinkFailed), errors.As(err, &sinkOpen), errors.As(err, &checkpointWrite):
		return ExitSinkFailed
	}
	return ExitError
}
