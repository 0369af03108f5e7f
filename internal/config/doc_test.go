package config

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestDocsMatchTheSettingsTable fails when the tables in docs/sinks.md are not what the
// kinds registry and the settings table write: edit the table in validate.go, then run
// go generate ./internal/config.
func TestDocsMatchTheSettingsTable(t *testing.T) {
	const path = "../../docs/sinks.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := UpdateDoc(doc)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if bytes.Equal(doc, want) {
		return
	}
	got, exp := strings.Split(string(doc), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(got), len(exp)); i++ {
		var g, e string
		if i < len(got) {
			g = got[i]
		}
		if i < len(exp) {
			e = exp[i]
		}
		if g != e {
			t.Fatalf("docs/sinks.md differs from the settings table at line %d; run: go generate ./internal/config\n has:  %s\n want: %s", i+1, g, e)
		}
	}
}

// TestSettingsMarkdownHasEverySetting: each setting is one row, with its keys, kinds,
// value and meaning; '|' in a cell is escaped.
func TestSettingsMarkdownHasEverySetting(t *testing.T) {
	md := SettingsMarkdown()
	for _, set := range settings {
		if set.value == groupValue {
			continue
		}
		row := ""
		for line := range strings.SplitSeq(md, "\n") {
			if strings.Contains(line, "| `"+set.yaml+"` |") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("no row for %q", set.id())
			continue
		}
		cells := strings.Split(strings.ReplaceAll(row, `\|`, "¦"), " | ")
		if len(cells) != 6 {
			t.Errorf("row %q has %d cells, want 6", row, len(cells))
			continue
		}
		if set.flag != "" && !strings.Contains(cells[0], "`"+set.syntax()+"`") {
			t.Errorf("row %q does not give the --sink key %s", row, set.syntax())
		}
		if cells[2] != kindNames(set) || cells[3] == "" || !strings.HasPrefix(cells[5], set.help[:10]) {
			t.Errorf("row %q: kinds, value or meaning missing", row)
		}
	}
}
