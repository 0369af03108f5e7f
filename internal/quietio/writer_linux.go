package quietio

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nowait writes with pwritev2(RWF_NOWAIT) what the kernel takes without waiting, and the
// rest with the file's own Write (see the package comment).
type nowait struct {
	// mu keeps the writes of several sinks writing to the same file whole: a line the
	// kernel took in part is finished before another begins (os.File's Write does the same).
	mu  sync.Mutex
	f   *os.File
	raw syscall.RawConn
	// plain: the kernel refused RWF_NOWAIT on this file; every write is the file's.
	// Guarded by mu, like everything a Write does.
	plain bool
}

// Writer returns a writer for w that writes without waking the runtime's monitor thread
// when w is, on Linux, a pipe (stdout piped into a script), a socket (stdout of a systemd
// service, read by journald) or a character device that can write without waiting
// (/dev/null), and w itself otherwise: a regular file, a test's buffer. A terminal takes
// the writer too, and refuses RWF_NOWAIT at the first write, after which the writer is
// the terminal's own Write. Everything that writes to the file must write through the one
// writer returned.
func Writer(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok {
		return w
	}
	info, err := f.Stat()
	if err != nil {
		return w
	}
	switch info.Mode().Type() {
	case os.ModeNamedPipe, os.ModeSocket, os.ModeDevice | os.ModeCharDevice:
	default:
		// A regular file: ext4 and tmpfs refuse RWF_NOWAIT for buffered writes, and
		// where a file system takes it (XFS, Btrfs) it is untested here.
		return w
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return w
	}
	return &nowait{f: f, raw: raw}
}

func (p *nowait) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	written := 0
	if !p.plain && len(b) > 0 {
		var errno syscall.Errno
		if err := p.raw.Control(func(fd uintptr) {
			for written < len(b) {
				iov := unix.Iovec{Base: &b[written]}
				iov.SetLen(len(b) - written)
				// Offset -1: the file's position, as write(2).
				n, _, e := syscall.RawSyscall6(unix.SYS_PWRITEV2, fd, uintptr(unsafe.Pointer(&iov)), 1,
					^uintptr(0), ^uintptr(0), unix.RWF_NOWAIT)
				switch e {
				case 0:
					written += int(n)
				case syscall.EINTR:
				default:
					errno = e
					return
				}
			}
		}); err != nil {
			return 0, &os.PathError{Op: "write", Path: p.f.Name(), Err: err}
		}
		switch errno {
		case 0, syscall.EAGAIN: // EAGAIN: the pipe or socket is full; the rest waits below
		case syscall.EOPNOTSUPP, syscall.EINVAL, syscall.ENOSYS:
			// A terminal; a pipe on a kernel before 6.4; no pwritev2.
			p.plain = true
		default:
			return written, &os.PathError{Op: "write", Path: p.f.Name(), Err: errno}
		}
	}
	if written == len(b) {
		return written, nil
	}
	n, err := p.f.Write(b[written:])
	return written + n, err
}
