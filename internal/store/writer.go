package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/recording"
)

// BadEventError says a line is not an event kubeevents wrote: nothing of it is stored.
type BadEventError struct{ Err error }

func (e *BadEventError) Error() string { return "not an event kubeevents wrote: " + e.Err.Error() }
func (e *BadEventError) Unwrap() error { return e.Err }

// Options say how a Writer keeps its store.
type Options struct {
	// MaxAge drops what is older than this before the latest event stored (0: kept):
	// every object's state at any time since stays (its last version before, and what
	// follows); versions superseded before it, and objects deleted before it, go.
	MaxAge time.Duration
	// MaxSize bounds the file and its write-ahead log together (bytes, 0: unbounded),
	// within 5%: the oldest versions superseded go first, as with MaxAge.
	MaxSize int64
	// Warn says what the Writer cannot do (a store full of current state that MaxSize
	// cannot hold), once.
	Warn func(format string, args ...any)
}

// BatchInterval is how long an event written may wait in the open transaction: a
// caller whose events stop for a while (a sink's listener, idle) calls Flush once this
// has passed since Pending became non-zero, so that a process killed loses at most this
// much.
const BatchInterval = batchAge

// Tuning, measured on status churn (bench/README.md "History store").
const (
	// batchRows and batchAge bound a transaction: at most this many events, and at most
	// this old, are lost with the process (SIGKILL, not a crash of the machine: the
	// log is synced at checkpoints, synchronous=NORMAL).
	batchRows = 2000
	batchAge  = time.Second
	// cacheBytes bounds the previous versions' lines held to compress the next ones
	// against; an object whose line was dropped starts a new chain (a snapshot costs
	// little more than a change).
	cacheBytes = 32 << 20
)

// snapshotEvery is how many versions of an object make a chain: a snapshot and the
// changes after it. Longer chains save little (a change costs 70% of a snapshot) and
// cost time to read: an object's version at T decodes half a chain on average. A
// variable for the measurement that chose it (TestSnapshotPeriods).
var snapshotEvery = 16

// Writer adds recorded events to a store, in transactions of up to batchRows events or
// batchAge. A transaction is committed by the Write that fills it, by Flush, or by
// Close: a caller whose events stop for a while (a sink's listener, idle) calls Flush
// within batchAge. It is used by one goroutine at a time.
type Writer struct {
	path  string
	db    *sql.DB
	lock  interface{ Close() error }
	opts  Options
	codec *codec
	stmt  statements
	tx    *sql.Tx
	since time.Time // when tx began
	rows  int       // events in tx
	bytes int64     // bytes tx writes to the log, about
	txs   int64     // transactions begun
	// committed counts the events of the transactions committed.
	committed uint64

	resources map[schema.GroupVersionResource]*resource
	objects   map[objectKey]*objectState
	cached    int   // bytes of the lines in objects
	latest    int64 // the time of the latest event stored: the store's now
	retention retention
}

type resource struct {
	id   int64
	dict []byte
}

// objectKey names an object in the store: its resource, where it is, its name and uid.
type objectKey struct {
	resource                 int64
	cluster, namespace, name string
	uid                      string
}

// objectState is what the Writer keeps of an object it has stored a version of.
type objectState struct {
	id       int64  // objects.id
	last     int64  // the id of its last version (0: none): the base of the next change
	lastTime int64  // its time (later versions are stored no earlier)
	chain    int64  // the id of the current chain's snapshot
	length   int    // versions in the current chain
	line     []byte // the last version's line; nil once dropped from the cache
	dict     []byte // the dictionary of the next change (nextDict), with line
	owners   string
	tx       int64 // the last transaction that stored a version of it (Writer.txs)
}

