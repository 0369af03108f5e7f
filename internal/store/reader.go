package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Reader reads a store, while a Writer may be writing it: each of its queries sees the
// store as one transaction left it. Its methods may be called concurrently.
type Reader struct {
	path      string
	db        *sql.DB
	codecs    sync.Pool // of *codec: a Reader is used by several goroutines at once
	resources []Resource
}

// Resource is a type of objects the store holds.
type Resource struct {
	ID int64
	schema.GroupVersionResource
	Kind       string
	Namespaced bool
	dict       []byte
}

// Object is an object the store holds versions of.
type Object struct {
	ID                            int64
	Resource                      *Resource
	Cluster, Namespace, Name, UID string
	// Owners is its metadata.ownerReferences as JSON, as of its last version ("" for
	// none).
	Owners string
	// Created is its creationTimestamp, First the time of its first version stored,
	// Deleted the time of its deletion (zero while it exists).
	Created, First, Deleted time.Time
}

// Version is one stored version of an object.
type Version struct {
	Object          *Object
	ID              int64
	Time            time.Time
	Type            event.EventType
	ResourceVersion string
	By              []string
	// Line is the event as recorded: the line a file sink wrote.
	Line []byte
}

// Query selects objects; empty fields select all.
type Query struct {
	Resources                   []*Resource
	Namespaces, Names, Clusters []string
}

