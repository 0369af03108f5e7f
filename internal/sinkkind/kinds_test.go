package sinkkind_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/filesink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/jqsink"
	_ "github.com/kubeevents/kubeevents/internal/sinkkind/kinds"
	"github.com/kubeevents/kubeevents/internal/sinkkind/terminalsink"
)

// TestKindsAreComplete: every registration has everything the parsers, completion, the
// docs and the run ask of it, and its rows have the fields they set.
func TestKindsAreComplete(t *testing.T) {
	if got := sinkkind.Names(); !slices.Equal(got, []string{"terminal", "file", "jq", "exec", "http", "store"}) {
		t.Errorf("Names() = %v", got)
	}
	for _, k := range sinkkind.Kinds() {
		if k.Description == "" || k.TargetHint == "" || k.TargetNoun == "" || k.TargetDoc == "" || k.NameDoc == "" {
			t.Errorf("%s: description, target hint, noun or doc missing", k.Name)
		}
		if k.New == nil || k.Build == nil {
			t.Errorf("%s: no settings or builder", k.Name)
			continue
		}
		if (k.AfterOptions == "") != k.OptionalTarget {
			t.Errorf("%s: AfterOptions %q, but optional target %v", k.Name, k.AfterOptions, k.OptionalTarget)
		}
		settings := k.New()
		target := k.TargetRow()
		if target == nil || target.Meta == "" {
			t.Errorf("%s: target %q is not a row it takes, with a placeholder", k.Name, k.Target)
		} else if _, ok := sinkkind.Field(settings, target.Key()).(*string); !ok {
			t.Errorf("%s: target %q is not a string setting", k.Name, k.Target)
		}
		if k.Output != "" {
			if set, ok := k.Row(k.Output); !ok || set.Value != sinkkind.Path {
				t.Errorf("%s: writes to %q, which is not a path setting it takes", k.Name, k.Output)
			}
		}
		if k.Takes("format") != (len(k.Formats) > 0) {
			t.Errorf("%s: takes format %v, but has formats %v", k.Name, k.Takes("format"), k.Formats)
		}
		if k.DefaultFormat != "" && k.Formats[0] != k.DefaultFormat {
			t.Errorf("%s: default format %q is not first in %v", k.Name, k.DefaultFormat, k.Formats)
		}
		for _, set := range k.Rows {
			checkField(t, k, settings, set)
			if set.Flag != "" && set.Help == "" {
				t.Errorf("%s: option %q has no help for completion", k.Name, set.Flag)
			}
			if set.Needs != "" && (!k.Takes(set.Needs) || !strings.Contains(set.YAML, ".")) {
				t.Errorf("%s: %q needs %q, which it does not take", k.Name, set.Key(), set.Needs)
			}
			// The kinds that take a setting share its one row in the docs (what it means
			// to each kind may be said per kind).
			if r, _ := sinkkind.YAMLRow(set.YAML); r.Flag != set.Flag || r.YAML != set.YAML || r.Value != set.Value || r.Meta != set.Meta {
				t.Errorf("%s: row %q differs from the %q of another kind: %+v, %+v", k.Name, set.Key(), r.Key(), set, r)
			}
		}
	}
}

// checkField: the row sets a field of the settings of the type its value is read as.
func checkField(t *testing.T, k *sinkkind.Kind, settings sinkkind.Settings, set *sinkkind.Setting) {
	t.Helper()
	field := sinkkind.Field(settings, set.Key())
	var ok bool
	switch set.Value {
	case sinkkind.Group:
		ok = field == nil
	case sinkkind.Bool:
		_, ok = field.(*bool)
	case sinkkind.Count:
		switch field.(type) {
		case *int, **int:
			ok = true
		}
	case sinkkind.Duration:
		_, ok = field.(*time.Duration)
	default:
		_, ok = field.(*string)
	}
	if !ok {
		t.Errorf("%s: row %q sets %T", k.Name, set.Key(), field)
	}
}

