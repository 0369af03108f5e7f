package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func render(t *testing.T, o Options, events []*event.Event) []byte {
	t.Helper()
	p, err := NewPrinter(o)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, ev := range events {
		if out, err = p.Append(out, ev); err != nil {
			t.Fatalf("%s %s: %v", ev.Type, ev.Key(), err)
		}
	}
	return out
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"pretty", Options{Format: FormatPretty}},
		{"pretty-color", Options{Format: FormatPretty, Color: true}},
		{"pretty-kind-timestamps", Options{Format: FormatPretty, ShowKind: true, Timestamps: true}},
		{"wide", Options{Format: FormatWide}},
		{"json", Options{Format: FormatJSON}},
		{"yaml", Options{Format: FormatYAML}},
		{"name", Options{Format: FormatName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Location = time.UTC
			checkGolden(t, tc.name, render(t, tc.opts, eventtest.Events()))
		})
	}
}

// TestGoldenSignal renders what the noise reducers add: transitions that happened, ROLLOUT
// lines, an unfolded event.
func TestGoldenSignal(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"signal-pretty", Options{Format: FormatPretty, ShowKind: true}},
		{"signal-pretty-color", Options{Format: FormatPretty, Color: true, Namespace: "default"}},
		{"signal-json", Options{Format: FormatJSON}},
		{"signal-yaml", Options{Format: FormatYAML}},
		{"signal-name", Options{Format: FormatName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Location = time.UTC
			checkGolden(t, tc.name, render(t, tc.opts, eventtest.SignalEvents()))
		})
	}
}

// checkGolden compares got with testdata/<name>.golden, or rewrites that file when the
// test runs with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestJSONLines(t *testing.T) {
	events := eventtest.Events()
	out := render(t, Options{Format: FormatJSON}, events)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(events) {
		t.Fatalf("got %d lines for %d events", len(lines), len(events))
	}
	for i, line := range lines {
		ev := events[i]
		wantKeys := []string{"type", "time"}
		if ev.Seq != 0 {
			wantKeys = append(wantKeys, "seq")
		}
		wantKeys = append(wantKeys, "resource", "object")
		if ev.FinalStateUnknown {
			wantKeys = append(wantKeys, "finalStateUnknown")
		}
		if got := topLevelKeys(t, line); strings.Join(got, ",") != strings.Join(wantKeys, ",") {
			t.Errorf("line %d keys = %v, want %v", i, got, wantKeys)
		}

		var envelope struct {
			Type     string
			Time     time.Time
			Seq      uint64
			Resource struct{ Group, Version, Resource string }
			Object   struct{ APIVersion, Kind string }
		}
		if err := json.Unmarshal([]byte(line), &envelope); err != nil {
			t.Fatalf("line %d: %v\n%s", i, err, line)
		}
		gvk := ev.Object.GetObjectKind().GroupVersionKind()
		if envelope.Type != string(ev.Type) || !envelope.Time.Equal(ev.Time) || envelope.Seq != ev.Seq ||
			envelope.Resource.Group != ev.Resource.Group || envelope.Resource.Version != ev.Resource.Version ||
			envelope.Resource.Resource != ev.Resource.Resource ||
			envelope.Object.APIVersion != gvk.GroupVersion().String() || envelope.Object.Kind != gvk.Kind {
			t.Errorf("line %d = %+v, event %s %s/%s seq %d", i, envelope, ev.Type, ev.Kind, ev.Key(), ev.Seq)
		}
	}
}

// topLevelKeys lists the keys of a JSON object in the order they appear.
func topLevelKeys(t *testing.T, line string) []string {
	t.Helper()
	var fields []string
	dec := json.NewDecoder(strings.NewReader(line))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		fields = append(fields, key.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return fields
}

// TestHostileNames checks, end to end, that control characters in object fields never
// reach the output of the terminal formats, and that they cannot split a line.
func TestHostileNames(t *testing.T) {
	pod := eventtest.WebPod(corev1.PodPhase("Run\x1b]0;pwned\x07ning"), true, "node\u009b2J", "1")
	pod.Name = "evil\x1b[31m\nname"
	pod.Namespace = "ns\x7f"
	ev := &event.Event{Type: event.Added, Time: eventtest.T0, Seq: 1, Resource: eventtest.Pods, Kind: "Pod", Object: pod}
	for _, format := range []Format{FormatPretty, FormatWide, FormatName} {
		out := render(t, Options{Format: format, Location: time.UTC}, []*event.Event{ev})
		line, ok := strings.CutSuffix(string(out), "\n")
		if !ok || strings.Contains(line, "\n") {
			t.Errorf("%s: want exactly one line, got %q", format, out)
		}
		for _, r := range line {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Errorf("%s: raw control character %U in %q", format, r, line)
			}
		}
		if !strings.Contains(line, `evil\x1b[31m\nname`) {
			t.Errorf("%s: escaped name missing from %q", format, line)
		}
	}
}

