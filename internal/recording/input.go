package recording

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// readBuffer is each input's read buffer: lines longer than it are read in pieces.
const readBuffer = 256 << 10

// input is one file (or the standard input) read line by line. A live input (a file
// followed, Options.Follow) waits at its end for more, and goes on in the file that
// takes its path when it is rotated.
type input struct {
	path string // "-" for the standard input
	live bool
	// stdin is the standard input's reader, for path "-".
	stdin io.Reader

	file   *os.File    // nil for the standard input, and for a live file not created yet
	info   fs.FileInfo // of the open file, to tell when its path names another one
	closer io.Closer   // the gzip reader, if any
	r      *bufio.Reader
	line   int   // lines read from the open file
	offset int64 // bytes read from the open (uncompressed) file
	// partial is a line read up to the end of the input, not yet ended by '\n'.
	partial []byte
	// draining is set once a live file's path was found to name another file: what
	// the old one got before it was renamed is read before the new one is opened.
	draining bool
	// reading is the backup open instead of path (empty: path itself), and missed the
	// backups to read after it: files the sink rotated away while an older one was read.
	reading string
	missed  []string
	// done is the live file read to its end last, once rotated away (nil: none yet): the
	// backups rotated after it are read before the path is opened again.
	done os.FileInfo
	// first is the time of the first record (ordering the inputs before they are read).
	first recordTime
}

// recordTime is a record's time as Unix nanoseconds (0: unknown), cheap to compare.
type recordTime = int64

func (in *input) isGzip() bool { return strings.HasSuffix(in.name(), ".gz") }

// name is the path of the file open: path, or a backup of it read on the way.
func (in *input) name() string {
	if in.reading != "" {
		return in.reading
	}
	return in.path
}

// open opens the input from its start. A live file that does not exist yet is not an
// error: it is opened once it does (reopen).
func (in *input) open() error {
	if in.path == "-" {
		in.r = bufio.NewReaderSize(in.stdin, readBuffer)
		return nil
	}
	f, err := os.Open(in.name())
	if err != nil {
		if in.live && in.reading == "" && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return openError(in.name(), err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return openError(in.name(), err)
	}
	if info.IsDir() {
		f.Close()
		return fmt.Errorf("%s is a directory", in.name())
	}
	in.file, in.info, in.line, in.offset, in.partial = f, info, 0, 0, nil
	var src io.Reader = f
	if in.isGzip() {
		gz, err := gzip.NewReader(bufio.NewReaderSize(f, 64<<10))
		if err != nil {
			f.Close()
			return fmt.Errorf("%s: not a gzip file that can be read: %v", in.name(), err)
		}
		in.closer, src = gz, gz
	}
	if in.r == nil {
		in.r = bufio.NewReaderSize(src, readBuffer)
	} else {
		in.r.Reset(src)
	}
	return nil
}

func openError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", path)
	}
	return fmt.Errorf("%s: %v", path, err)
}

func (in *input) close() {
	if in.closer != nil {
		in.closer.Close()
		in.closer = nil
	}
	if in.file != nil {
		in.file.Close()
		in.file = nil
	}
}

// readLine returns the next line, without its end of line, in memory of its own, with
// its number. At the end of the input it returns io.EOF, keeping what it read of a line
// not yet ended (partial); the next call goes on from there, with whatever was written
// since. Empty lines are skipped.
func (in *input) readLine() ([]byte, int, error) {
	if in.r == nil {
		return nil, 0, io.EOF // a live file not created yet
	}
	for {
		chunk, err := in.r.ReadSlice('\n')
		in.offset += int64(len(chunk))
		switch {
		case err == nil:
			in.line++
			line := chunk[:len(chunk)-1]
			if in.partial != nil {
				line = append(in.partial, line...)
				in.partial = nil
			} else {
				line = append(make([]byte, 0, len(line)), line...)
			}
			line = trimCR(line)
			if len(line) == 0 {
				continue
			}
			return line, in.line, nil
		case errors.Is(err, bufio.ErrBufferFull), errors.Is(err, io.EOF):
			if len(chunk) > 0 {
				in.partial = append(in.partial, chunk...)
			}
			if errors.Is(err, io.EOF) {
				return nil, 0, io.EOF
			}
		default:
			if in.isGzip() {
				return nil, 0, fmt.Errorf("%s: cannot be decompressed after line %d: %v (a backup still being compressed, or cut short)", in.name(), in.line, err)
			}
			return nil, 0, fmt.Errorf("%s: %v", in.name(), err)
		}
	}
}

// lastLine takes the line left unended at the end of an input that is not followed
// (nil if none), with its number.
func (in *input) lastLine() ([]byte, int) {
	line := trimCR(in.partial)
	in.partial = nil
	if len(line) == 0 {
		return nil, 0
	}
	in.line++
	return line, in.line
}

func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}

// rotation says what became of a live file's path, checked at the end of what was
// read of it.
type rotation int

const (
	unchanged rotation = iota
	rotated            // the path names another file now (the one read was renamed)
	truncated          // the file read is shorter than what was read of it
	created            // the path names a file, where none was when it was opened
)

// checkPath compares the live file's path with the file open.
func (in *input) checkPath() rotation {
	info, err := os.Stat(in.path)
	switch {
	case err != nil:
		return unchanged // renamed, and the new one not created yet: keep reading the old
	case in.file == nil:
		return created
	case !os.SameFile(info, in.info):
		return rotated
	case info.Size() < in.offset:
		return truncated
	}
	return unchanged
}

// openNext opens the next file of a live input once the one read has ended: the oldest
// backup missed, else the path itself. The sink may rotate again while the backups are
// read, or between their listing and the opening of the path: a backup rotated after the
// file read last is then read before the path's newer file.
func (in *input) openNext() error {
	in.reading = ""
	if len(in.missed) > 0 {
		in.reading, in.missed = in.missed[0], in.missed[1:]
		return in.open()
	}
	if err := in.open(); err != nil || in.file == nil || in.done == nil {
		return err
	}
	if missed := in.backupsAfter(in.done); len(missed) > 0 {
		in.close()
		in.missed = missed
		return in.openNext()
	}
	return nil
}

// backupsAfter lists the backups of the live file rotated after the one info describes,
// oldest first: when the sink rotated more than once while one file was read, the files
// in between are backups by now. None when that file is not among the backups (it was
// compressed or removed since).
func (in *input) backupsAfter(info os.FileInfo) []string {
	dir, base := filepath.Split(in.path)
	prefix := strings.TrimSuffix(base, filepath.Ext(base))
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		// lumberjack's name: the file's name, then -TIME, then its extension (and .gz);
		// TIME has a fixed width, so names sort in the order they were rotated.
		n := e.Name()
		if loc := backupName.FindStringIndex(n); loc != nil && n[:loc[0]] == prefix {
			names = append(names, filepath.Join(dir, n))
		}
	}
	sort.Strings(names)
	for i, n := range names {
		if backup, err := os.Stat(n); err == nil && os.SameFile(backup, info) {
			return names[i+1:]
		}
	}
	return nil
}
