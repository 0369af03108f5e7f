package sink

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"gopkg.in/natefinch/lumberjack.v2"
)

// Rotation says when a file sink starts a new file; MaxSizeMB 0 means never.
type Rotation struct {
	MaxSizeMB  int
	MaxBackups int
	MaxAgeDays int
	Compress   bool
}

// File is an open file sink destination: append-only, created 0600 (events carry
// whatever the cluster holds), synced on Close so that a Ctrl-C leaves whole lines on
// disk.
type File struct {
	Path string
	w    io.Writer
	sync func() error
	cl   func() error
	// created is set when OpenFile made the file; written once anything was written to
	// it. A run that fails before its first event removes what it created and never
	// wrote (RemoveIfUnused): bad input leaves no output file behind.
	created bool
	written atomic.Bool
}

// NotRegularError says a file sink asked to rotate is not a regular file (a device, a
// FIFO, a socket). Rotation renames the file and creates a new regular one in its place:
// done to /dev/null, that would break the machine.
type NotRegularError struct {
	Path string
	What string // "a character device", "a FIFO", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("file sink %s is %s, not a regular file, so it cannot be rotated (rotation renames the file)", e.Path, e.What)
}

// describeMode names what a file that is not regular is.
func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return "a special file"
}

// OpenFile opens (creating, appending) path for a file sink. warn receives a notice when
// an existing file is readable by others. Errors name the path and say what to do. With
// rotation, path must be a regular file (or not exist yet): anything else is a
// *NotRegularError, and is never renamed or replaced; a symbolic link is followed, so the
// file it points to rotates and the link stays as it is.
func OpenFile(path string, rot Rotation, warn func(format string, args ...any)) (*File, error) {
	info, statErr := os.Stat(path)
	if statErr == nil {
		if info.IsDir() {
			return nil, fmt.Errorf("file sink %s is a directory; give a file path", path)
		}
		if rot.MaxSizeMB > 0 && !info.Mode().IsRegular() {
			return nil, &NotRegularError{Path: path, What: describeMode(info.Mode())}
		}
		if mode := info.Mode().Perm(); mode&0o077 != 0 && info.Mode().IsRegular() {
			warn("%s is readable or writable by others (mode %04o); events may hold sensitive data: chmod 600 %s", path, mode, path)
		}
	}
	// Open it ourselves first even when rotating, so a missing directory or a permission
	// problem is one clear error at start-up rather than at the first event.
	flags := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	if statErr == nil && info.Mode()&fs.ModeNamedPipe != 0 {
		// Opening a FIFO for writing waits for a reader, in a system call that Ctrl-C
		// cannot end. Without a reader this fails at once (ENXIO) instead; with one, the
		// writes go through Go's poller.
		flags |= syscall.O_NONBLOCK
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("cannot open file sink %s: it is a FIFO and nothing reads it; start its reader first", path)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open file sink %s: %v", path, describeOpenError(err, path))
	}
	created := os.IsNotExist(statErr)
	if rot.MaxSizeMB <= 0 {
		sync := f.Sync
		if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
			// A device or FIFO (/dev/stdout, /dev/full, a named pipe) cannot be fsynced
			// (EINVAL), and has nothing to sync.
			sync = func() error { return nil }
		}
		return &File{Path: path, w: f, sync: sync, cl: f.Close, created: created}, nil
	}
	// Check again what was opened, in case path changed since the Stat above: lumberjack
	// renames whatever is at its Filename when the size is reached.
	opened, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot open file sink %s: %v", path, unwrapPathError(err))
	}
	if !opened.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, What: describeMode(opened.Mode())}
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	// Rotate the file itself, never a link to it: lumberjack would rename the link and
	// put a regular file where it was.
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open file sink %s: %v", path, unwrapPathError(err))
	}
	lj := &lumberjack.Logger{
		Filename:   target,
		MaxSize:    rot.MaxSizeMB,
		MaxBackups: rot.MaxBackups,
		MaxAge:     rot.MaxAgeDays,
		Compress:   rot.Compress,
	}
	// lumberjack keeps the mode of the file it rotates (0600 as created above) for the new
	// one, and writes each Write whole into one file.
	return &File{Path: path, w: lj, sync: func() error { return nil }, cl: lj.Close, created: created}, nil
}

func describeOpenError(err error, path string) string {
	switch {
	case os.IsPermission(err):
		return "permission denied (choose a writable directory)"
	case os.IsNotExist(err):
		return describeNotExist(path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// describeNotExist says why path could not be created although O_CREAT was given: a
// missing directory, a symbolic link to one, or a directory whose file system makes no
// new files (/proc, /sys), which the system reports as "no such file" too.
func describeNotExist(path string) string {
	dir := filepath.Dir(path)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Sprintf("directory %s does not exist (create it first)", dir)
	}
	if target, err := os.Readlink(path); err == nil {
		return fmt.Sprintf("it is a symbolic link to %s, whose directory does not exist (create it first, or fix the link)", target)
	}
	if fsys := virtualFileSystem(dir); fsys != "" {
		return fmt.Sprintf("directory %s is on the %s file system, which does not hold ordinary files (choose a directory on disk)", dir, fsys)
	}
	return fmt.Sprintf("directory %s does not allow creating files in it (choose another directory)", dir)
}

func (f *File) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if n > 0 {
		f.written.Store(true)
	}
	return n, err
}

// RemoveIfUnused removes the file if OpenFile created it and nothing was written to it:
// for a run that ends in an error before its first event (bad credentials, missing
// rights, another sink's bad expression), which must leave no output file behind.
func (f *File) RemoveIfUnused() {
	if f.created && !f.written.Load() {
		_ = os.Remove(f.Path)
	}
}

// Close syncs and closes the file.
func (f *File) Close() error {
	serr := f.sync()
	cerr := f.cl()
	if serr != nil {
		return fmt.Errorf("syncing %s: %w", f.Path, unwrapPathError(serr))
	}
	if cerr != nil {
		return fmt.Errorf("closing %s: %w", f.Path, unwrapPathError(cerr))
	}
	return nil
}
