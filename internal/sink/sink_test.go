package sink

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func podEvent(typ event.EventType, name, rv string, annotations map[string]string) *event.Event {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv, Annotations: annotations},
	}
	return &event.Event{Type: typ, Time: time.Unix(0, 0), Seq: 1, Resource: podsGVR, Kind: "Pod", Object: pod}
}

func jsonPrinter(t *testing.T) *render.Printer {
	t.Helper()
	p, err := render.NewPrinter(render.Options{Format: render.FormatJSON, Diff: diff.NewDiffer(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A file sink is created 0600, appends, and holds one whole line per event.
func TestFileSinkWholeLinesMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, []byte("{\"earlier\":true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path, Rotation{}, t.Errorf) // no warning: the file is private
	if err != nil {
		t.Fatal(err)
	}
	s := NewPrinter(f, jsonPrinter(t), "file "+path, f.Close)
	for i := range 3 {
		if err := s.Write(podEvent(event.Added, fmt.Sprint("p", i), "1", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 4 || lines[0] != `{"earlier":true}` || !strings.HasPrefix(lines[3], `{"type":"ADDED"`) {
		t.Errorf("file holds %q; want the earlier line and three appended events", raw)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode().Perm())
	}
}

func TestFileSinkWarnsAboutWideMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var warned []string
	f, err := OpenFile(path, Rotation{}, func(format string, args ...any) { warned = append(warned, fmt.Sprintf(format, args...)) })
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(warned) != 1 || !strings.Contains(warned[0], "mode 0644") || !strings.Contains(warned[0], "chmod 600 "+path) {
		t.Errorf("warnings %q; want one naming the mode and the fix", warned)
	}
}

func TestFileSinkOpenErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing", "x.jsonl"), filepath.Join(regular, "x.jsonl"), dir} {
		_, err := OpenFile(path, Rotation{}, t.Errorf)
		if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
			t.Errorf("OpenFile(%s) = %v; want one line naming the path", path, err)
		}
	}
}

// A write error (disk full) names the file; a closed pipe is ErrOutputClosed, quiet.
func TestWriteErrors(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full here")
	}
	defer full.Close()
	s := NewPrinter(full, jsonPrinter(t), "file /dev/full", nil)
	err = s.Write(podEvent(event.Added, "p", "1", nil))
	if err == nil || err.Error() != "writing file /dev/full: no space left on device" {
		t.Errorf("disk full: %v", err)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	s = NewPrinter(w, jsonPrinter(t), "stdout", nil)
	err = s.Write(podEvent(event.Added, "p", "1", nil))
	if !errors.Is(err, listener.ErrOutputClosed) {
		t.Errorf("closed pipe: %v; want ErrOutputClosed", err)
	}
}

func compile(t *testing.T, expr string) *jq.Query {
	t.Helper()
	q, err := jq.Compile(expr)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestJQSink(t *testing.T) {
	var out bytes.Buffer
	s := NewJQ(JQOptions{Name: "names", Query: compile(t, `select(.type == "DELETED") | .object.metadata.name`), Raw: true, Out: &out, Describe: "stdout", Warn: t.Errorf})
	if err := s.Write(podEvent(event.Added, "kept", "1", nil)); !errors.Is(err, listener.ErrFiltered) {
		t.Errorf("an event the expression yields nothing for: %v, want ErrFiltered", err)
	}
	if err := s.Write(podEvent(event.Deleted, "gone", "1", nil)); err != nil {
		t.Fatal(err)
	}
	if out.String() != "gone\n" {
		t.Errorf("raw output %q, want gone", out.String())
	}
}

// Raw strings from objects are escaped when they go to a terminal.
func TestJQSinkEscapesRawTextOnATerminal(t *testing.T) {
	hostile := "\x1b]0;pwned\x07"
	for _, terminal := range []bool{true, false} {
		var out bytes.Buffer
		s := NewJQ(JQOptions{Name: "a", Query: compile(t, `.object.metadata.annotations.x`), Raw: true, Terminal: terminal, Out: &out, Describe: "stdout", Warn: t.Errorf})
		if err := s.Write(podEvent(event.Added, "p", "1", map[string]string{"x": hostile})); err != nil {
			t.Fatal(err)
		}
		if hasRaw := strings.Contains(out.String(), "\x1b"); hasRaw == terminal {
			t.Errorf("terminal=%v: output %q", terminal, out.String())
		}
	}
}

// A run-time error on one event is reported, rate-limited, and the stream goes on.
func TestJQSinkRuntimeErrors(t *testing.T) {
	var out bytes.Buffer
	var warnings []string
	s := NewJQ(JQOptions{Name: "math", Query: compile(t, `.object.metadata.name + 1`), Out: &out, Describe: "stdout",
		Warn: func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }})
	for i := range 5 {
		if err := s.Write(podEvent(event.Added, fmt.Sprint("p", i), "1", nil)); !errors.Is(err, listener.ErrFiltered) {
			t.Errorf("event %d: %v, want it skipped", i, err)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `jq sink "math"`) || !strings.Contains(warnings[0], "ns/p0") {
		t.Errorf("warnings %q; want one, naming the sink and the event", warnings)
	}
}

// An event the template fails on (index of a map the object lacks) is left out with one
// line, escaped, at most once per NoticeEvery with the count so far; the others print.
// Without SkipFailedTemplates the failure stops the sink, as any Write error.
func TestPrinterSkipsFailedTemplates(t *testing.T) {
	p, err := render.NewPrinter(render.Options{Format: `go-template={{index .metadata.annotations "a"}}{{"\n"}}`})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var warnings []string
	s := NewPrinter(&out, p, "stdout", nil)
	s.SkipFailedTemplates("screen", func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) })
	bare := podEvent(event.Added, "bare\x1b[2J", "1", nil)
	for _, ev := range []*event.Event{bare, podEvent(event.Added, "web", "1", map[string]string{"a": "x"}), bare} {
		if err := s.Write(ev); err != nil && !errors.Is(err, listener.ErrFiltered) {
			t.Fatalf("Write: %v", err)
		}
	}
	if out.String() != "x\n" {
		t.Errorf("output %q, want the annotated pod's line alone", out.String())
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `sink "screen": the template failed on ADDED Pod ns/bare\x1b[2J: `) ||
		!strings.Contains(warnings[0], "index of untyped nil") || strings.Contains(warnings[0], "\n") {
		t.Errorf("warnings %q; want one line naming the sink, the event and the error, escaped", warnings)
	}
	stops := NewPrinter(&out, p, "stdout", nil)
	if err := stops.Write(bare); err == nil || errors.Is(err, listener.ErrFiltered) {
		t.Errorf("without SkipFailedTemplates: Write = %v, want the template's error", err)
	}
}
