package top

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/attribution"
)

var start = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func pod(name string) ObjectID { return ObjectID{Kind: "pod", Namespace: "default", Name: name} }

func TestRankingOrdersAndForgets(t *testing.T) {
	r := NewRanking(time.Minute, start)
	hammer := []attribution.Entry{{Manager: "hammer", Operation: "Update"}}
	kwok := []attribution.Entry{{Manager: "kwok", Operation: "Update", Subresource: "status"}}
	for i := range 30 {
		r.Add(Change{Time: start.Add(time.Duration(i) * time.Second), Object: pod("hot"), Paths: []string{"metadata.labels.round"}, By: hammer})
	}
	r.Add(Change{Time: start.Add(10 * time.Second), Object: pod("quiet"), Paths: []string{"status.phase"}, By: kwok})

	s := r.Snapshot(start.Add(30*time.Second), 10)
	if s.Changes != 31 || time.Duration(s.Span) != 30*time.Second {
		t.Errorf("changes %d over %s, want 31 over 30s", s.Changes, time.Duration(s.Span))
	}
	if len(s.Objects) != 2 || s.Objects[0].Name != "hot" || s.Objects[0].Changes != 30 || s.Objects[1].Name != "quiet" {
		t.Fatalf("objects %+v, want hot (30) then quiet", s.Objects)
	}
	if got := s.Objects[0].PerMinute; got != 60 {
		t.Errorf("hot: %.1f a minute over 30 s, want 60", got)
	}
	if !reflect.DeepEqual(s.Objects[0].Managers, []Count{{Name: "hammer", Count: 30}}) {
		t.Errorf("hot's managers %+v, want hammer 30", s.Objects[0].Managers)
	}
	if len(s.Managers) != 2 || s.Managers[0].Manager != "hammer" || s.Managers[1].Manager != "kwok" || s.Managers[1].Subresource != "status" {
		t.Errorf("managers %+v, want hammer then kwok (status)", s.Managers)
	}
	if len(s.Fields) != 2 || s.Fields[0].Path != "metadata.labels.round" || s.Fields[0].Changes != 30 {
		t.Errorf("fields %+v, want metadata.labels.round (30) first", s.Fields)
	}

	// 71 s on, the quiet pod's change (at 10 s) has left the window (it slides by 5 s
	// slices); the hot pod's last ones are still in it.
	s = r.Snapshot(start.Add(71*time.Second), 10)
	if len(s.Objects) != 1 || s.Objects[0].Name != "hot" || s.Objects[0].Changes >= 30 || s.Objects[0].Changes < 10 {
		t.Errorf("after a minute: %+v, want hot alone with its last changes", s.Objects)
	}
	s = r.Snapshot(start.Add(5*time.Minute), 10)
	if len(s.Objects) != 0 || len(s.Fields) != 0 || len(s.Managers) != 0 || s.Changes != 0 {
		t.Errorf("minutes later: %+v, want nothing", s)
	}
	if len(r.objectIDs) != 0 || len(r.byObject) != 0 || len(r.fieldIDs) != 0 || len(r.managerIDs) != 0 {
		t.Errorf("kept %d objects, %d fields, %d managers no longer in the window", len(r.objectIDs), len(r.fieldIDs), len(r.managerIDs))
	}
}

func TestRankingLimit(t *testing.T) {
	r := NewRanking(time.Minute, start)
	for i, name := range []string{"a", "b", "c", "d"} {
		for range i + 1 {
			r.Add(Change{Time: start, Object: pod(name)})
		}
	}
	s := r.Snapshot(start.Add(time.Second), 2)
	if len(s.Objects) != 2 || s.Objects[0].Name != "d" || s.Objects[1].Name != "c" {
		t.Errorf("%+v, want d and c", s.Objects)
	}
}

