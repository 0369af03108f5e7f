package config

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/hack/sinkdoc"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// TestDocsMatchTheSettingsTable fails when the tables in docs/sinks.md are not what the
// sink kinds' rows write: edit the rows in the kind's package, then run go generate
// ./internal/config.
func TestDocsMatchTheSettingsTable(t *testing.T) {
	const path = "../../docs/sinks.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sinkdoc.UpdateDoc(doc)
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

// TestMarkdownHasEverySetting: each setting is one row, with its keys, kinds, value and
// meaning; '|' in a cell is escaped.
func TestMarkdownHasEverySetting(t *testing.T) {
	md := sinkdoc.Markdown()
	for _, set := range sinkkind.Table() {
		if set.Value == sinkkind.Group {
			continue
		}
		row := ""
		for line := range strings.SplitSeq(md, "\n") {
			if strings.Contains(line, "| `"+set.YAML+"` |") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("no row for %q", set.Key())
			continue
		}
		cells := strings.Split(strings.ReplaceAll(row, `\|`, "¦"), " | ")
		if len(cells) != 6 {
			t.Errorf("row %q has %d cells, want 6", row, len(cells))
			continue
		}
		if set.Flag != "" && !strings.Contains(cells[0], "`"+set.Syntax()+"`") {
			t.Errorf("row %q does not give the --sink key %s", row, set.Syntax())
		}
		kinds := "all"
		if !set.IsCommon() {
			kinds = strings.ReplaceAll(set.KindsTaking(), " or ", ", ")
		}
		if cells[2] != kinds || cells[3] == "" || !strings.Contains(cells[5], set.Help[:10]) {
			t.Errorf("row %q: kinds, value or meaning missing", row)
		}
	}
}
