package render

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

// Who made each change, in every format: the event line's mark (pretty, wide), each
// diff line's when the changes have different managers, "by" (and "byAmbiguous") in
// JSON and YAML, per diff operation when managers differ, and ".by" for templates.
func TestGoldenBy(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"by-pretty", Options{Format: FormatPretty, ShowKind: true}},
		{"by-pretty-color", Options{Format: FormatPretty, ShowKind: true, Color: true}},
		{"by-wide", Options{Format: FormatWide, ShowKind: true}},
		{"by-json", Options{Format: FormatJSON}},
		{"by-yaml", Options{Format: FormatYAML}},
		{"by-template", Options{Format: Format(`custom-columns=NAME:.metadata.name,BY:.by[*].manager,VIA:.by[*].subresource`)}},
		{"by-name", Options{Format: FormatName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Location = time.UTC
			tc.opts.Diff = diff.NewDiffer(nil)
			checkGolden(t, tc.name, render(t, tc.opts, eventtest.AttributedEvents()))
		})
	}
}

// Without diffs (--no-diff), every change is attributed as with them: what changed
// decides who changed it, whether or not the change is shown.
func TestByWithoutDiff(t *testing.T) {
	type envelope struct {
		Diff        json.RawMessage `json:"diff"`
		By          json.RawMessage `json:"by"`
		ByAmbiguous bool            `json:"byAmbiguous"`
	}
	read := func(d *diff.Differ) []envelope {
		var out []envelope
		for line := range strings.SplitSeq(strings.TrimSpace(string(render(t, Options{Format: FormatJSON, Diff: d}, eventtest.AttributedEvents()))), "\n") {
			var e envelope
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		return out
	}
	with, without := read(diff.NewDiffer(nil)), read(nil)
	if len(with) != len(without) {
		t.Fatalf("%d events with diffs, %d without", len(with), len(without))
	}
	attributed := 0
	for i := range with {
		if without[i].Diff != nil {
			t.Errorf("event %d has a diff without diffs: %s", i+1, without[i].Diff)
		}
		if string(without[i].By) != string(with[i].By) || without[i].ByAmbiguous != with[i].ByAmbiguous {
			t.Errorf("event %d without diffs: by %s (ambiguous %v), with them %s (%v)", i+1,
				without[i].By, without[i].ByAmbiguous, with[i].By, with[i].ByAmbiguous)
		}
		if with[i].By != nil {
			attributed++
		}
	}
	if attributed < len(with)-1 { // all but DELETED
		t.Errorf("only %d of %d events attributed", attributed, len(with))
	}
}

// On a terminal no line is wider than it, in colour or not: a mark that does not fit at
// the end of the event line goes under it, whole where the width allows, shortened in
// the middle where it does not; one that fits stays on the line.
func TestByFitsTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		width          int
		color          bool
		onTheLine      string // a mark that stays at the end of its event line
		underTheLine   string // one that goes on the line under its event line
		shortenedUnder bool   // ... shortened
	}{
		{width: 200, onTheLine: "by kube-controller-manager"},
		{width: 200, color: true, onTheLine: "by kube-controller-manager"},
		{width: 70, underTheLine: "by kube-controller-manager"},
		{width: 70, color: true, underTheLine: "by kube-controller-manager"},
		{width: 24, underTheLine: "by kube-", shortenedUnder: true},
	} {
		opts := Options{Format: FormatPretty, ShowKind: true, Location: time.UTC, Diff: diff.NewDiffer(nil), Color: tc.color,
			TerminalWidth: func() int { return tc.width }}
		out := string(render(t, opts, eventtest.AttributedEvents()[:1])) // ADDED, by kube-controller-manager
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		plain := make([]string, len(lines))
		for i, l := range lines {
			plain[i] = ansi.ReplaceAllString(l, "")
			// At 24 columns the event line itself is wider (kubectl's columns are not
			// cut); the mark's line is not.
			if n := visibleWidth([]byte(l)); n > tc.width && (!tc.shortenedUnder || i == len(lines)-1) {
				t.Errorf("width %d, colour %v: %d columns: %q", tc.width, tc.color, n, l)
			}
		}
		last := plain[len(plain)-1]
		switch {
		case tc.onTheLine != "" && (!strings.HasSuffix(last, tc.onTheLine) || !strings.Contains(last, "ADDED")):
			t.Errorf("width %d: %q, want the mark at the end of the event line", tc.width, plain)
		case tc.underTheLine != "" && (len(plain) < 2 || strings.Contains(last, "ADDED") ||
			!strings.HasPrefix(strings.TrimSpace(last), tc.underTheLine) || strings.Contains(last, "…") != tc.shortenedUnder):
			t.Errorf("width %d: %q, want %q under the event line (shortened: %v)", tc.width, plain, tc.underTheLine, tc.shortenedUnder)
		}
	}
}

// ansi is a colour sequence.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")
