package ui

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/event"
)

var web1 = objectKey{kind: "Pod", namespace: "shop", name: "web-1"}

// A core Event (--with-events) goes into the history of the object it is about; SYNC
// events change the row but add nothing to the history.
func TestStoreEventsAndSyncs(t *testing.T) {
	s := newStore(10, strikeFor)
	pod := testPod("web-1", nil, corev1.PodRunning)
	s.apply(&event.Event{Type: event.Added, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod, InInitialList: true}, "ADDED web-1\n")
	s.apply(&event.Event{Type: event.Sync, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod}, "")
	core := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web-1.1", Namespace: "shop"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web-1"}, Reason: "Pulled"}
	s.apply(&event.Event{Type: event.Added, Time: t0, Kind: "Event", Object: core, Related: true}, "EVENT web-1 Pulled\n")
	stray := core.DeepCopy()
	stray.InvolvedObject.Name = "not-watched"
	s.apply(&event.Event{Type: event.Added, Time: t0, Kind: "Event", Object: stray, Related: true}, "EVENT not-watched\n")

	entries, seen, ok := s.history(web1)
	if !ok || seen != 2 || len(entries) != 2 || entries[0].text != "ADDED web-1\n" || entries[1].text != "EVENT web-1 Pulled\n" {
		t.Errorf("history %+v (seen %d, ok %v): want the ADDED and the Event", entries, seen, ok)
	}
	if len(s.objects) != 1 || s.eventCount() != 4 {
		t.Errorf("%d objects, %d events; want 1 and 4", len(s.objects), s.eventCount())
	}
}

// A history is a ring of the last historyCap changes.
func TestStoreHistoryRing(t *testing.T) {
	s := newStore(3, strikeFor)
	for i := range 7 {
		s.apply(&event.Event{Type: event.Modified, Time: t0, Resource: podsGVR, Kind: "Pod", Object: testPod("web-1", nil, corev1.PodRunning)}, fmt.Sprint(i))
	}
	entries, seen, _ := s.history(web1)
	var texts []string
	for _, e := range entries {
		texts = append(texts, e.text)
	}
	if seen != 7 || strings.Join(texts, ",") != "4,5,6" {
		t.Errorf("history %v of %d: want 4,5,6 of 7", texts, seen)
	}
}

// An object made again under the name of one just deleted (a StatefulSet's pod) is a
// new row with a new history, and is not removed with the old one.
func TestStoreMadeAgain(t *testing.T) {
	s := newStore(10, strikeFor)
	pod := testPod("web-1", nil, corev1.PodRunning)
	s.apply(&event.Event{Type: event.Deleted, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod}, "DELETED\n")
	s.apply(&event.Event{Type: event.Added, Time: t0.Add(time.Second), Resource: podsGVR, Kind: "Pod", Object: pod}, "ADDED\n")
	s.pull(t0.Add(time.Hour), func(objectKey, *rowState) {})
	entries, _, ok := s.history(web1)
	if !ok || len(entries) != 1 || entries[0].text != "ADDED\n" {
		t.Errorf("history %+v (ok %v): want the new object's ADDED alone", entries, ok)
	}
}

// Lines written to stderr while the view has the terminal are held back and printed
// once it left, in order, at most noticesKept of them; the latest is on the bottom line,
// an outage until a later line replaces it.
func TestNotices(t *testing.T) {
	c := &clock{now: t0}
	var stderr bytes.Buffer
	n := &notices{now: c.Now, out: &stderr, holdWhileShown: true}
	fmt.Fprintf(n, "kubeevents: before\n")
	n.holdBack()
	fmt.Fprintf(n, "kubeevents: watch of pods lost (connection refused); retrying…\n")
	if got, ok := n.current(); !ok || !got.outage || got.text != "watch of pods lost (connection refused); retrying…" {
		t.Errorf("current %+v, %v: want the outage", got, ok)
	}
	c.add(time.Hour)
	if _, ok := n.current(); !ok {
		t.Error("an outage left the bottom line before it was over")
	}
	fmt.Fprintf(n, "kubeevents: re-synced 3 pods (1 changed, 0 created, 0 deleted while disconnected)\n")
	c.add(noticeShownFor)
	if got, ok := n.current(); ok {
		t.Errorf("after %s: still %+v", noticeShownFor, got)
	}
	for i := range noticesKept {
		fmt.Fprintf(n, "kubeevents: line %d\n", i)
	}
	if stderr.String() != "kubeevents: before\n" {
		t.Errorf("held back, yet stderr has %q", stderr.String())
	}
	n.release()
	fmt.Fprintf(n, "kubeevents: after\n")
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	want := []string{"kubeevents: before", "kubeevents: (2 earlier notices not shown)", "kubeevents: line 0"}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("stderr line %d is %q, want %q", i, lines[i], w)
		}
	}
	if last := lines[len(lines)-1]; last != "kubeevents: after" || len(lines) != noticesKept+3 {
		t.Errorf("stderr has %d lines ending %q", len(lines), last)
	}
}

