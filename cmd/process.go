package cmd

import (
	"flag"
	"io"
	"runtime/debug"
	"strconv"

	"k8s.io/klog/v2"

	"github.com/kubeevents/kubeevents/internal/gcheadroom"
	"github.com/kubeevents/kubeevents/internal/informer"
)

// Process-wide settings: client-go's logging and the garbage collector. They are set
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

// capVerbosityForSecrets keeps Secret values out of client-go's logs: from -v=8 it logs
// response bodies, which hold them in clear, before any redaction can happen.
func (o *WatchOptions) capVerbosityForSecrets() {
	if o.ShowSecrets || o.Verbosity == nil || *o.Verbosity < 8 {
		return
	}
	for _, res := range o.resources {
		if informer.IsSecret(res) {
			var level klog.Level
			_ = level.Set("7")
			o.warnf("-v=%d would log Secret values (in API response bodies); logging as with -v=7 (--show-secrets allows more)", *o.Verbosity)
			return
		}
	}
}

// tuneHeapForWatching is called once every informer has its initial list (the engine's
// Config.Synced); it returns what undoes it at the end of the run.
func tuneHeapForWatching() (undo func()) {
	// The initial list arrives as whole responses that are decoded at once: the heap
	// peaks far above what the cache then holds. Give that memory back now, once,
	// rather than holding it as RSS for the life of the watch.
	debug.FreeOSMemory()
	// From now on the heap is the cache plus events in flight: keep some headroom
	// between collections, so a small cache is not marked every few hundred events.
	return gcheadroom.Keep(gcheadroom.DefaultHeadroom)
}
