package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/listener"
)

// The --sink flag's help and the tables of docs/sinks.md are written from the kinds
// registry and the settings table, so that they say what the parsers do.
//
//go:generate go run ../../hack/gendocs ../../docs/sinks.md

// SinkSyntaxHelp describes the --sink flag, for its help text.
var SinkSyntaxHelp = sinkSyntaxHelp()

// sinkExamples are --sink values the help shows; a test parses each.
var sinkExamples = []string{
	`file=events.jsonl`,
	`file(format=pretty,max-size=100,compress)=events.log`,
	`jq(raw,output=names.txt)=select(.type=="DELETED") | .object.metadata.name`,
	`terminal(format=json,resync=30s)`,
	`exec(retries=3)=./on-change.sh`,
	`http(header="Authorization=env:HOOK_TOKEN")=https://hooks.example.com/k8s`,
}

func sinkSyntaxHelp() string {
	var b strings.Builder
	b.WriteString("output sink, repeatable: KIND[(OPTIONS)][=TARGET]\n")
	var targets []string
	for _, k := range kinds {
		targets = append(targets, k.targetDoc+" for "+k.Name)
	}
	fmt.Fprintf(&b, "KIND is %s; TARGET (taken verbatim) is %s.\n", kindList(), strings.Join(targets, ", "))
	b.WriteString("OPTIONS: comma-separated key=value (a boolean's bare key means true): ")
	var groups []string
	for _, g := range optionGroups() {
		groups = append(groups, strings.Join(g.keys, ", ")+" ("+g.kinds+")")
	}
	b.WriteString(strings.Join(groups, "; "))
	b.WriteString(". Quote values holding ',' or ')': output=\"a,b.txt\".\n")
	b.WriteString("Examples: " + strings.Join(sinkExamples, "  "))
	return b.String()
}

// optionGroup is the --sink options that the same kinds take, as key=META.
type optionGroup struct {
	kinds string // "all kinds", "exec, http"
	keys  []string
}

// optionGroups groups the --sink options by the kinds that take them, in the settings
// table's order.
func optionGroups() []optionGroup {
	var groups []optionGroup
	index := map[string]int{}
	for _, set := range settings {
		if set.flag == "" {
			continue
		}
		who := kindNames(set)
		if set.common {
			who = "all kinds"
		}
		i, ok := index[who]
		if !ok {
			i = len(groups)
			index[who] = i
			groups = append(groups, optionGroup{kinds: who})
		}
		groups[i].keys = append(groups[i].keys, set.syntax())
	}
	return groups
}

// kindNames lists the kinds that take the setting: "all", or "exec, http".
func kindNames(set *setting) string {
	if set.common {
		return "all"
	}
	var names []string
	for _, k := range kinds {
		if k.takes(set) {
			names = append(names, k.Name)
		}
	}
	return strings.Join(names, ", ")
}

// syntax is the setting as a --sink option: key=META, or the bare key of a boolean.
func (set *setting) syntax() string {
	if set.meta == "" {
		return set.flag
	}
	return set.flag + "=" + set.meta
}

// valueDoc says what the setting's value is, for the docs.
func (set *setting) valueDoc() string {
	switch set.value {
	case textValue:
		return "text"
	case pathValue:
		return "a file's path"
	case exprValue:
		return "a jq expression"
	case boolValue:
		return "true or false; the bare key is true"
	case countValue:
		return "a whole number, 0 or more"
	case bufferValue:
		return fmt.Sprintf("a whole number, 0 (the default) to %d", MaxBuffer)
	case policyValue:
		return orList(listener.Policies())
	case periodValue:
		return fmt.Sprintf("a duration (30s, 5m, 1h), at least %s, or 0 for none", MinResync)
	case durationValue:
		return "a duration (200ms, 5s, 1m), more than 0"
	case urlValue:
		return "an http:// or https:// URL"
	case commandValue:
		return "a command line, split into words without a shell"
	case kindValue:
		return kindList()
	case eventTypesValue:
		return orList(EventTypeNames) + ", separated by | or ,"
	case transitionsValue:
		return "transitions' names (kubeevents on lists them), separated by | or ,"
	case formatValue:
		var per []string
		templates := ""
		for _, k := range kinds {
			if !k.takes(set) {
				continue
			}
			formats := k.Formats()
			if k.namedFormats {
				formats = append(formats, "one of the config file's formats")
			}
			if k.takesTemplates() {
				formats = append(formats, "a template")
				templates = "; a template is custom-columns=, jsonpath=, go-template= or their -file= forms"
			}
			per = append(per, k.Name+": "+orList(formats))
		}
		return strings.Join(per, "; ") + templates
	}
	return ""
}

