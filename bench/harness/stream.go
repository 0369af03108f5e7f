package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// How a client's output is measured. Every client's output reaches the harness the same
// way: a reader goroutine per output takes whatever bytes are there, as they come, and
// stamps each chunk with the harness's clock on arrival; a second goroutine decodes the
// chunks as a stream of JSON values (json.Decoder, so kubectl's multi-line indented
// objects and everyone's JSON Lines are read alike) and gives each value the arrival time
// of the chunk that held its last byte. Decoding never delays stamping.
//
// stdout is read through a pipe. A file sink (kubeevents --sink file=..., jq output=...)
// is a regular file that the harness tails, polling every millisecond at its end.

// Output formats the harness decodes.
const (
	formatEnvelope = "envelope" // {"type":..., "object":{"metadata":{"name","resourceVersion"}}}: kubeevents -o json, kubectl --output-watch-events -o json, plaininformer
	formatFloor    = "floor"    // {"type","name","rv","t"}: bench/floor
	formatJQName   = "jqname"   // "name": the jq sink's select(.type=="DELETED") | .object.metadata.name
)

// rec is one event a client printed, stamped when it reached the harness.
type rec struct {
	typ, name, rv string
	t             int64 // Unix nanoseconds
}

type chunk struct {
	b []byte
	t int64
}

// source is one output of one client.
type source struct {
	name     string
	format   string
	sentinel string // events of the object with this name are counted apart

	mu        sync.Mutex
	recs      []rec
	counts    map[string]int
	sentinels int
	err       error
	bytes     int64

	done   chan struct{} // the output ended and everything was decoded
	chunks chan chunk
	stop   atomic.Bool // for tailed files: stop at the next end of file
}

func newSource(name, format, sentinel string) *source {
	return &source{name: name, format: format, sentinel: sentinel, counts: map[string]int{},
		done: make(chan struct{}), chunks: make(chan chunk, 1<<16)}
}

// readFrom reads r until EOF, teeing the raw bytes to tee (may be nil).
func (s *source) readFrom(r io.Reader, tee io.Writer) {
	go func() {
		buf := make([]byte, 256<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				s.chunks <- chunk{b: append([]byte(nil), buf[:n]...), t: time.Now().UnixNano()}
			}
			if err != nil {
				close(s.chunks)
				return
			}
		}
	}()
	go s.decode(tee)
}