// TestColorIgnoresGlobalSwitch checks that Options.Color alone decides: fatih/color's
// global NoColor describes stdout, not the stream a Printer writes to.
func TestColorIgnoresGlobalSwitch(t *testing.T) {
	saved := color.NoColor
	t.Cleanup(func() { color.NoColor = saved })
	ev := eventtest.Events()[:1]
	for _, global := range []bool{false, true} {
		color.NoColor = global
		if out := render(t, Options{Color: true}, ev); !bytes.Contains(out, []byte("\x1b[32mADDED\x1b[0m")) {
			t.Errorf("NoColor=%v, Color: true: no green ADDED in %q", global, out)
		}
		if out := render(t, Options{Color: false}, ev); bytes.ContainsRune(out, 0x1b) {
			t.Errorf("NoColor=%v, Color: false: escape sequence in %q", global, out)
		}
	}
}

func TestNameColumnIsNeverTruncated(t *testing.T) {
	long := strings.Repeat("x", 2*maxNameColumn)
	pod := eventtest.WebPod(corev1.PodRunning, true, "worker-1", "1")
	pod.Name = long
	out := render(t, Options{Location: time.UTC}, []*event.Event{{Type: event.Added, Time: eventtest.T0, Resource: eventtest.Pods, Kind: "Pod", Object: pod}})
	if !bytes.Contains(out, []byte("default/"+long+" 1/1")) {
		t.Errorf("want the whole name then one space, got %q", out)
	}
}

func TestParseFormat(t *testing.T) {
	for _, name := range Formats() {
		if f, err := ParseFormat(name); err != nil || string(f) != name {
			t.Errorf("ParseFormat(%q) = %q, %v", name, f, err)
		}
	}
	for _, bad := range []string{"x", "", "JSON", "table"} {
		_, err := ParseFormat(bad)
		want := `unknown output format "` + bad + `"; use one of: pretty, wide, json, yaml, name, or a template: `
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseFormat(%q) error = %v, want %s", bad, err, want)
		}
	}
	if _, err := NewPrinter(Options{Format: "table"}); err == nil {
		t.Error("NewPrinter accepted format table")
	}
	if p, err := NewPrinter(Options{}); err != nil || p.format != FormatPretty {
		t.Errorf("NewPrinter(Options{}) = %v, %v; want a pretty printer", p, err)
	}
}

func TestAppendKeepsDstOnError(t *testing.T) {
	p, err := NewPrinter(Options{Format: FormatPretty})
	if err != nil {
		t.Fatal(err)
	}
	dst := []byte("earlier line\n")
	out, err := p.Append(dst, &event.Event{Type: event.Added, Time: eventtest.T0, Kind: "Thing", Object: &metav1.Status{}})
	if err == nil || string(out) != "earlier line\n" {
		t.Errorf("Append of an object without metadata = %q, %v; want the input back and an error", out, err)
	}
}

