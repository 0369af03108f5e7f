package render

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// TestHeaderLines: with Headers, a header line comes before the first line of each kind,
// aligned with it, and again after HeadersAgain; without, never.
func TestHeaderLines(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.0.0.1"}, Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	svcEvent := &event.Event{Type: event.Added, Time: t0, Resource: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Kind: "Service", Object: svc}
	p, err := NewPrinter(Options{Location: time.UTC, Headers: true, Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, ev := range []*event.Event{podEvent(event.Added, "shop", "web-1"), svcEvent, podEvent(event.Modified, "shop", "web-1")} {
		if out, err = p.Append(out, ev); err != nil {
			t.Fatal(err)
		}
	}
	p.HeadersAgain()
	if out, err = p.Append(out, podEvent(event.Modified, "shop", "web-1")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := []string{
		"TIME      EVENT     NAME   READY  STATUS   RESTARTS  AGE",
		"15:04:05  ADDED     web-1  1/1    Running  1         0s",
		"TIME      EVENT     NAME   TYPE       CLUSTER-IP  EXTERNAL-IP  PORT(S)  AGE",
		"15:04:05  ADDED     web    ClusterIP  10.0.0.1    <none>       80/TCP   60m",
		"15:04:05  MODIFIED  web-1  1/1    Running  1         0s",
		"TIME      EVENT     NAME   READY  STATUS   RESTARTS  AGE",
		"15:04:05  MODIFIED  web-1  1/1    Running  1         0s",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if out := render(t, Options{Location: time.UTC}, []*event.Event{podEvent(event.Added, "shop", "web-1")}); strings.Contains(string(out), "TIME") {
		t.Errorf("a header without Headers: %q", out)
	}
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
	for format, want := range map[Format]string{
		FormatPretty: `3  1.5  true  blue  ["a","b"]  3m12s`,
		FormatWide:   `3  1.5  true  blue  ["a","b"]  more  3m12s`,
	} {
		p, err := NewPrinter(Options{Format: format, Location: time.UTC, Namespace: "default", PrinterColumns: columns})
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.Append(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(strings.Fields(strings.TrimPrefix(string(out), "15:04:05  ADDED     blue")), "  ")
		// Missing and Wrong are empty cells: they vanish from Fields.
		if got != strings.Join(strings.Fields(want), "  ") {
			t.Errorf("%s: %q, want %q", format, out, want)
		}
	}
	if _, err := NewPrinter(Options{PrinterColumns: PrinterColumns{gk: {{Name: "Bad", Type: "string", JSONPath: ".spec[x"}}}}); err == nil {
		t.Error("a JSONPath that does not parse was accepted")
	}
}