// However many events come, the view draws at most 20 frames a second, and every
// event reaches the store: the terminal does not slow the sink down.
func TestFramesAtMostTwentyASecond(t *testing.T) {
	v, err := New(Options{Out: io.Discard, Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	v.programOptions = []tea.ProgramOption{tea.WithInput(nil), tea.WithWindowSize(120, 40)}
	v.Start()
	start := time.Now()
	written := uint64(0)
	pods := make([]*corev1.Pod, 200)
	for i := range pods {
		pods[i] = testPod(fmt.Sprintf("web-%03d", i), nil, corev1.PodRunning)
	}
	for time.Since(start) < time.Second {
		pod := pods[written%uint64(len(pods))]
		if err := v.Write(&event.Event{Type: event.Modified, Time: time.Now(), Resource: podsGVR, Kind: "Pod", Object: pod, Old: pod}); err != nil {
			t.Fatal(err)
		}
		written++
	}
	elapsed := time.Since(start)
	v.Stop()
	frames := v.model.frames
	t.Logf("%d frames in %s for %d events", frames, elapsed, written)
	if limit := int(elapsed/frameEvery) + 3; frames > limit {
		t.Errorf("%d frames in %s for %d events: want at most %d", frames, elapsed, written, limit)
	}
	if frames < 2 || written < 1000 {
		t.Errorf("%d frames, %d events written: the test did not run", frames, written)
	}
	if got := v.store.eventCount(); got != written {
		t.Errorf("the store has %d events, %d were written", got, written)
	}
}

// While changes keep coming, frames come further apart, up to frameEveryBusy; the first
// look that finds no change brings the pace back to frameEvery, so that a change after a
// quiet spell shows at the next tick.
func TestFramesSlowDownWhileChangesKeepComing(t *testing.T) {
	h := newHarness(t, Options{})
	pod := testPod("web-1", nil, corev1.PodPending)
	h.write(event.Added, pod, true)
	h.frame()
	start := h.clock.now
	// bubbletea's ticks every frameEvery, an event every 10 ms, for 5 s.
	frames, last, gap := h.m.frames, start, time.Duration(0)
	for i := 1; i <= 500; i++ {
		h.clock.add(10 * time.Millisecond)
		h.write(event.Modified, testPod("web-1", map[string]string{"n": fmt.Sprint(i)}, corev1.PodPending), false)
		if i%5 == 0 {
			before := h.m.frames
			h.tick()
			if h.m.frames != before {
				gap = max(gap, h.clock.now.Sub(last))
				last = h.clock.now
			}
		}
	}
	busy := h.m.frames - frames
	if want := int(5*time.Second/frameEveryBusy) + 2; busy > want {
		t.Errorf("%d frames in 5 s of steady changes, want at most %d", busy, want)
	}
	if gap > frameEveryBusy {
		t.Errorf("%s between two frames while changes came, want at most %s", gap, frameEveryBusy)
	}
	if busy < 5*int(time.Second/frameEveryBusy)-2 {
		t.Errorf("%d frames in 5 s of steady changes: the table is not kept up to date", busy)
	}
	// Quiet: the ticks find nothing, the pace is back to frameEvery.
	for range 10 {
		h.clock.add(frameEvery)
		h.tick()
	}
	if h.m.interval != frameEvery {
		t.Errorf("quiet, the interval is %s, want %s", h.m.interval, frameEvery)
	}
	h.clock.add(time.Millisecond)
	h.write(event.Modified, testPod("web-1", nil, corev1.PodRunning), false)
	before := h.m.frames
	h.clock.add(frameEvery - time.Millisecond)
	h.tick()
	if h.m.frames != before+1 {
		t.Fatalf("a change after a quiet spell was not drawn at the next tick")
	}
	if l, _ := h.screen().line("web-1"); !strings.Contains(l, "Running") {
		t.Errorf("the row after the change: %q, want Running", l)
	}
}

// A row in an open episode (of any sink: the decisions its events carry) is marked with
// the episode's transition until the episode is resolved; the store counts the open
// ones; an EPISODE event is no change of the row.
func TestStoreEpisodes(t *testing.T) {
	s := newStore(10, strikeFor)
	pod := testPod("web-1", nil, corev1.PodRunning)
	ep := &event.Episode{ID: "e1", Transition: "crashloop"}
	crash := &event.Event{Type: event.Modified, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod,
		Episodes: []event.EpisodeDecision{{}, {Action: event.EpisodeOpen, Episode: ep}}}
	s.apply(crash, "MODIFIED web-1\n")
	if o := s.objects[web1]; o == nil || len(o.row.episodes) != 1 || o.row.episodes[0] != "crashloop" || s.openEpisodes() != 1 {
		t.Fatalf("after the crash: %+v, %d open", o, s.openEpisodes())
	}
	version := s.objects[web1].row.version
	resolved := &event.Event{Type: event.EpisodeStep, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod,
		Episodes: []event.EpisodeDecision{{}, {Action: event.EpisodeResolve, Episode: ep}}}
	s.apply(resolved, "")
	o := s.objects[web1]
	if len(o.row.episodes) != 0 || s.openEpisodes() != 0 || o.row.version == version || s.eventCount() != 1 || o.seen != 1 {
		t.Errorf("after the resolution: %+v (seen %d), %d open, %d events", o.row.episodes, o.seen, s.openEpisodes(), s.eventCount())
	}
}
