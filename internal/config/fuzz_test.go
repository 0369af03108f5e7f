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
		if s.Kind == nil || s.Settings == nil {
			t.Fatalf("ParseSinkSpec(%q): no kind or settings: %+v", spec, s)
		}
		if s.Name == "" {
			t.Fatalf("ParseSinkSpec(%q): empty name", spec)
		}
		if target := s.Kind.TargetRow(); !s.Kind.OptionalTarget && strings.TrimSpace(*s.Text(target.Key())) == "" {
			t.Fatalf("ParseSinkSpec(%q): %s sink without %s: %+v", spec, s.Kind.Name, target.Key(), s.Settings)
		}
		if len(s.Kind.Formats) > 0 && s.Kind.DefaultFormat != "" && s.Format() == "" {
			t.Fatalf("ParseSinkSpec(%q): %s sink without format: %+v", spec, s.Kind.Name, s.Settings)
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
			if s.Kind == nil || s.Name == "" {
				t.Fatalf("Parse(%q): sink with unknown kind or no name: %+v", data, s)
			}
			if seen[s.Name] && !s.AutoName {
				t.Fatalf("Parse(%q): duplicate name %q", data, s.Name)
			}
			seen[s.Name] = true
		}
	})
}
