package render

import (
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

// Without diffs, a change that its managers' times decide is still attributed; one that
// only the changed fields can decide is not.
func TestByWithoutDiff(t *testing.T) {
	out := string(render(t, Options{Format: FormatJSON}, eventtest.AttributedEvents()))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, want := range []string{
		`"by":[{"manager":"kube-controller-manager"`, // the creator: times
		"", // a binding: fields
		`"by":[{"manager":"kwok","operation":"Update","subresource":"status"`,
		"", // DELETED
		`"by":[{"manager":"kubectl-create"`,
		`"by":[{"manager":"kubectl","operation":"Update","subresource":"scale"}]`, // a new entry
		`"by":[{"manager":"hpa"`, // both moved: both wrote
		`"byAmbiguous":true`,
		"", // two appliers in one second: fields
	} {
		switch {
		case want == "" && strings.Contains(lines[i], `"by"`):
			t.Errorf("event %d: %s\nhas a \"by\" without a diff", i+1, lines[i])
		case want != "" && !strings.Contains(lines[i], want):
			t.Errorf("event %d: %s\nlacks %s", i+1, lines[i], want)
		}
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
