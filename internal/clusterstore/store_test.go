package clusterstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/event"
)

var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

func testPod(name, rv string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27 <&>"}}},
	}
}

// tracked is a checkpoint tracker to which these objects were delivered.
type tracked struct {
	tr  *checkpoint.Tracker
	seq uint64
}

func newTracked(objs ...runtime.Object) *tracked {
	t := &tracked{tr: checkpoint.NewTracker(1)}
	for _, o := range objs {
		t.settle(event.Added, o)
	}
	return t
}

func (t *tracked) settle(typ event.EventType, obj runtime.Object) {
	t.seq++
	ev := &event.Event{Type: typ, Resource: podsGVR, Object: obj, Seq: t.seq}
	t.tr.Made(ev)
	ev.Written()
}

func podsNamed(n int, rv string) []runtime.Object {
	out := make([]runtime.Object, n)
	for i := range out {
		out[i] = testPod(fmt.Sprintf("p-%04d", i), rv)
	}
	return out
}

func testWatch(server string) checkpoint.Watch {
	return checkpoint.Watch{Server: server, Cluster: "uid-" + server, Resources: []string{"pods.v1"}, Namespace: "ns"}
}

func newStore(objs *memObjects, opts Options) *Store {
	if opts.Ref.Name == "" {
		opts.Ref = Ref{Kind: Secrets, Namespace: "kubeevents", Name: "ckpt"}
	}
	s := New(opts)
	s.objs = objs
	return s
}

// fileBytes is what the file store would hold for the same sections.
func fileBytes(t *testing.T, sections []*checkpoint.Section) []byte {
	t.Helper()
	mem := &bufferStore{}
	w := &checkpoint.Writer{Store: mem, Sections: sections}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	return mem.buf.Bytes()
}

type bufferStore struct{ buf bytes.Buffer }

func (b *bufferStore) Name() string                                   { return "buffer" }
func (b *bufferStore) Load(context.Context) (*checkpoint.File, error) { return nil, nil }
func (b *bufferStore) Save(_ context.Context, snap *checkpoint.Snapshot) error {
	b.buf.Reset()
	return checkpoint.WriteSnapshot(&b.buf, snap)
}

// objectsOf is every section's objects as read back: context -> resource -> sorted JSON.
func objectsOf(t *testing.T, f *checkpoint.File) map[string]map[string][]string {
	t.Helper()
	out := map[string]map[string][]string{}
	for _, s := range f.Sections {
		out[s.Context] = map[string][]string{}
		for res, objs := range s.Objects {
			var lines []string
			for _, o := range objs {
				lines = append(lines, string(o))
			}
			slices.Sort(lines)
			out[s.Context][res] = lines
		}
	}
	return out
}

func load(t *testing.T, s *Store) *checkpoint.File {
	t.Helper()
	f, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// What a store keeps reads back as the file of the same sections reads: every section,
// its header, every object byte for byte, a kept section as it was.
func TestSaveThenLoadIsTheFile(t *testing.T) {
	objs := newMemObjects()
	a := newTracked(podsNamed(300, "1")...)
	kept := &checkpoint.Saved{Context: "c", Watch: testWatch("https://c"), Objects: map[string][][]byte{
		"pods.v1": {[]byte(`{"metadata":{"name":"k1"}}`), []byte(`{"metadata":{"name":"k2"}}`)}}}
	sections := []*checkpoint.Section{
		{Context: "a", Watch: testWatch("https://a"), Tracker: a.tr, RedactionKey: []byte("key")},
		{Context: "b", Watch: testWatch("https://b"), Tracker: newTracked().tr}, // no objects
		{Context: "c", Kept: kept},
	}
	s := newStore(objs, Options{SlotBytes: 4 << 10, Writer: "test-1"})
	w := &checkpoint.Writer{Store: s, Sections: sections}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	want, err := checkpoint.Read("buffer", bytes.NewReader(fileBytes(t, sections)))
	if err != nil {
		t.Fatal(err)
	}
	got := load(t, newStore(objs, Options{}))
	if g, w := objectsOf(t, got), objectsOf(t, want); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("read back:\n%v\nwant:\n%v", g, w)
	}
	if len(got.Sections) != 3 || got.Path != "secret:kubeevents/ckpt" {
		t.Fatalf("sections %d, path %q", len(got.Sections), got.Path)
	}
	if sec, err := got.For("a", testWatch("https://a")); err != nil || sec == nil || string(sec.RedactionKey) != "key" {
		t.Errorf("section a: %+v, %v", sec, err)
	}
	if s.cur.Slots < 8 {
		t.Errorf("%d slots for 300 objects at 4 KiB a slot; want them spread", s.cur.Slots)
	}
	for _, name := range objs.names() {
		o, _ := objs.get(context.Background(), name)
		if o.labels[ManagedByLabel] != ManagedBy || o.labels[CheckpointLabel] != "ckpt" {
			t.Errorf("%s: labels %v", name, o.labels)
		}
	}
}

