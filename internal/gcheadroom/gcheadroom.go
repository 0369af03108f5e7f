// Package gcheadroom keeps a minimum of heap headroom between garbage collections.
//
// The Go collector starts a cycle when the heap has grown by GOGC percent (100) of what
// survived the last one, and by at least 4 MB. A watcher with a tiny cache then collects
// every few MB of allocation and marks its whole cache each time. Letting the heap grow
// by at least a fixed headroom before collecting bounds the number of cycles for a
// bounded amount of memory. With a larger cache, GOGC's own headroom (the live heap) is
// already larger and nothing changes.
//
// The headroom is RSS that a user sees in top: it is sized to what the watch allocates,
// not to what a collection would save (bench/README.md has the figures).
package gcheadroom

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// DefaultHeadroom is the least the heap may grow beyond its live size between two
// collections. A pod event costs about 11 KB of allocation (encoding, diff, decoding
// what changed), so 8 MB is some 700 events between collections of a small cache.
// 64 MB (the value until 2026-11-23) made collections under 1% of the CPU rather than
// about 3%, yet side by side on the same events the two used the same CPU within 0.5%,
// and 64 MB made kubeevents' peak RSS 1.7 times kubectl's (bench/README.md).
const DefaultHeadroom = 8 << 20

// liveHeap is the runtime metric of the heap that survived the last collection.
const liveHeap = "/gc/heap/live:bytes"

// Keep sets the collector's GOGC after every collection so that the next one starts no
// sooner than headroom bytes of growth (and never sooner than GOGC=100 would), until the
// returned stop is called. It does nothing when the user set GOGC or GOMEMLIMIT: their
// choice stands.
func Keep(headroom uint64) (stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	k := &keeper{headroom: headroom, sample: []metrics.Sample{{Name: liveHeap}}}
	k.tune()
	k.arm()
	return func() {
		if k.stopped.CompareAndSwap(false, true) {
			debug.SetGCPercent(100)
		}
	}
}

type keeper struct {
	headroom uint64
	sample   []metrics.Sample // only touched by tune, which runs on one goroutine at a time
	stopped  atomic.Bool
}

// sentinel is garbage from birth: its cleanup runs after the next collection.
type sentinel struct{ _ [16]byte }

// arm has tune run once after the next collection, and arm again from there: one run
// per cycle, on the runtime's cleanup goroutine.
func (k *keeper) arm() {
	runtime.AddCleanup(&sentinel{}, func(k *keeper) {
		if k.stopped.Load() {
			return
		}
		k.tune()
		k.arm()
	}, k)
}

func (k *keeper) tune() {
	debug.SetGCPercent(Percent(k.liveBytes(), k.headroom))
}

func (k *keeper) liveBytes() uint64 {
	metrics.Read(k.sample)
	if k.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return k.sample[0].Value.Uint64()
}

// Percent is the GOGC that lets a heap of live bytes grow by at least headroom, and by
// at least its own size (GOGC=100).
func Percent(live, headroom uint64) int {
	if live == 0 || headroom <= live {
		return 100
	}
	return int(min(headroom*100/live, 10000))
}
