package store

import (
	"context"
	"database/sql"
	"iter"
	"strconv"
	"time"

	"github.com/kubeevents/kubeevents/internal/recording"
)

// Records are the recorded events of the objects q selects, from since to until (zero:
// unbounded), in time order, as a recording's reader gives them (for replay): each
// record's position is the store and the version's id.
func (r *Reader) Records(ctx context.Context, q Query, since, until time.Time) iter.Seq2[recording.Record, error] {
	return func(yield func(recording.Record, error) bool) {
		for v, err := range r.Versions(ctx, q, since, until) {
			var rec recording.Record
			if err == nil {
				rec, err = recording.Parse(v.Line)
				rec.At = recording.Position{File: r.path, Line: int(v.ID)}
			}
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
}

// RetainedFrom is the time from which the store holds every object's state, when
// retention dropped anything before it (zero otherwise).
func (r *Reader) RetainedFrom(ctx context.Context) time.Time {
	var from sql.NullString
	_ = r.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'retained_from'").Scan(&from)
	if n, err := strconv.ParseInt(from.String, 10, 64); err == nil && n > 0 {
		return time.Unix(0, n).UTC()
	}
	return time.Time{}
}

// Info is what a store holds.
type Info struct {
	// Bytes are the file's and its write-ahead log's.
	Bytes int64
	// Created is when the store was created; From and To the times of its first and
	// last versions; RetainedFrom, when retention dropped anything, the time from which
	// every object's state is whole.
	Created                string
	From, To, RetainedFrom time.Time
	Objects, Deleted       int64 // objects, and those of them deleted
	Versions, Events       int64 // versions, and core Events indexed
	Types                  []TypeInfo
}

// TypeInfo is what a store holds of one resource.
type TypeInfo struct {
	Resource         *Resource
	Objects, Deleted int64
	Versions, Bytes  int64 // Bytes: the compressed versions' (with their rows, not indexes)
}

// Info says what the store holds. It reads every version's row: a second or so per
// million versions.
func (r *Reader) Info(ctx context.Context) (Info, error) {
	info := Info{Bytes: fileSize(r.path) + fileSize(r.path+"-wal")}
	err := r.read(ctx, func(tx *sql.Tx) error {
		var from, to sql.NullInt64
		_ = tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'created'").Scan(&info.Created)
		info.RetainedFrom = r.RetainedFrom(ctx)
		if err := tx.QueryRowContext(ctx, "SELECT min(time), max(time) FROM versions").Scan(&from, &to); err != nil {
			return notStore(r.path, err)
		}
		if from.Valid {
			info.From, info.To = time.Unix(0, from.Int64).UTC(), time.Unix(0, to.Int64).UTC()
		}
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&info.Events); err != nil {
			return notStore(r.path, err)
		}
		byID := map[int64]*TypeInfo{}
		for _, res := range r.Resources() {
			info.Types = append(info.Types, TypeInfo{Resource: res})
		}
		for i := range info.Types {
			byID[info.Types[i].Resource.ID] = &info.Types[i]
		}
		rows, err := tx.QueryContext(ctx, "SELECT resource, count(*), count(deleted) FROM objects GROUP BY resource")
		if err != nil {
			return notStore(r.path, err)
		}
		for rows.Next() {
			var id, n, deleted int64
			if err := rows.Scan(&id, &n, &deleted); err != nil {
				rows.Close()
				return err
			}
			if t := byID[id]; t != nil {
				t.Objects, t.Deleted = n, deleted
			}
			info.Objects += n
			info.Deleted += deleted
		}
		rows.Close()
		rows, err = tx.QueryContext(ctx, "SELECT o.resource, count(*), sum(length(v.data)) FROM versions v JOIN objects o ON o.id = v.object GROUP BY o.resource")
		if err != nil {
			return notStore(r.path, err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, n, bytes int64
			if err := rows.Scan(&id, &n, &bytes); err != nil {
				return err
			}
			if t := byID[id]; t != nil {
				t.Versions, t.Bytes = n, bytes
			}
			info.Versions += n
		}
		return rows.Err()
	})
	return info, err
}