// A write after one object changed replaces that object's shard and the index, nothing
// else; a write with nothing changed (a Writer would not make one) replaces the index.
func TestSaveWritesOnlyChangedShards(t *testing.T) {
	objs := newMemObjects()
	tr := newTracked(podsNamed(500, "1")...)
	s := newStore(objs, Options{SlotBytes: 8 << 10})
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	first := s.lastShardsPut
	if first < 8 {
		t.Fatalf("first write put %d shards, want the checkpoint spread over many", first)
	}
	tr.settle(event.Modified, testPod("p-0042", "2"))
	before := objs.writes
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	if s.lastShardsPut != 1 || s.lastEncoded != 1 || objs.writes-before != 2 {
		t.Errorf("after one change: %d slots encoded, %d shards put, %d writes; want 1, 1 and the index", s.lastEncoded, s.lastShardsPut, objs.writes-before)
	}
	// Another process that read the checkpoint, with the same objects: nothing to
	// encode, nothing but the index to write.
	again := newStore(objs, Options{SlotBytes: 8 << 10})
	load(t, again)
	before = objs.writes
	if err := (&checkpoint.Writer{Store: again, Sections: w.Sections}).Write(); err != nil {
		t.Fatal(err)
	}
	if again.lastEncoded != 0 || objs.writes-before != 1 {
		t.Errorf("after a Load, the same objects: %d slots encoded, %d writes; want none and the index", again.lastEncoded, objs.writes-before)
	}
	tr.settle(event.Deleted, testPod("p-0043", "2"))
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	got := load(t, newStore(objs, Options{}))
	lines := got.Sections[0].Objects["pods.v1"]
	if len(lines) != 499 {
		t.Fatalf("%d objects read back, want 499", len(lines))
	}
	joined := string(bytes.Join(lines, nil))
	if !strings.Contains(joined, `"name":"p-0042","namespace":"ns","uid":"uid-p-0042","resourceVersion":"2"`) || strings.Contains(joined, `"p-0043"`) {
		t.Errorf("the change and the deletion are not what was read back")
	}
}

// A writer that dies halfway (after some shards, before the index) leaves the
// checkpoint it replaced, whole: the index names shards no write touched.
func TestCrashBeforeTheIndexLeavesTheOldCheckpoint(t *testing.T) {
	objs := newMemObjects()
	tr := newTracked(podsNamed(200, "1")...)
	s := newStore(objs, Options{SlotBytes: 4 << 10})
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	before := objectsOf(t, load(t, newStore(objs, Options{})))
	for _, o := range podsNamed(200, "2") {
		tr.settle(event.Modified, o)
	}
	puts := 0
	objs.before = func(verb, name string) error {
		if verb == "update" || verb == "create" {
			if name == "ckpt" {
				return errors.New("killed")
			}
			if puts++; puts > 3 {
				return errors.New("killed")
			}
		}
		return nil
	}
	if err := w.Write(); err == nil {
		t.Fatal("the write went through")
	}
	objs.before = nil
	after := objectsOf(t, load(t, newStore(objs, Options{})))
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("a write that died halfway changed what a reader gets")
	}
	// The next write (another process's, which read the old one) goes through.
	s2 := newStore(objs, Options{SlotBytes: 4 << 10})
	load(t, s2)
	w2 := &checkpoint.Writer{Store: s2, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	if err := w2.Write(); err != nil {
		t.Fatal(err)
	}
	if got := string(bytes.Join(load(t, newStore(objs, Options{})).Sections[0].Objects["pods.v1"], nil)); strings.Contains(got, `"resourceVersion":"1"`) {
		t.Error("the next write left old states")
	}
}