// Create opens the store at path for writing, creating it if it does not exist. A file
// that is not a store is refused (*NotStoreError), and so is a store another process
// writes (*LockedError).
func Create(ctx context.Context, path string, opts Options) (*Writer, error) {
	if opts.Warn == nil {
		opts.Warn = func(string, ...any) {}
	}
	lock, err := lockFile(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{path: path, lock: lock, opts: opts, codec: newCodec(),
		resources: map[schema.GroupVersionResource]*resource{}, objects: map[objectKey]*objectState{}}
	if err := w.open(ctx); err != nil {
		w.abort()
		return nil, err
	}
	return w, nil
}

func (w *Writer) open(ctx context.Context) error {
	db, err := openDB(w.path, "synchronous(NORMAL)", "cache_size(-16000)")
	if err != nil {
		return err
	}
	w.db = db
	db.SetMaxOpenConns(1) // one connection: the statements and the transaction share it
	empty, err := check(ctx, db, w.path)
	if err != nil {
		return err
	}
	if empty {
		if err := w.create(ctx); err != nil {
			return notStore(w.path, err)
		}
	}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return notStore(w.path, err)
	}
	if err := w.retention.init(ctx, w); err != nil {
		return notStore(w.path, err)
	}
	if err := db.QueryRowContext(ctx, "SELECT coalesce(max(time), 0) FROM versions").Scan(&w.latest); err != nil {
		return notStore(w.path, err)
	}
	return w.stmt.prepare(ctx, db)
}

// create makes the schema of a new store. auto_vacuum is set before the first table:
// it cannot be changed afterwards, and retention needs it to give pages back.
func (w *Writer) create(ctx context.Context) error {
	if _, err := w.db.ExecContext(ctx, "PRAGMA auto_vacuum=INCREMENTAL"); err != nil {
		return err
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmts := createSchema + fmt.Sprintf("\nPRAGMA application_id=%d;\nPRAGMA user_version=%d;", applicationID, schemaVersion)
	if _, err := tx.ExecContext(ctx, stmts); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta VALUES ('created', ?)", time.Now().UTC().Format(time.RFC3339)); err != nil {
		return err
	}
	return tx.Commit()
}

// abort closes what open opened, after an error.
func (w *Writer) abort() {
	if w.db != nil {
		w.db.Close()
	}
	w.lock.Close()
	w.codec.close()
}

// Event is one event as the Writer stores it: what a recording's line says of it.
type Event struct {
	Type     event.EventType
	Time     time.Time
	Seq      uint64 // 0 for none (SYNC)
	Cluster  string
	Resource schema.GroupVersionResource
	// Object is the object's JSON, Managers who made the change (nil: nobody known), Line
	// the whole line as a file sink writes it (render.AppendEnvelopeWithDiff), which
	// holds Object. The Writer keeps none of them once it returns.
	Object   []byte
	Managers []string
	Line     []byte
	// Meta is Object's metadata, when the caller has it at hand (nil: MetaOf(Object)).
	Meta *ObjectMeta
}

// EventOf is the Event a record read from a recording is.
func EventOf(rec recording.Record) Event {
	return Event{Type: rec.Type, Time: rec.Time, Seq: rec.Seq, Cluster: rec.Cluster, Resource: rec.Resource,
		Object: rec.Object, Managers: rec.Managers(), Line: rec.Line}
}

// Write stores one event: one line of a recording, the JSON envelope that a file sink
// writes (render.AppendEnvelopeWithDiff), which the caller may reuse once Write returns.
// A line that is not such an event is a *BadEventError that stores nothing.
func (w *Writer) Write(ctx context.Context, line []byte) error {
	rec, err := recording.Parse(line)
	if err != nil {
		return &BadEventError{Err: err}
	}
	return w.WriteEvent(ctx, EventOf(rec))
}

// WriteEvent stores one event. A caller that has the event rather than its line (the
// store sink) gives it so, and the line is not parsed back.
func (w *Writer) WriteEvent(ctx context.Context, ev Event) error {
	var m ObjectMeta
	var err error
	if ev.Meta != nil {
		m, err = *ev.Meta, ev.Meta.check()
	} else {
		m, err = MetaOf(ev.Object)
	}
	if err != nil {
		return &BadEventError{Err: err}
	}
	if w.tx == nil {
		if w.tx, err = w.db.BeginTx(ctx, nil); err != nil {
			return w.writeError(err)
		}
		w.since, w.rows, w.bytes = time.Now(), 0, 0
		w.txs++
	}
	if err := w.store(ctx, ev, m); err != nil {
		w.rollback()
		return w.writeError(err)
	}
	w.rows++
	// A transaction takes at most a quarter of the log's budget: retention, which runs
	// after each commit, then frees room before the file outgrows max-size by more.
	if w.rows >= batchRows || time.Since(w.since) >= batchAge || w.bytes >= w.retention.walBudget/4 {
		return w.Flush(ctx)
	}
	return nil
}

