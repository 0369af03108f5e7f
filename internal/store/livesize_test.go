package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
)

// TestRetentionBySizeUnderLiveIngest: large versions that do not compress, committed a
// batch at a time as a sink commits them, sampled after every write: the file and its
// log stay within max-size +5% all along, not only after each retention step.
func TestRetentionBySizeUnderLiveIngest(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	const maxSize = 4 << 20
	w := create(t, path, Options{MaxSize: maxSize})
	rng := rand.New(rand.NewPCG(5, 5))
	var largest int64
	var at string
	const objects, rounds, batch = 2, 150, 50
	i := 0
	for v := range rounds {
		for p := range objects {
			i++
			write(t, w, podLine(event.Modified, float64(i)/20, "shop", fmt.Sprintf("p%d", p), v, noise(rng, 60<<10)))
			if i%batch == 0 {
				if err := w.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if n := fileSize(path) + fileSize(path+"-wal"); n > largest {
				largest, at = n, fmt.Sprintf("write %d: file %d, log %d", i, fileSize(path), fileSize(path+"-wal"))
			}
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("largest %d bytes at %s (max-size %d)", largest, at, maxSize)
	if largest > maxSize*105/100 {
		t.Errorf("the file and its log reached %d bytes (%s), over max-size %d by more than 5%%", largest, at, maxSize)
	}
}