func TestWritesStdoutAndSetStdout(t *testing.T) {
	spec := func(k *sinkkind.Kind, settings sinkkind.Settings) sinkkind.Spec {
		return sinkkind.Spec{Kind: k, Settings: settings}
	}
	tests := []struct {
		sink sinkkind.Spec
		want bool
	}{
		{spec(terminalsink.Kind, &terminalsink.Settings{}), true},
		{spec(filesink.Kind, &filesink.Settings{Path: "events.jsonl"}), false},
		{spec(filesink.Kind, &filesink.Settings{Path: sinkkind.Stdout}), true},
		{spec(jqsink.Kind, &jqsink.Settings{Expr: "."}), true},
		{spec(jqsink.Kind, &jqsink.Settings{Expr: ".", Output: sinkkind.Stdout}), true},
		{spec(jqsink.Kind, &jqsink.Settings{Expr: ".", Output: "names.txt"}), false},
		{sinkkind.Spec{}, false},
	}
	for _, tt := range tests {
		if got := tt.sink.WritesStdout(); got != tt.want {
			t.Errorf("%+v.WritesStdout() = %v, want %v", tt.sink, got, tt.want)
		}
	}
	s := spec(filesink.Kind, &filesink.Settings{Path: "/dev/stdout"})
	s.Name, s.AutoName = "stdout-2", true
	s.SetStdout()
	if p, _ := s.Destination(); p != sinkkind.Stdout || s.Name != "stdout" || !s.WritesStdout() {
		t.Errorf("file sink after SetStdout: %+v %+v", s, s.Settings)
	}
	s = spec(jqsink.Kind, &jqsink.Settings{Expr: ".", Output: "/dev/stdout"})
	s.Name = "names"
	s.SetStdout()
	if p, _ := s.Destination(); p != sinkkind.Stdout || s.Name != "names" || !s.WritesStdout() {
		t.Errorf("jq sink after SetStdout: %+v %+v", s, s.Settings)
	}
	if _, ok := spec(terminalsink.Kind, &terminalsink.Settings{}).Destination(); ok {
		t.Error("a terminal sink has a destination file")
	}
}

// TestBuildEveryKind: every kind builds into a sink that writes where its settings say.
func TestBuildEveryKind(t *testing.T) {
	dir := t.TempDir()
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", ResourceVersion: "1"},
	}
	ev := &event.Event{Type: event.Added, Time: time.Unix(0, 0), Seq: 1,
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Object: pod}
	names := ".object.metadata.name"
	for _, s := range []sinkkind.Spec{
		{Name: "screen", Kind: terminalsink.Kind, Settings: &terminalsink.Settings{Format: "name"}},
		{Name: "archive", Kind: filesink.Kind, Settings: &filesink.Settings{Format: "json", Path: filepath.Join(dir, "events.jsonl")}},
		{Name: "stdout", Kind: filesink.Kind, Settings: &filesink.Settings{Format: "json", Path: sinkkind.Stdout}},
		{Name: "names", Kind: jqsink.Kind, Settings: &jqsink.Settings{Expr: names}},
		{Name: "names-file", Kind: jqsink.Kind, Settings: &jqsink.Settings{Expr: names, Output: filepath.Join(dir, "names.txt")}},
	} {
		if err := s.Compile(sinkkind.Compiling{}); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		var stdout bytes.Buffer
		var opened []sinkkind.File
		out, err := sinkkind.Build(s, sinkkind.Env{Stdout: &stdout, Opened: func(f sinkkind.File) { opened = append(opened, f) }})
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if err := out.Write(ev); err != nil {
			t.Fatalf("%s: Write: %v", s.Name, err)
		}
		if err := out.Close(); err != nil {
			t.Fatalf("%s: Close: %v", s.Name, err)
		}
		path, _ := s.Destination()
		written := stdout.String()
		if !s.WritesStdout() {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			written = string(data)
			if len(opened) != 1 || stdout.Len() != 0 {
				t.Errorf("%s: %d files opened, %q on stdout; want its file only", s.Name, len(opened), stdout.String())
			}
		} else if len(opened) != 0 {
			t.Errorf("%s writes to stdout, yet opened %d files", s.Name, len(opened))
		}
		if !strings.Contains(written, "web-0") {
			t.Errorf("%s wrote %q, want the pod's name", s.Name, written)
		}
	}

	_, err := sinkkind.Build(sinkkind.Spec{Name: "x"}, sinkkind.Env{})
	if err == nil || err.Error() != `sink "x": no sink kind to build it` {
		t.Errorf("Build without a kind: %v", err)
	}
}
