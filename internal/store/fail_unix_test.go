//go:build unix

package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kubeevents/kubeevents/internal/event"
)

// TestWriterGoesOnAfterAFailedTransaction: a write that fails (here the process's file
// size limit, as a full disk fails it) loses the open transaction alone, says why in one
// line, and Committed counts exactly what is in the store; once there is room again the
// Writer goes on, each object's next version starting a chain from what the store holds,
// and every version stored reads back whole.
func TestWriterGoesOnAfterAFailedTransaction(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	w := create(t, path, Options{})
	rng := rand.New(rand.NewPCG(2, 2))
	v := 0
	next := func(name string) []byte {
		v++
		typ := event.Modified
		if v <= 2 {
			typ = event.Added
		}
		return podLine(typ, float64(v), "shop", name, v, noise(rng, 2000))
	}
	for range 10 {
		write(t, w, next("a"))
		write(t, w, next("b"))
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if w.Committed() != 20 {
		t.Fatalf("committed %d, want 20", w.Committed())
	}

	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	limit := uint64(fileSize(path)+fileSize(path+"-wal")) + 64<<10
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; err == nil && i < 10000; i++ {
		if err = w.Write(ctx, next("a")); err == nil {
			err = w.Flush(ctx)
		}
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	var we *WriteError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "file size limit (ulimit -f") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("the failed write: %v (%T); want a WriteError naming the file size limit, in one line", err, err)
	}
	committed := w.Committed()
	if n, _ := w.Pending(); n != 0 {
		t.Errorf("%d events pending after the failure; want the transaction given up", n)
	}

	for range 20 {
		write(t, w, next("a"))
		write(t, w, next("b"))
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	committed += 40
	r := open(t, path)
	n := uint64(0)
	for _, err := range r.Versions(ctx, Query{}, time.Time{}, time.Time{}) {
		if err != nil {
			t.Fatalf("after the failure: %v", err)
		}
		n++
	}
	if n != committed {
		t.Errorf("the store holds %d versions, Committed said %d", n, committed)
	}
}
