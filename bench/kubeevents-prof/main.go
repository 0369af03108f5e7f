// Command kubeevents-prof is kubeevents — the same cmd.Execute as the shipped binary —
// with Go profiling around it, to find out where the benchmark's CPU and memory go. It
// is a benchmark tool, not part of the product:
//
//	KEPROF_DIR=/tmp/prof KUBEEVENTS_BIN=bin/bench/kubeevents-prof hack/bench.sh e2e
//	go tool pprof -top bin/bench/kubeevents-prof /tmp/prof/cpu-*.pprof
//
// With KEPROF_DIR set it writes a CPU profile of the whole run to DIR/cpu-PID.pprof and,
// when interrupted (SIGINT/SIGTERM, as the harness stops it), a heap profile taken after a
// GC, while the informer cache is still live, to DIR/heap-PID.pprof; then it shuts down
// as kubeevents does.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/cmd"
)

func main() {
	signal.Ignore(syscall.SIGPIPE)
	dir := os.Getenv("KEPROF_DIR")
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		if dir != "" {
			runtime.GC()
			if err := writeProfile(filepath.Join(dir, fmt.Sprintf("heap-%d.pprof", os.Getpid())), pprof.WriteHeapProfile); err != nil {
				fmt.Fprintln(os.Stderr, "kubeevents-prof:", err)
			}
		}
		cancel()
	}()
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "kubeevents-prof:", err)
			os.Exit(1)
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())))
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "kubeevents-prof:", err)
			os.Exit(1)
		}
	}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	err := cmd.Execute(ctx, streams, os.Args)
	pprof.StopCPUProfile()
	cancel()
	os.Exit(cmd.ExitCode(err, streams.ErrOut))
}

func writeProfile(path string, write func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
