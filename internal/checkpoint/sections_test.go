package checkpoint

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
)

// trackerOf is a tracker to which the pods named have been delivered.
func trackerOf(names ...string) *Tracker {
	tr := NewTracker(1)
	for i, name := range names {
		e := ev(event.Added, pod(name, "1"), uint64(i+1))
		tr.Made(e)
		e.Written()
	}
	return tr
}

// watchOf is testWatch in another cluster.
func watchOf(server, uid string) Watch {
	w := testWatch()
	w.Server, w.Cluster = server, uid
	return w
}

// headers are the file's header lines, decoded.
func headers(t *testing.T, path string) []header {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []header
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var h header
		if json.Unmarshal(sc.Bytes(), &h) == nil && h.Format == Format {
			out = append(out, h)
		}
	}
	return out
}

func podNames(t *testing.T, s *Saved) []string {
	t.Helper()
	var names []string
	for _, raw := range s.Objects["pods.v1"] {
		var m struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		names = append(names, m.Metadata.Name)
	}
	return names
}

// Several clusters: one section each, version 2, each found by its context, a kept
// section written back as it was read (its time too), a context new to the file none.
func TestSeveralSections(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	one, two, three := watchOf("https://one", "uid-1"), watchOf("https://two", "uid-2"), watchOf("https://three", "uid-3")
	if err := (&Writer{Path: old, Sections: []*Section{{Context: "three", Watch: three, Tracker: trackerOf("c")}}}).Write(); err != nil {
		t.Fatal(err)
	}
	kept := loadOne(t, old)
	for !time.Now().After(kept.Written) { // the kept section's time must not be the new one's
		time.Sleep(time.Millisecond)
	}

	path := filepath.Join(dir, "ckpt")
	w := &Writer{Path: path, Sections: []*Section{
		{Context: "one", Watch: one, Tracker: trackerOf("a1", "a2")},
		{Context: "two", Watch: two, Tracker: trackerOf("b1")},
		{Context: "three", Kept: kept},
	}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	hs := headers(t, path)
	if len(hs) != 3 || hs[0].Version != Version || hs[0].Context != "one" || hs[1].Context != "two" || hs[2].Context != "three" {
		t.Fatalf("headers %+v, want three of version %d: one, two, three", hs, Version)
	}
	file, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		watch Watch
		want  string
	}{{"one", one, "a1,a2"}, {"two", two, "b1"}, {"three", three, "c"}} {
		s, err := file.For(c.name, c.watch)
		if err != nil || s == nil {
			t.Fatalf("For(%s) = %v, %v", c.name, s, err)
		}
		if got := strings.Join(sortedNames(t, s), ","); got != c.want {
			t.Errorf("section %s holds %s, want %s", c.name, got, c.want)
		}
	}
	if s, _ := file.For("three", three); !s.Written.Equal(kept.Written) {
		t.Errorf("kept section written %v, want its own time %v", s.Written, kept.Written)
	}
	if s, err := file.For("four", watchOf("https://four", "uid-4")); s != nil || err != nil {
		t.Errorf("a context new to the file: %v, %v; want none (start afresh)", s, err)
	}
	a, _ := file.For("one", one)
	if others := file.Others([]*Saved{a}); len(others) != 2 || others[0].Context != "two" || others[1].Context != "three" {
		t.Errorf("Others = %v, want two and three", others)
	}
}

func sortedNames(t *testing.T, s *Saved) []string {
	t.Helper()
	return slices.Sorted(slices.Values(podNames(t, s)))
}

// A run of one cluster writes version 1, as it always did; the file loads for that
// cluster, and a later run of several clusters resumes the one whose cluster it is.
func TestOldSingleClusterFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt")
	w := watchOf("https://one", "uid-1")
	if err := (&Writer{Path: path, Sections: oneSection(w, trackerOf("a"))}).Write(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(raw), `{"format":"kubeevents-checkpoint","version":1,"written":`) {
		t.Fatalf("a run of one cluster wrote %q, want a version 1 header without a context", strings.SplitN(string(raw), "\n", 2)[0])
	}
	file, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := file.For("", w); err != nil || s == nil || podNames(t, s)[0] != "a" {
		t.Fatalf("run of one cluster: %v, %v", s, err)
	}
	if s, err := file.For("one", w); err != nil || s == nil || s.Context != "" {
		t.Fatalf("context one of the same cluster: %v, %v; want the unnamed section", s, err)
	}
	if s, err := file.For("two", watchOf("https://two", "uid-2")); s != nil || err != nil {
		t.Fatalf("context two, another cluster: %v, %v; want none (start afresh)", s, err)
	}
	otherNamespace := w
	otherNamespace.Namespace = "other"
	if s, err := file.For("one-other", otherNamespace); s != nil || err != nil {
		t.Fatalf("another context of the same cluster, another namespace: %v, %v; want none (start afresh)", s, err)
	}
	// A version 1 file with a second section is not one this kubeevents wrote.
	if err := os.WriteFile(path, append(raw, raw...), 0o600); err != nil {
		t.Fatal(err)
	}
	var corrupt *CorruptError
	if _, err := Load(path); !errors.As(err, &corrupt) {
		t.Errorf("two version 1 sections: %v, want a CorruptError", err)
	}
}