// store adds ev, whose object's metadata is m, in w.tx.
func (w *Writer) store(ctx context.Context, ev Event, m ObjectMeta) error {
	line := ev.Line
	res, err := w.resource(ctx, ev.Resource, m, line)
	if err != nil {
		return err
	}
	key := objectKey{resource: res.id, cluster: ev.Cluster, namespace: m.Namespace, name: m.Name, uid: m.UID}
	st := w.objects[key]
	key.cluster = strings.Clone(key.cluster) // kept: a record's strings share its line's memory
	t := ev.Time.UnixNano()
	if st == nil {
		if st, err = w.objectState(ctx, key, m, t); err != nil {
			return err
		}
		w.objects[key] = st
	}
	t = max(t, st.lastTime) // an object's versions are in time order, whatever the clocks
	w.latest = max(w.latest, t)
	snapshot := st.line == nil || st.length >= snapshotEvery
	var base sql.NullInt64
	var data []byte
	if snapshot {
		data = w.codec.encodeSnapshot(line, res.dict)
	} else {
		data = w.codec.encodeChange(line, st.dict)
		base = sql.NullInt64{Int64: st.last, Valid: true}
	}
	var seq sql.NullInt64
	if ev.Seq != 0 {
		seq = sql.NullInt64{Int64: int64(ev.Seq), Valid: true}
	}
	var by sql.NullString
	if len(ev.Managers) > 0 {
		by = sql.NullString{String: strings.Join(ev.Managers, ","), Valid: true}
	}
	// What the transaction writes to the log: the version, and a page of the object's
	// (its versions are kept together) the first time the transaction changes it.
	w.bytes += int64(len(data))
	if st.tx != w.txs {
		st.tx = w.txs
		w.bytes += w.retention.pageSize
	}
	id := st.last + 1
	if first, last := versionRange(st.id); st.last == 0 {
		id = first
	} else if id > last {
		return fmt.Errorf("%s/%s has more versions than a store holds (%d)", m.Namespace, m.Name, last-first+1)
	}
	if _, err := w.stmt.insertVersion.stmt(w.tx).ExecContext(ctx, id, st.id, t, string(ev.Type), m.ResourceVersion, seq, by, base, data); err != nil {
		return err
	}
	if snapshot {
		if st.chain != 0 {
			if _, err := w.stmt.endChain.stmt(w.tx).ExecContext(ctx, t, st.id, st.chain); err != nil {
				return err
			}
		}
		if _, err := w.stmt.insertChain.stmt(w.tx).ExecContext(ctx, st.id, id, t); err != nil {
			return err
		}
		st.chain, st.length = id, 0
	}
	st.last, st.lastTime = id, t
	st.length++
	if m.Owners != st.owners {
		if _, err := w.stmt.setOwners.stmt(w.tx).ExecContext(ctx, nullString(m.Owners), st.id); err != nil {
			return err
		}
		st.owners = m.Owners
	}
	if isCoreEvent(ev.Resource) {
		if err := w.storeCoreEvent(ctx, st.id, ev); err != nil {
			return err
		}
	}
	if ev.Type == event.Deleted {
		// Gone (or out of the selection: the store cannot tell what becomes of it).
		if _, err := w.stmt.setDeleted.stmt(w.tx).ExecContext(ctx, t, st.id); err != nil {
			return err
		}
		if _, err := w.stmt.endChain.stmt(w.tx).ExecContext(ctx, t, st.id, st.chain); err != nil {
			return err
		}
		w.cached -= len(st.line) + len(st.dict)
		delete(w.objects, key)
		return nil
	}
	w.keepLine(st, line, snapshot)
	return nil
}

