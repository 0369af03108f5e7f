package runtimetune

import (
	"runtime"
	"testing"

	"github.com/kubeevents/kubeevents/internal/switches"
)

// The watch runs on one processor once the initial list is in, unless the user set
// GOMAXPROCS; the end of the run gives Go's default back.
func TestOneProcessorForWatching(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	runtime.SetDefaultGOMAXPROCS()
	defer runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(4) // so that 1 is not what it was anyway, on a machine of one core
	restore := oneProcessor()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("GOMAXPROCS %d while watching, want 1", n)
	}
	restore()
	if n := runtime.GOMAXPROCS(0); n != def {
		t.Errorf("GOMAXPROCS %d after the run, want Go's default %d", n, def)
	}

	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3) // as the runtime read it at start
	restore = oneProcessor()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Errorf("GOMAXPROCS %d while watching with GOMAXPROCS=3 set, want 3: the user's choice stands", n)
	}
	restore()

	t.Setenv("GOMAXPROCS", "")
	t.Setenv(switches.OneProcessor.Env, "off")
	runtime.GOMAXPROCS(4)
	restore = oneProcessor()
	if n := runtime.GOMAXPROCS(0); n != 4 {
		t.Errorf("GOMAXPROCS %d while watching with %s=off, want 4: left alone", n, switches.OneProcessor.Env)
	}
	restore()
}
