package kubectl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"strings"

	"github.com/liggitt/tabwriter"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubeevents/kubeevents/internal/event"
)

// The template formats of `kubectl get -o`, per event. Each is given as NAME=VALUE
// (jsonpath={.metadata.name}); the -file forms name a file that holds the value.
// jsonpath and go-template are cli-runtime's printers, set up as kubectl get sets them up
// (--allow-missing-template-keys=true: a missing key prints nothing in jsonpath,
// "<no value>" in go-template); custom-columns follows kubectl's CustomColumnsPrinter (in
// k8s.io/kubectl, which this module does not import). Each event prints exactly what
// `kubectl get -w` prints for it: the template's output and nothing else (no event type,
// no newline the template does not write), custom-columns' header once, then a row per
// event, aligned as kubectl's tabwriter aligns them. With WatchEvents (kubectl's
// --output-watch-events), the template sees what kubectl's sees then: the watch event
// {"type": ..., "object": ...}, not the object alone. Every format also sees who made the
// change as "by" (.by[*].manager): the object's, unless it has a field of that name, or
// the watch event's.
var templateFormats = []string{"custom-columns", "custom-columns-file", "jsonpath", "jsonpath-file", "go-template", "go-template-file"}

// TemplateFormats lists the template formats, each with its "=", for help and completion.
func TemplateFormats() []string {
	out := make([]string, len(templateFormats))
	for i, f := range templateFormats {
		out[i] = f + "="
	}
	return out
}

// IsTemplateFormat reports whether s names a template format (whatever its value).
func IsTemplateFormat(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok {
		return false
	}
	for _, f := range templateFormats {
		if name == f {
			return true
		}
	}
	return false
}

// Template prints events in a template format. It keeps state between events (the
// custom-columns' widths and header), so it is used by one goroutine at a time.
type Template struct {
	columns     []customColumn // custom-columns; nil for the other formats
	jsonPath    *jsonpath.JSONPath
	goTemplate  printers.ResourcePrinter
	watchEvents bool
	buf         bytes.Buffer
	tw          *tabwriter.Writer // custom-columns: aligned like kubectl get -w's table
	headed      bool
}

type customColumn struct {
	header string
	path   *jsonpath.JSONPath
}

// ExecError is a template that failed on one event's object (a function given what it
// cannot take, a filter on what is not a list; never a missing key): kubectl would end
// the watch there. Its text is one line.
type ExecError struct{ Err error }

func (e *ExecError) Error() string { return oneLineError(e.Err).Error() }
func (e *ExecError) Unwrap() error { return e.Err }

// NewTemplate compiles a template format (NAME=VALUE, see IsTemplateFormat); errors are
// one line that says what is wrong with it. watchEvents gives the template the watch
// event ({type, object}) rather than the object, as --output-watch-events does.
func NewTemplate(format string, watchEvents bool) (*Template, error) {
	name, value, _ := strings.Cut(format, "=")
	if value == "" {
		return nil, fmt.Errorf("-o %s= needs a value, e.g. %s", name, templateExample(name))
	}
	t := &Template{watchEvents: watchEvents}
	switch name {
	case "custom-columns", "custom-columns-file":
		var err error
		if name == "custom-columns" {
			t.columns, err = customColumnsFromSpec(value)
		} else {
			t.columns, err = customColumnsFromFile(value)
		}
		if err != nil {
			return nil, err
		}
		t.tw = printers.GetNewTabWriter(&t.buf) // kubectl get -w's writer
		return t, nil
	case "jsonpath", "jsonpath-file":
		p, err := genericclioptions.NewJSONPathPrintFlags("", true).ToPrinter(format)
		if err != nil {
			return nil, oneLineError(err)
		}
		// Executed directly, as JSONPathPrinter.PrintObj executes it on an unstructured
		// object, so that an error is its own line rather than one with the object dumped.
		t.jsonPath = p.(*printers.JSONPathPrinter).JSONPath
	case "go-template", "go-template-file":
		p, err := genericclioptions.NewGoTemplatePrintFlags().ToPrinter(format)
		if err != nil {
			return nil, oneLineError(err)
		}
		t.goTemplate = p
	default:
		return nil, fmt.Errorf("unknown output format %q", format)
	}
	return t, nil
}

func templateExample(name string) string {
	switch name {
	case "custom-columns":
		return "-o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName"
	case "jsonpath":
		return "-o jsonpath='{.metadata.name}'"
	case "go-template":
		return "-o go-template='{{.metadata.name}}'"
	}
	return "-o " + name + "=FILE"
}

func oneLineError(err error) error {
	return fmt.Errorf("%s", strings.Join(strings.Fields(err.Error()), " "))
}

// relaxedPath is kubectl's RelaxedJSONPathExpression: name.name, .name.name, {name.name}
// and {.name.name} all mean {.name.name}.
var relaxedPath = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

func newCustomColumn(header, spec string) (customColumn, error) {
	if spec != "" {
		m := relaxedPath.FindStringSubmatch(spec)
		if m == nil {
			return customColumn{}, fmt.Errorf("custom-columns: unexpected path string %q, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'", spec)
		}
		field := m[1]
		if field == "" {
			field = m[2]
		}
		spec = "{." + field + "}"
	}
	path := jsonpath.New(header).AllowMissingKeys(true)
	if err := path.Parse(spec); err != nil {
		return customColumn{}, fmt.Errorf("custom-columns: column %s: %v", header, err)
	}
	return customColumn{header: header, path: path}, nil
}

