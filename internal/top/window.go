package top

import (
	"cmp"
	"slices"
	"time"
)

// buckets is how many slices a window is cut into: a row's sparkline has one bar each,
// and a count leaves the window one slice at a time.
const buckets = 12

// series counts what happened in each slice of the window, the newest last.
type series struct {
	counts [buckets]uint32
	newest int64 // the slice number (time / slice length) counts[buckets-1] holds
}

// add counts one at slice number now.
func (s *series) add(now int64) {
	s.shift(now)
	s.counts[buckets-1]++
}

// shift moves the series on to slice number now, dropping the slices that left the
// window.
func (s *series) shift(now int64) {
	gap := now - s.newest
	switch {
	case gap <= 0:
		return
	case gap >= buckets:
		s.counts = [buckets]uint32{}
	default:
		copy(s.counts[:], s.counts[gap:])
		clear(s.counts[buckets-gap:])
	}
	s.newest = now
}

// at is the series as of slice number now, without changing s.
func (s series) at(now int64) series {
	s.shift(now)
	return s
}

func (s series) total() uint64 {
	var n uint64
	for _, c := range s.counts {
		n += uint64(c)
	}
	return n
}

// window counts, per key, what happened in the last length of time, in slices.
type window struct {
	slice time.Duration
	rows  map[string]*series
}

func newWindow(length time.Duration) *window {
	return &window{slice: max(length/buckets, time.Millisecond), rows: map[string]*series{}}
}

func (w *window) sliceOf(t time.Time) int64 { return t.UnixNano() / int64(w.slice) }

// add counts one for key at t.
func (w *window) add(key string, t time.Time) {
	s := w.rows[key]
	if s == nil {
		s = &series{newest: w.sliceOf(t)}
		w.rows[key] = s
	}
	s.add(w.sliceOf(t))
}

// ranked is one key's count in the window and its series.
type ranked struct {
	key    string
	total  uint64
	series series
}

// rank returns the keys with a count in the window as of t, the highest first (ties by
// key), at most limit of them (0: all); it forgets the keys whose count left it.
func (w *window) rank(t time.Time, limit int) []ranked {
	now := w.sliceOf(t)
	out := make([]ranked, 0, len(w.rows))
	for key, s := range w.rows {
		current := s.at(now)
		total := current.total()
		if total == 0 {
			delete(w.rows, key)
			continue
		}
		out = append(out, ranked{key: key, total: total, series: current})
	}
	slices.SortFunc(out, func(a, b ranked) int {
		if c := cmp.Compare(b.total, a.total); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
