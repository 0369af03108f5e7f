package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// t0 is when the first pod of the fixtures is created.
var t0 = time.Date(2026, 11, 22, 15, 4, 5, 123456789, time.UTC)

var (
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	widgetsGVR     = schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "widgets"}
)

func ptr[T any](v T) *T { return &v }

// webPod is a one-container pod in the states it goes through in the fixtures.
func webPod(phase corev1.PodPhase, ready bool, node, rv string) *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-7d9f8-abc12", Namespace: "default", ResourceVersion: rv,
			CreationTimestamp: metav1.NewTime(t0),
			Labels:            map[string]string{"app": "web"},
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		Status: corev1.PodStatus{
			Phase:             phase,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: ready, RestartCount: 1}},
		},
	}
	if node != "" {
		pod.Status.PodIP = "10.244.1.7"
	}
	// kubectl counts a container as ready only while it is running.
	if ready {
		pod.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(time.Second))}
	}
	return pod
}

// fixtureEvents covers every summary and lifecycle case once. Fresh events each call,
// since an Event caches its JSON.
func fixtureEvents() []*event.Event {
	pending := webPod(corev1.PodPending, false, "", "8801")
	running := webPod(corev1.PodRunning, true, "worker-1", "8812")
	terminatingPod := webPod(corev1.PodRunning, true, "worker-1", "8840")
	terminatingPod.DeletionTimestamp = ptr(metav1.NewTime(t0.Add(24 * time.Second)))
	terminatingPod.DeletionGracePeriodSeconds = ptr(int64(30))

	lost := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "prometheus-kube-prometheus-stack-prometheus-0", Namespace: "monitoring", ResourceVersion: "7000",
			CreationTimestamp: metav1.NewTime(t0.Add(-3 * time.Hour)),
		},
		Spec: corev1.PodSpec{NodeName: "worker-2", Containers: []corev1.Container{{Name: "prometheus"}, {Name: "config-reloader"}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, PodIP: "10.244.2.9", ContainerStatuses: []corev1.ContainerStatus{
			{Name: "prometheus", RestartCount: 2}, {Name: "config-reloader", RestartCount: 1},
		}},
	}
	deployment := &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", ResourceVersion: "8811", Generation: 4,
			CreationTimestamp: metav1.NewTime(t0.Add(-48 * time.Hour)),
		},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr(int32(3))},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2},
	}
	configMap := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "coredns", Namespace: "kube-system", ResourceVersion: "215",
			CreationTimestamp: metav1.NewTime(t0.Add(-72 * time.Hour)),
		},
		Data: map[string]string{"Corefile": ".:53 {\n    errors\n    health\n}\n"},
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1alpha1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name": "blue", "namespace": "default", "resourceVersion": "9001",
			"creationTimestamp": t0.Add(10*time.Second - (3*time.Minute + 12*time.Second)).Format(time.RFC3339),
		},
		"spec": map[string]any{"size": int64(3), "color": "blue", "enabled": true},
	}}
	namespace := &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "team-a", ResourceVersion: "9100", CreationTimestamp: metav1.NewTime(t0.Add(11 * time.Second)),
		},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}

	at := func(d time.Duration) time.Time { return t0.Add(d) }
	return []*event.Event{
		{Type: event.Added, Time: at(0), Seq: 1, Resource: podsGVR, Kind: "Pod", Object: pending},
		{Type: event.Modified, Time: at(2 * time.Second), Seq: 2, Resource: podsGVR, Kind: "Pod", Object: running, Old: pending},
		{Type: event.Modified, Time: at(24 * time.Second), Seq: 3, Resource: podsGVR, Kind: "Pod", Object: terminatingPod, Old: running},
		{Type: event.Deleted, Time: at(25 * time.Second), Seq: 4, Resource: podsGVR, Kind: "Pod", Object: terminatingPod},
		{Type: event.Deleted, Time: at(26 * time.Second), Seq: 5, Resource: podsGVR, Kind: "Pod", Object: lost, FinalStateUnknown: true},
		{Type: event.Modified, Time: at(27 * time.Second), Seq: 6, Resource: deploymentsGVR, Kind: "Deployment", Object: deployment, Old: deployment},
		{Type: event.Added, Time: at(8 * time.Second), Seq: 7, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Object: configMap, InInitialList: true},
		{Type: event.Added, Time: at(10 * time.Second), Seq: 8, Resource: widgetsGVR, Kind: "Widget", Object: widget},
		{Type: event.Added, Time: at(11 * time.Second), Seq: 9, Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace", Object: namespace},
		{Type: event.Sync, Time: at(30 * time.Second), Resource: deploymentsGVR, Kind: "Deployment", Object: deployment, Old: deployment},
		{Type: event.Deleted, Time: at(31 * time.Second), Seq: 10, Resource: widgetsGVR, Kind: "Widget", Object: widget},
	}
}

