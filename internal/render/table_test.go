package render

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/kubectl"
)

// TestHeaderLines: with Headers, a header line comes before the first line of each kind,
// aligned with it, and again after HeadersAgain; without, never.
func TestHeaderLines(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", CreationTimestamp: metav1.NewTime(eventtest.T0.Add(-time.Hour))},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.0.0.1"}, Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	svcEvent := &event.Event{Type: event.Added, Time: eventtest.T0, Resource: schema.GroupVersionResource{Version: "v1", Resource: "services"}, Kind: "Service", Object: svc}
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

// TestPrinterColumns: NewPrinter shows custom resources' additionalPrinterColumns
// (computed by kubectl.Table, whose tests cover them) and refuses a bad one.
func TestPrinterColumns(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	columns := kubectl.PrinterColumns{gk: {{Name: "Size", Type: "integer", JSONPath: ".spec.size"}}}
	p, err := NewPrinter(Options{Location: time.UTC, Namespace: "default", Headers: true, PrinterColumns: columns})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Append(nil, eventtest.Events()[7]) // the blue Widget, size 3
	if want := "TIME      EVENT     NAME  SIZE\n15:04:15  ADDED     blue  3\n"; err != nil || string(out) != want {
		t.Errorf("got %q, %v; want %q", out, err, want)
	}
	if _, err := NewPrinter(Options{PrinterColumns: kubectl.PrinterColumns{gk: {{Name: "Bad", Type: "string", JSONPath: ".spec[x"}}}}); err == nil {
		t.Error("a JSONPath that does not parse was accepted")
	}
}