// tail follows a file that another process appends to, until stopTail is called and the
// end of the file has been reached once more.
func (s *source) tail(path string, tee io.Writer) {
	go func() {
		defer close(s.chunks)
		var f *os.File
		for f == nil {
			var err error
			if f, err = os.Open(path); err != nil {
				if s.stop.Load() {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		defer f.Close()
		buf := make([]byte, 256<<10)
		for {
			stopping := s.stop.Load()
			n, err := f.Read(buf)
			if n > 0 {
				s.chunks <- chunk{b: append([]byte(nil), buf[:n]...), t: time.Now().UnixNano()}
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				s.setErr(err)
				return
			}
			if stopping {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	go s.decode(tee)
}

func (s *source) stopTail() { s.stop.Store(true) }

func (s *source) setErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// chunkReader hands the chunks to json.Decoder and remembers where each one ended, so a
// decoded value can be given the arrival time of its last byte.
type chunkReader struct {
	ch    <-chan chunk
	cur   []byte
	ends  []int64 // cumulative end offsets of chunks not yet known to be fully decoded
	times []int64
	total int64
	tee   io.Writer
	n     *int64
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.cur) == 0 {
		ch, ok := <-c.ch
		if !ok {
			return 0, io.EOF
		}
		c.cur = ch.b
		c.total += int64(len(ch.b))
		*c.n = c.total
		c.ends = append(c.ends, c.total)
		c.times = append(c.times, ch.t)
		if c.tee != nil {
			_, _ = c.tee.Write(ch.b)
		}
	}
	n := copy(p, c.cur)
	c.cur = c.cur[n:]
	return n, nil
}

// stampAt is the arrival time of the byte just before offset off (the end of a value).
func (c *chunkReader) stampAt(off int64) int64 {
	i := 0
	for i < len(c.ends)-1 && c.ends[i] < off {
		i++
	}
	t := c.times[i]
	c.ends, c.times = c.ends[i:], c.times[i:]
	return t
}

func (s *source) decode(tee io.Writer) {
	defer close(s.done)
	cr := &chunkReader{ch: s.chunks, tee: tee, n: &s.bytes}
	dec := json.NewDecoder(cr)
	type metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	}
	for {
		var r rec
		var items []rec // a list printed as one event
		var err error
		switch s.format {
		case formatEnvelope:
			var v struct {
				Type   string `json:"type"`
				Object struct {
					Kind     string   `json:"kind"`
					Metadata metadata `json:"metadata"`
					Items    []struct {
						Metadata metadata `json:"metadata"`
					} `json:"items"`
				} `json:"object"`
			}
			err = dec.Decode(&v)
			r = rec{typ: v.Type, name: v.Object.Metadata.Name, rv: v.Object.Metadata.ResourceVersion}
			// kubectl get -w --output-watch-events prints the initial list page by page,
			// each page as ONE event whose object is the list (kind PodList, items).
			if strings.HasSuffix(v.Object.Kind, "List") {
				items = make([]rec, 0, len(v.Object.Items))
				for _, it := range v.Object.Items {
					items = append(items, rec{typ: v.Type, name: it.Metadata.Name, rv: it.Metadata.ResourceVersion})
				}
			}
		case formatFloor:
			var v struct {
				Type string `json:"type"`
				Name string `json:"name"`
				RV   string `json:"rv"`
			}
			err = dec.Decode(&v)
			r = rec{typ: v.Type, name: v.Name, rv: v.RV}
		case formatJQName:
			var v string
			err = dec.Decode(&v)
			r = rec{typ: "DELETED", name: v}
		default:
			err = fmt.Errorf("unknown format %q", s.format)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.setErr(fmt.Errorf("decoding output at byte %d: %v", dec.InputOffset(), err))
				_, _ = io.Copy(io.Discard, cr) // keep the reader going
			}
			return
		}
		r.t = cr.stampAt(dec.InputOffset())
		if items == nil {
			items = []rec{r}
		}
		s.mu.Lock()
		for _, it := range items {
			it.t = r.t
			if it.name == s.sentinel && s.sentinel != "" {
				s.sentinels++
			} else {
				s.recs = append(s.recs, it)
				s.counts[it.typ]++
			}
		}
		s.mu.Unlock()
	}
}

// firstAt is when the first event (not the sentinel's) was read, in Unix nanoseconds; 0
// before any.
func (s *source) firstAt() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recs) == 0 {
		return 0
	}
	return s.recs[0].t
}

// snapshot returns the counts by type, the number of sentinel events and the error so far.
func (s *source) snapshot() (map[string]int, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		c[k] = v
	}
	return c, s.sentinels, s.err
}

// countsOf counts the ADDED and DELETED events of the objects that match.
func (s *source) countsOf(match func(rec) bool) (added, deleted int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.recs {
		if match(r) {
			switch r.typ {
			case "ADDED":
				added++
			case "DELETED":
				deleted++
			}
		}
	}
	return added, deleted
}

// lastArrival is when the last event reached the harness (zero time: none yet).
func (s *source) lastArrival() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recs) == 0 {
		return time.Time{}
	}
	return time.Unix(0, s.recs[len(s.recs)-1].t)
}

func (s *source) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

// countsEqual compares counts by type, ignoring zero entries.
func countsEqual(got, want map[string]int) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	for k, v := range got {
		if v != 0 && want[k] != v {
			return false
		}
	}
	return true
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

func sortedCopy(v []float64) []float64 {
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	return c
}
