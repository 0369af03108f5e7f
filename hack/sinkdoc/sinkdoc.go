// Package sinkdoc writes the tables of docs/sinks.md from the sink kinds' rows (package
// sinkkind): go generate ./internal/config runs it (hack/gendocs), and internal/config's
// TestDocsMatchTheSettingsTable fails when the page is not what it would write.
package sinkdoc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// valueDoc says what the setting's value is, for the docs.
func valueDoc(set *sinkkind.Setting) string {
	if set.ValueDoc != "" {
		return set.ValueDoc
	}
	switch set.Value {
	case sinkkind.Text:
		return "text"
	case sinkkind.Path:
		return "a file's path"
	case sinkkind.Expr:
		return "a jq expression"
	case sinkkind.Bool:
		return "true or false; the bare key is true"
	case sinkkind.Count:
		return "a whole number, 0 or more"
	case sinkkind.Buffer:
		return fmt.Sprintf("a whole number, 0 (the default) to %d", sinkkind.MaxBuffer)
	case sinkkind.Policy:
		return sinkkind.OrList(listener.Policies())
	case sinkkind.Period:
		return fmt.Sprintf("a duration (30s, 5m, 1h), at least %s, or 0 for none", sinkkind.MinResync)
	case sinkkind.Duration:
		return "a duration (200ms, 5s, 1m), more than 0"
	case sinkkind.KindName:
		return sinkkind.NameList()
	case sinkkind.EventTypes:
		return sinkkind.OrList(sinkkind.EventTypeNames) + ", separated by | or ,"
	case sinkkind.Transitions:
		return "transitions' names (kubeevents on lists them), separated by | or ,"
	case sinkkind.Format:
		var per, notes []string
		_, taking := rows(set)
		for _, k := range taking {
			formats := k.Formats
			if k.MoreFormats != "" {
				formats = append(formats[:len(formats):len(formats)], k.MoreFormats)
			}
			per = append(per, k.Name+": "+sinkkind.OrList(formats))
			if k.FormatsNote != "" && !strings.Contains(strings.Join(notes, ""), k.FormatsNote) {
				notes = append(notes, "; "+k.FormatsNote)
			}
		}
		return strings.Join(per, "; ") + strings.Join(notes, "")
	}
	return ""
}

// defaultDoc is the setting's default, for the docs: one value, or one per kind.
func defaultDoc(set *sinkkind.Setting) string {
	rows, taking := rows(set)
	var per []string
	first, same := "", true
	for i, row := range rows {
		d := row.Default
		if row.Key() == "name" {
			d = taking[i].NameDoc
		}
		if i == 0 {
			first = d
		}
		same = same && d == first
		if d != "" {
			per = append(per, taking[i].Name+": "+d)
		}
	}
	if same {
		return first
	}
	return strings.Join(per, "; ")
}

// helpDoc is what the setting means, for the docs: one meaning, or one per kind (a
// file's path is the file written, a store's the store).
func helpDoc(set *sinkkind.Setting) string {
	rows, taking := rows(set)
	for _, row := range rows {
		if row.Help != set.Help {
			var per []string
			for i, row := range rows {
				per = append(per, taking[i].Name+": "+row.Help)
			}
			return strings.Join(per, "; ")
		}
	}
	return set.Help
}

// Markdown is the reference of the sink kinds and their settings, as Markdown tables,
// for docs/sinks.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| kind | writes to | target (after `=`) |\n|---|---|---|\n")
	for _, k := range sinkkind.Kinds() {
		target := k.TargetDoc
		if k.OptionalTarget {
			target += " (optional)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, cell(k.Description), cell(target))
	}
	b.WriteString("\n| `--sink` | config file | kinds | value | default | meaning |\n|---|---|---|---|---|---|\n")
	for _, set := range sinkkind.Table() {
		if set.Value == sinkkind.Group {
			continue
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n",
			flagDoc(set), set.YAML, cell(set.TakenBy()), cell(valueDoc(set)), cell(defaultDoc(set)), cell(helpDoc(set)))
	}
	return b.String()
}

// flagDoc is how --sink gives the setting: as an option, as the target, or both.
func flagDoc(set *sinkkind.Setting) string {
	var ways []string
	if set.Flag != "" {
		ways = append(ways, code(set.Syntax()))
	}
	if set.Value == sinkkind.KindName {
		ways = append(ways, code("KIND"))
	}
	var targetOf []string
	for _, k := range sinkkind.Kinds() {
		if k.Target == set.Key() {
			targetOf = append(targetOf, k.Name)
		}
	}
	if len(targetOf) > 0 {
		ways = append(ways, code("="+set.Meta)+" ("+strings.Join(targetOf, ", ")+")")
	}
	return strings.Join(ways, ", ")
}

// code is s as Markdown code in a table cell.
func code(s string) string { return "`" + strings.ReplaceAll(s, "|", `\|`) + "`" }

// cell is text for a Markdown table cell: '|' would end the cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// The generated part of docs/sinks.md stands between these lines.
const (
	docBegin = "<!-- sink-settings:begin: generated from the sink kinds' rows (internal/sinkkind) by `go generate ./internal/config`; edit the rows there -->"
	docEnd   = "<!-- sink-settings:end -->"
)

// UpdateDoc returns doc, the text of docs/sinks.md, with Markdown between its markers.
func UpdateDoc(doc []byte) ([]byte, error) {
	begin := bytes.Index(doc, []byte(docBegin+"\n"))
	end := bytes.Index(doc, []byte("\n"+docEnd))
	if begin < 0 || end < begin {
		return nil, errors.New("no generated part: want a line " + docBegin + ", the tables, and a line " + docEnd)
	}
	var out bytes.Buffer
	out.Write(doc[:begin+len(docBegin)+1])
	out.WriteString(Markdown())
	out.Write(doc[end:])
	return out.Bytes(), nil
}

// rows returns the rows of a setting, one per kind that takes it (a common row once per
// kind), and those kinds, in the kinds' order.
func rows(of *sinkkind.Setting) (rows []*sinkkind.Setting, taking []*sinkkind.Kind) {
	for _, k := range sinkkind.Kinds() {
		if set, ok := k.Own(of); ok {
			rows, taking = append(rows, set), append(taking, k)
		}
	}
	return rows, taking
}
