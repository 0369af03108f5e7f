package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"
)

// PrinterColumn is one of a CustomResourceDefinition's additionalPrinterColumns, for the
// served version that is watched.
type PrinterColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Format   string `json:"format,omitempty"`
	JSONPath string `json:"jsonPath"`
	Priority int32  `json:"priority,omitempty"`
}

// PrinterColumns are the columns of custom resources, by kind.
type PrinterColumns map[schema.GroupKind][]PrinterColumn

// crdTable computes a custom resource's columns as the API server's table converter for
// custom resources does (k8s.io/apiextensions-apiserver/pkg/registry/customresource/
// tableconvertor): the first result of each column's JSONPath, missing keys allowed;
// strings printed by the JSONPath printer, integers, numbers and booleans as values, dates
// as their age; whatever is missing or of another type an empty cell, as kubectl prints a
// nil cell. Columns with a priority are wide-only.
type crdTable struct {
	columns []crdColumn // in the CRD's order
}

type crdColumn struct {
	def  PrinterColumn
	path *jsonpath.JSONPath
}

func newCRDTable(defs []PrinterColumn) (*crdTable, error) {
	t := &crdTable{}
	for _, def := range defs {
		path := jsonpath.New(def.Name)
		if err := path.Parse(fmt.Sprintf("{%s}", def.JSONPath)); err != nil {
			return nil, fmt.Errorf("column %q: unrecognized JSONPath %q", def.Name, def.JSONPath)
		}
		path.AllowMissingKeys(true)
		t.columns = append(t.columns, crdColumn{def: def, path: path})
	}
	return t, nil
}

// table returns the headers and cells of obj, the object's generic JSON value.
func (t *crdTable) table(obj any, now time.Time, wide bool) (headers, cells []string) {
	var buf bytes.Buffer
	for _, c := range t.columns {
		if c.def.Priority != 0 && !wide {
			continue
		}
		headers = append(headers, strings.ToUpper(c.def.Name))
		cells = append(cells, c.cell(obj, now, &buf))
	}
	return headers, cells
}

func (c crdColumn) cell(obj any, now time.Time, buf *bytes.Buffer) string {
	results, err := c.path.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return ""
	}
	value := results[0][0].Interface()
	if c.def.Type == "string" {
		buf.Reset()
		if err := c.path.PrintResults(buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
			return ""
		}
		return buf.String()
	}
	if value == nil {
		return ""
	}
	switch c.def.Type {
	case "integer":
		switch v := value.(type) {
		case int64:
			return fmt.Sprint(v)
		case int:
			return fmt.Sprint(v)
		case float64:
			return fmt.Sprint(int64(v))
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return fmt.Sprint(i)
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return fmt.Sprint(float64(v))
		case int:
			return fmt.Sprint(float64(v))
		case float64:
			return fmt.Sprint(v)
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return fmt.Sprint(f)
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return fmt.Sprint(b)
		}
	case "date":
		if s, ok := value.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return timestampSince(now, t)
		}
	}
	return ""
}
