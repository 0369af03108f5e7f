package clusterstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/event"
)

// randomText is n bytes of random printable text: it compresses to about 85%.
func randomText(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(' ' + r.IntN(95))
	}
	return string(b)
}

// bigPod is a pod whose annotation holds 1 MB of random printable text: its line alone
// is more than a shard holds, gzipped (about 846 KiB).
func bigPod(name, rv string) *corev1.Pod {
	p := testPod(name, rv)
	p.Annotations = map[string]string{"blob": randomText(1 << 20)}
	p.Labels = map[string]string{"app": "big"}
	return p
}

// checkNoOrphans checks that the store's objects are the index and the shards of the
// slots it names, none else.
func checkNoOrphans(t *testing.T, objs *memObjects) {
	t.Helper()
	s := newStore(objs, Options{})
	idx, _, err := s.getIndex(context.Background())
	if err != nil || idx == nil {
		t.Fatalf("index: %v", err)
	}
	var orphans []string
	for _, name := range objs.names() {
		if name == "ckpt" {
			continue
		}
		slot, err := strconv.Atoi(strings.Split(strings.TrimPrefix(name, "ckpt-"), "-")[0])
		if err != nil || slot >= idx.Slots {
			orphans = append(orphans, name)
		}
	}
	if len(orphans) > 0 {
		t.Errorf("%d objects beyond the index's %d slots: %v", len(orphans), idx.Slots, orphans)
	}
}

// An object too big for a shard by itself (1 MB of random text: 846 KiB gzipped, the
// new-user round's ConfigMap) does not stop the checkpoint: it is kept by its metadata
// only, said once, and the others as they are; a resumed run sees its resourceVersion.
// Nothing is written beyond the slots the index names.
func TestObjectTooBigForAShard(t *testing.T) {
	objs := newMemObjects()
	tr := newTracked(podsNamed(30, "1")...)
	tr.settle(event.Added, bigPod("big", "7"))
	var warned []string
	s := newStore(objs, Options{Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	for range 2 {
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
		tr.settle(event.Modified, testPod("p-0001", "2")) // the next write has a change
	}
	if s.cur.Slots > 2 {
		t.Errorf("%d slots for 31 objects", s.cur.Slots)
	}
	for _, sh := range s.cur.Shards {
		if sh.Bytes > MaxShardBytes {
			t.Errorf("shard %s holds %d bytes", sh.Name, sh.Bytes)
		}
	}
	checkNoOrphans(t, objs)
	f := load(t, newStore(objs, Options{}))
	lines := f.Sections[0].Objects["pods.v1"]
	if len(lines) != 31 {
		t.Fatalf("read back %d objects, want 31", len(lines))
	}
	var stub *corev1.Pod
	for _, l := range lines {
		var p corev1.Pod
		if err := json.Unmarshal(l, &p); err != nil {
			t.Fatal(err)
		}
		if p.Name == "big" {
			stub = &p
		}
	}
	if stub == nil || stub.ResourceVersion != "7" || stub.UID != "uid-big" || stub.Labels["app"] != "big" || stub.Annotations["blob"] != "" ||
		!strings.HasPrefix(stub.Annotations[checkpoint.StubAnnotation], "metadata only: the object took 8") || len(stub.Spec.Containers) != 0 {
		t.Errorf("the big object read back as %+v", stub)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "--resume secret:kubeevents/ckpt: pods.v1 ns/big takes 8") ||
		!strings.Contains(warned[0], "KiB gzipped, more than a shard holds (764 KiB): the checkpoint keeps its metadata only") {
		t.Errorf("said %q; want one line naming the object", warned)
	}
}

// A write that dies halfway while the checkpoint grows into more slots, or the first
// write of a checkpoint, leaves no shard that the next write does not delete: the index
// says first which slots may have shards. A reader meanwhile reads the checkpoint before.
func TestNoOrphansAfterAFailedWrite(t *testing.T) {
	objs := newMemObjects()
	tr := newTracked(podsNamed(400, "1")...)
	s := newStore(objs, Options{SlotBytes: 4 << 10})
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	failAfter := func(n int) {
		puts := 0
		objs.before = func(verb, name string) error {
			if (verb == "create" || verb == "update") && name != "ckpt" {
				if puts++; puts > n {
					return errors.New("killed")
				}
			}
			return nil
		}
	}
	// The first write of a checkpoint dies after 10 of its shards.
	failAfter(10)
	if err := w.Write(); err == nil {
		t.Fatal("the write went through")
	}
	objs.before = nil
	if f, err := newStore(objs, Options{}).Load(context.Background()); err != nil || f == nil || len(f.Sections[0].Objects["pods.v1"]) != 0 {
		t.Fatalf("after a first write that died: %+v, %v; want a checkpoint of nothing", f, err)
	}
	// Another process writes it whole, with fewer objects: fewer slots.
	small := newTracked(podsNamed(20, "1")...)
	s2 := newStore(objs, Options{SlotBytes: 4 << 10})
	load(t, s2)
	w2 := &checkpoint.Writer{Store: s2, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: small.tr}}}
	if err := w2.Write(); err != nil {
		t.Fatal(err)
	}
	checkNoOrphans(t, objs)
	// It grows (400 objects) and dies halfway; the next write, of 20 again, deletes
	// what the one that died wrote.
	for _, o := range podsNamed(400, "2") {
		small.settle(event.Added, o)
	}
	failAfter(30)
	for range 2 { // the first learns the size, the second spreads it and dies
		_ = w2.Write()
	}
	objs.before = nil
	if len(objs.names()) <= 2*s2.cur.Slots+1 {
		t.Fatalf("%d objects: the write did not get as far as new slots", len(objs.names()))
	}
	for _, o := range podsNamed(400, "2")[20:] {
		small.settle(event.Deleted, o)
	}
	for range 3 {
		if err := w2.Write(); err != nil {
			t.Fatal(err)
		}
	}
	checkNoOrphans(t, objs)
}

