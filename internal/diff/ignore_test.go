package diff

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseIgnorePath(t *testing.T) {
	for _, tc := range []struct {
		in       string
		segments []string
		err      string
	}{
		{in: "metadata.resourceVersion", segments: []string{"metadata", "resourceVersion"}},
		{in: ".metadata.resourceVersion", segments: []string{"metadata", "resourceVersion"}},
		{in: "/metadata/resourceVersion", segments: []string{"metadata", "resourceVersion"}},
		{in: "status.conditions.*.lastHeartbeatTime", segments: []string{"status", "conditions", "*", "lastHeartbeatTime"}},
		{in: "/status/conditions/*/lastHeartbeatTime", segments: []string{"status", "conditions", "*", "lastHeartbeatTime"}},
		{in: `metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`,
			segments: []string{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}},
		{in: "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
			segments: []string{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}},
		{in: "/a~0b/c~01", segments: []string{"a~b", "c~1"}},
		{in: `a\\b.c\[0\]`, segments: []string{`a\b`, "c[0]"}},
		{in: "spec.containers.0.image", segments: []string{"spec", "containers", "0", "image"}},
		{in: "*", segments: []string{"*"}},
		{in: `\/etc.x`, segments: []string{"/etc", "x"}},
		{in: "ünï.名前", segments: []string{"ünï", "名前"}},

		{in: "", err: "invalid path: empty"},
		{in: ".", err: `invalid path ".": no segment after "."`},
		{in: "a..b", err: `invalid path "a..b": empty segment at column 3`},
		{in: "..a", err: `invalid path "..a": empty segment at column 2`},
		{in: "a.", err: `invalid path "a.": ends in "."`},
		{in: `a.b\`, err: `invalid path "a.b\\": ends in an unfinished escape "\"`},
		{in: "status.conditions[0].type", err: `invalid path "status.conditions[0].type": "[" at column 18: write list elements as a segment, e.g. status.conditions.0 or status.conditions.*; a literal "[" is "\["`},
		{in: "/", err: `invalid path "/": empty segment at column 2`},
		{in: "/a//b", err: `invalid path "/a//b": empty segment at column 4`},
		{in: "/a/", err: `invalid path "/a/": empty segment at column 4`},
		{in: "/a/b~2", err: `invalid path "/a/b~2": invalid escape "~2" at column 5 (write ~0 for "~" and ~1 for "/")`},
		{in: "/a~", err: `invalid path "/a~": invalid escape "~" at column 3 (write ~0 for "~" and ~1 for "/")`},
		{in: "a\nb..c", err: `invalid path "a\nb..c": empty segment at column 5`},
	} {
		path, err := ParseIgnorePath(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseIgnorePath(%q) error = %v, want %s", tc.in, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseIgnorePath(%q) error has more than one line: %q", tc.in, err)
			}
			continue
		}
		if err != nil || !slices.Equal(path.segments, tc.segments) {
			t.Errorf("ParseIgnorePath(%q) = %q, %v; want %q", tc.in, path.segments, err, tc.segments)
		}
	}
}

func TestIgnorePathString(t *testing.T) {
	for in, want := range map[string]string{
		"metadata.resourceVersion":                                                "metadata.resourceVersion",
		"/status/conditions/*/lastHeartbeatTime":                                  "status.conditions.*.lastHeartbeatTime",
		"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration": `metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`,
		"/~1etc/a[0]\\b": `\/etc.a\[0]\\b`,
	} {
		path, err := ParseIgnorePath(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := path.String(); got != want {
			t.Errorf("ParseIgnorePath(%q).String() = %q, want %q", in, got, want)
		}
	}
}

func TestIgnorePathPointer(t *testing.T) {
	path, err := ParseIgnorePath(`metadata.annotations.a~b/c\.d`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := path.pointer(), "/metadata/annotations/a~0b~1c.d"; got != want {
		t.Errorf("pointer() = %q, want %q", got, want)
	}
}

// FuzzParseIgnorePath checks that any input is either rejected with a one-line error or
// gives a path without empty segments that reads back the same from its String and from
// its JSON pointer. Its seeds are in testdata/fuzz/FuzzParseIgnorePath.
func FuzzParseIgnorePath(f *testing.F) {
	f.Fuzz(func(t *testing.T, in string) {
		path, err := ParseIgnorePath(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error for %q: %q", in, err)
			}
			return
		}
		if len(path.segments) == 0 || slices.Contains(path.segments, "") {
			t.Fatalf("ParseIgnorePath(%q) = %q: empty path or segment", in, path.segments)
		}
		for _, form := range []string{path.String(), path.pointer()} {
			again, err := ParseIgnorePath(form)
			if err != nil {
				t.Fatalf("%q parsed as %q, whose form %q does not parse: %v", in, path.segments, form, err)
			}
			if !slices.Equal(again.segments, path.segments) {
				t.Fatalf("%q parsed as %q, but its form %q as %q", in, path.segments, form, again.segments)
			}
		}
		if utf8.ValidString(in) && !utf8.ValidString(path.String()) {
			t.Fatalf("String() of valid UTF-8 %q is not valid UTF-8: %q", in, path.String())
		}
	})
}
