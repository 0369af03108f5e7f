package kubectl

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// row is Row's headers and cells, as "[HEADER ...] ["cell" ...]".
func row(table *Table, ev *event.Event) string {
	var c Cells
	headers := table.Row(&c, ev, ev.Meta())
	cells := make([]string, c.Len())
	for i := range cells {
		cells[i] = string(c.Cell(i))
	}
	return fmt.Sprintf("%v %q", headers, cells)
}

// TestCRDColumns: additionalPrinterColumns as the API server's table converter computes
// them: typed values, missing ones empty, dates as ages, priority columns only wide.
func TestCRDColumns(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	columns := PrinterColumns{gk: {
		{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
		{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio"},
		{Name: "On", Type: "boolean", JSONPath: ".spec.on"},
		{Name: "Colour", Type: "string", JSONPath: ".spec.colour"},
		{Name: "Tags", Type: "string", JSONPath: ".spec.tags"},
		{Name: "Missing", Type: "string", JSONPath: ".spec.missing"},
		{Name: "Wrong", Type: "integer", JSONPath: ".spec.colour"},
		{Name: "Detail", Type: "string", JSONPath: ".spec.detail", Priority: 1},
		{Name: "Started", Type: "date", JSONPath: ".status.started"},
	}}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "blue", "namespace": "default"},
		"spec":     map[string]any{"size": int64(3), "ratio": 1.5, "on": true, "colour": "blue", "tags": []any{"a", "b"}, "detail": "more"},
		"status":   map[string]any{"started": t0.Add(-3*time.Minute - 12*time.Second).Format(time.RFC3339)},
	}}
	ev := &event.Event{Type: event.Added, Time: t0, Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Kind: "Widget", Object: obj}
	for wide, want := range map[bool]string{
		false: `[SIZE RATIO ON COLOUR TAGS MISSING WRONG STARTED] ["3" "1.5" "true" "blue" "[\"a\",\"b\"]" "" "" "3m12s"]`,
		true:  `[SIZE RATIO ON COLOUR TAGS MISSING WRONG DETAIL STARTED] ["3" "1.5" "true" "blue" "[\"a\",\"b\"]" "" "" "more" "3m12s"]`,
	} {
		table, err := NewTable(columns, wide)
		if err != nil {
			t.Fatal(err)
		}
		if got := row(table, ev); got != want {
			t.Errorf("wide %v: %s, want %s", wide, got, want)
		}
	}
	if _, err := NewTable(PrinterColumns{gk: {{Name: "Bad", Type: "string", JSONPath: ".spec[x"}}}, false); err == nil {
		t.Error("a JSONPath that does not parse was accepted")
	}
}
