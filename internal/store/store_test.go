package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// podLine is the envelope of an event of pod name in namespace ns at t0+seconds, whose
// status carries version and noise (random bytes: what compression cannot remove).
func podLine(typ event.EventType, seconds float64, ns, name string, version int, noise string) []byte {
	at := t0.Add(time.Duration(seconds * float64(time.Second))).Format(time.RFC3339Nano)
	return fmt.Appendf(nil, `{"type":%q,"time":%q,"seq":%d,"resource":{"group":"","version":"v1","resource":"pods"},`+
		`"object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":%q,"namespace":%q,"uid":"uid-%s-%s","resourceVersion":"%d",`+
		`"creationTimestamp":"2026-11-23T10:00:00Z","labels":{"app":"web"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":"rs"}]},`+
		`"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]},"status":{"phase":"Running","version":%d,"noise":%q}},"by":[{"manager":"kubelet"}]}`,
		typ, at, version+1, name, ns, ns, name, 1000+version, version, noise)
}

func noise(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = "0123456789abcdef"[rng.IntN(16)]
	}
	return string(b)
}

func create(t *testing.T, path string, opts Options) *Writer {
	t.Helper()
	w, err := Create(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func write(t *testing.T, w *Writer, line []byte) {
	t.Helper()
	if err := w.Write(context.Background(), line); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, path string) *Reader {
	t.Helper()
	r, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestVersionsComeBackAsWritten: every line written is read back byte for byte, in time
// order, through snapshots and the changes between them; the state at a time is each
// object's last version then, deleted objects included until their deletion. The lines
// are written from one buffer, reused as a sink reuses its own.
func TestVersionsComeBackAsWritten(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	w := create(t, path, Options{})
	var lines [][]byte
	var buf []byte
	rng := rand.New(rand.NewPCG(1, 1))
	for v := range 40 {
		for _, name := range []string{"a", "b", "c"} {
			typ := event.Modified
			switch {
			case v == 0:
				typ = event.Added
			case v == 39 && name == "b":
				typ = event.Deleted
			}
			line := podLine(typ, float64(v), "shop", name, v, noise(rng, 8))
			lines = append(lines, line)
			buf = append(buf[:0], line...)
			write(t, w, buf)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}

	r := open(t, path)
	i := 0
	for v, err := range r.Versions(ctx, Query{}, time.Time{}, time.Time{}) {
		if err != nil {
			t.Fatal(err)
		}
		if string(v.Line) != string(lines[i]) {
			t.Fatalf("version %d:\n%s\nwant\n%s", i, v.Line, lines[i])
		}
		i++
	}
	if i != len(lines) {
		t.Fatalf("read %d versions, want %d", i, len(lines))
	}

	var chains, snapshots int
	db := r.db
	if err := db.QueryRow("SELECT count(*) FROM chains").Scan(&chains); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT count(*) FROM versions WHERE base IS NULL").Scan(&snapshots); err != nil {
		t.Fatal(err)
	}
	if want := 3 * 3; chains != want || snapshots != want { // 40 versions: chains of 16, 16, 8
		t.Errorf("%d chains, %d snapshots; want %d of each", chains, snapshots, want)
	}

	pods := Query{Resources: r.Resources(), Namespaces: []string{"shop"}}
	at, err := r.At(ctx, pods, t0.Add(20*time.Second+time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if len(at) != 3 || !strings.Contains(string(at[1].Line), `"version":20,`) || at[1].Object.Name != "b" || at[1].ResourceVersion != "1020" {
		t.Errorf("at 20s: %d objects, b at %s", len(at), at[1].Line)
	}
	if at[0].By[0] != "kubelet" || at[0].Object.Owners == "" {
		t.Errorf("by %v, owners %q", at[0].By, at[0].Object.Owners)
	}
	at, err = r.At(ctx, pods, t0.Add(40*time.Second))
	if err != nil || len(at) != 2 {
		t.Errorf("after b's deletion: %d objects (%v), want a and c", len(at), err)
	}
	none, err := r.At(ctx, pods, t0.Add(-time.Second))
	if err != nil || len(none) != 0 {
		t.Errorf("before anything: %d objects (%v)", len(none), err)
	}
}

// TestRefusesWhatIsNotAStore: a file that is not SQLite, another application's SQLite
// database, a store of a newer schema and an empty file are each refused with one line
// that says so, by the Writer and the Reader; nothing is written to them.
func TestRefusesWhatIsNotAStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(text, []byte(strings.Repeat(`{"type":"ADDED"}`+"\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	newer := filepath.Join(dir, "newer.db")
	older := filepath.Join(dir, "older.db")
	for path, setup := range map[string]string{other: "CREATE TABLE t (x)", newer: "PRAGMA user_version = 99", older: "PRAGMA user_version = 1"} {
		if path != other {
			w := create(t, path, Options{})
			if err := w.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		db, err := openDB(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(setup); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		text:  "not a kubeevents store (not an SQLite database)",
		other: "an SQLite database, but not a kubeevents store",
		newer: fmt.Sprintf("schema version 99, newer than this kubeevents reads (%d)", schemaVersion),
		older: "schema version 1 (a development build's), which this kubeevents does not read",
	} {
		before, _ := os.ReadFile(path)
		_, err := Create(ctx, path, Options{})
		var notStore *NotStoreError
		if !errors.As(err, &notStore) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Create(%s) = %v, want one line with %q", filepath.Base(path), err, want)
		}
		if _, err := Open(ctx, path); !errors.As(err, &notStore) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want %q", filepath.Base(path), err, want)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Errorf("%s was changed", filepath.Base(path))
		}
	}
	if _, err := Open(ctx, empty); err == nil || !strings.Contains(err.Error(), "an empty file, not a kubeevents store") {
		t.Errorf("Open(empty) = %v", err)
	}
	if _, err := Open(ctx, filepath.Join(dir, "none.db")); err == nil || !strings.Contains(err.Error(), "none.db: no such file") {
		t.Errorf("Open(none) = %v", err)
	}
}

// TestSecondWriterIsRefused: while one Writer has a store open, a second is refused
// with one line, and readers read it; once the first is closed, another may write.
func TestSecondWriterIsRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	w := create(t, path, Options{})
	write(t, w, podLine(event.Added, 0, "shop", "a", 0, ""))
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := Create(ctx, path, Options{})
	var locked *LockedError
	if !errors.As(err, &locked) || !strings.Contains(err.Error(), "another kubeevents is writing this store") {
		t.Fatalf("second writer: %v", err)
	}
	if versions, err := open(t, path).At(ctx, Query{}, t0); err != nil || len(versions) != 1 {
		t.Errorf("a reader meanwhile: %d versions, %v", len(versions), err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	w = create(t, path, Options{})
	write(t, w, podLine(event.Modified, 1, "shop", "a", 1, ""))
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReadersDoNotHoldTheWriterUp: readers querying all along (each query a transaction
// of its own) neither fail nor stop the Writer's transactions from committing.
func TestReadersDoNotHoldTheWriterUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(t.TempDir(), "events.db")
	w := create(t, path, Options{})
	write(t, w, podLine(event.Added, 0, "shop", "p0", 0, ""))
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	r := open(t, path)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	var reads [2]int
	for i := range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				// A long read: every version, decoded.
				for _, err := range r.Versions(ctx, Query{}, time.Time{}, time.Time{}) {
					if err != nil && ctx.Err() == nil {
						errs <- err
						return
					}
				}
				reads[i]++
			}
		})
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for v := 1; v <= 3000; v++ {
		write(t, w, podLine(event.Modified, float64(v)/100, "shop", fmt.Sprintf("p%d", v%50), v, noise(rng, 16)))
		if v%100 == 0 {
			start := time.Now()
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("a commit took %s while readers read", took)
			}
		}
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("reader: %v", err)
	}
	if reads[0] == 0 || reads[1] == 0 {
		t.Errorf("reads: %v", reads)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range open(t, path).Versions(context.Background(), Query{}, time.Time{}, time.Time{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3001 {
		t.Errorf("%d versions stored, want 3001", n)
	}
}

// TestRetentionByAge: versions superseded before max-age go, and objects deleted
// before it; every object's state at any time since stays whole.
func TestRetentionByAge(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	w := create(t, path, Options{MaxAge: time.Hour})
	rng := rand.New(rand.NewPCG(3, 3))
	// 3 hours: pod "live" changes every minute, "quiet" once at the start, "gone" is
	// deleted after 30 minutes.
	write(t, w, podLine(event.Added, 0, "shop", "quiet", 0, noise(rng, 8)))
	write(t, w, podLine(event.Added, 0, "shop", "gone", 0, noise(rng, 8)))
	for m := range 180 {
		write(t, w, podLine(event.Modified, float64(m*60), "shop", "live", m, noise(rng, 8)))
		if m == 30 {
			write(t, w, podLine(event.Deleted, float64(m*60), "shop", "gone", 1, ""))
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r := open(t, path)
	cutoff := t0.Add(179*time.Minute - time.Hour)
	var oldest time.Time
	var objects int
	if err := r.db.QueryRow("SELECT min(time) FROM versions v JOIN objects o ON o.id = v.object WHERE o.name = 'live'").Scan(new(int64)); err != nil {
		t.Fatal(err)
	}
	var min int64
	_ = r.db.QueryRow("SELECT min(time) FROM versions v JOIN objects o ON o.id = v.object WHERE o.name = 'live'").Scan(&min)
	oldest = time.Unix(0, min).UTC()
	_ = r.db.QueryRow("SELECT count(*) FROM objects").Scan(&objects)
	// What stays of "live" starts at most a chain (16 minutes) before the cut-off.
	if oldest.After(cutoff) || oldest.Before(cutoff.Add(-16*time.Minute)) {
		t.Errorf("live's oldest version at %s, cut-off %s", oldest, cutoff)
	}
	if objects != 2 {
		t.Errorf("%d objects, want live and quiet (gone was deleted before the cut-off)", objects)
	}
	for _, at := range []time.Time{cutoff, cutoff.Add(17 * time.Minute), t0.Add(179 * time.Minute)} {
		versions, err := r.At(ctx, Query{}, at)
		if err != nil || len(versions) != 2 {
			t.Fatalf("at %s: %d objects, %v", at, len(versions), err)
		}
		want := fmt.Sprintf(`"version":%d,`, int(at.Sub(t0)/time.Minute))
		if !strings.Contains(string(versions[0].Line), want) || versions[1].Object.Name != "quiet" {
			t.Errorf("at %s: %s is not version %s", at, versions[0].Line, want)
		}
	}
	info, err := r.Info(ctx)
	if err != nil || info.RetainedFrom.IsZero() || info.RetainedFrom.After(cutoff) {
		t.Errorf("retained from %s (%v), want at or before %s", info.RetainedFrom, err, cutoff)
	}
}

// TestRetentionBySize: however much is written, the file and its log never exceed
// max-size by more than 5%, checked after every commit, and the latest state is whole.
func TestRetentionBySize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 60 MB")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	const maxSize = 8 << 20
	w := create(t, path, Options{MaxSize: maxSize})
	rng := rand.New(rand.NewPCG(4, 4))
	var largest int64
	const pods, rounds = 200, 150
	for v := range rounds {
		for p := range pods {
			// 400 random bytes a version: 60 MB in all.
			write(t, w, podLine(event.Modified, float64(v*pods+p)/10, "shop", fmt.Sprintf("p%d", p), v, noise(rng, 400)))
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if n := fileSize(path) + fileSize(path+"-wal"); n > largest {
			largest = n
			t.Logf("round %d: file %d, log %d", v, fileSize(path), fileSize(path+"-wal"))
		}
	}
	if largest > maxSize*105/100 {
		t.Errorf("the file and its log reached %d bytes, over max-size %d by more than 5%%", largest, maxSize)
	}
	if largest < maxSize*70/100 {
		t.Errorf("the file and its log reached %d bytes only: retention dropped too much", largest)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r := open(t, path)
	versions, err := r.At(ctx, Query{}, t0.Add(time.Hour))
	if err != nil || len(versions) != pods {
		t.Fatalf("latest state: %d pods, %v", len(versions), err)
	}
	for _, v := range versions {
		if !strings.Contains(string(v.Line), fmt.Sprintf(`"version":%d,`, rounds-1)) {
			t.Fatalf("%s is not the last version", v.Line)
		}
	}
	var total int
	if err := r.db.QueryRow("SELECT count(*) FROM versions").Scan(&total); err != nil {
		t.Fatal(err)
	}
	t.Logf("largest %d bytes (max-size %d); %d versions of %d kept", largest, maxSize, total, pods*rounds)
}

// TestBadLinesAreRefused: a line that is not an event kubeevents wrote is an error
// that names what is wrong, and stores nothing.
func TestBadLinesAreRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	w := create(t, path, Options{})
	for line, want := range map[string]string{
		"garbage": "not JSON",
		`{"type":"ADDED","time":"2026-11-23T10:00:00Z","resource":{"version":"v1","resource":"pods"},"object":{"kind":"Pod"}}`: "no kind or no name",
	} {
		err := w.Write(ctx, []byte(line))
		var bad *BadEventError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), want) {
			t.Errorf("Write(%s) = %v, want %q", line, err, want)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	db, _ := sql.Open("sqlite", path)
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM versions").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d versions stored (%v)", n, err)
	}
}
