package config

import (
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"

	"path/filepath"
	"reflect"
	"testing"
)

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		name, xdg, want string
	}{
		{"set", "/etc/xdg-test", "/etc/xdg-test/kubeevents/config.yaml"},
		{"unset", "", filepath.Join(home, ".config", "kubeevents", "config.yaml")},
		{"relative is ignored", "relative/dir", filepath.Join(home, ".config", "kubeevents", "config.yaml")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", tt.xdg)
			if got := DefaultPath(); got != tt.want {
				t.Errorf("DefaultPath() = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("no home", func(t *testing.T) {
		t.Setenv("XDG_CONFIG_HOME", "")
		t.Setenv("HOME", "")
		if got := DefaultPath(); got != "" {
			t.Errorf("DefaultPath() = %q, want \"\"", got)
		}
	})
}

func mustSpec(t *testing.T, spec string) sinkkind.Spec {
	t.Helper()
	s, err := ParseSinkSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func names(sinks []sinkkind.Spec) []string {
	var n []string
	for _, s := range sinks {
		n = append(n, s.Name)
	}
	return n
}

func TestAssignNames(t *testing.T) {
	f, err := Parse("c.yaml", []byte("sinks:\n  - {type: jq, expr: ., name: jq}\n  - {type: terminal}\n  - {type: file, path: a/e.log}\n"))
	if err != nil {
		t.Fatal(err)
	}
	sinks := append(f.Resolved(),
		mustSpec(t, "jq=.a"),
		mustSpec(t, "jq=.b"),
		mustSpec(t, "terminal=wide"),
		mustSpec(t, "file=b/e.log"),
		mustSpec(t, "file(name=screen-2)=x"),
		mustSpec(t, "jq(name=jq-3)=.c"),
	)
	AssignNames(sinks)
	want := []string{"jq", "screen", "e.log", "jq-2", "jq-4", "screen-3", "e.log-2", "screen-2", "jq-3"}
	if got := names(sinks); !reflect.DeepEqual(got, want) {
		t.Errorf("AssignNames: names %q, want %q", got, want)
	}
	if err := CheckNames(sinks); err != nil {
		t.Errorf("CheckNames after AssignNames: %v", err)
	}
	AssignNames(sinks)
	if got := names(sinks); !reflect.DeepEqual(got, want) {
		t.Errorf("AssignNames again: names %q, want them unchanged: %q", got, want)
	}
}

func TestCheckNames(t *testing.T) {
	f, err := Parse("c.yaml", []byte("sinks:\n  - {type: jq, expr: ., name: archive}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		sinks []sinkkind.Spec
		want  string
	}{
		{"none", nil, ""},
		{"unique", []sinkkind.Spec{{Name: "a"}, {Name: "b"}}, ""},
		{"file and flag", append(f.Resolved(), mustSpec(t, "file(name=archive)=x")),
			`duplicate sink name "archive": c.yaml:2:5 and --sink "file(name=archive)=x"; give each sink its own name`},
		{"two flags", []sinkkind.Spec{mustSpec(t, "terminal(name=a)"), mustSpec(t, "jq(name=b)=."), mustSpec(t, "jq(name=a)=.")},
			`duplicate sink name "a": --sink "terminal(name=a)" and --sink "jq(name=a)=."; give each sink its own name`},
		{"default names not assigned", []sinkkind.Spec{mustSpec(t, "jq=.a"), mustSpec(t, "jq=.b")},
			`duplicate sink name "jq": --sink "jq=.a" and --sink "jq=.b"; give each sink its own name`},
		{"no origin", []sinkkind.Spec{{Name: "a"}, {Name: "a"}},
			`duplicate sink name "a": sink #1 and sink #2; give each sink its own name`},
		{"no name", specs([]Sink{{Name: "a"}, {Type: "jq"}}), `sink #2 has no name; give it one`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckNames(tt.sinks)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("CheckNames error\n got  %s\n want %s", got, tt.want)
			}
		})
	}
}

func TestDefaultsApply(t *testing.T) {
	d := Defaults{Buffer: 1, OnFull: listener.Block, Resync: 5}
	if got := d.Apply(sinkkind.Spec{Name: "a"}); got != (sinkkind.Spec{Name: "a", Buffer: 1, OnFull: listener.Block, Resync: 5}) {
		t.Errorf("Apply to empty sink = %+v", got)
	}
	s := sinkkind.Spec{Name: "a", Buffer: 2, OnFull: listener.Coalesce, Resync: 7}
	if got := d.Apply(s); got != s {
		t.Errorf("Apply to set sink = %+v, want it unchanged", got)
	}
}
