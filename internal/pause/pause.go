// Package pause waits for a while unless a context ends first: the one wait that retry
// and poll loops (the informer's, the sinks') share.
package pause

import (
	"context"
	"time"
)

// For waits for d, or until ctx ends, and reports whether it waited the whole of d.
func For(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
