package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sink"
)

// TestKindsAreComplete: every registration names settings that exist, has a target
// setting it takes, and everything the parsers, completion and the run ask of it.
func TestKindsAreComplete(t *testing.T) {
	if got := Kinds(); !slices.Equal(got, []string{KindTerminal, KindFile, KindJQ, KindExec, KindHTTP}) {
		t.Errorf("Kinds() = %v", got)
	}
	for _, k := range kinds {
		if k.Description == "" || k.TargetHint == "" || k.targetNoun == "" || k.targetMeta == "" {
			t.Errorf("%s: description, target hint, noun or placeholder missing", k.Name)
		}
		if k.defaultName == nil || k.build == nil {
			t.Errorf("%s: no default name or builder", k.Name)
		}
		if (k.AfterOptions == "") != k.optionalTarget {
			t.Errorf("%s: AfterOptions %q, but optional target %v", k.Name, k.AfterOptions, k.optionalTarget)
		}
		for _, id := range k.settings {
			if _, ok := settingByID(id); !ok {
				t.Errorf("%s: takes setting %q, which is not in the settings table", k.Name, id)
			}
		}
		target, ok := settingByID(k.target)
		if !ok || !k.takes(target) {
			t.Errorf("%s: target %q is not a setting it takes", k.Name, k.target)
			continue
		}
		if target.text == nil {
			t.Errorf("%s: target %q is not a string setting", k.Name, k.target)
		}
		if k.writesTo != "" {
			if set, ok := settingByID(k.writesTo); !ok || !k.takes(set) || set.value != pathValue {
				t.Errorf("%s: writes to %q, which is not a path setting it takes", k.Name, k.writesTo)
			}
		}
		if slices.Contains(k.settings, "format") != (len(k.formats) > 0) {
			t.Errorf("%s: takes format %v, but has formats %v", k.Name, slices.Contains(k.settings, "format"), k.formats)
		}
		if k.defaultFormat != "" && k.formats[0] != k.defaultFormat {
			t.Errorf("%s: default format %q is not first in %v", k.Name, k.defaultFormat, k.formats)
		}
	}
	for _, set := range settings {
		if set.value != kindValue && set.value != groupValue && (set.assign == nil) == (set.text == nil) {
			t.Errorf("setting %q needs exactly one of text and assign", set.id())
		}
		if set.flag != "" && set.help == "" {
			t.Errorf("option %q has no help for completion", set.flag)
		}
		if kindsTaking(set) == "" {
			t.Errorf("setting %q is taken by no kind", set.id())
		}
	}
}

// sampleValue is a valid value of each setting type, as a --sink option value and as
// YAML, for a sink of kind k.
func sampleValue(k *Kind, set *setting) (flag, yaml string) {
	switch set.value {
	case textValue:
		return "my-sink", `"my-sink"`
	case pathValue:
		return "out.txt", "out.txt"
	case exprValue:
		if set.flag != "" { // an option, not the target: quoted
			return `"select(.type==\"DELETED\")"`, `'select(.type=="DELETED")'`
		}
		return `select(.type=="DELETED")`, `'select(.type=="DELETED")'`
	case boolValue:
		return "true", "true"
	case countValue:
		return "3", "3"
	case bufferValue:
		return "77", "77"
	case policyValue:
		return "coalesce", "coalesce"
	case periodValue:
		return "30s", "30s"
	case eventTypesValue:
		return "ADDED|DELETED", "ADDED,DELETED"
	case transitionsValue:
		return "crashloop,oomkilled", "[crashloop, oomkilled]" // a bare item after on= continues its list
	case formatValue:
		last := k.Formats()[len(k.formats)-1]
		return last, last
	case durationValue:
		return "250ms", "250ms"
	case urlValue:
		return "https://hooks.example.com/x?a=1", "https://hooks.example.com/x?a=1"
	case commandValue:
		return `./notify.sh --to "on call"`, `'./notify.sh --to "on call"'`
	}
	panic(fmt.Sprintf("no sample for setting %q", set.id()))
}

