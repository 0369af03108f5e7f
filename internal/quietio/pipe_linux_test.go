package quietio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// newPipe makes a pipe as a shell makes stdout's: in blocking mode, which os.NewFile
// leaves to plain system calls (os.Pipe's would be non-blocking, in Go's poller).
func newPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "pipe-r"), os.NewFile(uintptr(fds[1]), "pipe-w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func TestPipeWriterOnlyWrapsPipes(t *testing.T) {
	_, w := newPipe(t)
	if _, ok := PipeWriter(w).(*pipe); !ok {
		t.Error("PipeWriter(a pipe) is not the pipe writer")
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := PipeWriter(f); got != io.Writer(f) {
		t.Errorf("PipeWriter(a regular file) = %T; want the file itself", got)
	}
	var buf bytes.Buffer
	if got := PipeWriter(&buf); got != io.Writer(&buf) {
		t.Errorf("PipeWriter(a buffer) = %T; want the buffer itself", got)
	}
}

// Lines larger than a page, more of them than the pipe holds, read slowly: the raw
// writes fill the pipe, the rest of each line waits in the file's Write, and the reader
// gets every line whole and in order.
func TestPipeWriterKeepsLinesWholeAndInOrder(t *testing.T) {
	r, w := newPipe(t)
	pw := PipeWriter(w)
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
}

// The invariant: a write to a full pipe must not wait in a raw system call, where it
// would hold the only processor (kubeevents watches on one) and stop every other
// goroutine, the other sinks' among them, until the reader reads. On one processor, the
// writer below goes into its write (the pipe full) before this goroutine can run again:
// this goroutine runs on, and drains the pipe, only if the write waits where the runtime
// can hand the processor over.
func TestFullPipeDoesNotHoldTheProcessor(t *testing.T) {
	// If the write held the processor, nothing in this process would run again, not even
	// go test's timeout: a watchdog outside it then ends it with SIGQUIT, which the
	// runtime handles without a processor, printing every goroutine's stack.
	watchdog := exec.Command("sh", "-c", fmt.Sprintf("sleep 30; kill -QUIT %d", os.Getpid()))
	if err := watchdog.Start(); err != nil {
		t.Fatal(err)
	}
	defer watchdog.Process.Kill()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	r, w := newPipe(t)
	pw := PipeWriter(w)
	if _, ok := pw.(*pipe); !ok {
		t.Fatal("not the pipe writer")
	}
	// Fill the pipe, with writes made non-waiting for the purpose.
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
func TestPipeWriterReaderGone(t *testing.T) {
	r, w := newPipe(t)
	r.Close()
	_, err := PipeWriter(w).Write([]byte("line\n"))
	if !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Write with the reader gone = %v; want EPIPE", err)
	}
}