// TestHotPathAllocations pins down that a pod line (pretty) and a JSON envelope around
// an already encoded object cost no allocations once the Printer's buffers are warm.
func TestHotPathAllocations(t *testing.T) {
	ev := &event.Event{Type: event.Modified, Time: eventtest.T0, Seq: 42, Resource: eventtest.Pods, Kind: "Pod", Object: eventtest.RealisticPod()}
	if _, err := ev.ObjectJSON(); err != nil {
		t.Fatal(err)
	}
	for _, format := range []Format{FormatPretty, FormatWide, FormatJSON, FormatName} {
		p, err := NewPrinter(Options{Format: format, Color: true, ShowKind: true, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, 0, 64<<10)
		allocs := testing.AllocsPerRun(100, func() {
			if dst, err = p.Append(dst[:0], ev); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per event, want 0", format, allocs)
		}
		if !utf8.Valid(dst) {
			t.Errorf("%s: invalid UTF-8 output", format)
		}
	}
}

// TestAppendHasACaseForEveryFormat: every format ParseFormat accepts renders, and one
// without a case in Append is an error naming it, not pretty output in disguise.
func TestAppendHasACaseForEveryFormat(t *testing.T) {
	ev := &event.Event{Type: event.Added, Time: eventtest.T0, Resource: eventtest.Pods, Kind: "Pod", Object: eventtest.WebPod(corev1.PodRunning, true, "worker-1", "1")}
	for _, name := range Formats() {
		p, err := NewPrinter(Options{Format: Format(name), Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := p.Append(nil, ev); err != nil || len(out) == 0 {
			t.Errorf("format %s: Append = %q, %v; want output", name, out, err)
		}
	}
	p, err := NewPrinter(Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	p.format = "table" // as if "table" were added to Formats without a case in Append
	out, err := p.Append([]byte("earlier line\n"), ev)
	if err == nil || !strings.Contains(err.Error(), `"table"`) || string(out) != "earlier line\n" {
		t.Errorf("Append in a format without a case = %q, %v; want the input back and an error naming the format", out, err)
	}
}

// TestTemplateFormats: kubectl's template formats, per event, with the event type as a
// leading EVENT column (custom-columns) or word (jsonpath, go-template); bad templates
// are errors naming what is wrong.
func TestTemplateFormats(t *testing.T) {
	pod := eventtest.WebPod(corev1.PodRunning, true, "worker-1", "1")
	ev := &event.Event{Type: event.Added, Time: eventtest.T0, Resource: eventtest.Pods, Kind: "Pod", Object: pod}
	mod := &event.Event{Type: event.Modified, Time: eventtest.T0, Resource: eventtest.Pods, Kind: "Pod", Object: pod, Old: pod}
	for format, want := range map[Format]string{
		"custom-columns=NAME:.metadata.name,NODE:spec.nodeName,MISSING:.status.nothing": "EVENT      NAME              NODE       MISSING\nADDED      " + pod.Name + "   worker-1   <none>\nMODIFIED   " + pod.Name + "   worker-1   <none>\n",
		"jsonpath={.metadata.name}":                                 "ADDED " + pod.Name + "\nMODIFIED " + pod.Name + "\n",
		`go-template={{.metadata.name}} {{.spec.nodeName}}{{"\n"}}`: "ADDED " + pod.Name + " worker-1\nMODIFIED " + pod.Name + " worker-1\n",
	} {
		p, err := NewPrinter(Options{Format: format})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out, err := p.Append(nil, ev)
		if err == nil {
			out, err = p.Append(out, mod)
		}
		if err != nil || string(out) != want {
			t.Errorf("%s:\n got %q, %v\nwant %q", format, out, err, want)
		}
	}
	for _, bad := range []string{"jsonpath=", "jsonpath={.metadata.name", "go-template={{.x", "custom-columns=NAME", "custom-columns-file=/nonexistent", "jsonpath-file=/nonexistent"} {
		if _, err := ParseFormat(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseFormat(%q) = %v; want a one-line error", bad, err)
		}
	}
}

// TestTemplateFileFormats: the -file forms read the template from a file, as kubectl's do
// (custom-columns-file: a line of headers, a line of paths).
func TestTemplateFileFormats(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pod := eventtest.WebPod(corev1.PodRunning, true, "worker-1", "1")
	ev := &event.Event{Type: event.Deleted, Time: eventtest.T0, Resource: eventtest.Pods, Kind: "Pod", Object: pod}
	for format, want := range map[string]string{
		"custom-columns-file=" + write("cols", "NAME   NODE\n.metadata.name   {.spec.nodeName}\n"): "EVENT      NAME              NODE\nDELETED    " + pod.Name + "   worker-1\n",
		"jsonpath-file=" + write("jp", "{.spec.nodeName}"):                                         "DELETED worker-1\n",
		"go-template-file=" + write("gt", "{{.spec.nodeName}}\n"):                                  "DELETED worker-1\n",
	} {
		p, err := NewPrinter(Options{Format: Format(format)})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out, err := p.Append(nil, ev)
		if err != nil || string(out) != want {
			t.Errorf("%s: got %q, %v; want %q", format, out, err, want)
		}
	}
	if _, err := ParseFormat("custom-columns-file=" + write("bad", "A B\n.a\n")); err == nil || !strings.Contains(err.Error(), "don't match") {
		t.Errorf("headers and paths of different counts: %v", err)
	}
}
