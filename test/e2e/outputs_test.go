package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lineCounter counts the lines of a growing file, reading only what was added.
type lineCounter struct {
	path   string
	offset int64
	lines  int
}

func (c *lineCounter) count() int {
	f, err := os.Open(c.path)
	if err != nil {
		return c.lines
	}
	defer f.Close()
	if _, err := f.Seek(c.offset, io.SeekStart); err != nil {
		return c.lines
	}
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		c.lines += bytes.Count(buf[:n], []byte{'\n'})
		c.offset += int64(n)
		if err != nil {
			return c.lines
		}
	}
}

// waitLines waits until every file has at least n lines; it fails the test, naming
// the counts, after timeout, or when p exits.
func waitLines(t *testing.T, p *proc, timeout time.Duration, n int, paths ...string) {
	t.Helper()
	counters := make([]*lineCounter, len(paths))
	for i, path := range paths {
		counters[i] = &lineCounter{path: path}
	}
	deadline := time.Now().Add(timeout)
	for {
		ok := true
		var counts []string
		for _, c := range counters {
			got := c.count()
			ok = ok && got >= n
			counts = append(counts, fmt.Sprintf("%s: %d", filepath.Base(c.path), got))
		}
		if ok {
			return
		}
		if time.Now().After(deadline) || (p != nil && !p.Alive()) {
			stderr := ""
			if p != nil {
				stderr = p.Stderr()
			}
			t.Fatalf("want %d lines in each of %s within %s; have %s; stderr:\n%s", n, strings.Join(paths, ", "), timeout, strings.Join(counts, ", "), stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// readEvents parses a JSON Lines file; every line must be a whole JSON envelope.
func readEvents(t *testing.T, path string) []envelope {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseEvents(t, path, data)
}

func parseEvents(t *testing.T, what string, data []byte) []envelope {
	t.Helper()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("%s: last line is not whole: %q", what, tail(data, 200))
	}
	var evs []envelope
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		var ev envelope
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s:%d: not a JSON envelope: %v: %q", what, n, err, tail(sc.Bytes(), 200))
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return evs
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// finalStates replays events into each object's last state: name → resourceVersion.
func finalStates(evs []envelope) map[string]string {
	return statesBy(evs, func(m objectMeta) string { return m.Metadata.Name })
}

// statesBy replays events into each object's last state: key(object) → resourceVersion.
func statesBy(evs []envelope, key func(objectMeta) string) map[string]string {
	state := map[string]string{}
	for _, ev := range evs {
		m := ev.meta()
		switch ev.Type {
		case "ADDED", "MODIFIED":
			state[key(m)] = m.Metadata.ResourceVersion
		case "DELETED":
			delete(state, key(m))
		}
	}
	return state
}

// kindName keys an object by kind and name, for a watch of several types.
func kindName(m objectMeta) string { return m.Kind + "/" + m.Metadata.Name }

func stateDiff(got, want map[string]string) string {
	var b strings.Builder
	for name, rv := range want {
		if got[name] != rv {
			fmt.Fprintf(&b, "  %s: kubeevents rv %q, kubectl rv %q\n", name, got[name], rv)
		}
	}
	for name, rv := range got {
		if _, ok := want[name]; !ok {
			fmt.Fprintf(&b, "  %s: kubeevents has it (rv %q), kubectl does not\n", name, rv)
		}
	}
	return b.String()
}

// checkNoReprints fails the test for an object printed twice at one resourceVersion
// (ADDED/MODIFIED), and for SYNC events, which a watch without --resync never prints.
func checkNoReprints(t *testing.T, evs []envelope) {
	t.Helper()
	seen := map[string]bool{}
	for _, ev := range evs {
		m := ev.meta().Metadata
		switch ev.Type {
		case "SYNC":
			t.Errorf("SYNC event for %s (rv %s) without --resync", m.Name, m.ResourceVersion)
		case "ADDED", "MODIFIED":
			key := m.Name + "@" + m.ResourceVersion
			if seen[key] {
				t.Errorf("%s printed again at unchanged resourceVersion %s (%s)", m.Name, m.ResourceVersion, ev.Type)
			}
			seen[key] = true
		}
	}
}

// summary is kubeevents' exit line (-v=1): "stopped after N events — NAME N delivered,
// N dropped; NAME ...", parsed into the event count and per sink counts.
type summary struct {
	events uint64
	sinks  map[string]map[string]uint64 // sink → "delivered"/"dropped"/... → count
}

var summaryRE = regexp.MustCompile(`(?m)^kubeevents: stopped after ([\d,]+) events? — (.*)$`)

func parseSummary(t *testing.T, stderr string) summary {
	t.Helper()
	m := summaryRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no exit summary on stderr:\n%s", stderr)
	}
	s := summary{events: parseCount(t, m[1]), sinks: map[string]map[string]uint64{}}
	for _, part := range strings.Split(m[2], "; ") {
		counts := map[string]uint64{}
		fields := strings.Split(part, ", ")
		first := strings.Fields(fields[0]) // NAME N delivered
		if len(first) != 3 {
			t.Fatalf("summary part %q: want NAME N delivered", part)
		}
		counts[first[2]] = parseCount(t, first[1])
		for _, f := range fields[1:] {
			nw := strings.Fields(f)
			if len(nw) != 2 {
				t.Fatalf("summary part %q", part)
			}
			counts[nw[1]] = parseCount(t, nw[0])
		}
		s.sinks[first[0]] = counts
	}
	return s
}

func parseCount(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatalf("count %q: %v", s, err)
	}
	return n
}

// stalledFIFO makes a FIFO at path for a sink to write into, and returns its read end,
// which the test reads only when it chooses: opened first, so that kubeevents' open for
// writing does not wait; unread, so that the sink stalls once the pipe is full. It is
// closed when the test ends.
func stalledFIFO(t *testing.T, path string) *os.File {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Close() })
	return reader
}
