package recording

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Input is one input to read: a file, or "-" for the standard input.
type Input struct {
	Path string
	// Live says the file is followed (Options.Follow): a file given, not a rotated
	// backup.
	Live bool
}

// recordingExtensions are the names of the files a directory is read for: JSON Lines by
// the usual names, each maybe compressed (a file sink's backups with compress).
var recordingExtensions = []string{".jsonl", ".ndjson", ".json", ".log"}

// backupName matches the name lumberjack gives a rotated file sink: the file's name, then
// "-" and the time of the rotation, then its extension, and .gz when compressed.
var backupName = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}(\.[^.]*)?(\.gz)?$`)

// IsBackup reports whether path names a rotated (maybe compressed) backup of a file
// sink, never written again.
func IsBackup(path string) bool {
	return strings.HasSuffix(path, ".gz") || backupName.MatchString(filepath.Base(path))
}

// Expand turns the arguments into the inputs to read: "-" is the standard input; a
// directory, the recordings in it (a file sink's file and its backups: every file named
// *.jsonl, *.ndjson, *.json or *.log, maybe .gz); a pattern (quoted, so that the shell
// left it alone), the files it matches; a file, itself. With follow, the files given
// that are not backups are followed, and one that does not exist yet is waited for.
// Errors are for the user: a file that does not exist, a pattern that matches nothing.
func Expand(args []string, follow bool) ([]Input, error) {
	var inputs []Input
	seen := map[string]bool{}
	add := func(path string, given bool) {
		if seen[path] {
			return
		}
		seen[path] = true
		inputs = append(inputs, Input{Path: path, Live: follow && given && path != "-" && !IsBackup(path)})
	}
	stdin := false
	for _, arg := range args {
		if arg == "-" {
			if stdin {
				return nil, errors.New(`"-" (the standard input) is given twice`)
			}
			stdin = true
			add(arg, false)
			continue
		}
		info, err := os.Stat(arg)
		switch {
		case err == nil && info.IsDir():
			files, err := recordingsIn(arg)
			if err != nil {
				return nil, err
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("%s: no recordings in this directory (files named *.jsonl, *.ndjson, *.json or *.log, maybe .gz)", arg)
			}
			for _, f := range files {
				add(f, follow && !IsBackup(f))
			}
		case err == nil:
			add(arg, true)
		case errors.Is(err, fs.ErrNotExist) && hasMeta(arg):
			matches, err := filepath.Glob(arg)
			if err != nil {
				return nil, fmt.Errorf("%q: not a valid pattern: %v", arg, err)
			}
			matches = withoutPartialCopies(matches)
			if len(matches) == 0 {
				return nil, fmt.Errorf("%q: no file matches", arg)
			}
			for _, m := range matches {
				add(m, true)
			}
		case errors.Is(err, fs.ErrNotExist) && follow:
			add(arg, true) // waited for
		default:
			return nil, openError(arg, err)
		}
	}
	return inputs, nil
}

// LooksLikeInput reports whether a command-line argument names a recording rather than
// what to select from one: "-", a file or directory that exists, a pattern, or a name
// ending as recordings are named (a file to come, under --follow, or a mistyped one,
// which is then said to be missing).
func LooksLikeInput(arg string) bool {
	if arg == "-" || hasMeta(arg) {
		return true
	}
	if _, err := os.Stat(arg); err == nil {
		return true
	}
	base := strings.TrimSuffix(arg, ".gz")
	return strings.HasSuffix(arg, ".gz") || slices.ContainsFunc(recordingExtensions, func(ext string) bool { return strings.HasSuffix(base, ext) })
}

func hasMeta(path string) bool { return strings.ContainsAny(path, `*?[\`) }

// recordingsIn lists the recordings of a directory, sorted by name.
func recordingsIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, openError(dir, err)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		base := strings.TrimSuffix(name, ".gz")
		if slices.ContainsFunc(recordingExtensions, func(ext string) bool { return strings.HasSuffix(base, ext) }) {
			files = append(files, filepath.Join(dir, name))
		}
	}
	return withoutPartialCopies(files), nil
}

// withoutPartialCopies leaves out NAME.gz where NAME is there too: a backup being
// compressed (lumberjack writes the .gz whole, then removes the original), whose .gz is
// not whole yet.
func withoutPartialCopies(files []string) []string {
	slices.Sort(files)
	return slices.DeleteFunc(slices.Clone(files), func(f string) bool {
		return strings.HasSuffix(f, ".gz") && slices.Contains(files, strings.TrimSuffix(f, ".gz"))
	})
}
