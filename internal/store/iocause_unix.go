//go:build unix

package store

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ioCause guesses why writing path failed where SQLite says only "disk I/O error": its
// file system full, or the process's file size limit reached (SQLite reports EFBIG so).
func ioCause(path string) string {
	var fs unix.Statfs_t
	if unix.Statfs(filepath.Dir(path), &fs) == nil && fs.Bavail == 0 {
		return "the disk is full"
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_FSIZE, &lim) == nil && lim.Cur != unix.RLIM_INFINITY {
		for _, f := range []string{path, path + "-wal"} {
			if size := fileSize(f); size > 0 && uint64(size)+64<<10 >= lim.Cur {
				return fmt.Sprintf("%s reached the process's file size limit (ulimit -f: %d bytes)", filepath.Base(f), lim.Cur)
			}
		}
	}
	return "a disk I/O error (the disk may be full or failing)"
}