// A write gives up once its context ends, or its time limit passes: it says how far it
// got, and the checkpoint in the cluster is the one before, whole.
func TestSaveGivesUpInTime(t *testing.T) {
	objs := newMemObjects()
	tr := newTracked(podsNamed(200, "1")...)
	s := newStore(objs, Options{SlotBytes: 4 << 10})
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	// The limit applies from here: the first write is given the default's time, which a
	// race-detector build on a loaded machine may need.
	s.o.Timeout = 300 * time.Millisecond
	for _, o := range podsNamed(200, "2") {
		tr.settle(event.Modified, o)
	}
	// An API server that takes 100 ms a shard.
	objs.before = func(verb, name string) error {
		if verb == "update" || verb == "create" {
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	}
	start := time.Now()
	err := w.Write()
	// Well within a few times the limit: the request in flight ends it (100 ms here).
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the write took %s, its limit is 300ms", took)
	}
	if err == nil || !regexp.MustCompile(`^--resume secret:kubeevents/ckpt: the checkpoint cannot be written: not written within 300ms \(\d+ of \d+ shards written, not the index\): the API server answers too slowly; the checkpoint in the cluster is the one before$`).MatchString(err.Error()) {
		t.Errorf("error %v", err)
	}
	s.o.Timeout = time.Minute // only the context ends this one
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	if err := w.WriteContext(ctx); err == nil || !strings.Contains(err.Error(), "the checkpoint cannot be written: stopped before it was written (") {
		t.Errorf("cancelled: %v", err)
	}
	objs.before = nil
	if got := string(load(t, newStore(objs, Options{})).Sections[0].Objects["pods.v1"][0]); !strings.Contains(got, `"resourceVersion":"1"`) {
		t.Errorf("read back %s", got)
	}
}

// With a Role that names the shards of a few slots only (the chart's checkpoint.maxSlots),
// the checkpoint does not grow into shards it could create but not read back: it keeps
// the slots it may use, said once; a shard that would then be too big fails the write,
// saying what to raise.
func TestSlotsStayWithinTheRights(t *testing.T) {
	objs := newMemObjects()
	objs.before = func(verb, name string) error {
		if !strings.HasPrefix(verb, "allowed ") {
			return nil
		}
		slot, _ := strconv.Atoi(strings.Split(strings.TrimPrefix(name, "ckpt-"), "-")[0])
		if slot >= 4 {
			return errors.New("denied")
		}
		return nil
	}
	tr := newTracked(podsNamed(400, "1")...)
	var warned []string
	// A long time limit: compressing megabytes of random text under the race detector on
	// a loaded machine takes more than the default's 30 s.
	s := newStore(objs, Options{SlotBytes: 4 << 10, Timeout: 10 * time.Minute, Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	for range 3 {
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
		tr.settle(event.Modified, testPod("p-0001", "2"))
	}
	if s.cur.Slots != 4 || slices.ContainsFunc(objs.names(), func(n string) bool { return strings.HasPrefix(n, "ckpt-4-") }) {
		t.Errorf("%d slots, objects %v; want 4 slots", s.cur.Slots, objs.names())
	}
	want := "--resume secret:kubeevents/ckpt: the checkpoint needs "
	if len(warned) != 1 || !strings.HasPrefix(warned[0], want) ||
		!strings.Contains(warned[0], " slots, but this user may not get, update, delete secret kubeevents/ckpt-") ||
		!strings.HasSuffix(warned[0], "(a Role that names the shards of fewer slots: raise the chart's checkpoint.maxSlots); keeping 4, whose shards grow larger") {
		t.Errorf("said %q", warned)
	}
	// Objects that do not fit in 4 shards (8 of about 510 KiB gzipped): the write fails,
	// saying why.
	for i := range 8 { // two of them in one slot at least
		tr.settle(event.Added, bigPod(fmt.Sprintf("big-%d", i), "1"))
		p := testPod(fmt.Sprintf("half-%d", i), "1")
		p.Annotations = map[string]string{"blob": randomText(600 << 10)}
		tr.settle(event.Added, p)
	}
	err := w.Write()
	if err == nil || !strings.Contains(err.Error(), "a shard of 4 slots would hold more than 768 KiB, and the checkpoint needs 8 slots, but this user may not") {
		t.Errorf("error %v", err)
	}
}
