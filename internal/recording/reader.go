package recording

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"time"
)

// DefaultPoll is how often a followed file that has nothing new is looked at again.
const DefaultPoll = 250 * time.Millisecond

// Options say how to read.
type Options struct {
	// Follow keeps reading the files given (not rotated backups, not the standard
	// input) once their end is reached, as they grow and across their rotation, as
	// `tail -F` does; a file that does not exist yet is waited for. A line not yet ended
	// is waited for.
	Follow bool
	// SkipBadLines skips the lines that are not events kubeevents wrote (counted:
	// Skipped) rather than ending with a *BadLineError.
	SkipBadLines bool
	// Poll is how often a followed file is looked at again (DefaultPoll when 0).
	Poll time.Duration
	// Stdin is what "-" reads.
	Stdin io.Reader
	// Warn prints one diagnostic line (a followed file truncated).
	Warn func(format string, args ...any)
}

// Reader reads the records of several inputs as one stream, in time order: each next
// record is the earliest of the inputs' next ones. Each file of a file sink is in time
// order and its backups do not overlap, so they are read one after the other; inputs
// are opened only once the stream reaches the time of their first record, so that a
// directory of a thousand backups holds a few open at once.
type Reader struct {
	opts Options
	// waiting are the inputs not opened yet, by the time of their first record.
	waiting []*input
	// open are the inputs being read, each with its next record (heads[i], valid when
	// has[i]).
	open  []*input
	heads []Record
	has   []bool
	// skipped counts the bad lines skipped; firstSkipped is the first one's error.
	skipped      int
	firstSkipped *BadLineError
}

// Open prepares reading the inputs (Expand's): each file's first record is read to place
// it in time; the standard input is read from the start.
func Open(inputs []Input, opts Options) (*Reader, error) {
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Warn == nil {
		opts.Warn = func(string, ...any) {}
	}
	r := &Reader{opts: opts}
	for _, spec := range inputs {
		in := &input{path: spec.Path, live: spec.Live, stdin: opts.Stdin}
		if spec.Path == "-" || in.live {
			// Read from the start, and never closed at its end.
			if err := in.open(); err != nil {
				r.Close()
				return nil, err
			}
			r.add(in)
			continue
		}
		if err := r.placeInTime(in); err != nil {
			r.Close()
			return nil, err
		}
		r.waiting = append(r.waiting, in)
	}
	slices.SortStableFunc(r.waiting, func(a, b *input) int {
		switch {
		case a.first < b.first:
			return -1
		case a.first > b.first:
			return 1
		}
		return 0
	})
	return r, nil
}

// placeInTime reads the time of the input's first record, and closes it again. A file
// whose first line cannot be read is placed first, so that its error comes where it
// is.
func (r *Reader) placeInTime(in *input) error {
	if err := in.open(); err != nil {
		return err
	}
	defer in.close()
	line, _, err := in.readLine()
	if errors.Is(err, io.EOF) {
		line, _ = in.lastLine()
		err = nil
	}
	if err != nil {
		return err
	}
	if rec, perr := Parse(line); perr == nil {
		in.first = rec.Time.UnixNano()
	}
	in.partial = nil
	return nil
}

func (r *Reader) add(in *input) {
	r.open = append(r.open, in)
	r.heads = append(r.heads, Record{})
	r.has = append(r.has, false)
}

func (r *Reader) remove(i int) {
	r.open[i].close()
	r.open = slices.Delete(r.open, i, i+1)
	r.heads = slices.Delete(r.heads, i, i+1)
	r.has = slices.Delete(r.has, i, i+1)
}

// Next returns the next record in time order. It returns io.EOF once every input ended
// (never while a file is followed), ctx's error once it ends, a *BadLineError for a line
// that is not an event (unless SkipBadLines), or an error reading an input.
func (r *Reader) Next(ctx context.Context) (Record, error) {
	for {
		if err := ctx.Err(); err != nil {
			return Record{}, err
		}
		// Every open input's next record; an input that ended (not followed) is closed.
		for i := 0; i < len(r.open); i++ {
			if r.has[i] {
				continue
			}
			rec, ended, err := r.read(r.open[i])
			switch {
			case err != nil:
				return Record{}, err
			case ended:
				r.remove(i)
				i--
			case rec != nil:
				r.heads[i], r.has[i] = *rec, true
			}
		}
		// The inputs whose first record comes before the earliest next one are opened.
		earliest := -1
		for i := range r.open {
			if r.has[i] && (earliest < 0 || r.heads[i].Time.Before(r.heads[earliest].Time)) {
				earliest = i
			}
		}
		if len(r.waiting) > 0 && (earliest < 0 || r.waiting[0].first <= r.heads[earliest].Time.UnixNano()) {
			in := r.waiting[0]
			r.waiting = r.waiting[1:]
			if err := in.open(); err != nil {
				return Record{}, err
			}
			r.add(in)
			continue
		}
		if earliest >= 0 {
			r.has[earliest] = false
			return r.heads[earliest], nil
		}
		if len(r.open) == 0 {
			return Record{}, io.EOF
		}
		// Only followed files are left, with nothing new in them.
		timer := time.NewTimer(r.opts.Poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return Record{}, ctx.Err()
		case <-timer.C:
		}
	}
}