// TestKindsParseTheSameFromFlagAndFile: a sink of every kind with every option it takes
// parses to the same Sink from --sink and from the config file.
func TestKindsParseTheSameFromFlagAndFile(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.Name, func(t *testing.T) {
			var opts []string
			yaml := "sinks:\n  - type: " + k.Name + "\n"
			var rotate []string
			target, _ := settingByID(k.target)
			for _, set := range settings {
				if set.flag == "" || !k.takes(set) || set == target {
					continue
				}
				f, y := sampleValue(k, set)
				opts = append(opts, set.flag+"="+f)
				if key, ok := strings.CutPrefix(set.yaml, "rotate."); ok {
					rotate = append(rotate, key+": "+y)
				} else {
					yaml += "    " + set.yaml + ": " + y + "\n"
				}
			}
			if len(rotate) > 0 {
				yaml += "    rotate: {" + strings.Join(rotate, ", ") + "}\n"
			}
			spec := k.Name + "(" + strings.Join(opts, ",") + ")"
			if target.flag == "" {
				f, y := sampleValue(k, target)
				spec += "=" + f
				yaml += "    " + target.yaml + ": " + y + "\n"
			}
			fromFlag, err := ParseSinkSpec(spec)
			if err != nil {
				t.Fatalf("ParseSinkSpec(%s): %v", spec, err)
			}
			file, err := Parse("c.yaml", []byte(yaml))
			if err != nil {
				t.Fatalf("Parse(%s): %v", yaml, err)
			}
			fromFile := file.Sinks[0]
			fromFlag.Origin, fromFile.Origin = "", ""
			if !reflect.DeepEqual(fromFlag, fromFile) {
				t.Errorf("--sink %s\n  = %+v\nconfig file:\n%s  = %+v", spec, fromFlag, yaml, fromFile)
			}
			if fromFlag.Buffer != 77 || fromFlag.OnFull != listener.Coalesce || fromFlag.Resync != 30*time.Second {
				t.Errorf("--sink %s: the common settings did not arrive: %+v", spec, fromFlag)
			}
		})
	}
}

// TestKindsComplete: completion offers every option a kind takes, with its help, and
// the values the parser accepts.
func TestKindsComplete(t *testing.T) {
	for _, k := range kinds {
		keys := OptionKeys(k.Name)
		if len(keys) == 0 {
			t.Errorf("%s: no options to complete", k.Name)
		}
		for _, key := range keys {
			if OptionHelp(key) == "" {
				t.Errorf("%s: option %q has no help", k.Name, key)
			}
			values, isPath := OptionValues(k.Name, key)
			set, _ := flagSetting(key)
			for _, v := range values {
				spec := k.Name + "(" + key + "=" + v + ")"
				if strings.HasPrefix(set.yaml, "rotate.") && key != "max-size" {
					spec = k.Name + "(max-size=1," + key + "=" + v + ")" // rotation needs a size
				}
				if !k.optionalTarget {
					if set, _ := settingByID(k.target); set.value == urlValue {
						spec += "=http://x"
					} else {
						spec += "=x"
					}
				}
				if _, err := ParseSinkSpec(spec); err != nil {
					t.Errorf("%s: completion offers %s, which does not parse: %v", k.Name, spec, err)
				}
			}
			if isPath != (set.value == pathValue) {
				t.Errorf("%s: option %q completes as a path: %v", k.Name, key, isPath)
			}
		}
	}
	if v, _ := OptionValues(KindFile, "format"); !slices.Equal(v, FileFormats()) {
		t.Errorf("file formats to complete = %v, want %v", v, FileFormats())
	}
	if v, _ := OptionValues(KindTerminal, "raw"); v != nil {
		t.Errorf("terminal sinks take no raw, yet it completes %v", v)
	}
}

