package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
)

// memStore is a Store that keeps the checkpoint's bytes in memory, as another store
// (package clusterstore) would keep them elsewhere.
type memStore struct {
	data  []byte
	saves int
	snaps []*Snapshot
}

func (m *memStore) Name() string { return "mem:ckpt" }
func (m *memStore) Load(context.Context) (*File, error) {
	if m.data == nil {
		return nil, nil
	}
	return Read(m.Name(), bytes.NewReader(m.data))
}
func (m *memStore) Save(_ context.Context, snap *Snapshot) error {
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, snap); err != nil {
		return err
	}
	m.data, m.saves = buf.Bytes(), m.saves+1
	m.snaps = append(m.snaps, snap)
	return nil
}

// The Writer hands its sections to its Store: the snapshot's keys are the objects' cache
// keys, a kept section's objects have none, and what the store keeps reads back as the
// file would, named by the store.
func TestWriterSavesToItsStore(t *testing.T) {
	store := &memStore{}
	w := &Writer{Store: store, Sections: []*Section{
		{Context: "a", Watch: watchOf("https://a", "uid-a"), Tracker: trackerOf("x", "y")},
		{Context: "b", Kept: &Saved{Context: "b", Watch: watchOf("https://b", "uid-b"),
			Objects: map[string][][]byte{"pods.v1": {[]byte(`{"metadata":{"name":"k"}}`)}}}},
	}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	snap := store.snaps[0]
	var keys []string
	for _, o := range snap.Sections[0].Objects {
		keys = append(keys, o.Key)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"ns/x", "ns/y"}) {
		t.Errorf("keys %v, want [ns/x ns/y]", keys)
	}
	if k := snap.Sections[1].Objects[0].Key; k != "" {
		t.Errorf("a kept object's key is %q, want none", k)
	}
	file, err := store.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(file.Sections) != 2 || file.Path != "mem:ckpt" || file.Sections[0].Path != "mem:ckpt" {
		t.Fatalf("read back %+v", file)
	}
	if got := sortedNames(t, file.Sections[0]); !slices.Equal(got, []string{"x", "y"}) {
		t.Errorf("section a: %v", got)
	}
	if got := podNames(t, file.Sections[1]); !slices.Equal(got, []string{"k"}) {
		t.Errorf("section b (kept): %v", got)
	}
}

// A store's write error names the store, not a file.
func TestWriteErrorNamesTheStore(t *testing.T) {
	w := &Writer{Store: failingStore{}, Sections: oneSection(testWatch(), NewTracker(1))}
	err := w.Write()
	var we *WriteError
	if !errors.As(err, &we) || we.Path != "secret:ns/ckpt" {
		t.Fatalf("error %v, want a WriteError naming secret:ns/ckpt", err)
	}
}

type failingStore struct{}

func (failingStore) Name() string                          { return "secret:ns/ckpt" }
func (failingStore) Load(context.Context) (*File, error)   { return nil, nil }
func (failingStore) Save(context.Context, *Snapshot) error { return errors.New("forbidden") }

// FileStore writes byte for byte what WriteSnapshot writes, and reads it back.
func TestFileStoreIsWriteSnapshot(t *testing.T) {
	tr := NewTracker(1)
	e := ev(event.Added, pod("a", "1"), 1)
	tr.Made(e)
	e.Written()
	path := filepath.Join(t.TempDir(), "ckpt")
	mem := &memStore{}
	for _, store := range []Store{FileStore{Path: path}, mem} {
		w := &Writer{Store: store, Sections: oneSection(testWatch(), tr)}
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
	}
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The header's time differs between the two writes; the rest is the same.
	if a, b := bytes.SplitN(onDisk, []byte("\n"), 2)[1], bytes.SplitN(mem.data, []byte("\n"), 2)[1]; !bytes.Equal(a, b) {
		t.Errorf("file:\n%s\nWriteSnapshot:\n%s", a, b)
	}
	if got := podNames(t, loadOne(t, path)); !slices.Equal(got, []string{"a"}) {
		t.Errorf("read back %v", got)
	}
}