// read reads in's next record: nil with nothing new in a followed file, ended at the end
// of one that is not followed. Bad lines are skipped and counted, or returned.
func (r *Reader) read(in *input) (rec *Record, ended bool, err error) {
	for {
		line, n, err := in.readLine()
		truncated := false
		switch {
		case errors.Is(err, io.EOF) && in.live:
			again, err := r.atEnd(in)
			if err != nil || !again {
				return nil, false, err
			}
			continue
		case errors.Is(err, io.EOF):
			if line, n = in.lastLine(); line == nil {
				return nil, true, nil
			}
			truncated = true
		case err != nil:
			return nil, false, err
		}
		parsed, perr := Parse(line)
		if perr == nil {
			parsed.At = Position{File: in.name(), Line: n}
			return &parsed, false, nil
		}
		if err := r.bad(&BadLineError{At: Position{File: in.name(), Line: n}, Err: perr, Truncated: truncated}); err != nil {
			return nil, false, err
		}
	}
}

// bad returns the bad line's error, or counts it when bad lines are skipped.
func (r *Reader) bad(e *BadLineError) error {
	if !r.opts.SkipBadLines {
		return e
	}
	r.Skip(e)
	return nil
}

// atEnd handles the end of what a followed file holds, as tail -F does. When its path
// names another file now (rotated), what was written to the old one before the rename is
// read first, then the backups rotated after it (the sink may have rotated again
// meanwhile), then the new one from its start; a file truncated is read again from its
// start; one created since is opened. again says there may be more to read now.
func (r *Reader) atEnd(in *input) (again bool, err error) {
	if in.reading != "" { // a backup missed on the way: it is never written again
		if err := r.unended(in); err != nil {
			return false, err
		}
		in.done = in.info
		in.close()
		return true, in.openNext()
	}
	switch in.checkPath() {
	case unchanged:
		return false, nil
	case rotated:
		if !in.draining {
			in.draining = true
			return true, nil
		}
		in.draining = false
		if err := r.unended(in); err != nil {
			return false, err
		}
		in.done = in.info
		in.missed = in.backupsAfter(in.done)
		in.close()
		beforeReopen()
		return true, in.openNext()
	case truncated:
		r.opts.Warn("%s was truncated; reading it again from its start", in.path)
	}
	in.close()
	return true, in.openNext()
}

// beforeReopen runs between the listing of the backups and the opening of the next file
// once a followed file was rotated: tests rotate the file there.
var beforeReopen = func() {}

// unended reports the line left without an end in a file rotated away, if any.
func (r *Reader) unended(in *input) error {
	if line, n := in.lastLine(); line != nil {
		return r.bad(&BadLineError{At: Position{File: in.name(), Line: n},
			Err: errors.New("no end of line before the file was rotated"), Truncated: true})
	}
	return nil
}

// Skip counts a bad line found by the reader's caller (an object that cannot be read)
// among those skipped (SkipBadLines).
func (r *Reader) Skip(e *BadLineError) {
	r.skipped++
	if r.firstSkipped == nil {
		r.firstSkipped = e
	}
}

// Skipped is how many bad lines were skipped (SkipBadLines), and the first one.
func (r *Reader) Skipped() (int, *BadLineError) { return r.skipped, r.firstSkipped }

// Close closes every input open.
func (r *Reader) Close() {
	for _, in := range r.open {
		in.close()
	}
	r.open, r.heads, r.has = nil, nil, nil
}

// Clusters are the clusters named by the first records of the inputs (at most lines of
// each of the first few files, not the standard input), sorted: a recording of several
// clusters names them all in the lists it starts with.
func Clusters(inputs []Input, lines int) []string {
	const files = 3
	seen := map[string]bool{}
	read := 0
	for _, spec := range inputs {
		if spec.Path == "-" || read == files {
			continue
		}
		read++
		in := &input{path: spec.Path}
		if in.open() != nil {
			continue
		}
		for range lines {
			line, _, err := in.readLine()
			if err != nil {
				break
			}
			if rec, err := Parse(line); err == nil && rec.Cluster != "" {
				seen[rec.Cluster] = true
			}
		}
		in.close()
	}
	return slices.Sorted(maps.Keys(seen))
}