// A reader meets a shard that does not match the index (a writer replacing it at that
// moment, in a split second of two writers): it reads the index again, and gets a whole
// checkpoint.
func TestLoadRereadsWhenAShardChangesUnderIt(t *testing.T) {
	objs := newMemObjects()
	writer := newStore(objs, Options{SlotBytes: 4 << 10})
	w := &checkpoint.Writer{Store: writer, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: newTracked(podsNamed(100, "1")...).tr}}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	named := writer.cur.Shards[0].Name
	whole := clone(objs.objs[named])
	gets := 0
	objs.before = func(verb, name string) error {
		if verb != "get" || name != named {
			return nil
		}
		gets++
		objs.mu.Lock()
		defer objs.mu.Unlock()
		if gets == 1 {
			objs.objs[named].data = map[string][]byte{shardKey: whole.data[shardKey][:100]} // half written
		} else {
			objs.objs[named] = whole
		}
		return nil
	}
	f := load(t, newStore(objs, Options{}))
	if gets != 2 {
		t.Fatalf("the shard was read %d times, want twice", gets)
	}
	if n := len(f.Sections[0].Objects["pods.v1"]); n != 100 {
		t.Errorf("read back %d objects, want 100", n)
	}
}

// A shard that never matches its index is a corrupt checkpoint, said in one line that
// says how to start afresh.
func TestShardThatNeverMatchesIsCorrupt(t *testing.T) {
	objs := newMemObjects()
	s := newStore(objs, Options{})
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: newTracked(podsNamed(3, "1")...).tr}}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	sh := objs.objs[s.cur.Shards[0].Name]
	sh.data = map[string][]byte{shardKey: []byte("garbage")}
	_, err := newStore(objs, Options{Timeout: 5e9}).Load(context.Background())
	var c *checkpoint.CorruptError
	if !errors.As(err, &c) {
		t.Fatalf("error %v, want a CorruptError", err)
	}
	want := "--resume secret:kubeevents/ckpt: not a usable checkpoint: its shards do not match its index (read 4 times); to start afresh, add --resume-reset (or delete secret kubeevents/ckpt)"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
}

// An index that is not JSON, or not a checkpoint's, is refused at Load; --resume-reset
// (a Save without a Load) replaces it.
func TestCorruptIndex(t *testing.T) {
	objs := newMemObjects()
	objs.put(&object{name: "ckpt", ours: true, data: map[string][]byte{indexKey: []byte("{not json")}})
	_, err := newStore(objs, Options{}).Load(context.Background())
	var c *checkpoint.CorruptError
	if !errors.As(err, &c) || !strings.Contains(err.Error(), "its index cannot be read") {
		t.Fatalf("error %v, want a CorruptError about the index", err)
	}
	reset := newStore(objs, Options{})
	w := &checkpoint.Writer{Store: reset, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: newTracked(podsNamed(3, "1")...).tr}}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	if f := load(t, newStore(objs, Options{})); len(f.Sections[0].Objects["pods.v1"]) != 3 {
		t.Errorf("after the reset: %+v", f.Sections[0])
	}
}

// A Secret of that name that kubeevents did not make is never read or replaced, not
// even with --resume-reset; nor is one a shard would replace.
func TestNotOurs(t *testing.T) {
	objs := newMemObjects()
	objs.put(&object{name: "ckpt", data: map[string][]byte{"password": []byte("x")}})
	var notOurs *NotOursError
	if _, err := newStore(objs, Options{}).Load(context.Background()); !errors.As(err, &notOurs) {
		t.Fatalf("Load: %v, want NotOursError", err)
	}
	w := &checkpoint.Writer{Store: newStore(objs, Options{}), Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: newTracked(podsNamed(1, "1")...).tr}}}
	if err := w.Write(); !errors.As(err, &notOurs) {
		t.Fatalf("Save: %v, want NotOursError", err)
	}
	if string(objs.objs["ckpt"].data["password"]) != "x" {
		t.Fatal("replaced the user's Secret")
	}
	want := "--resume secret:kubeevents/ckpt: secret kubeevents/ckpt exists and is not a kubeevents checkpoint (it was not made by kubeevents); give --resume another name"
	if notOurs.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", notOurs, want)
	}
	objs = newMemObjects()
	objs.put(&object{name: "ckpt-0-a", data: map[string][]byte{"password": []byte("x")}})
	w = &checkpoint.Writer{Store: newStore(objs, Options{}), Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: newTracked(podsNamed(1, "1")...).tr}}}
	if err := w.Write(); !errors.As(err, &notOurs) || !strings.Contains(err.Error(), "ckpt-0-a") {
		t.Fatalf("Save over someone's ckpt-0-a: %v, want NotOursError", err)
	}
}

