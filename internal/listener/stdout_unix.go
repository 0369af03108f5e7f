//go:build unix

package listener

import (
	"context"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// watchReaderGone calls gone once when w is a pipe whose reading end is closed, as when
// `kubeevents watch pods | head -1` has its line: a quiet stream would otherwise only find
// out at its next write, which may never come. It returns at once for anything but a
// pipe, and its goroutine ends with ctx.
func watchReaderGone(ctx context.Context, w io.Writer, gone func()) {
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	fd := int(f.Fd())
	go func() {
		for ctx.Err() == nil {
			// POLLERR on the writing end of a pipe means no reader is left. Poll in short
			// slices so the goroutine notices ctx ending.
			fds := []unix.PollFd{{Fd: int32(fd)}}
			n, err := unix.Poll(fds, 200)
			if err != nil && err != unix.EINTR {
				return
			}
			if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				gone()
				return
			}
		}
	}()
}
