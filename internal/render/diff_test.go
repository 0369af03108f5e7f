package render

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/jq"
)

// newDiffer is a Differ with the default ignore paths and those given.
func newDiffer(t testing.TB, ignores ...string) *diff.Differ {
	return diff.NewDiffer(eventtest.MustParseAll(t, diff.ParseIgnorePath, ignores...))
}

func TestDiffGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		ignores []string
	}{
		{name: "diff-pretty", opts: Options{Format: FormatPretty}},
		{name: "diff-pretty-color", opts: Options{Format: FormatPretty, Color: true}},
		{name: "diff-pretty-ignore", opts: Options{Format: FormatPretty}, ignores: eventtest.UserIgnores},
		{name: "diff-wide-timestamps", opts: Options{Format: FormatWide, Timestamps: true}},
		{name: "diff-json", opts: Options{Format: FormatJSON}},
		{name: "diff-json-old", opts: Options{Format: FormatJSON, ShowOld: true}},
		{name: "diff-yaml", opts: Options{Format: FormatYAML, ShowOld: true}},
		{name: "diff-name", opts: Options{Format: FormatName, ShowOld: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Location = time.UTC
			tc.opts.Diff = newDiffer(t, tc.ignores...)
			checkGolden(t, tc.name, render(t, tc.opts, eventtest.DiffGoldenEvents()))
		})
	}
}

// TestDiffsOff: without a diff.Differ, JSON and YAML have no "diff" and no "old", and no
// event counts as unchanged.
func TestDiffsOff(t *testing.T) {
	ev := eventtest.DiffEvents()[0]
	for _, format := range []Format{FormatJSON, FormatYAML} {
		out := render(t, Options{Format: format}, []*event.Event{ev})
		if strings.Contains(string(out), "diff") || strings.Contains(string(out), "old") {
			t.Errorf("%s without diffs: %s", format, out)
		}
	}
	p, err := NewPrinter(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Unchanged(eventtest.DiffEvents()[1]) {
		t.Error("Printer without diffs: Unchanged = true")
	}
}

// TestDiffSharedBetweenSinks: once the event's JSON and diff are encoded (once per event
// and diff.Differ, see diff's TestDiffShared), further JSON sinks cost no allocations.
func TestDiffSharedBetweenSinks(t *testing.T) {
	ev := eventtest.DiffEvents()[6]
	d := diff.NewDiffer(nil)
	sinks := make([]*Printer, 2)
	var err error
	for i := range sinks {
		if sinks[i], err = NewPrinter(Options{Format: FormatJSON, Diff: d, ShowOld: true}); err != nil {
			t.Fatal(err)
		}
	}
	dst := make([]byte, 0, 64<<10)
	if dst, err = sinks[0].Append(dst[:0], ev); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if dst, err = sinks[1].Append(dst[:0], ev); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("JSON line with diff and old: %v allocations per further sink, want 0", allocs)
	}
}

func TestChangeLinesAreCapped(t *testing.T) {
	events := eventtest.DiffEvents()
	ev := events[len(events)-1] // 26 changes
	out := string(render(t, Options{Location: time.UTC, Diff: diff.NewDiffer(nil)}, []*event.Event{ev}))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1+maxChangeLines {
		t.Errorf("%d lines, want the event line and %d change lines:\n%s", len(lines), maxChangeLines, out)
	}
	if last := lines[len(lines)-1]; last != "          … and 7 more changes" {
		t.Errorf("last line = %q", last)
	}
}

// TestHostileDiffValues checks that keys and values from the object reach the terminal
// escaped, and cannot start a line of their own.
func TestHostileDiffValues(t *testing.T) {
	object := func(value string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "x", "namespace": "default"},
			"data":     map[string]any{"evil\x1b[2J\nkey": value, "list": []any{value}},
		}}
	}
	ev := eventtest.Modified(1, eventtest.ConfigMaps, "ConfigMap", object("calm"), object("x\x1b]0;pwned\x07\n\u009b\u202e"))
	out := string(render(t, Options{Location: time.UTC, Diff: diff.NewDiffer(nil)}, []*event.Event{ev}))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want the event line and 2 change lines, got %q", out)
	}
	for _, r := range out {
		if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u202e') {
			t.Errorf("raw %U in %q", r, out)
		}
	}
	want := `          ~ data.evil\x1b[2J\nkey: calm → "x\u001b]0;pwned\u0007\n\u009b\u202e"`
	if lines[1] != want {
		t.Errorf("change line = %q\nwant          %q", lines[1], want)
	}
}