// keepLine keeps line as the object's last version, with the dictionary of its next
// change, dropping others' when the cache is full.
func (w *Writer) keepLine(st *objectState, line []byte, snapshot bool) {
	w.cached -= len(st.line) + len(st.dict)
	st.dict = nextDict(st.dict, st.line, line, snapshot)
	st.line = append(st.line[:0], line...)
	w.cached += len(st.line) + len(st.dict)
	if w.cached <= cacheBytes {
		return
	}
	for _, other := range w.objects { // in no particular order: as good as any other
		if other != st && other.line != nil {
			w.cached -= len(other.line) + len(other.dict)
			other.line, other.dict = nil, nil
			if w.cached <= cacheBytes*3/4 {
				return
			}
		}
	}
}

// resource is the store's row of gvr, made on its first event, whose line becomes the
// reference its snapshots are compressed against.
func (w *Writer) resource(ctx context.Context, gvr schema.GroupVersionResource, m ObjectMeta, line []byte) (*resource, error) {
	if r := w.resources[gvr]; r != nil {
		return r, nil
	}
	r := &resource{}
	err := w.tx.QueryRowContext(ctx, `SELECT id, dict FROM resources WHERE "group" = ? AND version = ? AND resource = ?`,
		gvr.Group, gvr.Version, gvr.Resource).Scan(&r.id, &r.dict)
	if errors.Is(err, sql.ErrNoRows) {
		r.dict = append([]byte(nil), line...)
		err = w.tx.QueryRowContext(ctx, `INSERT INTO resources ("group", version, resource, kind, namespaced, dict) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			gvr.Group, gvr.Version, gvr.Resource, m.Kind, m.Namespace != "", r.dict).Scan(&r.id)
	}
	if err != nil {
		return nil, err
	}
	// A key of its own: a record's strings share the memory of its line.
	gvr = schema.GroupVersionResource{Group: strings.Clone(gvr.Group), Version: strings.Clone(gvr.Version), Resource: strings.Clone(gvr.Resource)}
	w.resources[gvr] = r
	return r, nil
}

// objectState finds the object of key in the store, or adds it. Either way its next
// version starts a chain: the Writer holds no previous line for it.
func (w *Writer) objectState(ctx context.Context, key objectKey, m ObjectMeta, t int64) (*objectState, error) {
	st := &objectState{owners: m.Owners}
	var deleted sql.NullInt64
	var owners sql.NullString
	err := w.stmt.findObject.stmt(w.tx).QueryRowContext(ctx, key.resource, key.namespace, key.name, key.cluster, key.uid).Scan(&st.id, &deleted, &owners)
	if errors.Is(err, sql.ErrNoRows) {
		var created sql.NullInt64
		if !m.Created.IsZero() {
			created = sql.NullInt64{Int64: m.Created.UnixNano(), Valid: true}
		}
		err = w.stmt.insertObject.stmt(w.tx).QueryRowContext(ctx, key.resource, key.cluster, key.namespace, key.name, key.uid,
			nullString(m.Owners), created, t).Scan(&st.id)
		return st, err
	}
	if err != nil {
		return nil, err
	}
	st.owners = owners.String
	first, last := versionRange(st.id)
	err = w.tx.QueryRowContext(ctx, `SELECT id, time FROM versions WHERE id BETWEEN ? AND ? ORDER BY id DESC LIMIT 1`, first, last).Scan(&st.last, &st.lastTime)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if _, err := w.tx.ExecContext(ctx, `UPDATE chains SET "end" = ? WHERE object = ? AND "end" IS NULL`, max(t, st.lastTime), st.id); err != nil {
		return nil, err
	}
	if deleted.Valid {
		_, err = w.tx.ExecContext(ctx, `UPDATE objects SET deleted = NULL WHERE id = ?`, st.id)
	}
	return st, err
}

// Flush commits what was written, then keeps the store within its bounds (retention,
// checkpoints), a bounded step at a time. Once it returns, Committed counts every
// event written, unless the commit itself failed: then the transaction's events are
// lost (Committed says which), and the Writer can go on with the next ones.
func (w *Writer) Flush(ctx context.Context) error {
	if w.tx == nil {
		return nil
	}
	err := w.tx.Commit()
	w.tx = nil
	if err != nil {
		w.rollback()
		return w.writeError(err)
	}
	w.committed += uint64(w.rows)
	w.rows = 0
	if err := w.retention.step(ctx, w); err != nil {
		return w.writeError(err)
	}
	return nil
}

// Pending is how many events written wait in the open transaction, and since when.
func (w *Writer) Pending() (int, time.Time) {
	if w.tx == nil {
		return 0, time.Time{}
	}
	return w.rows, w.since
}

// Committed is how many events written were committed, in the order they were written:
// those after them were not (yet), or were lost with a failed transaction.
func (w *Writer) Committed() uint64 { return w.committed }

// rollback gives up the open transaction after a failure, and what the Writer held that
// may refer to it (objects and resources added, the ids of versions that are not
// there): the next event of each object starts a chain from the store as it is.
func (w *Writer) rollback() {
	if w.tx != nil {
		_ = w.tx.Rollback()
		w.tx = nil
	}
	w.rows = 0
	w.resources = map[schema.GroupVersionResource]*resource{}
	w.objects = map[objectKey]*objectState{}
	w.cached = 0
}

// Close commits what was written and closes the store.
func (w *Writer) Close(ctx context.Context) error {
	err := w.Flush(ctx)
	w.stmt.close()
	if _, cerr := w.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err == nil && cerr != nil {
		err = cerr
	}
	if cerr := w.db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	w.lock.Close()
	w.codec.close()
	return err
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func isCoreEvent(gvr schema.GroupVersionResource) bool {
	return gvr.Resource == "events" && (gvr.Group == "" || gvr.Group == "events.k8s.io")
}

// statement is a prepared statement, run in the Writer's transaction: bound to it once
// per transaction (the binding is closed with the transaction).
type statement struct {
	s     *sql.Stmt
	tx    *sql.Tx
	bound *sql.Stmt
}

func (s *statement) stmt(tx *sql.Tx) *sql.Stmt {
	if s.tx != tx {
		s.tx, s.bound = tx, tx.Stmt(s.s)
	}
	return s.bound
}

// statements are the Writer's statements run for every event, or every new object.
type statements struct {
	insertVersion, insertChain, endChain, setOwners, setDeleted, upsertEvent, findObject, insertObject statement
}

func (s *statements) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range []struct {
		to  *statement
		sql string
	}{
		{&s.insertVersion, `INSERT INTO versions (id, object, time, type, rv, seq, "by", base, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.insertChain, `INSERT INTO chains (object, id, start) VALUES (?, ?, ?)`},
		{&s.endChain, `UPDATE chains SET "end" = ? WHERE object = ? AND id = ?`},
		{&s.setOwners, `UPDATE objects SET owners = ? WHERE id = ?`},
		{&s.setDeleted, `UPDATE objects SET deleted = ? WHERE id = ?`},
		{&s.upsertEvent, `INSERT INTO events (object, kind, namespace, name, uid, type, reason, message, count, last) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (object) DO UPDATE SET type = excluded.type, reason = excluded.reason, message = excluded.message, count = excluded.count, last = excluded.last`},
		{&s.findObject, `SELECT id, deleted, owners FROM objects WHERE resource = ? AND namespace = ? AND name = ? AND cluster = ? AND uid = ?`},
		{&s.insertObject, `INSERT INTO objects (resource, cluster, namespace, name, uid, owners, created, first) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`},
	} {
		st, err := db.PrepareContext(ctx, p.sql)
		if err != nil {
			return err
		}
		p.to.s = st
	}
	return nil
}

func (s *statements) close() {
	for _, st := range []statement{s.insertVersion, s.insertChain, s.endChain, s.setOwners, s.setDeleted, s.upsertEvent, s.findObject, s.insertObject} {
		if st.s != nil {
			st.s.Close()
		}
	}
}

// itoa is strconv.FormatInt for meta values.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