// An index deleted by hand while its shards remain is refused, not taken for no
// checkpoint: starting afresh is the user's call. Deleted while a run writes it, it is
// written again, said once.
func TestDeletedIndex(t *testing.T) {
	objs := newMemObjects()
	var warnings []string
	s := newStore(objs, Options{Warn: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }})
	tr := newTracked(podsNamed(3, "1")...)
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	_ = objs.delete(context.Background(), "ckpt")
	_, err := newStore(objs, Options{}).Load(context.Background())
	var c *checkpoint.CorruptError
	if !errors.As(err, &c) || !strings.Contains(err.Error(), "is gone but its shards remain") {
		t.Fatalf("Load: %v, want a CorruptError about the missing index", err)
	}
	tr.settle(event.Modified, testPod("p-0000", "2"))
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "was deleted while this kubeevents ran; writing it again") {
		t.Errorf("warnings %q", warnings)
	}
	if f := load(t, newStore(objs, Options{})); len(f.Sections[0].Objects["pods.v1"]) != 3 {
		t.Errorf("after writing it again: %+v", f.Sections[0])
	}
}

// Two writers: the second to write finds the index changed, says so once, and replaces
// it; a reader gets a whole checkpoint, the last writer's.
func TestTwoWriters(t *testing.T) {
	objs := newMemObjects()
	var warnings []string
	warn := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	one := newStore(objs, Options{SlotBytes: 4 << 10, Writer: "pod-1", Warn: warn})
	two := newStore(objs, Options{SlotBytes: 4 << 10, Writer: "pod-2", Warn: warn})
	load(t, one)
	load(t, two)
	w1 := &checkpoint.Writer{Store: one, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: newTracked(podsNamed(100, "1")...).tr}}}
	w2 := &checkpoint.Writer{Store: two, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: newTracked(podsNamed(100, "2")...).tr}}}
	for _, w := range []*checkpoint.Writer{w1, w2, w1, w2} {
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
	}
	got := string(bytes.Join(load(t, newStore(objs, Options{})).Sections[0].Objects["pods.v1"], nil))
	if strings.Contains(got, `"resourceVersion":"1"`) || strings.Count(got, `"resourceVersion":"2"`) != 100 {
		t.Error("the last writer's checkpoint is not what a reader gets")
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "was written by pod-1 since this kubeevents read it") ||
		!strings.Contains(warnings[1], "was written by pod-2 since") {
		t.Errorf("warnings %q, want one per writer, naming the other", warnings)
	}
}

// A fenced store (its lease lost) writes nothing.
func TestFenceStopsWrites(t *testing.T) {
	objs := newMemObjects()
	lost := errors.New("the lease kubeevents/kubeevents was lost")
	s := newStore(objs, Options{Fence: func() error { return lost }})
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: newTracked(podsNamed(3, "1")...).tr}}}
	err := w.Write()
	if !errors.Is(err, lost) || objs.writes != 0 {
		t.Fatalf("error %v, %d writes; want the fence's error and none", err, objs.writes)
	}
}

// The slots follow the checkpoint's size: it grows, the slots double; it shrinks, the
// shards of slots no longer used are deleted.
func TestSlotsFollowTheSize(t *testing.T) {
	objs := newMemObjects()
	tr := newTracked(podsNamed(20, "1")...)
	s := newStore(objs, Options{SlotBytes: 4 << 10})
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	small := s.cur.Slots
	for _, o := range podsNamed(1000, "1")[20:] {
		tr.settle(event.Added, o)
	}
	for range 2 { // the first write learns the size, the second spreads it
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
	}
	big := s.cur.Slots
	if big <= small*8 {
		t.Fatalf("slots %d for 20 objects, %d for 1000", small, big)
	}
	for _, o := range podsNamed(1000, "1")[5:] {
		tr.settle(event.Deleted, o)
	}
	for range 3 {
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
	}
	if s.cur.Slots > small {
		t.Fatalf("%d slots after shrinking to 5 objects", s.cur.Slots)
	}
	if n := len(objs.names()); n > 2*s.cur.Slots+1 {
		t.Errorf("%d objects left for %d slots: %v", n, s.cur.Slots, objs.names())
	}
	if f := load(t, newStore(objs, Options{})); len(f.Sections[0].Objects["pods.v1"]) != 5 {
		t.Errorf("read back %d objects, want 5", len(f.Sections[0].Objects["pods.v1"]))
	}
}

