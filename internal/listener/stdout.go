package listener

import (
	"context"
	"errors"
	"io"
)

// OutputGone is closed once the standard output's reader is gone (`| head -1`): out is a
// pipe whose reading end closed, or one of the listeners writing to it stopped on
// ErrOutputClosed; said, before it is closed, is called once. A stream the user piped
// into a reader that quit is done, whatever the other sinks. Nil (never closed) when no
// listener writes to out. stop ends the watching.
func OutputGone(ctx context.Context, out io.Writer, stdoutListeners []*Listener, said func()) (gone <-chan struct{}, stop func()) {
	if len(stdoutListeners) == 0 {
		return nil, func() {}
	}
	closed := make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	signals := make(chan struct{}, len(stdoutListeners)+1)
	watchReaderGone(ctx, out, func() { signals <- struct{}{} })
	for _, l := range stdoutListeners {
		go func() {
			select {
			case <-l.Done():
				if errors.Is(l.Err(), ErrOutputClosed) {
					signals <- struct{}{}
				}
			case <-ctx.Done():
			}
		}()
	}
	go func() {
		select {
		case <-signals:
			said()
			close(closed)
		case <-ctx.Done():
		}
	}()
	return closed, cancel
}
