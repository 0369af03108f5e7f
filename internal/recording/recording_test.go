package recording

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// line is one recorded event of pod NAME at t0 + seconds.
func line(seconds int, name string) string {
	return fmt.Sprintf(`{"type":"MODIFIED","time":%q,"seq":%d,"resource":{"group":"","version":"v1","resource":"pods"},"object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":%q,"namespace":"default"}},"diff":[]}`,
		t0.Add(time.Duration(seconds)*time.Second).Format(time.RFC3339Nano), seconds+1, name)
}

func writeFile(t *testing.T, path string, lines ...string) {
	t.Helper()
	content := strings.Join(lines, "\n")
	if len(lines) > 0 {
		content += "\n"
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeGzip(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	for _, l := range lines {
		fmt.Fprintln(gz, l)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, r *Reader) (names []string, err error) {
	t.Helper()
	for {
		rec, err := r.Next(context.Background())
		if err != nil {
			if errors.Is(err, io.EOF) {
				return names, nil
			}
			return names, err
		}
		names = append(names, fmt.Sprintf("%s@%d", objectName(t, rec), rec.Time.Sub(t0)/time.Second))
	}
}

func objectName(t *testing.T, rec Record) string {
	t.Helper()
	i := strings.Index(string(rec.Object), `"name":"`)
	rest := string(rec.Object)[i+8:]
	return rest[:strings.IndexByte(rest, '"')]
}

func open(t *testing.T, args []string, opts Options) *Reader {
	t.Helper()
	inputs, err := Expand(args, opts.Follow)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(inputs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func TestParseReadsTheEnvelope(t *testing.T) {
	raw := `{"type":"MODIFIED","time":"2026-11-23T10:16:34.512345678Z","seq":7,"cluster":"prod","resource":{"group":"apps","version":"v1","resource":"deployments"},` +
		`"owners":[{"kind":"Deployment","name":"web"}],"rollout":{"state":"complete","message":"done"},"object":{"kind":"Deployment"},"old":{"kind":"Deployment"},` +
		`"diff":[{"op":"replace","path":"/spec/replicas","value":3,"old":1}],"by":[{"manager":"kubectl"}],"finalStateUnknown":true,"reason":"selector"}`
	rec, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 23, 10, 16, 34, 512345678, time.UTC)
	switch {
	case rec.Type != event.Modified || !rec.Time.Equal(want) || rec.Seq != 7 || rec.Cluster != "prod":
		t.Errorf("type, time, seq, cluster: %v %v %d %q", rec.Type, rec.Time, rec.Seq, rec.Cluster)
	case rec.Resource.Group != "apps" || rec.Resource.Resource != "deployments" || rec.Resource.Version != "v1":
		t.Errorf("resource: %v", rec.Resource)
	case len(rec.Owners) != 1 || rec.Owners[0] != (event.Owner{Kind: "Deployment", Name: "web"}):
		t.Errorf("owners: %v", rec.Owners)
	case rec.Rollout == nil || rec.Rollout.State != event.RolloutComplete || rec.Rollout.Message != "done":
		t.Errorf("rollout: %v", rec.Rollout)
	case string(rec.Object) != `{"kind":"Deployment"}` || string(rec.Old) != `{"kind":"Deployment"}`:
		t.Errorf("object, old: %s %s", rec.Object, rec.Old)
	case !strings.HasPrefix(string(rec.Diff), `[{"op":"replace"`) || string(rec.By) != `[{"manager":"kubectl"}]`:
		t.Errorf("diff, by: %s %s", rec.Diff, rec.By)
	case !rec.FinalStateUnknown || rec.Reason != "selector":
		t.Errorf("finalStateUnknown, reason: %v %q", rec.FinalStateUnknown, rec.Reason)
	}
}

func TestParseRefusesWhatKubeeventsDidNotWrite(t *testing.T) {
	for raw, want := range map[string]string{
		`15:04:05  ADDED  web-1  1/1  Running`:                       "not JSON",
		`[1,2]`:                                                      "a JSON array, not an object",
		`{"time":"2026-11-23T10:16:34Z"}`:                            `no "type"`,
		`{"type":"CREATED","time":"2026-11-23T10:16:34Z"}`:           `"type" "CREATED" is not ADDED`,
		`{"type":"ADDED","object":{}}`:                               `no "time"`,
		`{"type":"ADDED","time":"2026-11-23T10:16:34Z","object":{}}`: `no "resource"`,
		`{"type":"ADDED","time":"2026-11-23T10:16:34Z","resource":{"version":"v1","resource":"pods"}}`: `no "object"`,
		`{"type":"ADDED","time":"yesterday"}`: "yesterday",
	} {
		_, err := Parse([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error with %q", raw, err, want)
		}
	}
}

// TestReadsRotatedBackupsInTimeOrder: a file sink's directory, the active file and its
// backups (compressed or not), each of which holds a stretch of time, is read as one
// stream in time order; a backup being compressed (NAME and NAME.gz both there) is read
// once, from the whole one.
func TestReadsRotatedBackupsInTimeOrder(t *testing.T) {
	dir := t.TempDir()
	writeGzip(t, filepath.Join(dir, "events-2026-11-23T10-00-02.000.jsonl.gz"), line(0, "a"), line(1, "b"))
	writeFile(t, filepath.Join(dir, "events-2026-11-23T10-00-04.000.jsonl"), line(2, "c"), line(3, "d"))
	writeGzip(t, filepath.Join(dir, "events-2026-11-23T10-00-04.000.jsonl.gz"), line(2, "c")) // being compressed
	writeFile(t, filepath.Join(dir, "events.jsonl"), line(4, "e"))
	writeFile(t, filepath.Join(dir, "events.ckpt"), "not a recording")
	got, err := readAll(t, open(t, []string{dir}, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "a@0 b@1 c@2 d@3 e@4"; strings.Join(got, " ") != want {
		t.Errorf("read %v, want %s", got, want)
	}
}

// TestMergesOverlappingInputsByTime: two recordings of the same stretch of time (two
// clusters, two sinks) are interleaved by the time of each record.
func TestMergesOverlappingInputsByTime(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeFile(t, a, line(0, "a0"), line(2, "a2"), line(5, "a5"))
	writeFile(t, b, line(1, "b1"), line(3, "b3"), line(4, "b4"))
	got, err := readAll(t, open(t, []string{b, a}, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "a0@0 b1@1 a2@2 b3@3 b4@4 a5@5"; strings.Join(got, " ") != want {
		t.Errorf("read %v, want %s", got, want)
	}
}

func TestStdinAndPatterns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "x-1.jsonl"), line(1, "x1"))
	writeFile(t, filepath.Join(dir, "x-3.jsonl"), line(3, "x3"))
	r := open(t, []string{filepath.Join(dir, "x-*.jsonl"), "-"}, Options{Stdin: strings.NewReader(line(2, "in") + "\n")})
	got, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "x1@1 in@2 x3@3"; strings.Join(got, " ") != want {
		t.Errorf("read %v, want %s", got, want)
	}
}

func TestExpandSaysWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "none.jsonl")}, "none.jsonl: no such file"},
		{[]string{filepath.Join(dir, "*.jsonl")}, "no file matches"},
		{[]string{dir}, "no recordings in this directory"},
		{[]string{"-", "-"}, "given twice"},
	} {
		if _, err := Expand(c.args, false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Expand(%v) = %v, want an error with %q", c.args, err, c.want)
		}
	}
	inputs, err := Expand([]string{filepath.Join(dir, "later.jsonl")}, true)
	if err != nil || len(inputs) != 1 || !inputs[0].Live {
		t.Errorf("with follow, a file to come is waited for: %v, %v", inputs, err)
	}
}

// TestBadLinesAreNamedOrSkipped: a line that is not an event is one error naming the
// file and the line; with SkipBadLines such lines are skipped and counted. A last line
// cut short is said to be so.
func TestBadLinesAreNamedOrSkipped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	writeFile(t, path, line(0, "a"), "", "garbage", line(2, "c"), `{"type":"ADDED","time":"2026-11-23T10:00:03Z","resour`)
	// The last line has no end of line.
	raw, _ := os.ReadFile(path)
	if err := os.WriteFile(path, raw[:len(raw)-1], 0o600); err != nil {
		t.Fatal(err)
	}

	got, err := readAll(t, open(t, []string{path}, Options{}))
	var bad *BadLineError
	if !errors.As(err, &bad) || bad.At.Line != 3 || bad.Truncated || !strings.Contains(err.Error(), "events.jsonl:3: not an event kubeevents wrote: not JSON") {
		t.Fatalf("got %v, then %v; want the error of line 3", got, err)
	}
	if strings.Join(got, " ") != "a@0" {
		t.Errorf("before the bad line: %v", got)
	}

	r := open(t, []string{path}, Options{SkipBadLines: true})
	got, err = readAll(t, r)
	if err != nil || strings.Join(got, " ") != "a@0 c@2" {
		t.Errorf("skipping: %v, %v", got, err)
	}
	n, first := r.Skipped()
	if n != 2 || first.At.Line != 3 {
		t.Errorf("skipped %d, first %v; want 2, line 3", n, first)
	}

	writeFile(t, path, line(0, "a"))
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprint(f, `{"type":"ADDED","ti`)
	f.Close()
	_, err = readAll(t, open(t, []string{path}, Options{}))
	if !errors.As(err, &bad) || !bad.Truncated || bad.At.Line != 2 || !strings.Contains(err.Error(), "the last line is cut short") {
		t.Errorf("a last line cut short: %v", err)
	}
}