// defaultDoc is the setting's default, for the docs: one value, or one per kind.
func (set *setting) defaultDoc() string {
	if set.def == nil {
		return ""
	}
	var per []string
	same := true
	first := ""
	for i, k := range slices.DeleteFunc(slices.Clone(kinds), func(k *Kind) bool { return !k.takes(set) }) {
		d := set.def(k)
		if i == 0 {
			first = d
		}
		same = same && d == first
		if d != "" {
			per = append(per, k.Name+": "+d)
		}
	}
	if same {
		return first
	}
	return strings.Join(per, "; ")
}

// SettingsMarkdown is the reference of the sink kinds and their settings, as Markdown
// tables, for docs/sinks.md.
func SettingsMarkdown() string {
	var b strings.Builder
	b.WriteString("| kind | writes to | target (after `=`) |\n|---|---|---|\n")
	for _, k := range kinds {
		target := k.targetDoc
		if k.optionalTarget {
			target += " (optional)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, cell(k.Description), cell(target))
	}
	b.WriteString("\n| `--sink` | config file | kinds | value | default | meaning |\n|---|---|---|---|---|---|\n")
	for _, set := range settings {
		if set.value == groupValue {
			continue
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n",
			set.flagDoc(), set.yaml, cell(kindNames(set)), cell(set.valueDoc()), cell(set.defaultDoc()), cell(set.help))
	}
	return b.String()
}

// flagDoc is how --sink gives the setting: as an option, as the target, or both.
func (set *setting) flagDoc() string {
	var ways []string
	if set.flag != "" {
		ways = append(ways, code(set.syntax()))
	}
	if set.value == kindValue {
		ways = append(ways, code("KIND"))
	}
	var targetOf []string
	for _, k := range kinds {
		if k.target == set.id() {
			targetOf = append(targetOf, k.Name)
		}
	}
	if len(targetOf) > 0 {
		ways = append(ways, code("="+set.meta)+" ("+strings.Join(targetOf, ", ")+")")
	}
	return strings.Join(ways, ", ")
}

// code is s as Markdown code in a table cell.
func code(s string) string { return "`" + strings.ReplaceAll(s, "|", `\|`) + "`" }

// cell is text for a Markdown table cell: '|' would end the cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// The generated part of docs/sinks.md stands between these lines.
const (
	docBegin = "<!-- sink-settings:begin: generated from internal/config by `go generate ./internal/config`; edit the settings table there -->"
	docEnd   = "<!-- sink-settings:end -->"
)

// UpdateDoc returns doc, the text of docs/sinks.md, with SettingsMarkdown between its
// markers.
func UpdateDoc(doc []byte) ([]byte, error) {
	begin := bytes.Index(doc, []byte(docBegin+"\n"))
	end := bytes.Index(doc, []byte("\n"+docEnd))
	if begin < 0 || end < begin {
		return nil, errors.New("no generated part: want a line " + docBegin + ", the tables, and a line " + docEnd)
	}
	var out bytes.Buffer
	out.Write(doc[:begin+len(docBegin)+1])
	out.WriteString(SettingsMarkdown())
	out.Write(doc[end:])
	return out.Bytes(), nil
}
