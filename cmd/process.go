package cmd

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/kubeclient"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/runtimetune"
)

// Process-wide settings: client-go's logging, memory and processors. They are set
// here and only here, by the commands, never from inside the engine or a sink.

// setupKlog keeps client-go's logging off stderr unless asked for with -v=6 or more:
// stderr carries kubeevents' own diagnostics, one line each.
func setupKlog(verbosity int, errOut io.Writer) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	if verbosity >= 6 {
		_ = fs.Set("v", strconv.Itoa(verbosity))
		klog.SetOutput(errOut)
		return
	}
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
}

// HTTP/2 health checks: client-go pings a connection that has carried nothing for
// HTTP2_READ_IDLE_TIMEOUT_SECONDS and drops it when no answer comes within
// HTTP2_PING_TIMEOUT_SECONDS (by default 30 and 15). A watch on a path that silently
// stopped carrying packets (no RST: a half-open connection) is noticed only then. A
// quiet watch is the normal case here, so kubeevents asks sooner, unless the user set
// them: it then says that the watch was lost within 25 s rather than 45.
const (
	http2ReadIdleTimeoutSeconds = "15"
	http2PingTimeoutSeconds     = "10"
)

// setHTTP2HealthChecks sets client-go's HTTP/2 health-check timeouts for this process,
// before any client is built (client-go reads them when it builds a transport).
func setHTTP2HealthChecks(lookupEnv func(string) (string, bool)) {
	for name, value := range map[string]string{
		"HTTP2_READ_IDLE_TIMEOUT_SECONDS": http2ReadIdleTimeoutSeconds,
		"HTTP2_PING_TIMEOUT_SECONDS":      http2PingTimeoutSeconds,
	} {
		if _, set := lookupEnv(name); !set {
			_ = os.Setenv(name, value)
		}
	}
}

// system is what the engine's run is given by this process: its streams and terminals,
// the kubeconfig (kubectl's flags, and any context by name), the environment, and the
// process-wide settings only the command changes.
func system(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, verbosity int) engine.System {
	return engine.System{
		Out: streams.Out, ErrOut: streams.ErrOut, Terminals: terminals, LookupEnv: os.LookupEnv, Verbosity: verbosity,
		Kubeconfig: plan.Kubeconfig{Default: configFlags, Context: func(name string) genericclioptions.RESTClientGetter {
			return kubeclient.ForContext(configFlags, name)
		}},
		NewClients:     informer.NewClients,
		Synced:         runtimetune.ForWatching,
		SecretsWatched: func() int { return capVerbosityForSecrets(verbosity) },
		Starting:       runtimetune.ReleaseStartupPages,
	}
}

// capVerbosityForSecrets keeps Secret values out of client-go's logs: from -v=8 it logs
// response bodies, which hold them in clear, before any redaction can happen. It returns
// the -v it capped, or 0.
func capVerbosityForSecrets(verbosity int) int {
	if verbosity < 8 {
		return 0
	}
	var level klog.Level
	_ = level.Set("7")
	return verbosity
}

// terminals says which streams are terminals (tests give a fake).
var terminals engine.Terminals = osTerminals{}

// osTerminals says which streams are terminals, asking the operating system.
type osTerminals struct{}

func (osTerminals) IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

func (t osTerminals) Width(w io.Writer) func() int {
	f, ok := w.(*os.File)
	if !ok || !t.IsTerminal(w) {
		return nil
	}
	fd := int(f.Fd())
	return func() int {
		width, _, err := term.GetSize(fd)
		if err != nil {
			return 0
		}
		return width
	}
}

// warnTo prints one diagnostic line on streams' stderr, as the engine does.
func warnTo(streams genericiooptions.IOStreams) func(format string, args ...any) {
	return func(format string, args ...any) { fmt.Fprintf(streams.ErrOut, "kubeevents: "+format+"\n", args...) }
}
