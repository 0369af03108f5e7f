package sink

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
)

// Headers are an http sink's request headers, from "NAME=REF; NAME=REF", where REF is
// env:VAR (the variable's value, which must be set), file:PATH (the file's contents
// without a final newline) or the text itself. Secrets thus stay out of the command
// line and the config file, and are never printed: errors name the header and the
// reference, never a value.
//
// A file is read again when it changes, which Current checks before each request: a
// projected ServiceAccount token, or any token a sidecar renews, is replaced while the
// sink runs (the kubelet swaps a symbolic link to a new file; others rewrite it in
// place), and the receiver would refuse the old one.
type Headers struct {
	mu      sync.Mutex
	entries []headerEntry
}

// headerEntry is one NAME=REF.
type headerEntry struct {
	name, ref string
	value     string
	path      string      // file: references
	stat      os.FileInfo // the file as it was when value was read
}

// ParseHeaders reads the headers, and the files they name, once: a reference that
// cannot be resolved is an error, as at start-up.
func ParseHeaders(spec string) (*Headers, error) {
	h := &Headers{}
	for part := range strings.SplitSeq(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, ref, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t:") {
			return nil, fmt.Errorf("header %q: want NAME=env:VAR, NAME=file:PATH or NAME=TEXT", clipName(part))
		}
		e := headerEntry{name: name, ref: strings.TrimSpace(ref)}
		switch {
		case strings.HasPrefix(e.ref, "env:"):
			v, ok := os.LookupEnv(e.ref[len("env:"):])
			if !ok {
				return nil, fmt.Errorf("header %s: environment variable %s is not set", name, e.ref[len("env:"):])
			}
			e.value = v
		case strings.HasPrefix(e.ref, "file:"):
			e.path = e.ref[len("file:"):]
			if err := e.read(); err != nil {
				return nil, err
			}
		default:
			e.value = e.ref
		}
		if strings.ContainsAny(e.value, "\r\n") {
			return nil, fmt.Errorf("header %s: the value from %s holds a line break", name, refName(e.ref))
		}
		h.entries = append(h.entries, e)
	}
	return h, nil
}

// read reads a file: reference's value, and notes the file's state.
func (e *headerEntry) read() error {
	stat, err := os.Stat(e.path)
	if err != nil {
		return fmt.Errorf("header %s: cannot read %s: %w", e.name, e.path, unwrapPathError(err))
	}
	data, err := os.ReadFile(e.path)
	if err != nil {
		return fmt.Errorf("header %s: cannot read %s: %w", e.name, e.path, unwrapPathError(err))
	}
	value := strings.TrimRight(string(data), "\r\n")
	if strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("header %s: the value from %s holds a line break", e.name, e.ref)
	}
	e.value, e.stat = value, stat
	return nil
}

// changed reports whether a file: reference's file is not the one last read: another
// file (a new symbolic link target, a file renamed over it), or another size or
// modification time.
func (e *headerEntry) changed() bool {
	stat, err := os.Stat(e.path)
	if err != nil {
		return true // read it, to say why
	}
	return !os.SameFile(stat, e.stat) || stat.Size() != e.stat.Size() || !stat.ModTime().Equal(e.stat.ModTime())
}

// Current returns the headers to send. It reads again the files that changed, or, with
// force, every file; changed reports a value that is not the one returned before. A
// file that cannot be read keeps its last value, and the error says why (without the
// value).
func (h *Headers) Current(force bool) (header http.Header, changed bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	header = make(http.Header, len(h.entries))
	for i := range h.entries {
		e := &h.entries[i]
		if e.path != "" && (force || e.changed()) {
			old := e.value
			if rerr := e.read(); rerr != nil && err == nil {
				err = rerr
			}
			changed = changed || e.value != old
		}
		header.Add(e.name, e.value)
	}
	return header, changed, err
}

// refName names a header's reference in messages without its text, which may be a secret.
func refName(ref string) string {
	if strings.HasPrefix(ref, "env:") || strings.HasPrefix(ref, "file:") {
		return ref
	}
	return "its text"
}

// clipName shows a malformed header by its name alone: what follows may be a secret.
func clipName(s string) string {
	if i := strings.IndexAny(s, "=: \t"); i >= 0 {
		return s[:i] + "..."
	}
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}
