package runtimetune

import (
	"runtime"
	"testing"

	"github.com/kubeevents/kubeevents/internal/fastpath"
)

// The watch runs on one processor once the initial list is in, unless the settings
// leave the processors to Go (the switch off, or GOMAXPROCS set); the end of the run
// gives Go's default back.
func TestOneProcessorForWatching(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	runtime.SetDefaultGOMAXPROCS()
	defer runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(4) // so that 1 is not what it was anyway, on a machine of one core
	restore := ForWatching(fastpath.Runtime{NoStartupPages: true})
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("GOMAXPROCS %d while watching, want 1", n)
	}
	restore()
	if n := runtime.GOMAXPROCS(0); n != def {
		t.Errorf("GOMAXPROCS %d after the run, want Go's default %d", n, def)
	}

	runtime.GOMAXPROCS(4)
	restore = ForWatching(fastpath.Runtime{NoStartupPages: true, NoOneProcessor: true})
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Errorf("GOMAXPROCS %d while watching with NoOneProcessor, want 4: left alone", n)
	}
	restore()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Errorf("GOMAXPROCS %d after a run with NoOneProcessor, want 4: left alone", n)
	}
}
