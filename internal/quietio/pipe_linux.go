package quietio

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pipe writes to a pipe with pwritev2(RWF_NOWAIT) what fits without waiting, and the
// rest with the file's own Write (see the package comment).
type pipe struct {
	// mu keeps the writes of several sinks writing to the same pipe whole: a line the
	// kernel took in part is finished before another begins (os.File's Write does the same).
	mu  sync.Mutex
	f   *os.File
	raw syscall.RawConn
	// plain: the kernel refused RWF_NOWAIT on this pipe; every write is the file's.
	// Guarded by mu, like everything a Write does.
	plain bool
}

// PipeWriter returns a writer for w that writes without waking the runtime's monitor
// thread when w is a pipe on Linux (stdout piped into a script), and w itself otherwise:
// a terminal, a file, a test's buffer. Everything that writes to the pipe must write
// through the one writer returned.
func PipeWriter(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok {
		return w
	}
	info, err := f.Stat()
	if err != nil || info.Mode().Type() != os.ModeNamedPipe {
		return w
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return w
	}
	return &pipe{f: f, raw: raw}
}

func (p *pipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	written := 0
	if !p.plain && len(b) > 0 {
		var errno syscall.Errno
		if err := p.raw.Control(func(fd uintptr) {
			for written < len(b) {
				iov := unix.Iovec{Base: &b[written]}
				iov.SetLen(len(b) - written)
				// Offset -1: the file's position, as write(2); a pipe has none.
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
		case 0, syscall.EAGAIN: // EAGAIN: the pipe is full; the rest waits below
		case syscall.EOPNOTSUPP, syscall.EINVAL, syscall.ENOSYS:
			p.plain = true // a kernel before 6.4, or no pwritev2
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