func render(t *testing.T, o Options, events []*event.Event) []byte {
	t.Helper()
	p, err := NewPrinter(o)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, ev := range events {
		if out, err = p.Append(out, ev); err != nil {
			t.Fatalf("%s %s: %v", ev.Type, ev.Key(), err)
		}
	}
	return out
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"pretty", Options{Format: FormatPretty}},
		{"pretty-color", Options{Format: FormatPretty, Color: true}},
		{"pretty-kind-timestamps", Options{Format: FormatPretty, ShowKind: true, Timestamps: true}},
		{"wide", Options{Format: FormatWide}},
		{"json", Options{Format: FormatJSON}},
		{"yaml", Options{Format: FormatYAML}},
		{"name", Options{Format: FormatName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Location = time.UTC
			checkGolden(t, tc.name, render(t, tc.opts, fixtureEvents()))
		})
	}
}

// checkGolden compares got with testdata/<name>.golden, or rewrites that file when the
// test runs with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestJSONLines(t *testing.T) {
	events := fixtureEvents()
	out := render(t, Options{Format: FormatJSON}, events)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(events) {
		t.Fatalf("got %d lines for %d events", len(lines), len(events))
	}
	for i, line := range lines {
		ev := events[i]
		wantKeys := []string{"type", "time"}
		if ev.Seq != 0 {
			wantKeys = append(wantKeys, "seq")
		}
		wantKeys = append(wantKeys, "resource", "object")
		if ev.FinalStateUnknown {
			wantKeys = append(wantKeys, "finalStateUnknown")
		}
		if got := topLevelKeys(t, line); strings.Join(got, ",") != strings.Join(wantKeys, ",") {
			t.Errorf("line %d keys = %v, want %v", i, got, wantKeys)
		}

		var envelope struct {
			Type     string
			Time     time.Time
			Seq      uint64
			Resource struct{ Group, Version, Resource string }
			Object   struct{ APIVersion, Kind string }
		}
		if err := json.Unmarshal([]byte(line), &envelope); err != nil {
			t.Fatalf("line %d: %v\n%s", i, err, line)
		}
		gvk := ev.Object.GetObjectKind().GroupVersionKind()
		if envelope.Type != string(ev.Type) || !envelope.Time.Equal(ev.Time) || envelope.Seq != ev.Seq ||
			envelope.Resource.Group != ev.Resource.Group || envelope.Resource.Version != ev.Resource.Version ||
			envelope.Resource.Resource != ev.Resource.Resource ||
			envelope.Object.APIVersion != gvk.GroupVersion().String() || envelope.Object.Kind != gvk.Kind {
			t.Errorf("line %d = %+v, event %s %s/%s seq %d", i, envelope, ev.Type, ev.Kind, ev.Key(), ev.Seq)
		}
	}
}

