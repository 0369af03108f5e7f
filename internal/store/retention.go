package store

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strconv"
	"time"
)

// retention keeps a store within Options.MaxAge and MaxSize, continuously: after each
// transaction, a step of bounded time drops the oldest chains no longer needed, gives
// pages back to the file system, and checkpoints the write-ahead log.
//
// What goes is whole chains (a snapshot and its changes) that were superseded (by the
// object's next snapshot, or its deletion) before the cut-off: the state of every object
// at any time since the cut-off stays whole. A chain's end is in chains."end".
//
// Size: SQLite reuses the pages freed by deletions, so the file stops growing once
// retention keeps up; pages beyond the budget (after MaxSize was lowered, or one large
// transaction) are given back by incremental vacuum, a few at a time. The write-ahead
// log is truncated to walBudget at each checkpoint (journal_size_limit); the file is
// kept within MaxSize less that budget.
type retention struct {
	pageSize  int64
	walBudget int64 // bytes the log may take: a share of MaxSize
	warned    bool
	// droppedTo is the latest end of a chain dropped: from then on the store holds the
	// state of every object it recorded (meta retained_from).
	droppedTo int64
}

// stepBudget bounds the time of one retention step, so that ingest goes on meanwhile.
const stepBudget = 200 * time.Millisecond

// Bounds of the write-ahead log's share of MaxSize.
const (
	minWAL = 1 << 20
	maxWAL = 64 << 20
)

func (r *retention) init(ctx context.Context, w *Writer) error {
	if err := w.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&r.pageSize); err != nil {
		return err
	}
	r.walBudget = maxWAL
	if w.opts.MaxSize > 0 {
		r.walBudget = min(max(w.opts.MaxSize/32, minWAL), maxWAL)
	}
	// The log is checkpointed when it holds half its budget, and truncated to it.
	for _, p := range []string{"PRAGMA journal_size_limit=" + itoa(r.walBudget),
		"PRAGMA wal_autocheckpoint=" + itoa(r.walBudget/2/r.pageSize)} {
		if _, err := w.db.ExecContext(ctx, p); err != nil {
			return err
		}
	}
	var from sql.NullString
	err := w.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'retained_from'").Scan(&from)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	r.droppedTo, _ = strconv.ParseInt(from.String, 10, 64)
	return nil
}

// step enforces the bounds for at most stepBudget.
func (r *retention) step(ctx context.Context, w *Writer) error {
	deadline := time.Now().Add(stepBudget)
	if w.opts.MaxAge > 0 {
		cutoff := w.latest - w.opts.MaxAge.Nanoseconds()
		for time.Now().Before(deadline) {
			n, err := r.drop(ctx, w, cutoff)
			if err != nil || n == 0 {
				if err != nil {
					return err
				}
				break
			}
		}
	}
	if w.opts.MaxSize > 0 {
		if err := r.bound(ctx, w, deadline); err != nil {
			return err
		}
	}
	if fileSize(w.path+"-wal") > r.walBudget/2 {
		// PASSIVE: never waits for readers; what they still read is copied later.
		if _, err := w.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
			return err
		}
	}
	return nil
}

// bound drops the oldest chains while the pages in use exceed the file's budget (by
// more than a margin), then gives free pages back while the file exceeds it.
func (r *retention) bound(ctx context.Context, w *Writer, deadline time.Time) error {
	budget := w.opts.MaxSize - r.walBudget
	high, low := budget*97/100, budget*90/100
	used, pages, err := r.used(ctx, w)
	if err != nil {
		return err
	}
	if used > high {
		for used > low && time.Now().Before(deadline) {
			n, err := r.drop(ctx, w, math.MaxInt64)
			if err != nil {
				return err
			}
			if n == 0 {
				if !r.warned {
					r.warned = true
					w.opts.Warn("%s: the objects' current state alone takes more than max-size (%d bytes): raise it", w.path, w.opts.MaxSize)
				}
				break
			}
			if used, pages, err = r.used(ctx, w); err != nil {
				return err
			}
		}
	}
	if excess := pages*r.pageSize - budget; excess > 0 {
		// A quarter of the log's budget a step: vacuum moves pages, each written to
		// the log, and holds the writer meanwhile.
		n := min(excess/r.pageSize+1, r.walBudget/4/r.pageSize)
		if _, err := w.db.ExecContext(ctx, "PRAGMA incremental_vacuum("+itoa(n)+")"); err != nil {
			return err
		}
	}
	return nil
}

// used is the bytes of the pages in use, and the file's pages.
func (r *retention) used(ctx context.Context, w *Writer) (used, pages int64, err error) {
	var free int64
	if err := w.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return 0, 0, err
	}
	if err := w.db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil {
		return 0, 0, err
	}
	return (pages - free) * r.pageSize, pages, nil
}

// dropBatch is how many chains one transaction of retention drops: what a quarter of
// the log's budget holds (a chain rewrites some 64 KiB of pages), at most 200.
func (r *retention) dropBatch() int64 { return min(max(r.walBudget>>18, 2), 200) }

// drop drops, in one transaction, up to dropBatch() of the oldest chains that ended at or
// before cutoff, and the objects left without any; it returns how many it dropped.
func (r *retention) drop(ctx context.Context, w *Writer, cutoff int64) (int, error) {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT object, id, start, "end" FROM chains WHERE "end" <= ? ORDER BY "end" LIMIT ?`, cutoff, r.dropBatch())
	if err != nil {
		return 0, err
	}
	type chain struct{ object, id, start, end int64 }
	var chains []chain
	for rows.Next() {
		var c chain
		if err := rows.Scan(&c.object, &c.id, &c.start, &c.end); err != nil {
			rows.Close()
			return 0, err
		}
		chains = append(chains, c)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	for _, c := range chains {
		var next, nextStart int64
		err := tx.QueryRowContext(ctx, `SELECT id, start FROM chains WHERE object = ? AND id > ? ORDER BY id LIMIT 1`, c.object, c.id).Scan(&next, &nextStart)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			// The object's last chain, ended by its deletion: the object goes.
			_, last := versionRange(c.object)
			if _, err := tx.ExecContext(ctx, `DELETE FROM versions WHERE id BETWEEN ? AND ?`, c.id, last); err != nil {
				return 0, err
			}
			for _, q := range []string{`DELETE FROM events WHERE object = ?`, `DELETE FROM objects WHERE id = ?`} {
				if _, err := tx.ExecContext(ctx, q, c.object); err != nil {
					return 0, err
				}
			}
		case err != nil:
			return 0, err
		default:
			if _, err := tx.ExecContext(ctx, `DELETE FROM versions WHERE id >= ? AND id < ?`, c.id, next); err != nil {
				return 0, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE objects SET first = ? WHERE id = ?`, nextStart, c.object); err != nil {
				return 0, err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chains WHERE object = ? AND id = ?`, c.object, c.id); err != nil {
			return 0, err
		}
		r.droppedTo = max(r.droppedTo, c.end)
	}
	if len(chains) > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta VALUES ('retained_from', ?)`, itoa(r.droppedTo)); err != nil {
			return 0, err
		}
	}
	return len(chains), tx.Commit()
}
