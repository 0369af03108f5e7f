package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// The table: one row per object with kubectl's columns, sorted by name, under one
// header; objects listed at start-up are not highlighted.
func TestTableRowsSortedWithKubectlColumns(t *testing.T) {
	h := newHarness(t, Options{Color: true})
	for _, name := range []string{"web-2", "api-1", "web-1"} {
		h.write(event.Added, testPod(name, nil, corev1.PodRunning), true)
	}
	h.frame()
	s := h.screen()
	lines := s.lines()
	if !regexp.MustCompile(`^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$`).MatchString(lines[1]) {
		t.Fatalf("the header is %q; the screen:\n%s", lines[1], s)
	}
	for i, name := range []string{"api-1", "web-1", "web-2"} {
		if !regexp.MustCompile(`^` + name + `\s+0/1\s+Running\s+0\s+60s$`).MatchString(lines[2+i]) {
			t.Errorf("line %d is %q, want %s's row", 2+i, lines[2+i], name)
		}
	}
	if st := s.style(t, "web-1"); st.Bg != nil {
		t.Errorf("a listed row is highlighted: %+v", st)
	}
	if !strings.Contains(lines[0], "3 objects") || !strings.Contains(lines[0], "3 events") || !strings.Contains(lines[0], "sort: name") {
		t.Errorf("top line %q: want the counts and the sort", lines[0])
	}
}

// A change lights its row up; the highlight fades in steps and is gone after fadeFor.
// A deleted row is struck, then gone after strikeFor.
func TestChangesHighlightFadeAndDeletionsGo(t *testing.T) {
	h := newHarness(t, Options{Color: true})
	h.write(event.Added, testPod("web-1", nil, corev1.PodPending), true)
	h.write(event.Added, testPod("web-2", nil, corev1.PodRunning), true)
	h.frame()
	h.keys("down") // the selection (reverse video) on web-2, away from web-1
	h.clock.at(time.Second)
	h.write(event.Modified, testPod("web-1", nil, corev1.PodRunning), false)
	var bgs []uv.Style
	for _, after := range []time.Duration{100 * time.Millisecond, 1100 * time.Millisecond, 2100 * time.Millisecond, 3100 * time.Millisecond} {
		h.clock.at(time.Second + after)
		h.frame()
		bgs = append(bgs, h.screen().style(t, "web-1"))
	}
	if bgs[0].Bg == nil || bgs[0].Attrs&uv.AttrBold == 0 {
		t.Errorf("just changed: style %+v, want a bold highlight", bgs[0])
	}
	if bgs[1].Bg == nil || bgs[2].Bg == nil || bgs[0].Bg == bgs[1].Bg || bgs[1].Bg == bgs[2].Bg {
		t.Errorf("fading: backgrounds %v, %v, %v; want three different ones", bgs[0].Bg, bgs[1].Bg, bgs[2].Bg)
	}
	if bgs[3].Bg != nil {
		t.Errorf("after %s: still highlighted (%v)", fadeFor, bgs[3].Bg)
	}

	h.write(event.Deleted, testPod("web-1", nil, corev1.PodRunning), false)
	deleted := h.clock.since()
	h.frame()
	if st := h.screen().style(t, "web-1"); st.Attrs&uv.AttrStrikethrough == 0 {
		t.Errorf("deleted: style %+v, want struck", st)
	}
	h.clock.at(deleted + strikeFor - 100*time.Millisecond)
	h.frame()
	if _, y := h.screen().line("web-1"); y < 0 {
		t.Errorf("gone before %s", strikeFor)
	}
	h.clock.at(deleted + strikeFor)
	h.frame()
	if _, y := h.screen().line("web-1"); y >= 0 {
		t.Errorf("still there %s after its deletion:\n%s", strikeFor, h.screen())
	}
	if _, _, ok := h.v.store.history(objectKey{kind: "Pod", namespace: "shop", name: "web-1"}); ok {
		t.Error("the store still holds the deleted object")
	}
}

