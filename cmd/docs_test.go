package cmd

import (
	"os"
	"strings"
	"testing"
)

// TestFlagsDocIsCurrent fails when docs/flags.md is not what the commands' flags write:
// run make docs.
func TestFlagsDocIsCurrent(t *testing.T) {
	const path = "../docs/flags.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := FlagsMarkdown()
	if string(doc) == want {
		return
	}
	got, exp := strings.Split(string(doc), "\n"), strings.Split(want, "\n")
	for i := range max(len(got), len(exp)) {
		var g, e string
		if i < len(got) {
			g = got[i]
		}
		if i < len(exp) {
			e = exp[i]
		}
		if g != e {
			t.Fatalf("%s differs from the flags at line %d; run: make docs\n has:  %s\n want: %s", path, i+1, g, e)
		}
	}
}
