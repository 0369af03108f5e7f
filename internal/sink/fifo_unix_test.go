//go:build unix

package sink

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO that nothing reads is a clear error at once, not a wait Ctrl-C cannot end; with
// a reader, events go through.
func TestFileSinkFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "events.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here")
	}
	done := make(chan error, 1)
	go func() {
		_, err := OpenFile(fifo, Rotation{}, t.Errorf)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "start its reader first") {
			t.Errorf("OpenFile of a FIFO without a reader: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OpenFile of a FIFO without a reader is still waiting")
	}

	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	f, err := OpenFile(fifo, Rotation{}, t.Errorf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	got := make([]byte, 16)
	n, _ := reader.Read(got)
	if string(got[:n]) != "{}\n" {
		t.Errorf("read %q from the FIFO", got[:n])
	}
}
