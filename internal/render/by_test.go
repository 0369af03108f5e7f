package render

import (
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