// Open opens the store at path for reading. A file that is not a store is refused
// (*NotStoreError).
func Open(ctx context.Context, path string) (*Reader, error) {
	if info, err := os.Stat(path); err != nil {
		return nil, statError(path, err)
	} else if info.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a store", path)
	}
	db, err := openDB(path, "query_only(1)", "cache_size(-16000)")
	if err != nil {
		return nil, err
	}
	r := &Reader{path: path, db: db}
	r.codecs.New = func() any { return newCodec() }
	empty, err := check(ctx, db, path)
	if err == nil && empty {
		err = &NotStoreError{path, "an empty file, not a kubeevents store"}
	}
	if err == nil {
		err = r.loadResources(ctx)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Close closes the store.
func (r *Reader) Close() error {
	return r.db.Close()
}

// Path is the store's file.
func (r *Reader) Path() string { return r.path }

func (r *Reader) loadResources(ctx context.Context) error {
	rows, err := r.db.QueryContext(ctx, `SELECT id, "group", version, resource, kind, namespaced, dict FROM resources ORDER BY id`)
	if err != nil {
		return notStore(r.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var res Resource
		if err := rows.Scan(&res.ID, &res.Group, &res.Version, &res.Resource, &res.Kind, &res.Namespaced, &res.dict); err != nil {
			return notStore(r.path, err)
		}
		r.resources = append(r.resources, res)
	}
	return rows.Err()
}

// Resources are the types of objects the store holds.
func (r *Reader) Resources() []*Resource {
	out := make([]*Resource, len(r.resources))
	for i := range r.resources {
		out[i] = &r.resources[i]
	}
	return out
}

func (r *Reader) resource(id int64) *Resource {
	for i := range r.resources {
		if r.resources[i].ID == id {
			return &r.resources[i]
		}
	}
	return nil
}

// where is the SQL condition on objects (aliased o) that q makes, with its arguments.
func (q Query) where() (string, []any) {
	var conds []string
	var args []any
	in := func(column string, values []any) {
		if len(values) > 0 {
			conds = append(conds, column+" IN ("+strings.TrimSuffix(strings.Repeat("?,", len(values)), ",")+")")
			args = append(args, values...)
		}
	}
	ids := make([]any, len(q.Resources))
	for i, res := range q.Resources {
		ids[i] = res.ID
	}
	in("o.resource", ids)
	in("o.namespace", anys(q.Namespaces))
	in("o.name", anys(q.Names))
	in("o.cluster", anys(q.Clusters))
	if len(conds) == 0 {
		return "1", nil
	}
	return strings.Join(conds, " AND "), args
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

const objectColumns = `o.id, o.resource, o.cluster, o.namespace, o.name, o.uid, coalesce(o.owners, ''), o.created, o.first, o.deleted`

func (r *Reader) scanObject(rows interface{ Scan(...any) error }) (*Object, error) {
	o := &Object{}
	var resource int64
	var created, deleted sql.NullInt64
	var first int64
	if err := rows.Scan(&o.ID, &resource, &o.Cluster, &o.Namespace, &o.Name, &o.UID, &o.Owners, &created, &first, &deleted); err != nil {
		return nil, err
	}
	o.Resource = r.resource(resource)
	if created.Valid {
		o.Created = time.Unix(0, created.Int64).UTC()
	}
	o.First = time.Unix(0, first).UTC()
	if deleted.Valid {
		o.Deleted = time.Unix(0, deleted.Int64).UTC()
	}
	return o, nil
}

// objects are the objects q selects, in the order of their resources, namespaces and
// names; with at, only those that existed then (recorded at or before it, and not
// deleted by then).
func (r *Reader) objects(ctx context.Context, tx *sql.Tx, q Query, at time.Time) ([]*Object, error) {
	where, args := q.where()
	if !at.IsZero() {
		where += " AND o.first <= ? AND (o.deleted IS NULL OR o.deleted > ?)"
		args = append(args, at.UnixNano(), at.UnixNano())
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+objectColumns+" FROM objects o WHERE "+where+" ORDER BY o.resource, o.namespace, o.name, o.first", args...)
	if err != nil {
		return nil, notStore(r.path, err)
	}
	defer rows.Close()
	var out []*Object
	for rows.Next() {
		o, err := r.scanObject(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// read runs fn in a transaction that only reads: it sees one state of the store.
func (r *Reader) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return notStore(r.path, err)
	}
	defer tx.Rollback()
	return fn(tx)
}

// At is the state of the objects q selects at t: the last version at or before t of
// each one that existed then, deleted since or not.
func (r *Reader) At(ctx context.Context, q Query, t time.Time) ([]Version, error) {
	var out []Version
	err := r.read(ctx, func(tx *sql.Tx) error {
		objects, err := r.objects(ctx, tx, q, t)
		if err != nil {
			return err
		}
		for _, o := range objects {
			v, err := r.versionAt(ctx, tx, o, t)
			if err != nil {
				return err
			}
			if v != nil && v.Type != event.Deleted {
				out = append(out, *v)
			}
		}
		return nil
	})
	return out, err
}

const versionColumns = `v.id, v.time, v.type, v.rv, coalesce(v."by", ''), v.base, v.data`

// row is a version as stored.
type row struct {
	Version
	base sql.NullInt64
	data []byte
	dict []byte // once decoded, the dictionary of the change after it (nextDict)
}

func scanRow(rows interface{ Scan(...any) error }, extra ...any) (row, error) {
	var v row
	var t int64
	var by string
	if err := rows.Scan(append([]any{&v.ID, &t, &v.Type, &v.ResourceVersion, &by, &v.base, &v.data}, extra...)...); err != nil {
		return v, err
	}
	v.Time = time.Unix(0, t).UTC()
	if by != "" {
		v.By = strings.Split(by, ",")
	}
	return v, nil
}

// versionAt is o's last version at or before t (nil if none), decoded: the last of the
// versions at or before t of the last chain that started by then (an object's versions
// are in time order).
func (r *Reader) versionAt(ctx context.Context, tx *sql.Tx, o *Object, t time.Time) (*Version, error) {
	var start int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM chains WHERE object = ? AND start <= ? ORDER BY id DESC LIMIT 1`, o.ID, t.UnixNano()).Scan(&start)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, notStore(r.path, err)
	}
	_, last := versionRange(o.ID)
	var v *row
	err = r.chain(ctx, tx, o, start, last, t.UnixNano(), func(c row) { v = &c })
	if err != nil || v == nil {
		return nil, err
	}
	return &v.Version, nil
}

// decodeChain decodes v, reading the versions of its chain before it; dict is the
// dictionary of the change after v.
func (r *Reader) decodeChain(ctx context.Context, tx *sql.Tx, o *Object, v row) (line, dict []byte, err error) {
	if !v.base.Valid {
		line, err = r.decode(nil, o, v, nil)
		return line, line, err
	}
	var start int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM chains WHERE object = ? AND id <= ? ORDER BY id DESC LIMIT 1`, o.ID, v.ID).Scan(&start); err != nil {
		return nil, nil, r.damaged(o, fmt.Errorf("the chain of version %d: %w", v.ID, err))
	}
	var last *row
	if err := r.chain(ctx, tx, o, start, v.ID, v.Time.UnixNano(), func(c row) { last = &c }); err != nil {
		return nil, nil, err
	}
	if last == nil || last.ID != v.ID {
		return nil, nil, r.damaged(o, fmt.Errorf("version %d is missing", v.ID))
	}
	return last.Line, last.dict, nil
}

// chain decodes the versions of o from the snapshot start up to the id to, and no later
// than the time until, in order, calling fn with each; a row's dict is the dictionary
// of the change after it.
func (r *Reader) chain(ctx context.Context, tx *sql.Tx, o *Object, start, to, until int64, fn func(row)) error {
	rows, err := tx.QueryContext(ctx, "SELECT "+versionColumns+" FROM versions v WHERE v.id BETWEEN ? AND ? ORDER BY v.id", start, to)
	if err != nil {
		return notStore(r.path, err)
	}
	defer rows.Close()
	var line, dict []byte
	var last int64
	for rows.Next() {
		c, err := scanRow(rows)
		if err != nil {
			return err
		}
		if c.Time.UnixNano() > until || line != nil && !c.base.Valid {
			break // later than asked (an object's versions are in time order), or the next chain
		}
		if c.base.Valid != (line != nil) || c.base.Valid && c.base.Int64 != last {
			return r.damaged(o, fmt.Errorf("version %d does not follow %d", c.ID, last))
		}
		next, err := r.decode(nil, o, c, dict)
		if err != nil {
			return err
		}
		dict = nextDict(nil, line, next, !c.base.Valid)
		line, last = next, c.ID
		c.Object, c.Line, c.dict = o, line, dict
		fn(c)
	}
	return rows.Err()
}

// decode decompresses v, against dict (nextDict of its base) or, for a snapshot, its
// resource's reference line.
func (r *Reader) decode(dst []byte, o *Object, v row, dict []byte) ([]byte, error) {
	c := r.codecs.Get().(*codec)
	var line []byte
	var err error
	if v.base.Valid {
		line, err = c.decodeChange(dst, v.data, dict)
	} else {
		line, err = c.decodeSnapshot(dst, v.data, o.Resource.dict)
	}
	r.codecs.Put(c)
	if err != nil {
		return nil, r.damaged(o, err)
	}
	return line, nil
}

func (r *Reader) damaged(o *Object, err error) error {
	return &NotStoreError{r.path, fmt.Sprintf("the store is damaged: %s %s/%s: %v", o.Resource.Resource, o.Namespace, o.Name, err)}
}

// Versions are the versions of the objects q selects, in time order, from since to
// until (zero: unbounded), decoded. It holds the last line of each object selected.
func (r *Reader) Versions(ctx context.Context, q Query, since, until time.Time) iter.Seq2[Version, error] {
	return func(yield func(Version, error) bool) {
		err := r.read(ctx, func(tx *sql.Tx) error {
			objects := map[int64]*Object{}
			where, args := q.where()
			rows, err := tx.QueryContext(ctx, "SELECT "+objectColumns+" FROM objects o WHERE "+where, args...)
			if err != nil {
				return notStore(r.path, err)
			}
			for rows.Next() {
				o, err := r.scanObject(rows)
				if err != nil {
					rows.Close()
					return err
				}
				objects[o.ID] = o
			}
			if err := rows.Close(); err != nil {
				return err
			}
			from, to := int64(0), int64(1<<63-1)
			if !since.IsZero() {
				from = since.UnixNano()
			}
			if !until.IsZero() {
				to = until.UnixNano()
			}
			// A selection reads the versions of the objects it selects, each object's
			// together; the whole store, the time index. (The planner, without statistics,
			// would take the time index for both.)
			join := "versions v JOIN objects o ON o.id = v.object"
			if len(args) > 0 {
				join = "objects o CROSS JOIN versions v ON v.id BETWEEN o.id << " + strconv.Itoa(versionBits) + " AND (o.id << " + strconv.Itoa(versionBits) + ") | " + strconv.Itoa(1<<versionBits-1)
			}
			rows, err = tx.QueryContext(ctx, "SELECT "+versionColumns+", v.object FROM "+join+" WHERE v.time BETWEEN ? AND ? AND "+where+" ORDER BY v.time, v.id",
				append([]any{from, to}, args...)...)
			if err != nil {
				return notStore(r.path, err)
			}
			defer rows.Close()
			type last struct {
				id         int64
				line, dict []byte // dict: nextDict's
			}
			lasts := map[int64]last{}
			for rows.Next() {
				var object int64
				v, err := scanRow(rows, &object)
				if err != nil {
					return err
				}
				o := objects[object]
				v.Object = o
				var dict []byte
				if prev, ok := lasts[object]; ok && v.base.Valid && v.base.Int64 == prev.id {
					v.Line, err = r.decode(nil, o, v, prev.dict)
					dict = nextDict(nil, prev.line, v.Line, false)
				} else {
					v.Line, dict, err = r.decodeChain(ctx, tx, o, v)
				}
				if err != nil {
					return err
				}
				if v.Type == event.Deleted {
					delete(lasts, object)
				} else {
					lasts[object] = last{v.ID, v.Line, dict}
				}
				if !yield(v.Version, nil) {
					return nil
				}
			}
			return rows.Err()
		})
		if err != nil {
			yield(Version{}, err)
		}
	}
}
