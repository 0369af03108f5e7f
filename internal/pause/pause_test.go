package pause

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !For(context.Background(), time.Second) || time.Since(start) != time.Second {
			t.Errorf("For(1 s) returned after %s, or not whole", time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start = time.Now()
		if For(ctx, time.Second) || time.Since(start) != 300*time.Millisecond {
			t.Errorf("For(1 s) with a context ending after 0.3 s returned after %s, or whole", time.Since(start))
		}
	})
}
