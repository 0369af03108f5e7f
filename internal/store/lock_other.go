//go:build !unix

package store

import "os"

// lockFile opens the store's file for its writer. A second writer is not refused on
// this system: SQLite's own locks keep the file whole, and the two writers' objects
// interleave.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, statError(path, err)
	}
	return f, nil
}
