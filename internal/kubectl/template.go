package kubectl

import (
	"bufio"
	"bytes"
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

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
)

// The template formats of `kubectl get -o`, per event. Each is given as NAME=VALUE
// (jsonpath={.metadata.name}); the -file forms name a file that holds the value.
// jsonpath and go-template are cli-runtime's printers, set up as kubectl sets them up
// (missing keys allowed); custom-columns follows kubectl's CustomColumnsPrinter (in
// k8s.io/kubectl, which this module does not import), with the event type as a leading
// EVENT column. Every format sees the object, as kubectl's templates do, and who made the
// change as its "by" (.by[*].manager), unless the object has a field of that name; jsonpath
// and go-template lines start with the event type and a space, as -o name's do, and end
// in a newline even when the template has none.
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
	columns []customColumn // custom-columns; nil for the other formats
	printer printers.ResourcePrinter
	buf     bytes.Buffer
	tw      *tabwriter.Writer // custom-columns: aligned like kubectl get -w's table
	headed  bool
}

type customColumn struct {
	header string
	path   *jsonpath.JSONPath
}

// NewTemplate compiles a template format (NAME=VALUE, see IsTemplateFormat); errors
// are one line that says what is wrong with it.
func NewTemplate(format string) (*Template, error) {
	name, value, _ := strings.Cut(format, "=")
	if value == "" {
		return nil, fmt.Errorf("-o %s= needs a value, e.g. %s", name, templateExample(name))
	}
	t := &Template{}
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
		t.tw = tabwriter.NewWriter(&t.buf, 0, 8, 3, ' ', tabwriter.RememberWidths)
		return t, nil
	case "jsonpath", "jsonpath-file":
		flags := genericclioptions.NewJSONPathPrintFlags("", false)
		p, err := flags.ToPrinter(format)
		if err != nil {
			return nil, oneLineError(err)
		}
		t.printer = p
	case "go-template", "go-template-file":
		flags := genericclioptions.NewGoTemplatePrintFlags()
		p, err := flags.ToPrinter(format)
		if err != nil {
			return nil, oneLineError(err)
		}
		t.printer = p
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

// Append appends ev's lines: custom-columns' row (after the header line, the first
// time), or the template's output after the event type. by, when not nil, is who made
// the change (the envelope's "by"), which the template sees as the object's "by" unless
// the object has a field of that name. On error dst is returned unchanged.
func (t *Template) Append(dst []byte, ev *event.Event, by []any) ([]byte, error) {
	value, err := ev.ObjectValue(diff.TypedValue)
	if err != nil {
		return dst, err
	}
	content, ok := value.(map[string]any)
	if !ok {
		return dst, fmt.Errorf("%s event for a %s: the object is not a JSON object", ev.Type, ev.Kind)
	}
	if _, taken := content["by"]; by != nil && !taken {
		// A copy of the top level: the object's values are shared with every sink.
		content = maps.Clone(content)
		content["by"] = by
	}
	t.buf.Reset()
	if t.columns != nil {
		return t.appendColumns(dst, ev, content)
	}
	if err := t.printer.PrintObj(&unstructured.Unstructured{Object: content}, &t.buf); err != nil {
		return dst, err
	}
	dst = append(dst, ev.Type...)
	dst = append(dst, ' ')
	dst = append(dst, t.buf.Bytes()...)
	if len(dst) == 0 || dst[len(dst)-1] != '\n' {
		dst = append(dst, '\n')
	}
	return dst, nil
}

// appendColumns is CustomColumnsPrinter.printOneObject, after an EVENT column: each
// column's results joined by ",", "<none>" for none, escaped for the terminal.
func (t *Template) appendColumns(dst []byte, ev *event.Event, content map[string]any) ([]byte, error) {
	if !t.headed {
		t.headed = true
		t.buf.WriteString("EVENT")
		for _, c := range t.columns {
			t.buf.WriteByte('\t')
			t.buf.WriteString(c.header)
		}
		t.buf.WriteByte('\n')
		// The header goes through the tabwriter too, so it is aligned with the rows.
		header := append([]byte(nil), t.buf.Bytes()...)
		t.buf.Reset()
		_, _ = t.tw.Write(header)
	}
	// Padded as kubectl pads it in get -w, so that a first ADDED row does not size the
	// column too narrow for MODIFIED.
	row := []string{fmt.Sprintf("%-8s", ev.Type)}
	for _, c := range t.columns {
		results, err := c.path.FindResults(content)
		if err != nil {
			return dst, fmt.Errorf("custom-columns: column %s: %v", c.header, err)
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
		row = append(row, strings.Join(values, ","))
	}
	_, _ = t.tw.Write([]byte(strings.Join(row, "\t") + "\n"))
	if err := t.tw.Flush(); err != nil {
		return dst, err
	}
	return append(dst, t.buf.Bytes()...), nil
}
