package kubectl

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

// configMapEvent is an ADDED event of ConfigMap c1 with data a=1 and nothing else: no
// labels, no status, no spec.
func configMapEvent() *event.Event {
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c1", "namespace": "default"},
		"data":     map[string]any{"a": "1"},
	}}
	return &event.Event{Type: event.Added, Time: eventtest.T0, Resource: eventtest.ConfigMaps, Kind: "ConfigMap", Object: cm}
}

// Every kind of missing key prints what `kubectl get -o ...` printed for the same
// ConfigMap (kubectl v1.37.1, --allow-missing-template-keys at its default, true):
// nothing in jsonpath, "<no value>" in go-template, "<none>" in custom-columns. None is
// an error.
func TestTemplateMissingKeys(t *testing.T) {
	for format, want := range map[string]string{
		"jsonpath={.metadata.name} {.status.podIP}":                                               "c1 ",
		"jsonpath={.metadata.name} {.data.b}":                                                     "c1 ",
		"jsonpath={.metadata.name} {.x.y.z}":                                                      "c1 ",
		"jsonpath={.metadata.name} {.items[0].a}":                                                 "c1 ",
		"jsonpath={.metadata.name} {.metadata.labels.app}":                                        "c1 ",
		"jsonpath={.metadata.name} {.spec.containers[3].name}":                                    "c1 ",
		"jsonpath={.metadata.name} {range .x[*]}{.n}{end}":                                        "c1 ",
		"jsonpath={.metadata.name} {.data.a.b}":                                                   "c1 ",
		"jsonpath={.metadata.name} {.metadata.ownerReferences[0].name}":                           "c1 ",
		"go-template={{.metadata.name}} {{.status.podIP}}":                                        "c1 <no value>",
		"go-template={{.metadata.name}} {{.x.y.z}}":                                               "c1 <no value>",
		"go-template={{.metadata.name}} {{.data.b}}":                                              "c1 <no value>",
		`go-template={{.metadata.name}} {{index .data "b"}}`:                                      "c1 <no value>",
		"go-template={{.metadata.name}} {{range .x}}{{.}}{{end}}":                                 "c1 ",
		"go-template={{.metadata.name}} {{with .x}}{{.y}}{{end}}":                                 "c1 ",
		"go-template={{.metadata.name}} {{if .status.podIP}}{{.status.podIP}}{{else}}none{{end}}": "c1 none",
		"custom-columns=N:.metadata.name,IP:.status.podIP":                                        "N     IP\nc1    <none>\n",
		"custom-columns=N:.metadata.name,X:.x.y.z":                                                "N     X\nc1    <none>\n",
		"custom-columns=N:.metadata.name,C:.spec.containers[3].name":                              "N     C\nc1    <none>\n",
		"custom-columns=N:.metadata.name,D:.data.a.b":                                             "N     D\nc1    <none>\n",
		"custom-columns=N:.metadata.name,L:.metadata.labels":                                      "N     L\nc1    <none>\n",
	} {
		tmpl, err := NewTemplate(format, false)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		got, err := tmpl.Append(nil, configMapEvent(), nil)
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q, %v; want %q", format, got, err, want)
		}
	}
}

// What kubectl cannot execute at all (a filter on a map, index of a missing map, a field
// of a string) is an *ExecError of one line, not the object dumped as cli-runtime's
// printers put it; nothing is appended.
func TestTemplateExecErrors(t *testing.T) {
	for _, format := range []string{
		`jsonpath={.metadata.name} {.data[?(@.k=="v")].k}`,
		`go-template={{.metadata.name}} {{index .metadata.labels "app"}}`,
		"go-template={{.metadata.name}} {{.data.a.b}}",
		`custom-columns=N:.metadata.name,F:.data[?(@.k=="v")].k`,
	} {
		tmpl, err := NewTemplate(format, false)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		got, err := tmpl.Append([]byte("before"), configMapEvent(), nil)
		var failed *ExecError
		if !errors.As(err, &failed) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "managedFields") || string(got) != "before" {
			t.Errorf("%s: got %q, %v; want an ExecError of one line and nothing appended", format, got, err)
		}
	}
}

// With watchEvents each format sees {type, object}, as kubectl's --output-watch-events.
func TestTemplateWatchEvents(t *testing.T) {
	for format, want := range map[string]string{
		`jsonpath={.type} {.object.metadata.name}{"\n"}`:      "ADDED c1\n",
		`go-template={{.type}} {{.object.data.a}}`:            "ADDED 1",
		"custom-columns=T:.type,N:.object.metadata.name,X:.x": "T       N     X\nADDED   c1    <none>\n",
	} {
		tmpl, err := NewTemplate(format, true)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if got, err := tmpl.Append(nil, configMapEvent(), nil); err != nil || string(got) != want {
			t.Errorf("%s: got %q, %v; want %q", format, got, err, want)
		}
	}
}