// Enter opens the selected row's history: its changes with their diffs, as the stream
// prints them, at most History of them; y its YAML; Esc back.
func TestHistoryAndYAML(t *testing.T) {
	h := newHarness(t, Options{History: 3, Color: true})
	h.write(event.Added, testPod("web-1", map[string]string{"app": "web"}, corev1.PodPending), true)
	for i, phase := range []corev1.PodPhase{corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodRunning} {
		h.clock.at(time.Duration(i+1) * time.Second)
		h.write(event.Modified, testPod("web-1", map[string]string{"app": "web", "round": string(rune('a' + i))}, phase), false)
	}
	h.frame()
	h.keys("enter")
	s := h.screen()
	if _, y := s.line("ADDED"); y >= 0 {
		t.Errorf("History 3 keeps the last 3 changes, yet the ADDED is there:\n%s", s)
	}
	for _, want := range []string{"~ status.phase: Succeeded → Failed", "~ metadata.labels.round: c → d", "~ status.phase: Failed → Running",
		"history of pod/web-1 in shop (5 changes seen, the last 3 kept)"} {
		if _, y := s.line(want); y < 0 {
			t.Errorf("the history lacks %q:\n%s", want, s)
		}
	}
	h.keys("y")
	s = h.screen()
	for _, want := range []string{"kind: Pod", "  name: web-1", "    round: d", "  phase: Running", "YAML of pod/web-1 in shop"} {
		if _, y := s.line(want); y < 0 {
			t.Errorf("the YAML lacks %q:\n%s", want, s)
		}
	}
	h.keys("esc")
	if _, y := h.screen().line("history of"); y < 0 {
		t.Errorf("Esc from the YAML opened from the history: want the history back:\n%s", h.screen())
	}
	h.keys("esc")
	if l, _ := h.screen().line("web-1"); !strings.HasPrefix(l, "web-1 ") {
		t.Errorf("Esc from the history: want the table back:\n%s", h.screen())
	}
}

// `/` filters by substring or by label selector; Esc clears the filter.
func TestFilter(t *testing.T) {
	h := newHarness(t, Options{Color: true})
	h.write(event.Added, testPod("web-1", map[string]string{"app": "web"}, corev1.PodRunning), true)
	h.write(event.Added, testPod("db-0", map[string]string{"app": "db"}, corev1.PodPending), true)
	h.frame()
	shown := func() (names []string) {
		for _, l := range h.screen().lines()[2:] {
			if f := strings.Fields(l); len(f) > 0 && (f[0] == "web-1" || f[0] == "db-0") {
				names = append(names, f[0])
			}
		}
		return names
	}
	h.keys("/", "pend")
	if got := shown(); len(got) != 1 || got[0] != "db-0" {
		t.Errorf("/pend (a cell): rows %v, want db-0", got)
	}
	if l := h.screen().lines()[h.m.height-1]; !strings.Contains(l, "/pend") {
		t.Errorf("the bottom line %q: want what is typed", l)
	}
	h.keys("backspace", "backspace", "backspace", "backspace", "app=web", "enter")
	if got := shown(); len(got) != 1 || got[0] != "web-1" {
		t.Errorf("/app=web (a label selector): rows %v, want web-1", got)
	}
	h.keys("esc")
	if got := shown(); len(got) != 2 {
		t.Errorf("Esc: rows %v, want both", got)
	}
}

// p freezes the table; the changes meanwhile are counted and applied on resume.
func TestPause(t *testing.T) {
	h := newHarness(t, Options{})
	h.write(event.Added, testPod("web-1", nil, corev1.PodPending), true)
	h.frame()
	h.keys("p")
	h.clock.at(time.Second)
	h.write(event.Modified, testPod("web-1", nil, corev1.PodRunning), false)
	h.write(event.Added, testPod("web-2", nil, corev1.PodPending), false)
	h.frame()
	s := h.screen()
	if l, _ := s.line("web-1"); !strings.Contains(l, "Pending") {
		t.Errorf("paused, yet the row changed: %q", l)
	}
	if _, y := s.line("web-2"); y >= 0 {
		t.Error("paused, yet a new row came")
	}
	if !strings.Contains(s.lines()[0], "PAUSED (2 new)") {
		t.Errorf("top line %q: want PAUSED (2 new)", s.lines()[0])
	}
	h.keys("p")
	s = h.screen()
	if l, _ := s.line("web-1"); !strings.Contains(l, "Running") {
		t.Errorf("resumed: web-1 is %q, want Running", l)
	}
	if _, y := s.line("web-2"); y < 0 || strings.Contains(s.lines()[0], "PAUSED") {
		t.Errorf("resumed: want web-2 and no PAUSED:\n%s", s)
	}
}

