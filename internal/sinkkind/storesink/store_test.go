package storesink_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	_ "github.com/kubeevents/kubeevents/internal/sinkkind/kinds"
	"github.com/kubeevents/kubeevents/internal/sinkkind/storesink"
	"github.com/kubeevents/kubeevents/internal/store"
)

var start = time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)

// cm is an event of ConfigMap ns/settings at its n-th version.
func cm(typ event.EventType, n int, value string) *event.Event {
	obj := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "ns", UID: "u-1", ResourceVersion: string(rune('0' + n)),
			CreationTimestamp: metav1.NewTime(start)},
		Data: map[string]string{"mode": value},
	}
	return &event.Event{Type: typ, Time: start.Add(time.Duration(n) * time.Minute), Seq: uint64(n),
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Object: obj}
}

// build parses a --sink and builds it, as a run does.
func build(t *testing.T, flag string) (sinkkind.Spec, listener.Sink, []sinkkind.File) {
	t.Helper()
	spec, err := config.ParseSinkSpec(flag)
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Compile(sinkkind.Compiling{}); err != nil {
		t.Fatal(err)
	}
	var opened []sinkkind.File
	out, err := sinkkind.Build(spec, sinkkind.Env{Opened: func(f sinkkind.File) { opened = append(opened, f) }})
	if err != nil {
		t.Fatalf("Build(%s): %v", flag, err)
	}
	return spec, out, opened
}

// The --sink of the issue parses into the store's settings, its name the file's.
func TestParse(t *testing.T) {
	spec, err := config.ParseSinkSpec("store(max-age=14d,max-size=5GiB)=events.db")
	if err != nil {
		t.Fatal(err)
	}
	s, ok := spec.Settings.(*storesink.Settings)
	if !ok || spec.Kind != storesink.Kind || spec.Name != "events.db" || *s != (storesink.Settings{Path: "events.db", MaxAge: "14d", MaxSize: "5GiB"}) {
		t.Fatalf("%+v %+v", spec, spec.Settings)
	}
	for flag, msg := range map[string]string{
		"store(max-age=fortnight)=x.db": `"fortnight" is not an age`,
		"store(max-size=lots)=x.db":     `"lots" is not a size`,
		"store":                         "store needs a path: store=PATH",
		"store=-":                       "is the standard output",
	} {
		_, err := config.ParseSinkSpec(flag)
		if err == nil {
			spec, _ := config.ParseSinkSpec(flag)
			if p, ok := spec.Destination(); ok && p == sinkkind.Stdout {
				err = spec.Kind.ToStdout(spec, p)
			}
		}
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("--sink %s: %v, want %q", flag, err, msg)
		}
	}
	f, err := config.Parse("c.yaml", []byte("sinks:\n  - {type: store, path: events.db, maxAge: 14d, maxSize: 5GiB}\n"))
	if err != nil || len(f.Sinks) != 1 || !reflectEqual(f.Sinks[0].Settings, spec.Settings) {
		t.Errorf("config file: %+v, %v", f, err)
	}
}

func reflectEqual(a, b sinkkind.Settings) bool {
	x, ok1 := a.(*storesink.Settings)
	y, ok2 := b.(*storesink.Settings)
	return ok1 && ok2 && *x == *y
}

// A store sink behind its listener keeps every version of an object, its deletion too,
// and counts an event delivered (written, for the checkpoint) only once committed.
func TestKeepsEveryVersionThroughItsListener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	_, out, opened := build(t, "store(max-age=14d,max-size=5GiB)="+path)
	if len(opened) != 1 {
		t.Errorf("%d files opened, want the store", len(opened))
	}
	l := listener.New(listener.Config{Name: "events.db", Buffer: 16}, out, nil)
	go l.Run()
	var mu sync.Mutex
	var written []uint64
	evs := []*event.Event{cm(event.Added, 1, "a"), cm(event.Modified, 2, "b"), cm(event.Modified, 3, "c"), cm(event.Deleted, 4, "c")}
	for _, ev := range evs {
		ev.Written = func() {
			mu.Lock()
			defer mu.Unlock()
			written = append(written, ev.Seq)
		}
		l.Add(ev)
	}
	// Within a batch interval, with no more events, the idle commit settles them.
	deadline := time.Now().Add(10 * store.BatchInterval)
	for {
		mu.Lock()
		n := len(written)
		mu.Unlock()
		if n == len(evs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events written after %v idle; stats %+v", n, len(evs), 10*store.BatchInterval, l.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := l.Stats(); st.Delivered != 4 || st.Failed != 0 {
		t.Errorf("stats %+v, want 4 delivered", st)
	}
	// Committed: a reader sees them while the sink still runs.
	values := readValues(t, path)
	if !slices.Equal(values, []string{"ADDED a", "MODIFIED b", "MODIFIED c", "DELETED c"}) {
		t.Errorf("stored %q", values)
	}
	l.Close()
	<-l.Done()
	if err := l.Err(); err != nil {
		t.Errorf("sink error: %v", err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		if fi, _ := os.Stat(path + "-wal"); fi.Size() != 0 {
			t.Errorf("closed store left a write-ahead log of %d bytes", fi.Size())
		}
	}
}

// readValues reads every version of ns/settings: its type and data.mode.
func readValues(t *testing.T, path string) []string {
	t.Helper()
	r, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	for v, err := range r.Versions(context.Background(), store.Query{Names: []string{"settings"}}, time.Time{}, time.Time{}) {
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(string(v.Line), `"mode":"`)
		if i < 0 {
			t.Fatalf("version without data.mode: %s", v.Line)
		}
		rest := string(v.Line[i+len(`"mode":"`):])
		got = append(got, string(v.Type)+" "+rest[:strings.IndexByte(rest, '"')])
	}
	return got
}

// A file that is not a store is bad usage, named; a store another kubeevents writes
// fails the sink as an unopenable file does (not bad usage).
func TestRefusesForeignAndLockedFiles(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(foreign, []byte("not a database, clearly\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := config.ParseSinkSpec("store=" + foreign)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sinkkind.Build(spec, sinkkind.Env{})
	var invalid *sinkkind.InvalidError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), foreign) {
		t.Errorf("a foreign file: %v, want bad usage naming it", err)
	}
	if data, _ := os.ReadFile(foreign); string(data) != "not a database, clearly\n" {
		t.Errorf("the foreign file was changed: %q", data)
	}

	path := filepath.Join(dir, "events.db")
	_, first, _ := build(t, "store="+path)
	defer first.Close()
	spec, _ = config.ParseSinkSpec("store=" + path)
	_, err = sinkkind.Build(spec, sinkkind.Env{})
	var locked *store.LockedError
	if !errors.As(err, &locked) || errors.As(err, &invalid) {
		t.Errorf("a second writer: %v, want *store.LockedError", err)
	}
}

// A run that never starts leaves no store it created behind, and keeps one it did not.
func TestRemoveIfUnused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	_, _, opened := build(t, "store="+path)
	opened[0].RemoveIfUnused()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", path+suffix, err)
		}
	}

	_, out, _ := build(t, "store="+path)
	if err := out.Write(cm(event.Added, 1, "a")); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	_, _, opened = build(t, "store="+path)
	opened[0].RemoveIfUnused()
	if got := readValues(t, path); !slices.Equal(got, []string{"ADDED a"}) {
		t.Errorf("an existing store after an unused run: %q", got)
	}
}
