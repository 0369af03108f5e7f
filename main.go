// Command kubeevents tails changes to Kubernetes resources. main only wires the process
// to the command: standard streams, a context that ends on Ctrl-C or SIGTERM, and the
// exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/cmd"
)

func main() {
	// A closed stdout (`kubeevents watch pods | head -1`) must surface as EPIPE on write,
	// so the sink can stop quietly, instead of killing the process mid-line.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	err := cmd.Execute(ctx, streams, os.Args)
	stop()
	os.Exit(cmd.ExitCode(err, streams.ErrOut))
}