// TestFollowsAcrossRotation: a followed file is read as it grows, a line written in
// two pieces is waited for, and when the file is rotated (renamed, a new one created at
// its path) what the old one got before the rename is read, then the new one.
func TestFollowsAcrossRotation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "events.jsonl")
		writeFile(t, path, line(0, "a"))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := open(t, []string{path}, Options{Follow: true})
		got := make(chan string)
		go func() {
			defer close(got)
			for {
				rec, err := r.Next(ctx)
				if err != nil {
					return
				}
				got <- objectName(t, rec)
			}
		}()
		expect := func(want string) {
			t.Helper()
			select {
			case name := <-got:
				if name != want {
					t.Fatalf("read %s, want %s", name, want)
				}
			case <-time.After(time.Minute):
				t.Fatalf("nothing read, want %s", want)
			}
		}
		appendTo := func(path, s string) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprint(f, s)
			f.Close()
		}
		expect("a")
		l := line(1, "b") + "\n"
		appendTo(path, l[:20])
		time.Sleep(time.Second) // several polls find the line unended
		appendTo(path, l[20:])
		expect("b")

		appendTo(path, line(2, "c")+"\n")
		backup := filepath.Join(dir, "events-2026-11-23T10-00-02.000.jsonl")
		if err := os.Rename(path, backup); err != nil {
			t.Fatal(err)
		}
		appendTo(backup, line(3, "d")+"\n") // written before the rename, read after it
		appendTo(path, line(4, "e")+"\n")
		expect("c")
		expect("d")
		expect("e")

		// Two rotations before the reader looks again: the file in between is a backup
		// by then, and is read in its turn, not skipped.
		appendTo(path, line(5, "f")+"\n")
		if err := os.Rename(path, filepath.Join(dir, "events-2026-11-23T10-00-04.000.jsonl")); err != nil {
			t.Fatal(err)
		}
		appendTo(path, line(6, "g")+"\n")
		if err := os.Rename(path, filepath.Join(dir, "events-2026-11-23T10-00-06.000.jsonl")); err != nil {
			t.Fatal(err)
		}
		appendTo(path, line(7, "h")+"\n")
		expect("f")
		expect("g")
		expect("h")
		cancel()
		if _, more := <-got; more {
			t.Error("read more after the end")
		}
	})
}

