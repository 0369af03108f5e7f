// Package runtimetune fits this process's runtime to a long watch: the executable's
// start-up pages leave its memory, the initial list's heap goes back to the operating
// system, and the watch runs on one processor (bench/README.md measures each).
package runtimetune

import (
	"runtime"
	"runtime/debug"

	"github.com/kubeevents/kubeevents/internal/fastpath"
)

// ForWatching is called once every informer has its initial list (the
// engine's System.Synced), with the run's settings; it returns what undoes it at the end
// of the run.
func ForWatching(s fastpath.Runtime) (undo func()) {
	// The initial list arrives as whole responses that are decoded at once: the heap
	// peaks far above what the cache then holds. Give that memory back now, once,
	// rather than holding it as RSS for the life of the watch.
	debug.FreeOSMemory()
	ReleaseStartupPages(s)
	if s.NoOneProcessor {
		return func() {}
	}
	return oneProcessor()
}

// oneProcessor runs the watch on one processor (GOMAXPROCS=1); it returns what restores
// Go's default. (Settings.Runtime.NoOneProcessor, also set when the user set GOMAXPROCS,
// leaves it out.) Why: every event passes
// through five goroutines in turn (the HTTP/2 reader, the watch decoder, client-go's
// reflector and informer, the sink's listener), and with a second processor idle each
// hand-off wakes it (a futex call, a thread spinning for work) only for it to find one
// goroutine to run. Events of a watch come one at a time, so on one processor each
// goroutine runs where the last one stopped: less CPU for the same lag (bench/README.md,
// the ledger, measures how much). The initial list, decoded in bulk, keeps every processor: this is
// called once it is in.
func oneProcessor() (restore func()) {
	runtime.GOMAXPROCS(1)
	return runtime.SetDefaultGOMAXPROCS
}
