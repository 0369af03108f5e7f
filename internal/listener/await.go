package listener

import (
	"context"
	"time"
)

// AwaitWritten waits until every listener has written (or dropped, or failed) all it was
// given, however long that takes, unless ctx ends first (false).
func AwaitWritten(ctx context.Context, listeners []*Listener) bool {
	ticker := time.NewTicker(5 * time.Millisecond)
	defer ticker.Stop()
	for _, l := range listeners {
		for {
			if queued, held := l.Queue(); queued+held == 0 || l.isDone() {
				break
			}
			select {
			case <-ctx.Done():
				return false
			case <-ticker.C:
			}
		}
	}
	return true
}

func (l *Listener) isDone() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}
