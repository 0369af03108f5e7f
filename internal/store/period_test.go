package store

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSnapshotPeriods measures what the snapshot period costs and saves, on a recording
// (STORE_RECORDING: make one with go run ./bench/store -versions 0): bytes a version,
// and the time of the state of every object at a time. Not run otherwise.
func TestSnapshotPeriods(t *testing.T) {
	src := os.Getenv("STORE_RECORDING")
	if src == "" {
		t.Skip("STORE_RECORDING is not set")
	}
	ctx := context.Background()
	defer func(p int) { snapshotEvery = p }(snapshotEvery)
	for _, period := range []int{1, 4, 8, 16, 32, 64} {
		snapshotEvery = period
		path := filepath.Join(t.TempDir(), "events.db")
		w := create(t, path, Options{})
		f, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		n := 0
		var first, last time.Time
		for sc.Scan() {
			write(t, w, sc.Bytes())
			n++
		}
		f.Close()
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		r := open(t, path)
		_ = r.db.QueryRow("SELECT min(time), max(time) FROM versions").Scan(new(int64), new(int64))
		var lo, hi int64
		_ = r.db.QueryRow("SELECT min(time), max(time) FROM versions").Scan(&lo, &hi)
		first, last = time.Unix(0, lo), time.Unix(0, hi)
		var took []time.Duration
		for i := range 9 {
			at := first.Add(last.Sub(first) * time.Duration(i+1) / 10)
			start := time.Now()
			versions, err := r.At(ctx, Query{}, at)
			if err != nil || len(versions) == 0 {
				t.Fatalf("period %d, at %s: %d versions, %v", period, at, len(versions), err)
			}
			took = append(took, time.Since(start)/time.Duration(len(versions)))
		}
		slices.Sort(took)
		t.Logf("snapshot every %2d: %d bytes a version (file), a version at T in %s (median)", period, fileSize(path)/int64(n), took[4].Round(time.Microsecond))
	}
}