// topLevelKeys lists the keys of a JSON object in the order they appear.
func topLevelKeys(t *testing.T, line string) []string {
	t.Helper()
	var fields []string
	dec := json.NewDecoder(strings.NewReader(line))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		fields = append(fields, key.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return fields
}

func TestAppendEscaped(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"web-1", "web-1"},
		{"evil\x1b[31mred\nnext", `evil\x1b[31mred\nnext`},
		{"tab\there\r\x00\x7f", `tab\there\r\x00\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eabc", `bidi \u202eabc`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"ünïcödé 名前 🙂", "ünïcödé 名前 🙂"},
		{`back\slash`, `back\slash`},
	} {
		if got := string(appendEscaped([]byte("> "), tc.in)); got != "> "+tc.want {
			t.Errorf("appendEscaped(%q) = %q, want %q", tc.in, got, "> "+tc.want)
		}
	}
}

// TestHostileNames checks, end to end, that control characters in object fields never
// reach the output of the terminal formats, and that they cannot split a line.
func TestHostileNames(t *testing.T) {
	pod := webPod(corev1.PodPhase("Run\x1b]0;pwned\x07ning"), true, "node\u009b2J", "1")
	pod.Name = "evil\x1b[31m\nname"
	pod.Namespace = "ns\x7f"
	ev := &event.Event{Type: event.Added, Time: t0, Seq: 1, Resource: podsGVR, Kind: "Pod", Object: pod}
	for _, format := range []Format{FormatPretty, FormatWide, FormatName} {
		out := render(t, Options{Format: format, Location: time.UTC}, []*event.Event{ev})
		line, ok := strings.CutSuffix(string(out), "\n")
		if !ok || strings.Contains(line, "\n") {
			t.Errorf("%s: want exactly one line, got %q", format, out)
		}
		for _, r := range line {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Errorf("%s: raw control character %U in %q", format, r, line)
			}
		}
		if !strings.Contains(line, `evil\x1b[31m\nname`) {
			t.Errorf("%s: escaped name missing from %q", format, line)
		}
	}
}

// TestColorIgnoresGlobalSwitch checks that Options.Color alone decides: fatih/color's
// global NoColor describes stdout, not the stream a Printer writes to.
func TestColorIgnoresGlobalSwitch(t *testing.T) {
	saved := color.NoColor
	t.Cleanup(func() { color.NoColor = saved })
	ev := fixtureEvents()[:1]
	for _, global := range []bool{false, true} {
		color.NoColor = global
		if out := render(t, Options{Color: true}, ev); !bytes.Contains(out, []byte("\x1b[32mADDED\x1b[0m")) {
			t.Errorf("NoColor=%v, Color: true: no green ADDED in %q", global, out)
		}
		if out := render(t, Options{Color: false}, ev); bytes.ContainsRune(out, 0x1b) {
			t.Errorf("NoColor=%v, Color: false: escape sequence in %q", global, out)
		}
	}
}

func TestNameColumnIsNeverTruncated(t *testing.T) {
	long := strings.Repeat("x", 2*maxNameColumn)
	pod := webPod(corev1.PodRunning, true, "worker-1", "1")
	pod.Name = long
	out := render(t, Options{Location: time.UTC}, []*event.Event{{Type: event.Added, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod}})
	if !bytes.Contains(out, []byte("default/"+long+" 1/1")) {
		t.Errorf("want the whole name then one space, got %q", out)
	}
}

func TestParseFormat(t *testing.T) {
	for _, name := range Formats() {
		if f, err := ParseFormat(name); err != nil || string(f) != name {
			t.Errorf("ParseFormat(%q) = %q, %v", name, f, err)
		}
	}
	for _, bad := range []string{"x", "", "JSON", "table"} {
		_, err := ParseFormat(bad)
		want := `unknown output format "` + bad + `"; use one of: pretty, wide, json, yaml, name, or a template: `
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseFormat(%q) error = %v, want %s", bad, err, want)
		}
	}
	if _, err := NewPrinter(Options{Format: "table"}); err == nil {
		t.Error("NewPrinter accepted format table")
	}
	if p, err := NewPrinter(Options{}); err != nil || p.format != FormatPretty {
		t.Errorf("NewPrinter(Options{}) = %v, %v; want a pretty printer", p, err)
	}
}

func TestAppendKeepsDstOnError(t *testing.T) {
	p, err := NewPrinter(Options{Format: FormatPretty})
	if err != nil {
		t.Fatal(err)
	}
	dst := []byte("earlier line\n")
	out, err := p.Append(dst, &event.Event{Type: event.Added, Time: t0, Kind: "Thing", Object: &metav1.Status{}})
	if err == nil || string(out) != "earlier line\n" {
		t.Errorf("Append of an object without metadata = %q, %v; want the input back and an error", out, err)
	}
}

// TestHotPathAllocations pins down that a pod line (pretty) and a JSON envelope around
// an already encoded object cost no allocations once the Printer's buffers are warm.
func TestHotPathAllocations(t *testing.T) {
	ev := &event.Event{Type: event.Modified, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: realisticPod()}
	if _, err := ev.ObjectJSON(); err != nil {
		t.Fatal(err)
	}
	for _, format := range []Format{FormatPretty, FormatWide, FormatJSON, FormatName} {
		p, err := NewPrinter(Options{Format: format, Color: true, ShowKind: true, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, 0, 64<<10)
		allocs := testing.AllocsPerRun(100, func() {
			if dst, err = p.Append(dst[:0], ev); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per event, want 0", format, allocs)
		}
		if !utf8.Valid(dst) {
			t.Errorf("%s: invalid UTF-8 output", format)
		}
	}
}

// TestAppendHasACaseForEveryFormat: every format ParseFormat accepts renders, and one
// without a case in Append is an error naming it, not pretty output in disguise.
func TestAppendHasACaseForEveryFormat(t *testing.T) {
	ev := &event.Event{Type: event.Added, Time: t0, Resource: podsGVR, Kind: "Pod", Object: webPod(corev1.PodRunning, true, "worker-1", "1")}
	for _, name := range Formats() {
		p, err := NewPrinter(Options{Format: Format(name), Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		if out, err := p.Append(nil, ev); err != nil || len(out) == 0 {
			t.Errorf("format %s: Append = %q, %v; want output", name, out, err)
		}
	}
	p, err := NewPrinter(Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	p.format = "table" // as if "table" were added to Formats without a case in Append
	out, err := p.Append([]byte("earlier line\n"), ev)
	if err == nil || !strings.Contains(err.Error(), `"table"`) || string(out) != "earlier line\n" {
		t.Errorf("Append in a format without a case = %q, %v; want the input back and an error naming the format", out, err)
	}
}

// TestTemplateFormats: kubectl's template formats, per event, with the event type as a
// leading EVENT column (custom-columns) or word (jsonpath, go-template); bad templates
// are errors naming what is wrong.
func TestTemplateFormats(t *testing.T) {
	pod := webPod(corev1.PodRunning, true, "worker-1", "1")
	ev := &event.Event{Type: event.Added, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod}
	mod := &event.Event{Type: event.Modified, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod, Old: pod}
	for format, want := range map[Format]string{
		"custom-columns=NAME:.metadata.name,NODE:spec.nodeName,MISSING:.status.nothing": "EVENT      NAME              NODE       MISSING\nADDED      " + pod.Name + "   worker-1   <none>\nMODIFIED   " + pod.Name + "   worker-1   <none>\n",
		"jsonpath={.metadata.name}":                                 "ADDED " + pod.Name + "\nMODIFIED " + pod.Name + "\n",
		`go-template={{.metadata.name}} {{.spec.nodeName}}{{"\n"}}`: "ADDED " + pod.Name + " worker-1\nMODIFIED " + pod.Name + " worker-1\n",
	} {
		p, err := NewPrinter(Options{Format: format})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out, err := p.Append(nil, ev)
		if err == nil {
			out, err = p.Append(out, mod)
		}
		if err != nil || string(out) != want {
			t.Errorf("%s:\n got %q, %v\nwant %q", format, out, err, want)
		}
	}
	for _, bad := range []string{"jsonpath=", "jsonpath={.metadata.name", "go-template={{.x", "custom-columns=NAME", "custom-columns-file=/nonexistent", "jsonpath-file=/nonexistent"} {
		if _, err := ParseFormat(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseFormat(%q) = %v; want a one-line error", bad, err)
		}
	}
}

// TestTemplateFileFormats: the -file forms read the template from a file, as kubectl's do
// (custom-columns-file: a line of headers, a line of paths).
func TestTemplateFileFormats(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pod := webPod(corev1.PodRunning, true, "worker-1", "1")
	ev := &event.Event{Type: event.Deleted, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod}
	for format, want := range map[string]string{
		"custom-columns-file=" + write("cols", "NAME   NODE\n.metadata.name   {.spec.nodeName}\n"): "EVENT      NAME              NODE\nDELETED    " + pod.Name + "   worker-1\n",
		"jsonpath-file=" + write("jp", "{.spec.nodeName}"):                                         "DELETED worker-1\n",
		"go-template-file=" + write("gt", "{{.spec.nodeName}}\n"):                                  "DELETED worker-1\n",
	} {
		p, err := NewPrinter(Options{Format: Format(format)})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out, err := p.Append(nil, ev)
		if err != nil || string(out) != want {
			t.Errorf("%s: got %q, %v; want %q", format, out, err, want)
		}
	}
	if _, err := ParseFormat("custom-columns-file=" + write("bad", "A B\n.a\n")); err == nil || !strings.Contains(err.Error(), "don't match") {
		t.Errorf("headers and paths of different counts: %v", err)
	}
}
