// Package render turns informer events into text for terminals, files and scripts.
//
// Formats:
//
//   - pretty (the default): one aligned line per event: time, event type, name, then
//     the columns `kubectl get` prints for the object (package kubectl; Events keep a
//     summary of their own: reason, message, count), and with diffs on, a line per
//     change under each MODIFIED event. Columns are as wide as what has been seen; on a
//     terminal, a header line per kind (table.go) and long values shortened to its
//     width.
//   - wide: pretty with kubectl's -o wide columns.
//   - custom-columns=, jsonpath=, go-template= and their -file= forms: kubectl's
//     templates, per event, printing exactly what `kubectl get -w` prints
//     (kubectl.Template); with WatchEvents, what it prints with --output-watch-events.
//   - json: JSON Lines. "type" and "object" are the keys kubectl uses for
//     `get -w --output-watch-events -o json`, so tools written for kubectl keep working;
//     "time", "seq", "resource" and (only when true) "finalStateUnknown" are added.
//     With diffs on, MODIFIED events add "diff", their changes (diff.Differ); with
//     ShowOld, MODIFIED and SYNC events add "old", the previous object.
//   - yaml: one YAML document per event ("---" first), with the same keys as json.
//   - name: "<TYPE> <kind>[.<group>]/<name>", e.g. "ADDED pod/web-1". The second field is
//     exactly what `kubectl get -o name` prints (it omits the namespace too), so
//     `awk '{print $2}'` yields names kubectl accepts; the leading event type is needed
//     because, unlike a listing, a watch reports the same name several times. The type
//     is the raw event type (never TERMINATING) so scripts see a fixed set of words.
//
// Every string taken from an object is escaped before it reaches a terminal (package
// escape); json and yaml are escaped by their encoders.
package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/kubectl"
)

// Format is an output format, as given to -o.
type Format string

const (
	FormatPretty Format = "pretty"
	FormatWide   Format = "wide"
	FormatJSON   Format = "json"
	FormatYAML   Format = "yaml"
	FormatName   Format = "name"
)

// Formats lists the output formats in the order help texts should show them.
func Formats() []string {
	return []string{string(FormatPretty), string(FormatWide), string(FormatJSON), string(FormatYAML), string(FormatName)}
}

// ParseFormat checks a user-supplied format name; a template format (see
// kubectl.TemplateFormats) is compiled, so that its errors come before anything connects.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if s == f {
			return Format(s), nil
		}
	}
	if kubectl.IsTemplateFormat(s) {
		if _, err := kubectl.NewTemplate(s, false); err != nil {
			return "", err
		}
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown output format %q; use one of: %s, or a template: custom-columns=SPEC, jsonpath=TEMPLATE, go-template=TEMPLATE (or their -file=PATH forms)", s, strings.Join(Formats(), ", "))
}

// Options configure a Printer.
type Options struct {
	// Format is the output format; empty means pretty.
	Format Format
	// Color enables ANSI colours. The caller decides it per output stream, so the
	// Printer never looks at fatih/color's global NoColor switch.
	Color bool
	// Timestamps prints full RFC 3339 times (with milliseconds) instead of 15:04:05
	// in pretty and wide output.
	Timestamps bool
	// ShowKind makes the kind lead the name (pod/default/web-1,
	// deployment.apps/default/web), for when several types are watched at once.
	ShowKind bool
	// Location is the time zone for pretty and wide times; nil means time.Local.
	Location *time.Location
	// Diff computes what MODIFIED events changed: pretty and wide print it under the
	// event line, json and yaml add it as "diff". Nil turns diffs off (--no-diff).
	Diff *diff.Differ
	// ShowOld adds the whole previous object as "old" to json and yaml output of
	// MODIFIED and SYNC events.
	ShowOld bool
	// Namespace is the one namespace being watched (-n, or the context's): pretty and
	// wide output leave it out of names, since it says nothing new. Empty when every
	// namespace is watched (-A), or for output read without the command line (files).
	Namespace string
	// TerminalWidth returns the width in columns of the terminal the output goes to, or
	// 0 when it does not go to a terminal. Asked for every pretty or wide line, so that a
	// resized terminal is followed. Nil means no terminal.
	TerminalWidth func() int
	// Headers prints a header line (TIME, EVENT, NAME and kubectl's columns) in pretty
	// and wide output before the first line of each kind, and again after HeadersAgain:
	// for a terminal.
	Headers bool
	// PrinterColumns are the additionalPrinterColumns of the watched custom resources,
	// which pretty and wide output show as kubectl does.
	PrinterColumns kubectl.PrinterColumns
	// Clusters are the names of the clusters watched (kubeconfig contexts) when there
	// are several: pretty and wide output then show a cluster column after the time.
	// With one (or none) there is no column.
	Clusters []string
	// WatchEvents gives the template formats the watch event, {"type": ..., "object":
	// ...}, instead of the object alone, as kubectl's --output-watch-events does. The
	// other formats show the event type anyway.
	WatchEvents bool
}