// The Secret and ConfigMap adapters on client-go's clientset: the data, the type, the
// labels, and the API server's answers they pass on.
func TestSecretsAndConfigMaps(t *testing.T) {
	for _, kind := range []Kind{Secrets, ConfigMaps} {
		t.Run(string(kind), func(t *testing.T) {
			client := fake.NewClientset()
			s := New(Options{Client: client, Ref: Ref{Kind: kind, Namespace: "kubeevents", Name: "ckpt"}})
			w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: newTracked(podsNamed(3, "1")...).tr}}}
			if err := w.Write(); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if kind == Secrets {
				sec, err := client.CoreV1().Secrets("kubeevents").Get(ctx, "ckpt", metav1.GetOptions{})
				if err != nil || sec.Type != SecretType || len(sec.Data[indexKey]) == 0 {
					t.Fatalf("index secret: %+v, %v", sec, err)
				}
			} else {
				cm, err := client.CoreV1().ConfigMaps("kubeevents").Get(ctx, "ckpt", metav1.GetOptions{})
				if err != nil || cm.Labels[ManagedByLabel] != ManagedBy || len(cm.BinaryData[indexKey]) == 0 {
					t.Fatalf("index configmap: %+v, %v", cm, err)
				}
				var idx index
				if err := json.Unmarshal(cm.BinaryData[indexKey], &idx); err != nil || idx.Format != indexFormat {
					t.Fatalf("index: %v", err)
				}
			}
			f := load(t, New(Options{Client: client, Ref: s.o.Ref}))
			if len(f.Sections[0].Objects["pods.v1"]) != 3 {
				t.Errorf("read back %+v", f.Sections[0])
			}
		})
	}
}

// A missing right is one line naming the object, the verb and what to grant.
func TestForbidden(t *testing.T) {
	objs := newMemObjects()
	objs.before = func(verb, name string) error {
		return apierrors.NewForbidden(secretsGR, name, errors.New(`User "system:serviceaccount:kubeevents:kubeevents" cannot get resource "secrets"`))
	}
	_, err := newStore(objs, Options{}).Load(context.Background())
	want := "--resume secret:kubeevents/ckpt: not allowed to get secret kubeevents/ckpt: Forbidden (grant get, create, update and delete on secrets in namespace kubeevents, as the chart's Role does)"
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
		ok            bool
	}{
		{in: "events.ckpt"},
		{in: "./secret:x"},
		{in: "secret/x"},
		{in: "secret:ckpt", want: "secret:ckpt", ok: true},
		{in: "secret:kubeevents/ckpt", want: "secret:kubeevents/ckpt", ok: true},
		{in: "configmap:ns/ckpt.v1", want: "configmap:ns/ckpt.v1", ok: true},
		{in: "secret:", ok: true, err: "--resume secret:: no name; give secret:NAME or secret:NAMESPACE/NAME"},
		{in: "secret:Bad_NS/x", ok: true, err: `--resume secret:Bad_NS/x: namespace "Bad_NS": a lowercase RFC 1123 label must consist of`},
		{in: "configmap:ns/Bad_Name", ok: true, err: `--resume configmap:ns/Bad_Name: name "Bad_Name": a lowercase RFC 1123 subdomain`},
		{in: "secret:" + strings.Repeat("a", 241), ok: true, err: "the name is 241 characters long, at most 240"},
	} {
		ref, ok, err := ParseRef(tc.in)
		if ok != tc.ok || IsRef(tc.in) != tc.ok {
			t.Errorf("%q: ok %v, want %v", tc.in, ok, tc.ok)
		}
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.ok && ref.String() != tc.want:
			t.Errorf("%q: %q", tc.in, ref)
		}
	}
}