func TestChangeValues(t *testing.T) {
	p, err := NewPrinter(Options{})
	if err != nil {
		t.Fatal(err)
	}
	long := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"web", "web"},
		{"two words", "two words"},
		{"", `""`},
		{" padded", `" padded"`},
		{"true", `"true"`},
		{"null", `"null"`},
		{"3", `"3"`},
		{"1e5", `"1e5"`},
		{"{x}", `"{x}"`},
		{"a → b", `"a → b"`},
		{"line\nbreak", `"line\nbreak"`},
		{"<redacted: 5 bytes #51c2a7e0>", "<redacted: 5 bytes #51c2a7e0>"},
		{json.Number("12345678901234567890"), "12345678901234567890"},
		{true, "true"},
		{nil, "null"},
		{map[string]any{"b": json.Number("1"), "a": "<x>"}, `{"a":"<x>","b":1}`},
		{[]any{}, "[]"},
		{long, "sha256:0123456789abcdef0123456…3456789abcdef0123456789abcdef"},
		{strings.Repeat("é", 100), strings.Repeat("é", 30) + "…" + strings.Repeat("é", 29)},
	} {
		text := p.changeValueText(tc.v)
		if got := string(escape.Append(nil, shortenMiddle(text, valueLimit(text, 0)))); got != tc.want {
			t.Errorf("change value %#v = %q, want %q", tc.v, got, tc.want)
		}
	}
	if n := len([]rune(shortenMiddle(long, maxValueRunes))); n != maxValueRunes {
		t.Errorf("shortened to %d runes, want %d", n, maxValueRunes)
	}
}

func TestJSONLinesWithDiffKeys(t *testing.T) {
	events := eventtest.DiffGoldenEvents()
	out := render(t, Options{Format: FormatJSON, Diff: diff.NewDiffer(nil), ShowOld: true}, events)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, line := range lines {
		ev := events[i]
		want := []string{"type", "time"}
		if ev.Seq != 0 {
			want = append(want, "seq")
		}
		want = append(want, "resource", "object", "old")
		if ev.Type == event.Modified {
			want = append(want, "diff")
		}
		if got := topLevelKeys(t, line); !reflect.DeepEqual(got, want) {
			t.Errorf("line %d (%s) keys = %v, want %v", i, ev.Type, got, want)
		}
	}
}

// TestConcurrentSinks renders the same events from several goroutines at once, in every
// format and through jq, as sinks do; run with -race it checks the per-event caches.
func TestConcurrentSinks(t *testing.T) {
	events := eventtest.DiffGoldenEvents()
	d := newDiffer(t, eventtest.UserIgnores...)
	q, err := jq.Compile(".diff | length")
	if err != nil {
		t.Fatal(err)
	}
	formats := []Format{FormatPretty, FormatJSON, FormatYAML, FormatWide}
	want := make([][]byte, len(formats))
	for i, format := range formats {
		want[i] = render(t, Options{Format: format, Location: time.UTC, Diff: d, ShowOld: true}, eventtest.DiffGoldenEvents())
	}
	done := make(chan error)
	for i, format := range formats {
		go func() {
			p, err := NewPrinter(Options{Format: format, Location: time.UTC, Diff: d, ShowOld: true})
			if err != nil {
				done <- err
				return
			}
			var out []byte
			for _, ev := range events {
				if out, err = p.Append(out, ev); err != nil {
					done <- err
					return
				}
				envelope, err := jq.EnvelopeValue(ev, d, i%2 == 0)
				if err != nil {
					done <- err
					return
				}
				if _, err := q.Run(context.Background(), envelope); err != nil {
					done <- err
					return
				}
			}
			if !reflect.DeepEqual(out, want[i]) {
				done <- fmt.Errorf("%s output differs when rendered concurrently", format)
				return
			}
			done <- nil
		}()
	}
	for range formats {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
