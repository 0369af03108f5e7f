package cmd

import (
	"os"
	"strings"
	"testing"
)

// TestFlagsDocIsCurrent fails when docs/flags.md is not what the commands' flags write:
// run make docs.
func TestFlagsDocIsCurrent(t *testing.T) {
	// Under a home directory of its own, as on a newcomer's machine: the page must not
	// hold the generating machine's paths.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECACHEDIR", "")
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

// TestFlagsDocNamesNoHome: a default under the home directory is written as $HOME/...,
// whoever's home it is.
func TestFlagsDocNamesNoHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	doc := FlagsMarkdown()
	if strings.Contains(doc, home) {
		t.Fatalf("docs/flags.md names the home directory %s", home)
	}
	if !strings.Contains(doc, "`$HOME/.kube/cache`") {
		t.Fatal("--cache-dir's default is not written as $HOME/.kube/cache")
	}
}
