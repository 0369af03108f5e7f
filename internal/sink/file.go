package sink

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

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
}

// OpenFile opens (creating, appending) path for a file sink. warn receives a notice when
// an existing file is readable by others. Errors name the path and say what to do.
func OpenFile(path string, rot Rotation, warn func(format string, args ...any)) (*File, error) {
	if info, err := os.Stat(path); err == nil {
		if info.IsDir() {
			return nil, fmt.Errorf("file sink %s is a directory; give a file path", path)
		}
		if mode := info.Mode().Perm(); mode&0o077 != 0 && info.Mode().IsRegular() {
			warn("%s is readable or writable by others (mode %04o); events may hold sensitive data: chmod 600 %s", path, mode, path)
		}
	}
	// Open it ourselves first even when rotating, so a missing directory or a permission
	// problem is one clear error at start-up rather than at the first event.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open file sink %s: %v", path, describeOpenError(err, path))
	}
	if rot.MaxSizeMB <= 0 {
		return &File{Path: path, w: f, sync: f.Sync, cl: f.Close}, nil
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	lj := &lumberjack.Logger{
		Filename:   path,
		MaxSize:    rot.MaxSizeMB,
		MaxBackups: rot.MaxBackups,
		MaxAge:     rot.MaxAgeDays,
		Compress:   rot.Compress,
	}
	// lumberjack keeps the mode of the file it rotates (0600 as created above) for the new
	// one, and writes each Write whole into one file.
	return &File{Path: path, w: lj, sync: func() error { return nil }, cl: lj.Close}, nil
}

func describeOpenError(err error, path string) string {
	switch {
	case os.IsPermission(err):
		return "permission denied (choose a writable directory)"
	case os.IsNotExist(err):
		return fmt.Sprintf("directory %s does not exist (create it first)", filepath.Dir(path))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (f *File) Write(b []byte) (int, error) { return f.w.Write(b) }

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
