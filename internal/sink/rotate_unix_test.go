//go:build unix

package sink

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Rotation applies to regular files only: a device, a FIFO, or a link to one, is refused
// with a *NotRegularError before anything is written, and left exactly as it was.
func TestRotationRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "events.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0) // so that opening it would work
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	toNull := filepath.Join(dir, "to-null")
	if err := os.Symlink("/dev/null", toNull); err != nil {
		t.Fatal(err)
	}
	targets := map[string]string{fifo: "a FIFO", toNull: "a character device"}
	// A device node of its own (what /dev/null is: character device 1,3), where allowed.
	device := filepath.Join(dir, "null")
	if err := syscall.Mknod(device, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		targets[device] = "a character device"
	} else {
		t.Logf("no device node of its own (%v); checking the FIFO and the link to /dev/null", err)
	}
	for path, what := range targets {
		before, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := OpenFile(path, Rotation{MaxSizeMB: 1}, t.Errorf)
		var notRegular *NotRegularError
		if !errors.As(err, &notRegular) || notRegular.What != what || !strings.Contains(err.Error(), path) {
			t.Errorf("OpenFile(%s) with rotation = %v; want a NotRegularError saying it is %s", path, err, what)
		}
		if f != nil && path != fifo { // nothing reads the FIFO: writes to it would wait
			// Write past the size, as an event stream would: nothing may be renamed.
			line := []byte(strings.Repeat("x", 1<<19) + "\n")
			for range 4 {
				_, _ = f.Write(line)
			}
			f.Close()
		}
		after, err := os.Lstat(path)
		if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
			t.Errorf("%s was replaced: %v (%v), was %v", path, after, err, before.Mode())
		}
		if matches, _ := filepath.Glob(path + "-*"); len(matches) > 0 {
			t.Errorf("%s was renamed: %v", path, matches)
		}
	}
}

// A symbolic link to a regular file is followed: the file rotates, the link stays a link
// to the current file.
func TestRotationThroughASymlinkRotatesTheFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	link := filepath.Join(dir, "events.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(link, Rotation{MaxSizeMB: 1, MaxBackups: 10}, t.Errorf)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 1<<19) + "\n")
	for range 4 {
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v (%v)", info.Mode(), err)
	}
	if target, _ := os.Readlink(link); target != real {
		t.Errorf("the link points to %q, want %q", target, real)
	}
	backups, _ := filepath.Glob(filepath.Join(dir, "real-*.jsonl"))
	if len(backups) == 0 {
		t.Errorf("no rotated backups of %s; the directory holds: %v", real, dirNames(t, dir))
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}
