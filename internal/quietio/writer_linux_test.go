package quietio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newPipe makes a pipe as a shell makes stdout's: in blocking mode, which os.NewFile
// leaves to plain system calls (os.Pipe's would be non-blocking, in Go's poller).
func newPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC)
	return filesOf(t, "pipe", fds, err)
}

// newSocket makes a connected stream socket pair in blocking mode, as journald hands a
// service its stdout.
func newSocket(t *testing.T) (r, w *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	return filesOf(t, "socket", fds, err)
}

// filesOf makes files of a pair of descriptors just made (err: how making them failed),
// closed when the test ends.
func filesOf(t *testing.T, kind string, fds [2]int, err error) (r, w *os.File) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), kind+"-r"), os.NewFile(uintptr(fds[1]), kind+"-w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// outputs are the kinds of stdout the raw writes are for.
var outputs = []struct {
	name string
	make func(t *testing.T) (r, w *os.File)
}{{"pipe", newPipe}, {"socket", newSocket}}

func TestWriterWrapsPipesSocketsAndDevices(t *testing.T) {
	for _, o := range outputs {
		_, w := o.make(t)
		if _, ok := Writer(w).(*nowait); !ok {
			t.Errorf("Writer(a %s) is not the raw writer", o.name)
		}
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	nw, ok := Writer(null).(*nowait)
	if !ok {
		t.Fatal("Writer(/dev/null) is not the raw writer")
	}
	if n, err := nw.Write([]byte("line\n")); n != 5 || err != nil || nw.plain {
		t.Errorf("Write to /dev/null = %d, %v (plain %v); want 5, nil, raw", n, err, nw.plain)
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := Writer(f); got != io.Writer(f) {
		t.Errorf("Writer(a regular file) = %T; want the file itself", got)
	}
	var buf bytes.Buffer
	if got := Writer(&buf); got != io.Writer(&buf) {
		t.Errorf("Writer(a buffer) = %T; want the buffer itself", got)
	}
}

// A terminal refuses RWF_NOWAIT: the writer says so at its first write and writes with the
// terminal's own Write from then on, every line arriving.
func TestWriterOnTerminalFallsBack(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_WRONLY|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	nw, ok := Writer(tty).(*nowait)
	if !ok {
		t.Fatal("Writer(a terminal) is not the raw writer")
	}
	for _, line := range []string{"one\n", "two\n"} {
		if n, err := nw.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", line, n, err)
		}
	}
	if !nw.plain {
		t.Error("the terminal took RWF_NOWAIT; the writer should have fallen back to its Write")
	}
	got := make([]byte, 0, 64)
	buf := make([]byte, 64)
	for !bytes.Contains(got, []byte("two")) {
		n, err := ptmx.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if s := strings.ReplaceAll(string(got), "\r", ""); s != "one\ntwo\n" {
		t.Errorf("the terminal showed %q; want the two lines", s)
	}
}

// Lines larger than a page, more of them than the pipe or socket holds, read slowly:
// the raw writes fill it, the rest of each line waits in the file's Write, and the
// reader gets every line whole and in order.
func TestWriterKeepsLinesWholeAndInOrder(t *testing.T) {
	for _, o := range outputs {
		t.Run(o.name, func(t *testing.T) {
			r, w := o.make(t)
			pw := Writer(w)
			var want bytes.Buffer
			lines := make([][]byte, 300)
			for i := range lines {
				lines[i] = append(bytes.Repeat([]byte{'a' + byte(i%26)}, 5000+i), '\n')
				want.Write(lines[i])
			}
			errc := make(chan error, 1)
			go func() {
				for _, line := range lines {
					if n, err := pw.Write(line); err != nil || n != len(line) {
						errc <- fmt.Errorf("Write = %d, %v; want %d, nil", n, err, len(line))
						return
					}
				}
				errc <- w.Close()
			}()
			var got bytes.Buffer
			buf := make([]byte, 3000)
			for {
				n, err := r.Read(buf)
				got.Write(buf[:n])
				if err != nil {
					break
				}
				time.Sleep(20 * time.Microsecond)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("the reader got %d bytes, not the %d written in order", got.Len(), want.Len())
			}
		})
	}
}

// The invariant: a write to a full pipe or socket must not wait in a raw system call,
// where it would hold the only processor (kubeevents watches on one) and stop every other
// goroutine, the other sinks' among them, until the reader reads. On one processor, the
// writer below goes into its write (the output full) before this goroutine can run again:
// this goroutine runs on, and drains the output, only if the write waits where the
// runtime can hand the processor over.
func TestFullOutputDoesNotHoldTheProcessor(t *testing.T) {
	// If the write held the processor, nothing in this process would run again, not even
	// go test's timeout: a watchdog outside it then ends it with SIGQUIT, which the
	// runtime handles without a processor, printing every goroutine's stack.
	watchdog := exec.Command("sh", "-c", fmt.Sprintf("sleep 30; kill -QUIT %d", os.Getpid()))
	if err := watchdog.Start(); err != nil {
		t.Fatal(err)
	}
	defer watchdog.Process.Kill()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, o := range outputs {
		t.Run(o.name, func(t *testing.T) { fillAndWrite(t, o.make) })
	}
}

func fillAndWrite(t *testing.T, output func(t *testing.T) (r, w *os.File)) {
	r, w := output(t)
	pw := Writer(w)
	if _, ok := pw.(*nowait); !ok {
		t.Fatal("not the raw writer")
	}
	// Fill it, with writes made non-waiting for the purpose.
	fd := int(w.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	filler := bytes.Repeat([]byte("x"), 4096)
	filled := 0
	for {
		n, err := syscall.Write(fd, filler)
		if err != nil {
			break
		}
		filled += n
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}

	line := []byte("one more line\n")
	writing := make(chan struct{}, 1)
	wrote := make(chan error, 1)
	go func() {
		writing <- struct{}{} // makes this goroutine runnable, not running
		_, err := pw.Write(line)
		wrote <- err
	}()
	<-writing
	got := make(chan int, 1)
	go func() {
		n, _ := io.Copy(io.Discard, r)
		got <- int(n)
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatalf("Write = %v once the pipe was read", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the write did not finish once the pipe was read")
	}
	w.Close()
	if n := <-got; n != filled+len(line) {
		t.Fatalf("the reader got %d bytes; want %d", n, filled+len(line))
	}
}

// A reader gone is EPIPE, as from the file's own Write, and does not kill the process.
func TestWriterReaderGone(t *testing.T) {
	for _, o := range outputs {
		r, w := o.make(t)
		r.Close()
		_, err := Writer(w).Write([]byte("line\n"))
		if !errors.Is(err, syscall.EPIPE) {
			t.Errorf("%s: Write with the reader gone = %v; want EPIPE", o.name, err)
		}
	}
}