// The sink rotates again while the reader catches up after a rotation: between its
// listing of the backups and its opening of the next file, or while it reads a backup it
// missed. Every file rotated meanwhile is read, in order, before the newest one, as
// replay --follow of a sink rotating faster than it is read must.
func TestFollowsRotationsWhileCatchingUp(t *testing.T) {
	for _, tc := range []struct {
		name string
		// after the first record, these rotations before the reader looks; then, at its
		// reopening, one more
		before []string
		want   string
	}{
		{"during the reopening", []string{"b"}, "a b c"},
		{"while reading a backup", []string{"b", "c"}, "a b c d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "events.jsonl")
				writeFile(t, path, line(0, "a")+"\n")
				rotations := 0
				rotate := func() {
					t.Helper()
					rotations++
					backup := filepath.Join(dir, fmt.Sprintf("events-2026-11-23T10-00-0%d.000.jsonl", rotations))
					if err := os.Rename(path, backup); err != nil {
						t.Fatal(err)
					}
					writeFile(t, path, line(rotations, string(rune('a'+rotations)))+"\n")
				}
				beforeReopen = func() {
					if rotations == len(tc.before) {
						rotate()
					}
				}
				defer func() { beforeReopen = func() {} }()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				r := open(t, []string{path}, Options{Follow: true})
				var names []string
				for want := len(strings.Fields(tc.want)); len(names) < want; {
					if len(names) == 1 && rotations == 0 {
						for range tc.before {
							rotate()
						}
					}
					rec, err := r.Next(ctx)
					if err != nil {
						t.Fatalf("read %v, then: %v", names, err)
					}
					names = append(names, objectName(t, rec))
				}
				if got := strings.Join(names, " "); got != tc.want {
					t.Errorf("read %s, want %s", got, tc.want)
				}
			})
		})
	}
}