// customColumnsFromSpec is NewCustomColumnsPrinterFromSpec: HEADER:PATH,HEADER:PATH.
func customColumnsFromSpec(spec string) ([]customColumn, error) {
	var columns []customColumn
	for _, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
		}
		c, err := newCustomColumn(header, path)
		if err != nil {
			return nil, err
		}
		columns = append(columns, c)
	}
	return columns, nil
}

// customColumnsFromFile is NewCustomColumnsPrinterFromTemplate: a line of headers and a
// line of paths, separated by whitespace.
func customColumnsFromFile(path string) ([]customColumn, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("custom-columns-file: %v", err)
	}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	if !scanner.Scan() {
		return nil, fmt.Errorf("custom-columns-file %s: missing header line; expected one line of space separated headers, one line of space separated column specs", path)
	}
	headers := strings.Fields(scanner.Text())
	if !scanner.Scan() {
		return nil, fmt.Errorf("custom-columns-file %s: missing spec line; expected one line of space separated headers, one line of space separated column specs", path)
	}
	specs := strings.Fields(scanner.Text())
	if len(headers) != len(specs) {
		return nil, fmt.Errorf("custom-columns-file %s: number of headers (%d) and field specifications (%d) don't match", path, len(headers), len(specs))
	}
	columns := make([]customColumn, len(headers))
	for i := range headers {
		if columns[i], err = newCustomColumn(headers[i], specs[i]); err != nil {
			return nil, err
		}
	}
	return columns, nil
}

// Append appends what kubectl get -w prints for ev: custom-columns' row (after the
// header line, the first time), or the template's output. by, when not nil, is who made
// the change (the envelope's "by"), which the template sees as the object's "by" unless
// the object has a field of that name (with WatchEvents, the watch event's). On error
// dst is returned unchanged; an *ExecError is a template that failed on this event's
// object.
func (t *Template) Append(dst []byte, ev *event.Event, by []any) ([]byte, error) {
	value, err := ev.ObjectValue()
	if err != nil {
		return dst, err
	}
	content, ok := value.(map[string]any)
	if !ok {
		return dst, fmt.Errorf("%s event for a %s: the object is not a JSON object", ev.Type, ev.Kind)
	}
	if t.watchEvents {
		// kubectl prints a metav1.WatchEvent around the object.
		content = map[string]any{"type": string(ev.Type), "object": content}
		if by != nil {
			content["by"] = by
		}
	} else if _, taken := content["by"]; by != nil && !taken {
		// A copy of the top level: the object's values are shared with every sink.
		content = maps.Clone(content)
		content["by"] = by
	}
	t.buf.Reset()
	switch {
	case t.columns != nil:
		return t.appendColumns(dst, content)
	case t.jsonPath != nil:
		input := any(content)
		if t.watchEvents {
			// JSONPathPrinter reads a WatchEvent through JSON (numbers become float64);
			// an unstructured object as it is.
			if input, err = throughJSON(content); err != nil {
				return dst, err
			}
		}
		if err := t.jsonPath.Execute(&t.buf, input); err != nil {
			return dst, &ExecError{Err: fmt.Errorf("jsonpath: %v", err)}
		}
	default:
		// GoTemplatePrinter reads any object through JSON, as kubectl's does; on an error it
		// also writes what it was given to t.buf, which is dropped.
		if err := t.goTemplate.PrintObj(&unstructured.Unstructured{Object: content}, &t.buf); err != nil {
			return dst, &ExecError{Err: err}
		}
	}
	return append(dst, t.buf.Bytes()...), nil
}

// throughJSON is v written as JSON and read back, as cli-runtime's printers read a
// typed object.
func throughJSON(v map[string]any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(data, &out)
}

// appendColumns is CustomColumnsPrinter.printOneObject: each column's results joined by
// ",", "<none>" for none, escaped for the terminal; the header before the first row.
func (t *Template) appendColumns(dst []byte, content map[string]any) ([]byte, error) {
	row := make([]string, len(t.columns))
	for i, c := range t.columns {
		results, err := c.path.FindResults(content)
		if err != nil {
			return dst, &ExecError{Err: fmt.Errorf("custom-columns: column %s: %v", c.header, err)}
		}
		var values []string
		if len(results) == 0 || len(results[0]) == 0 {
			values = append(values, "<none>")
		}
		for _, set := range results {
			for _, v := range set {
				values = append(values, printers.EscapeTerminal(fmt.Sprint(v.Interface())))
			}
		}
		row[i] = strings.Join(values, ",")
	}
	if !t.headed {
		t.headed = true
		headers := make([]string, len(t.columns))
		for i, c := range t.columns {
			headers[i] = c.header
		}
		_, _ = fmt.Fprintln(t.tw, strings.Join(headers, "\t"))
	}
	_, _ = fmt.Fprintln(t.tw, strings.Join(row, "\t"))
	// Flushed per event, as kubectl get -w flushes: widths only grow (RememberWidths).
	if err := t.tw.Flush(); err != nil {
		return dst, err
	}
	return append(dst, t.buf.Bytes()...), nil
}