func TestWritesStdoutAndSetStdout(t *testing.T) {
	tests := []struct {
		sink Sink
		want bool
	}{
		{Sink{Type: KindTerminal}, true},
		{Sink{Type: KindFile, Path: "events.jsonl"}, false},
		{Sink{Type: KindFile, Path: Stdout}, true},
		{Sink{Type: KindJQ, Expr: "."}, true},
		{Sink{Type: KindJQ, Expr: ".", Output: Stdout}, true},
		{Sink{Type: KindJQ, Expr: ".", Output: "names.txt"}, false},
		{Sink{Type: "nope"}, false},
	}
	for _, tt := range tests {
		if got := tt.sink.WritesStdout(); got != tt.want {
			t.Errorf("%+v.WritesStdout() = %v, want %v", tt.sink, got, tt.want)
		}
	}
	s := Sink{Type: KindFile, Path: "/dev/stdout", Name: "stdout-2", AutoName: true}
	s.SetStdout()
	if s.Path != Stdout || s.Name != "stdout" || !s.WritesStdout() {
		t.Errorf("file sink after SetStdout: %+v", s)
	}
	s = Sink{Type: KindJQ, Expr: ".", Output: "/dev/stdout", Name: "names"}
	s.SetStdout()
	if s.Output != Stdout || s.Name != "names" || !s.WritesStdout() {
		t.Errorf("jq sink after SetStdout: %+v", s)
	}
	s = Sink{Type: KindTerminal, Name: "screen"}
	if _, ok := s.Destination(); ok {
		t.Error("a terminal sink has a destination file")
	}
}

// TestBuildEveryKind: every kind builds into a sink that writes where its settings say.
func TestBuildEveryKind(t *testing.T) {
	dir := t.TempDir()
	query, err := jq.Compile(".object.metadata.name")
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", ResourceVersion: "1"},
	}
	ev := &event.Event{Type: event.Added, Time: time.Unix(0, 0), Seq: 1,
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Object: pod}
	for _, s := range []Sink{
		{Name: "screen", Type: KindTerminal, Format: "name"},
		{Name: "archive", Type: KindFile, Format: "json", Path: filepath.Join(dir, "events.jsonl")},
		{Name: "stdout", Type: KindFile, Format: "json", Path: Stdout},
		{Name: "names", Type: KindJQ, Expr: "."},
		{Name: "names-file", Type: KindJQ, Expr: ".", Output: filepath.Join(dir, "names.txt")},
	} {
		var stdout bytes.Buffer
		var opened []*sink.File
		out, err := Build(s, BuildEnv{Stdout: &stdout, Query: query, Opened: func(f *sink.File) { opened = append(opened, f) }})
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

	_, err = Build(Sink{Name: "x", Type: "nope"}, BuildEnv{})
	if err == nil || err.Error() != `sink "x": unknown kind "nope"` {
		t.Errorf("Build of an unknown kind: %v", err)
	}
}

// An http sink under a policy that loses nothing retries until its receiver answers,
// unless it sets retries; under the others it gives up after DefaultHTTPRetries.
func TestHTTPRetriesFollowThePolicy(t *testing.T) {
	three := 3
	for _, tc := range []struct {
		policy  listener.Policy
		retries *int
		want    int
	}{
		{listener.Policy{}, nil, sink.RetryForever},
		{listener.Block, nil, sink.RetryForever},
		{listener.Coalesce, nil, sink.RetryForever},
		{listener.DropOldest, nil, DefaultHTTPRetries},
		{listener.DropNewest, nil, DefaultHTTPRetries},
		{listener.Block, &three, 3},
		{listener.DropOldest, &three, 3},
	} {
		if got := httpRetries(Sink{Type: KindHTTP, OnFull: tc.policy, Retries: tc.retries}); got != tc.want {
			t.Errorf("on-full=%q, retries %v: %d retries, want %d", tc.policy, tc.retries, got, tc.want)
		}
	}
}