func TestSnapshotJSON(t *testing.T) {
	r := NewRanking(time.Minute, start)
	r.Add(Change{Time: start, Object: pod("web"), Paths: []string{"spec.replicas"},
		By: []attribution.Entry{{Manager: "kubectl-scale", Operation: "Update", Subresource: "scale"}}})
	raw, err := json.Marshal(r.Snapshot(start.Add(time.Second), 10))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"window":"1m0s"`, `"changes":1`, `"objects":[{"kind":"pod","namespace":"default","name":"web","changes":1,`,
		`"managers":[{"name":"kubectl-scale (scale)","count":1}]`, `"fields":[{"kind":"pod","path":"spec.replicas","changes":1,`,
		`"managers":[{"manager":"kubectl-scale","subresource":"scale","writes":1,`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("%s\nlacks %s", raw, want)
		}
	}
}

func TestSeriesSlides(t *testing.T) {
	var s series
	s.add(0)
	s.add(0)
	s.add(5)
	if got := s.at(5).total(); got != 3 {
		t.Errorf("total %d, want 3", got)
	}
	if got := s.at(buckets).total(); got != 1 {
		t.Errorf("one window on: %d, want the later 1", got)
	}
	if got := s.at(buckets + 5).total(); got != 0 {
		t.Errorf("past both: %d, want 0", got)
	}
	if got := s.at(3).counts; got != s.counts {
		t.Error("at an earlier slice changed the series")
	}
}

func TestFrame(t *testing.T) {
	r := NewRanking(time.Minute, start)
	for range 5 {
		r.Add(Change{Time: start, Object: pod("hot\x1b[31m"), Paths: []string{"metadata.labels.round"},
			By: []attribution.Entry{{Manager: "hammer"}}})
	}
	f := &frame{what: "pods in default", rows: 10}
	out := string(f.draw(nil, r.Snapshot(start.Add(10*time.Second), 10)))
	for _, want := range []string{"kubeevents top · pods in default · window 1m (10s so far)", "5 changes",
		"OBJECT", "pod/default/hot\\x1b[31m", "30.0", "hammer", "pod metadata.labels.round", "MANAGER"} {
		if !strings.Contains(out, want) {
			t.Errorf("frame lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("a frame off a terminal holds an escape sequence:\n%q", out)
	}
	term := &frame{what: "pods", terminal: true, size: func() (int, int) { return 40, 12 }}
	out = string(term.draw(nil, r.Snapshot(start.Add(10*time.Second), term.limit())))
	if !strings.HasPrefix(out, "\x1b[2J\x1b[H") || !strings.HasSuffix(out, "\x1b[J") {
		t.Errorf("terminal frame is not drawn in place: %q", out)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\x1b[J"), "\x1b[K\n") {
		line = strings.TrimPrefix(strings.TrimPrefix(line, "\x1b[2J"), "\x1b[H")
		if n := len([]rune(line)); n > 40 {
			t.Errorf("line of %d characters on a terminal 40 wide: %q", n, line)
		}
	}
	if again := string(term.draw(nil, r.Snapshot(start.Add(11*time.Second), 1))); strings.Contains(again, "\x1b[2J") {
		t.Error("the second frame clears the screen again (flicker)")
	}
}

// On a narrow terminal a number is never cut (21 read as 2): the name gives way, down to
// one character; a column that does not fit whole is left out, and so are parts of the
// title.
func TestFrameNeverCutsNumbers(t *testing.T) {
	r := NewRanking(time.Minute, start)
	by := []attribution.Entry{{Manager: "config-writer"}}
	cm := ObjectID{Kind: "configmap", Namespace: "default", Name: "settings"}
	for i := range 21 {
		r.Add(Change{Time: start.Add(time.Duration(i) * time.Second), Object: cm, Paths: []string{"metadata.labels.round"}, By: by})
	}
	s := r.Snapshot(start.Add(30*time.Second), 10)
	number := regexp.MustCompile(`^\d+(\.\d+)?$`)
	for _, width := range []int{100, 80, 40, 24, 20, 16, 12, 9, 5} {
		f := &frame{what: "configmaps in default", terminal: true, size: func() (int, int) { return width, 5 }}
		out := string(f.draw(nil, s))
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\x1b[J"), "\x1b[K\n") {
			lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "\x1b[2J"), "\x1b[H"))
		}
		counts := map[string]bool{}
		for _, l := range lines {
			if n := len([]rune(l)); n > width {
				t.Errorf("width %d: a line of %d characters: %q", width, n, l)
			}
			for _, field := range strings.Fields(l) {
				if number.MatchString(field) {
					counts[field] = true
					if field != "21" && field != "42.0" {
						t.Errorf("width %d: %q in %q is a number cut (the frame's are 21 and 42.0)", width, field, l)
					}
				}
			}
		}
		if width >= 16 && !counts["21"] || width >= 20 && !counts["42.0"] {
			t.Errorf("width %d: the counts are not all shown:\n%s", width, strings.Join(lines, "\n"))
		}
		if width >= 40 && !strings.HasSuffix(lines[0], " · 21 changes") {
			t.Errorf("width %d: the title %q lacks the count", width, lines[0])
		}
	}
}

func TestSparkline(t *testing.T) {
	if got := sparkline([]uint32{0, 1, 4, 8}); got != " ▁▄█" {
		t.Errorf("%q, want \" ▁▄█\"", got)
	}
	if got := shortDuration(90 * time.Second); got != "1m30s" {
		t.Errorf("%s", got)
	}
	if got := shortDuration(30 * time.Second); got != "30s" {
		t.Errorf("%s", got)
	}
	if got := shortDuration(time.Hour); got != "1h" {
		t.Errorf("%s", got)
	}
}

// An object in an open episode of top's --on is marked with its transition, in the frame
// and the JSON snapshot, and the title counts the open episodes.
func TestFrameEpisodes(t *testing.T) {
	r := NewRanking(time.Minute, start)
	r.Add(Change{Time: start, Object: pod("flaky")})
	r.Add(Change{Time: start, Object: pod("calm")})
	r.Episodes(pod("flaky"), []string{"crashloop"}, 1)
	s := r.Snapshot(start.Add(10*time.Second), 10)
	out := string((&frame{what: "pods", rows: 10}).draw(nil, s))
	for _, want := range []string{"2 changes · 1 open episode", "pod/default/flaky [crashloop]"} {
		if !strings.Contains(out, want) {
			t.Errorf("frame lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "calm [") {
		t.Errorf("an object in no episode marked:\n%s", out)
	}
	raw, _ := json.Marshal(s)
	if !strings.Contains(string(raw), `"episodes":1,`) || !strings.Contains(string(raw), `"episodes":["crashloop"]`) {
		t.Errorf("JSON %s", raw)
	}
	r.Episodes(pod("flaky"), nil, 0)
	if out := string((&frame{what: "pods", rows: 10}).draw(nil, r.Snapshot(start.Add(11*time.Second), 10))); strings.Contains(out, "episode") {
		t.Errorf("after the resolution:\n%s", out)
	}
}