// One section whose cluster is another now (the same context, another kube-system UID)
// is refused naming the file, the cluster and what differs; the others are fine. A run
// of one cluster given a file of several finds its own by the server and UID, and is
// refused if none is its.
func TestMismatchInOneSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt")
	one, two := watchOf("https://one", "uid-1"), watchOf("https://two", "uid-2")
	if err := (&Writer{Path: path, Sections: []*Section{
		{Context: "one", Watch: one, Tracker: trackerOf("a")},
		{Context: "two", Watch: two, Tracker: trackerOf("b")},
	}}).Write(); err != nil {
		t.Fatal(err)
	}
	file, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.For("one", one); err != nil {
		t.Errorf("one: %v", err)
	}
	_, err = file.For("two", watchOf("https://two", "uid-recreated"))
	var mismatch *MismatchError
	if !errors.As(err, &mismatch) || mismatch.Context != "two" {
		t.Fatalf("two with another UID: %v, want a MismatchError of cluster two", err)
	}
	for _, want := range []string{path, "cluster two", `"uid-2" in the checkpoint, "uid-recreated" now`, "--resume-reset"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message does not say %q: %s", want, err)
		}
	}
	if s, err := file.For("", two); err != nil || s == nil || s.Context != "two" {
		t.Errorf("a run of one cluster, two's: %v, %v; want section two", s, err)
	}
	if _, err := file.For("", watchOf("https://three", "uid-3")); !errors.As(err, &mismatch) ||
		!strings.Contains(err.Error(), "clusters one, two") {
		t.Errorf("a run of one cluster in none of them: %v, want a MismatchError naming the clusters", err)
	}
}

// Two sections of one context are not a file this kubeevents wrote.
func TestDuplicateSectionIsCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt")
	w := watchOf("https://one", "uid-1")
	if err := (&Writer{Path: path, Sections: []*Section{
		{Context: "one", Watch: w, Tracker: trackerOf("a")},
		{Context: "one", Watch: w, Tracker: trackerOf("b")},
	}}).Write(); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	var corrupt *CorruptError
	if !errors.As(err, &corrupt) || !strings.Contains(err.Error(), "a second section of cluster one") || !strings.Contains(err.Error(), path+":4") {
		t.Errorf("Load = %v, want a CorruptError at line 4 naming cluster one", err)
	}
}

// A section's episodes go into its header at each write while they change (a change
// alone makes a periodic write), are read back with it, and a kept section keeps its
// own.
func TestSectionEpisodes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt")
	episodes, changed := json.RawMessage(`[{"id":"e1"}]`), true
	one, two := watchOf("https://one", "uid-1"), watchOf("https://two", "uid-2")
	if err := (&Writer{Path: filepath.Join(dir, "old"), Sections: []*Section{{Context: "two", Watch: two, Tracker: trackerOf("b"),
		Episodes: func() (json.RawMessage, bool) { return json.RawMessage(`[{"id":"e2"}]`), true }}}}).Write(); err != nil {
		t.Fatal(err)
	}
	kept := loadOne(t, filepath.Join(dir, "old"))
	if string(kept.Episodes) != `[{"id":"e2"}]` {
		t.Fatalf("episodes read back: %s", kept.Episodes)
	}
	w := &Writer{Path: path, Sections: []*Section{
		{Context: "one", Watch: one, Tracker: trackerOf("a"), Episodes: func() (json.RawMessage, bool) {
			c := changed
			changed = false
			return episodes, c
		}},
		{Context: "two", Kept: kept},
	}}
	if _, c := w.snapshot(); !c {
		t.Error("changed episodes alone do not make a write")
	}
	changed = true
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	file, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := file.For("one", one)
	b, _ := file.For("two", two)
	if string(a.Episodes) != `[{"id":"e1"}]` || string(b.Episodes) != `[{"id":"e2"}]` {
		t.Errorf("episodes %s and %s", a.Episodes, b.Episodes)
	}
	if _, c := w.snapshot(); c {
		t.Error("a write though nothing changed")
	}
}
