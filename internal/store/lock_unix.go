//go:build unix

package store

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes the store's writer lock: flock on the database file itself, which
// SQLite's own locks (fcntl byte ranges) do not see, so that readers are never held up.
// It is released when the file returned is closed, after the database: closing a
// descriptor of the file drops this process's fcntl locks on it.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, statError(path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockedError{Path: path}
		}
		return nil, statError(path, err)
	}
	return f, nil
}
