// Package store keeps a recording in one SQLite file: every version of every object
// recorded, with indexes to answer what a kubectl user asks of the past (one object's
// history, a namespace at a given time, the events of a time range in order) without
// reading the whole recording. docs/store.md describes the schema for users.
//
// Its input is what a file sink writes, the JSON envelope of each event
// (render.AppendEnvelopeWithDiff), so that the store holds all that a recording holds:
// each version is stored as that line, compressed with zstd against the line of the
// object's previous version (a change), or against a reference line of its resource
// (a snapshot, every snapshotEvery versions), which keeps a chain short to decode.
//
// One Writer writes a store (a second one is refused: lockFile); Readers, in this
// process or others, read it meanwhile without holding the Writer up (SQLite's
// write-ahead log).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// NotStoreError says a file is not a store this kubeevents can read: not SQLite, another
// application's database, damaged, or written by a newer kubeevents.
type NotStoreError struct {
	Path, Why string
}

func (e *NotStoreError) Error() string { return e.Path + ": " + e.Why }

// LockedError says another process is writing the store.
type LockedError struct{ Path string }

func (e *LockedError) Error() string {
	return e.Path + ": another kubeevents is writing this store (a store has one writer); stop it, or give another file"
}

// openDB opens path with the pragmas every connection gets. The file must exist.
func openDB(path string, pragmas ...string) (*sql.DB, error) {
	q := url.Values{}
	for _, p := range append([]string{"busy_timeout(10000)"}, pragmas...) {
		q.Add("_pragma", p)
	}
	u := url.URL{Scheme: "file", Opaque: url.PathEscape(path), RawQuery: q.Encode()}
	return sql.Open("sqlite", u.String())
}

// check reads the file's application id and schema version, and says what is wrong
// with a file that is not a store: empty reports whether it is a new, empty database.
func check(ctx context.Context, db *sql.DB, path string) (empty bool, err error) {
	var app, version int64
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return false, notStore(path, err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return false, notStore(path, err)
	}
	var tables int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return false, notStore(path, err)
	}
	switch {
	case app == 0 && tables == 0:
		return true, nil
	case app != applicationID:
		return false, &NotStoreError{path, "an SQLite database, but not a kubeevents store (another application's): give a store that kubeevents wrote, or a new file"}
	case version > schemaVersion:
		return false, &NotStoreError{path, fmt.Sprintf("a kubeevents store of schema version %d, newer than this kubeevents reads (%d): upgrade kubeevents", version, schemaVersion)}
	case version == 1:
		return false, &NotStoreError{path, "a kubeevents store of schema version 1 (a development build's), which this kubeevents does not read: with that build, replay --store FILE -o json > FILE.jsonl, then store import FILE.jsonl into a new store"}
	case version < 1:
		return false, &NotStoreError{path, "a kubeevents store whose creation did not finish: remove it and import again"}
	}
	return false, nil
}

// notStore turns SQLite's errors about what a file is into one line for the user.
func notStore(path string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return &NotStoreError{path, "not a kubeevents store (not an SQLite database)"}
		case sqlite3.SQLITE_CORRUPT:
			return &NotStoreError{path, "the store is damaged (SQLite: database disk image is malformed)"}
		case sqlite3.SQLITE_CANTOPEN:
			return &NotStoreError{path, "cannot be opened (is its directory writable?)"}
		}
	}
	return fmt.Errorf("%s: %w", path, err)
}

// WriteError says why a Writer could not write its store (a full disk, a read-only
// file, a failing one), in one line; the events not committed are lost.
type WriteError struct {
	Path, Why string
	Err       error
}

func (e *WriteError) Error() string { return "cannot write " + e.Path + ": " + e.Why }
func (e *WriteError) Unwrap() error { return e.Err }

// writeError says why writing failed, in one line for the user.
func (w *Writer) writeError(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	var why string
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		why = "the disk is full"
	case sqlite3.SQLITE_IOERR:
		why = ioCause(w.path)
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
		why = "the file is read-only (or its directory is, where SQLite keeps the write-ahead log)"
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		why = "the store is damaged (SQLite: database disk image is malformed)"
	default:
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return &WriteError{Path: w.path, Why: why, Err: err}
}

// statError says why a store's path cannot be used, in one line.
func statError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied", path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %v", path, err)
}

// fileSize is the size of path, 0 if it does not exist.
func fileSize(path string) int64 {
	if info, err := os.Stat(path); err == nil {
		return info.Size()
	}
	return 0
}
