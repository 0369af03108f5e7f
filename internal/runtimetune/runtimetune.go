// Package runtimetune fits this process's runtime to a long watch: the executable's
// start-up pages leave its memory, the initial list's heap goes back to the operating
// system, and the watch runs on one processor (bench/README.md measures each).
package runtimetune

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/kubeevents/kubeevents/internal/switches"
)

// ForWatching is called once every informer has its initial list (the
// engine's Config.Synced); it returns what undoes it at the end of the run.
func ForWatching() (undo func()) {
	// The initial list arrives as whole responses that are decoded at once: the heap
	// peaks far above what the cache then holds. Give that memory back now, once,
	// rather than holding it as RSS for the life of the watch.
	debug.FreeOSMemory()
	ReleaseStartupPages()
	return oneProcessor()
}

// oneProcessor runs the watch on one processor (GOMAXPROCS=1) unless the user
// set GOMAXPROCS or turned it off (switches.OneProcessor); it returns what restores Go's default. Why: every event passes
// through five goroutines in turn (the HTTP/2 reader, the watch decoder, client-go's
// reflector and informer, the sink's listener), and with a second processor idle each
// hand-off wakes it (a futex call, a thread spinning for work) only for it to find one
// goroutine to run. Events of a watch come one at a time, so on one processor each
// goroutine runs where the last one stopped: side by side on the same events, 17% less
// CPU on kubelet-like status churn and 22% less on a rollout, for the same lag
// (bench/README.md). The initial list, decoded in bulk, keeps every processor: this is
// called once it is in.
func oneProcessor() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" || !switches.OneProcessor.Enabled() {
		return func() {}
	}
	runtime.GOMAXPROCS(1)
	return runtime.SetDefaultGOMAXPROCS
}