// Printer renders events in one format. It keeps scratch state between calls, so each
// Printer must be used by one goroutine at a time.
type Printer struct {
	format     Format
	timestamps bool
	showKind   bool
	location   *time.Location
	differ     *diff.Differ // nil: no diffs
	showOld    bool
	namespace  string     // left out of names (Options.Namespace)
	width      func() int // the terminal's width (Options.TerminalWidth)
	color      bool       // ANSI colours (Options.Color)
	// typeLabels maps an event type (and TERMINATING) to its maybe coloured label, built
	// once so that a line costs no colour formatting.
	typeLabels map[string]string
	// The widths of the type and name columns: the widest value seen so far (see
	// growColumn).
	typeColumn, nameColumn int
	// kindPrefixes caches "deployment.apps" and the like per kind seen.
	kindPrefixes map[schema.GroupKind]string
	// yamlBuf receives each YAML document before it is copied to the caller's buffer.
	yamlBuf bytes.Buffer
	// changeMarks are the signs of diff lines, coloured or not, like typeLabels;
	// byMarks the style of the managers' marks.
	changeMarks changeMarks
	byMarks     byMarks
	// valueEncoder writes the JSON of diff values shown in pretty output to valueBuf.
	valueBuf     bytes.Buffer
	valueEncoder *json.Encoder
	// table computes kubectl's columns into cells, the line's; tables are the columns
	// seen per kind (widths, headers); lastTable is the one the line being rendered
	// used, nil for lines without kubectl columns.
	table     *kubectl.Table
	cells     kubectl.Cells
	tables    map[schema.GroupKind]*kindTable
	lastTable *kindTable
	// headers: print header lines (Options.Headers); headersAgain counts the calls of
	// HeadersAgain, headerEpoch the count this Printer last acted on.
	headers      bool
	headersAgain atomic.Uint64
	headerEpoch  uint64
	// template prints the template formats (custom-columns=, jsonpath=, go-template=...).
	template *kubectl.Template
	// clusters is the cluster column (Options.Clusters); nil with one cluster.
	clusters *clusterColumn
}

// NewPrinter returns a Printer for o.
func NewPrinter(o Options) (*Printer, error) {
	format := o.Format
	if format == "" {
		format = FormatPretty
	}
	if _, err := ParseFormat(string(format)); err != nil {
		return nil, err
	}
	location := o.Location
	if location == nil {
		location = time.Local
	}
	p := &Printer{
		format:       format,
		timestamps:   o.Timestamps,
		color:        o.Color,
		showKind:     o.ShowKind,
		location:     location,
		typeLabels:   newTypeLabels(o.Color),
		kindPrefixes: make(map[schema.GroupKind]string),
		differ:       o.Diff,
		showOld:      o.ShowOld,
		namespace:    o.Namespace,
		width:        o.TerminalWidth,
		changeMarks:  newChangeMarks(o.Color),
		byMarks:      newByMarks(o.Color),
		typeColumn:   minTypeColumn,
		clusters:     newClusterColumn(o.Clusters, o.Color),
	}
	var err error
	if kubectl.IsTemplateFormat(string(format)) {
		if p.template, err = kubectl.NewTemplate(string(format), o.WatchEvents); err != nil {
			return nil, err
		}
	}
	p.tables = map[schema.GroupKind]*kindTable{}
	p.headers = o.Headers
	if p.headers && p.clusters != nil {
		p.clusters.width = max(p.clusters.width, len("CLUSTER")) // under its header
	}
	if p.table, err = kubectl.NewTable(o.PrinterColumns, format == FormatWide); err != nil {
		return nil, err
	}
	p.valueEncoder = json.NewEncoder(&p.valueBuf)
	p.valueEncoder.SetEscapeHTML(false)
	return p, nil
}

// Unchanged reports whether ev is a MODIFIED event with nothing left in its diff once
// the ignored paths are left out (see diff.Differ.Unchanged): what --changes-only skips.
// Always false when diffs are off.
func (p *Printer) Unchanged(ev *event.Event) bool { return p.differ.Unchanged(ev) }

// Append renders ev as one or more complete lines, each ending in '\n', appended to
// dst; a jsonpath or go-template format appends exactly what its template prints, which
// may be no line at all, as in kubectl. On error dst is returned unchanged (a template
// that failed on ev's object: a *kubectl.ExecError).
func (p *Printer) Append(dst []byte, ev *event.Event) ([]byte, error) {
	start := len(dst)
	if ev.Type == event.DigestStep && p.format != FormatJSON && p.format != FormatYAML && p.format != FormatPretty && p.format != FormatWide {
		return dst, nil // no object to name or template
	}
	var err error
	switch p.format {
	case FormatJSON:
		dst, err = AppendEnvelopeWithDiff(dst, ev, p.differ, p.showOld)
		dst = append(dst, '\n')
	case FormatYAML:
		dst, err = p.appendYAML(dst, ev)
	case FormatName:
		dst, err = p.appendName(dst, ev)
	case FormatPretty, FormatWide:
		dst, err = p.appendLine(dst, ev)
	default:
		if p.template != nil {
			dst, err = p.template.Append(dst, ev, p.byValue(ev))
			break
		}
		// A format added to Formats without a case here: say so on the first event
		// rather than print it as some other format.
		err = fmt.Errorf("render: no renderer for output format %q", p.format)
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

func (p *Printer) appendName(dst []byte, ev *event.Event) ([]byte, error) {
	m, err := eventMeta(ev)
	if err != nil {
		return dst, err
	}
	dst = escape.Append(dst, string(ev.Type))
	dst = append(dst, ' ')
	dst = append(dst, p.kindPrefix(ev)...)
	dst = append(dst, '/')
	dst = escape.Append(dst, m.GetName())
	return append(dst, '\n'), nil
}

// kindPrefix is the resource part of `kubectl get -o name`: the lower-case kind, then
// "." and the group unless it is the core group.
func (p *Printer) kindPrefix(ev *event.Event) string {
	gk := schema.GroupKind{Group: ev.Resource.Group, Kind: ev.Kind}
	if prefix, ok := p.kindPrefixes[gk]; ok {
		return prefix
	}
	prefix := strings.ToLower(gk.Kind)
	if gk.Group != "" {
		prefix += "." + gk.Group
	}
	prefix = string(escape.Append(nil, prefix))
	p.kindPrefixes[gk] = prefix
	return prefix
}