// s sorts by age (newest first), then by last change.
func TestSort(t *testing.T) {
	h := newHarness(t, Options{})
	old, young := testPod("a-old", nil, corev1.PodRunning), testPod("b-young", nil, corev1.PodRunning)
	old.CreationTimestamp = metav1.NewTime(t0.Add(-time.Hour))
	h.write(event.Added, old, true)
	h.write(event.Added, young, true)
	h.clock.at(time.Second)
	changed := old.DeepCopy()
	changed.Status.Phase = corev1.PodFailed
	h.write(event.Modified, changed, false)
	h.frame()
	order := func() string {
		_, a := h.screen().line("a-old")
		_, b := h.screen().line("b-young")
		if a < b {
			return "a-old,b-young"
		}
		return "b-young,a-old"
	}
	for _, want := range []struct{ sort, order string }{{"name", "a-old,b-young"}, {"age", "b-young,a-old"}, {"last change", "a-old,b-young"}} {
		if got := order(); got != want.order || !strings.Contains(h.screen().lines()[0], "sort: "+want.sort) {
			t.Errorf("sort %s: %s; top line %q", want.sort, got, h.screen().lines()[0])
		}
		h.keys("s")
	}
}

// A resized terminal is laid out anew: rows cut to its width, as many as fit.
func TestResize(t *testing.T) {
	h := newHarness(t, Options{Color: true})
	for i := range 30 {
		h.write(event.Added, testPod("web-"+string(rune('a'+i%26))+string(rune('a'+i/26)), nil, corev1.PodRunning), true)
	}
	h.frame()
	h.m.Update(teaSize(40, 10))
	s := h.screen()
	lines := s.lines()
	if len(lines) != 10 || !strings.HasPrefix(lines[2], "web-aa") || !strings.HasPrefix(lines[8], "web-da") {
		t.Errorf("on 40x10, want the first 7 rows:\n%s", s)
	}
	for _, l := range lines {
		if len([]rune(l)) > 40 {
			t.Errorf("line wider than 40: %q", l)
		}
	}
}

// With --owned, the owner tree: the followed object, each object under its owner, and
// the rollout's state on top.
func TestOwnerTree(t *testing.T) {
	deployKind := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	h := newHarness(t, Options{Owned: true, Kinds: []schema.GroupKind{deployKind}, Color: true})
	write := func(kind, group, resource, name string, owners []event.Owner, rollout *event.Rollout) {
		obj := testPod(name, nil, corev1.PodRunning)
		obj.Kind = kind
		ev := &event.Event{Type: event.Added, Time: h.clock.now, Kind: kind, Object: obj, InInitialList: true,
			Resource: schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}, Owners: owners, Rollout: rollout}
		if err := h.v.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	deploy := []event.Owner{{Kind: "Deployment", Name: "web"}}
	rs := append(deploy, event.Owner{Kind: "ReplicaSet", Name: "web-5d9f"})
	write("Pod", "", "pods", "web-5d9f-b", rs, nil)
	write("Pod", "", "pods", "web-5d9f-a", rs, nil)
	write("ReplicaSet", "apps", "replicasets", "web-5d9f", deploy, nil)
	write("ReplicaSet", "apps", "replicasets", "web-4c1e", deploy, nil)
	write("Deployment", "apps", "deployments", "web", []event.Owner{}, &event.Rollout{State: event.RolloutProgressing, Message: `Waiting for deployment "web" rollout to finish`})
	h.frame()
	lines := h.screen().lines()
	want := []string{`… Waiting for deployment "web" rollout to finish`, "deploy/web", "├─ rs/web-4c1e", "└─ rs/web-5d9f", "   ├─ pod/web-5d9f-a", "   └─ pod/web-5d9f-b"}
	for i, w := range want {
		if !strings.HasPrefix(strings.TrimSpace(lines[1+i]), strings.TrimSpace(w)) || (i > 0 && !strings.HasPrefix(lines[1+i], w)) {
			t.Errorf("line %d is %q, want it to start %q; the screen:\n%s", 1+i, lines[1+i], w, h.screen())
		}
	}
}

