package config

import (
	"strings"
	"testing"
)

func FuzzParseSinkSpec(f *testing.F) {
	// More seeds are in testdata/fuzz/FuzzParseSinkSpec.
	f.Add(`file=events.jsonl`)
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseSinkSpec(spec)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseSinkSpec(%q): error has several lines: %q", spec, err)
			}
			return
		}
		if !knownKind(s.Type) {
			t.Fatalf("ParseSinkSpec(%q): unknown kind %q", spec, s.Type)
		}
		if s.Name == "" {
			t.Fatalf("ParseSinkSpec(%q): empty name", spec)
		}
		if s.Type == KindFile && (s.Path == "" || s.Format == "") {
			t.Fatalf("ParseSinkSpec(%q): file sink without path or format: %+v", spec, s)
		}
		if s.Type == KindJQ && strings.TrimSpace(s.Expr) == "" {
			t.Fatalf("ParseSinkSpec(%q): jq sink without expression", spec)
		}
		if s.Buffer < 0 || s.Resync < 0 {
			t.Fatalf("ParseSinkSpec(%q): negative setting: %+v", spec, s)
		}
	})
}

func FuzzParseConfig(f *testing.F) {
	// More seeds are in testdata/fuzz/FuzzParseConfig.
	f.Add(example)
	f.Fuzz(func(t *testing.T, data string) {
		file, err := Parse("config.yaml", []byte(data))
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Fatalf("Parse(%q): error has several lines: %q", data, msg)
			}
			if !strings.HasPrefix(msg, "config.yaml:") {
				t.Fatalf("Parse(%q): error does not start with the file name: %q", data, msg)
			}
			return
		}
		seen := make(map[string]bool)
		for _, s := range file.Sinks {
			if !knownKind(s.Type) || s.Name == "" {
				t.Fatalf("Parse(%q): sink with unknown kind or no name: %+v", data, s)
			}
			if seen[s.Name] && !s.AutoName {
				t.Fatalf("Parse(%q): duplicate name %q", data, s.Name)
			}
			seen[s.Name] = true
		}
	})
}
