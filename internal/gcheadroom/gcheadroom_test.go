package gcheadroom

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live, headroom uint64
		want           int
	}{
		{0, 64 << 20, 100},         // nothing measured yet: the default
		{8 << 20, 64 << 20, 800},   // small heap: grows by 64 MB, not by 8
		{64 << 20, 64 << 20, 100},  // from here GOGC=100 gives as much
		{200 << 20, 64 << 20, 100}, // large heap: never less than the default
		{1000, 64 << 20, 10000},    // tiny heap: capped
	} {
		if got := Percent(c.live, c.headroom); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.live, c.headroom, got, c.want)
		}
	}
}

// Keep re-tunes after every collection (so the GOGC follows the live heap), and stop
// restores the default.
func TestKeepFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	stop := Keep(256 << 20)
	defer stop()
	runtime.GC()
	small := waitPercent(t, func(p int) bool { return p > 100 })

	ballast := make([][]byte, 0, 64)
	for range 64 {
		ballast = append(ballast, make([]byte, 1<<20)) // 64 MB more live heap
	}
	runtime.GC()
	grown := waitPercent(t, func(p int) bool { return p < small })
	if grown < 100 || grown > 400 {
		t.Errorf("with 64 MB more live heap GOGC = %d, want a few hundred (256 MB of headroom)", grown)
	}
	runtime.KeepAlive(ballast)

	stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("after stop GOGC = %d, want 100", p)
	}
}

// A GOGC the user set wins.
func TestKeepLeavesUserSettingAlone(t *testing.T) {
	t.Setenv("GOGC", "50")
	old := debug.SetGCPercent(50)
	defer debug.SetGCPercent(old)
	stop := Keep(256 << 20)
	defer stop()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if p := debug.SetGCPercent(50); p != 50 {
		t.Errorf("GOGC = %d, want the user's 50", p)
	}
}

// waitPercent waits until the tuned GOGC satisfies ok (the cleanup runs shortly after a
// collection, on another goroutine) and returns it.
func waitPercent(t *testing.T, ok func(int) bool) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		if ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC stayed %d", p)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