// Several clusters: a CLUSTER column; the same name in two clusters is two rows.
func TestSeveralClusters(t *testing.T) {
	h := newHarness(t, Options{Clusters: []string{"prod-eu", "prod-us"}, Color: true})
	for _, c := range []string{"prod-us", "prod-eu"} {
		ev := &event.Event{Type: event.Added, Time: t0, Cluster: c, Resource: podsGVR, Kind: "Pod", Object: testPod("web-1", nil, corev1.PodRunning), InInitialList: true}
		if err := h.v.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	h.frame()
	lines := h.screen().lines()
	if !strings.HasPrefix(lines[1], "CLUSTER ") || !strings.HasPrefix(lines[2], "prod-eu ") || !strings.HasPrefix(lines[3], "prod-us ") {
		t.Errorf("want a CLUSTER column, prod-eu's row first:\n%s", h.screen())
	}
}

// q and Ctrl-C quit: the run is told (Options.Quit) and bubbletea to quit.
func TestQuitKeys(t *testing.T) {
	for _, key := range []string{"q", "ctrl+c"} {
		quit := 0
		h := newHarness(t, Options{Quit: func() { quit++ }})
		h.keys(key)
		if quit != 1 || !h.m.quitting {
			t.Errorf("%s: Quit called %d times, quitting %v", key, quit, h.m.quitting)
		}
	}
	// q typed into the filter is a letter; Ctrl-C still quits.
	quit := 0
	h := newHarness(t, Options{Quit: func() { quit++ }})
	h.keys("/", "q")
	if quit != 0 || h.m.input != "q" {
		t.Errorf("q in the filter: Quit called %d times, input %q", quit, h.m.input)
	}
}

// Without colour (--color never, NO_COLOR, TERM=dumb) the view writes no attribute at
// all, not even bold or reverse; a marker column shows the selected row (>) and the
// rows new (+), changed (~) and deleted (-), the header aligned with them.
func TestNoColorIsPlain(t *testing.T) {
	sgr := regexp.MustCompile(`\x1b\[[0-9;:]*m`)
	h := newHarness(t, Options{Color: false})
	h.write(event.Added, testPod("web-1", nil, corev1.PodPending), true)
	h.write(event.Added, testPod("web-2", nil, corev1.PodPending), true)
	h.write(event.Added, testPod("web-3", nil, corev1.PodPending), true)
	h.clock.at(time.Second)
	h.write(event.Added, testPod("web-4", nil, corev1.PodPending), false)
	h.write(event.Modified, testPod("web-2", nil, corev1.PodRunning), false)
	h.write(event.Deleted, testPod("web-3", nil, corev1.PodPending), false)
	h.clock.at(1100 * time.Millisecond)
	h.frame()
	check := func(what string, want map[string]string) {
		t.Helper()
		if m := sgr.FindString(h.m.content); m != "" {
			t.Errorf("%s: the frame holds the SGR sequence %q:\n%q", what, m, h.m.content)
		}
		s := h.screen()
		if l := s.lines()[1]; !strings.HasPrefix(l, "   NAME ") {
			t.Errorf("%s: the header is %q, want it after the marker column", what, l)
		}
		for name, marker := range want {
			if l, _ := s.line(name + " "); !strings.HasPrefix(l, marker+name+" ") {
				t.Errorf("%s: %s's row is %q, want it marked %q; the screen:\n%s", what, name, l, marker, s)
			}
		}
	}
	check("first", map[string]string{"web-1": ">  ", "web-2": " ~ ", "web-3": " - ", "web-4": " + "})
	h.keys("down")
	check("after down", map[string]string{"web-1": "   ", "web-2": ">~ "})
	h.clock.at(fadeFor + 2*time.Second)
	h.frame()
	check("faded", map[string]string{"web-1": "   ", "web-2": ">  ", "web-4": "   "})
	for _, key := range []string{"?", "esc", "enter", "esc", "y"} {
		h.keys(key)
		if m := sgr.FindString(h.m.content); m != "" {
			t.Errorf("after %s: the screen holds the SGR sequence %q", key, m)
		}
	}
}

// A filter that matches no object says so, and how many objects there are: not "no
// objects yet".
func TestFilterMatchingNothing(t *testing.T) {
	for _, color := range []bool{true, false} {
		h := newHarness(t, Options{Color: color})
		h.write(event.Added, testPod("web-1", nil, corev1.PodRunning), true)
		h.write(event.Added, testPod("web-2", nil, corev1.PodRunning), true)
		h.frame()
		h.keys("/", "nothing-like-it", "enter")
		s := h.screen()
		if _, y := s.line("the filter matches none of the 2 objects (Esc clears it)"); y < 0 || strings.Contains(s.String(), "no objects yet") {
			t.Errorf("colour %v: a filter matching nothing:\n%s", color, s)
		}
		h.keys("esc")
		if _, y := h.screen().line("web-1"); y < 0 {
			t.Errorf("colour %v: Esc: web-1 is not back:\n%s", color, h.screen())
		}
	}
	h := newHarness(t, Options{})
	h.frame()
	if _, y := h.screen().line("no objects yet"); y < 0 {
		t.Errorf("no object at all:\n%s", h.screen())
	}
}

// The YAML of an object holding characters YAML does not allow unescaped (DEL, a C1
// control, U+FFFE) is shown, those characters escaped, rather than an error.
func TestYAMLOfAwkwardStrings(t *testing.T) {
	h := newHarness(t, Options{Color: true})
	pod := testPod("web-1", nil, corev1.PodRunning)
	pod.Annotations = map[string]string{"del": "a\x7fb", "csi": "c\u009b31m", "nonchar": "d\ufffe", "port": "8080", "big": "12345678901234567890"}
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
	h.write(event.Added, pod, true)
	h.frame()
	h.keys("y")
	s := h.screen()
	for _, want := range []string{`    del: "a\x7Fb"`, `    csi: "c\x9B31m"`, `    nonchar: "d\uFFFE"`, `    port: "8080"`, "    - containerPort: 8080", "kind: Pod"} {
		if _, y := s.line(want); y < 0 {
			t.Errorf("the YAML lacks %q:\n%s", want, s)
		}
	}
	if _, y := s.line("cannot show"); y >= 0 {
		t.Errorf("the YAML is an error:\n%s", s)
	}
}

// A value longer than the terminal is wide is wrapped in the YAML, not cut: all of it
// shows, at any width.
func TestYAMLWrapsLongValues(t *testing.T) {
	h := newHarness(t, Options{Color: true})
	pod := testPod("web-1", nil, corev1.PodRunning)
	var value strings.Builder
	for i := range 60 {
		fmt.Fprintf(&value, "w%02d ", i)
	}
	pod.Annotations = map[string]string{"note": strings.TrimSpace(value.String())}
	h.write(event.Added, pod, true)
	h.frame()
	h.keys("y")
	for _, width := range []int{100, 47} {
		h.m.Update(teaSize(width, 40))
		lines := h.screen().lines()
		for _, l := range lines[1 : len(lines)-1] { // the YAML, between the top and bottom lines
			if strings.Contains(l, "…") || len([]rune(l)) > width {
				t.Errorf("width %d: a line cut: %q", width, l)
			}
		}
		var got strings.Builder
		for i, l := range h.m.detail.lines {
			if v, ok := strings.CutPrefix(l, "    note: "); ok {
				got.WriteString(v)
				for _, l := range h.m.detail.lines[i+1:] {
					part, ok := strings.CutPrefix(l, "      ")
					if !ok {
						break
					}
					got.WriteString(part)
				}
			}
		}
		if got.String() != pod.Annotations["note"] {
			t.Errorf("width %d: the note reads %q, want %q; the screen:\n%s", width, got.String(), pod.Annotations["note"], h.screen())
		}
	}
}

// A history entry is bounded, however large the change.
func TestEntriesAreBounded(t *testing.T) {
	var b strings.Builder
	for range 1000 {
		b.WriteString("          + spec.x: " + strings.Repeat("y", 100) + "\n")
	}
	got := bounded([]byte(b.String()))
	if n := strings.Count(got, "\n"); n > entryLines+1 || len(got) > entryBytes+64 {
		t.Errorf("bounded: %d lines, %d bytes", n, len(got))
	}
}

// textWidth is ansi.StringWidth, quicker for printable ASCII.
func TestTextWidth(t *testing.T) {
	for _, s := range []string{"", "web-1", "Running   3/3", "\x1b[1mbold\x1b[m", "a\tb", "└─ pod/x", "日本", "x\x7fy"} {
		if got, want := textWidth(s), ansi.StringWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, want %d", s, got, want)
		}
	}
}

// AGE moves on for the rows on screen, and a row scrolled into view shows its AGE as of
// now, not as of when it was last drawn.
func TestAgeOfRowsOnScreen(t *testing.T) {
	h := newHarness(t, Options{})
	for i := range 40 {
		h.write(event.Added, testPod(fmt.Sprintf("web-%02d", i), nil, corev1.PodRunning), true)
	}
	h.frame()
	if l, _ := h.screen().line("web-00"); !regexp.MustCompile(`\s60s$`).MatchString(l) {
		t.Fatalf("web-00 at first: %q, want AGE 60s", l)
	}
	h.clock.add(30 * time.Second)
	h.frame()
	if l, _ := h.screen().line("web-00"); !regexp.MustCompile(`\s90s$`).MatchString(l) {
		t.Errorf("web-00 30 s later: %q, want AGE 90s", l)
	}
	h.keys("G")
	h.frame()
	if l, _ := h.screen().line("web-39"); !regexp.MustCompile(`\s90s$`).MatchString(l) {
		t.Errorf("web-39 scrolled into view: %q, want AGE 90s; the screen:\n%s", l, h.screen())
	}
}
