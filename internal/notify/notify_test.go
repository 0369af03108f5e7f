package notify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/notify/notifytest"
)

// paths are where each shipped format is posted, as its receiver serves it.
var paths = map[string]string{"alertmanager": "/api/v2/alerts", "loki": "/loki/api/v1/push",
	"elasticsearch": "/kubeevents/_bulk", "otlp": "/v1/logs"}

// batch is every kind of event the fixtures have, as a format gets them.
func batch(t *testing.T) ([]*event.Event, []any) {
	t.Helper()
	events := append(eventtest.Events(), eventtest.SignalEvents()...)
	events[0].Cluster = "prod-eu"
	d := diff.NewDiffer(nil)
	var values []any
	for _, ev := range events {
		v, err := jq.EnvelopeValue(ev, d, false)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	return events, values
}

// TestShippedFormatsAsTheReceiversTakeThem runs every shipped format on batches of every
// size up to its max-batch and checks each body as its receiver's documentation says.
func TestShippedFormatsAsTheReceiversTakeThem(t *testing.T) {
	_, values := batch(t)
	for _, f := range Shipped().List() {
		c, err := f.Compile()
		if err != nil {
			t.Fatal(err)
		}
		n := len(values)
		if f.MaxBatch > 0 {
			n = min(n, f.MaxBatch)
		}
		for size := 1; size <= n; size++ {
			for start := 0; start+size <= len(values); start += size {
				body, err := c.Body(context.Background(), values[start:start+size])
				if err != nil {
					t.Fatalf("%s on %d events: %v", f.Name, size, err)
				}
				for _, err := range notifytest.Check(f.Name, notifytest.Request{Path: paths[f.Name], ContentType: f.ContentType, Body: body}) {
					t.Errorf("%s on events %d to %d: %v\n%s", f.Name, start, start+size-1, err, body)
				}
			}
		}
	}
}

// TestFormatsSayWhatHappened: each event of a batch is there, with the transitions that
// happened in it, and a ROLLOUT line's message.
func TestFormatsSayWhatHappened(t *testing.T) {
	_, values := batch(t)
	signal := values[len(values)-4:] // eventtest.SignalEvents: crashloop and not-ready; a step; the end; unfolded
	for _, name := range []string{"slack", "mattermost", "teams", "discord", "loki", "elasticsearch", "otlp"} {
		f, err := Shipped().Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.Compile()
		if err != nil {
			t.Fatal(err)
		}
		body, err := c.Body(context.Background(), signal)
		if err != nil {
			t.Fatal(err)
		}
		text := string(body)
		for _, want := range []string{"crashloop, not-ready", "web-7d9f8-abc12", "3/5 updated, 4 available, 2 old", `successfully rolled out`} {
			if name == "loki" { // the line is the event's JSON, quoted
				want = strings.ReplaceAll(strings.ReplaceAll(want, `"`, `\"`), "crashloop, not-ready", `[\"crashloop\",\"not-ready\"]`)
			}
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say %q:\n%s", name, want, text)
			}
		}
	}

	// Alertmanager: an alert per transition, named after it, labelled for routing.
	alerts := run[[]struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		StartsAt    string            `json:"startsAt"`
		EndsAt      string            `json:"endsAt"`
	}](t, "alertmanager", signal[:1])
	if len(alerts) != 2 || alerts[0].Labels["alertname"] != "crashloop" || alerts[1].Labels["alertname"] != "not-ready" {
		t.Fatalf("alerts %+v", alerts)
	}
	want := map[string]string{"alertname": "crashloop", "severity": "warning", "namespace": "default", "kind": "Pod", "name": "web-7d9f8-abc12"}
	if !mapsEqual(alerts[0].Labels, want) || alerts[0].StartsAt != "2026-11-22T15:04:17.123456789Z" || alerts[0].EndsAt != "2026-11-22T15:09:17Z" {
		t.Errorf("alert %+v, want labels %v, 5 minutes from the event", alerts[0], want)
	}

	// Loki: a stream per object, labelled with its cluster, namespace, kind and name; the
	// line is the event's JSON, at its time.
	push := run[struct {
		Streams []struct {
			Stream map[string]string `json:"stream"`
			Values [][]string        `json:"values"`
		} `json:"streams"`
	}](t, "loki", values[:3])
	if len(push.Streams) != 2 || !mapsEqual(push.Streams[0].Stream, map[string]string{"service_name": "kubeevents", "cluster": "prod-eu",
		"namespace": "default", "kind": "Pod", "name": "web-7d9f8-abc12"}) || len(push.Streams[0].Values) != 1 ||
		!mapsEqual(push.Streams[1].Stream, map[string]string{"service_name": "kubeevents", "namespace": "default", "kind": "Pod", "name": "web-7d9f8-abc12"}) ||
		len(push.Streams[1].Values) != 2 {
		t.Fatalf("push %+v", push)
	}
	if v := push.Streams[1].Values[0]; v[0] != "1795359847123456789" || !strings.Contains(v[1], `"time":"2026-11-22T15:04:07.123456789Z"`) {
		t.Errorf("first value of the second stream %q, want the event at 15:04:07.123456789", v)
	}
}

// run runs a shipped format on values and decodes its body as T.
func run[T any](t *testing.T, name string, values []any) T {
	t.Helper()
	f, err := Shipped().Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.Compile()
	if err != nil {
		t.Fatal(err)
	}
	body, err := c.Body(context.Background(), values)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, body)
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestReceiversRefuseWhatTheDocsRefuse: the checks fail on bodies the services would
// refuse, so that the formats' passing them means something.
func TestReceiversRefuseWhatTheDocsRefuse(t *testing.T) {
	for _, tc := range []struct{ format, contentType, path, body string }{
		{"slack", "application/json", "", `{"blocks":[{"type":"section","text":{"type":"mrkdwn","text":"x"}}]}`},
		{"slack", "application/json", "", `{"text":"a < b"}`},
		{"mattermost", "application/json", "", `{"username":"x"}`},
		{"teams", "application/json", "", `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard","body":[]}}]}`},
		{"discord", "application/json", "", `{"username":"kubeevents"}`},
		{"discord", "application/json", "", `{"embeds":[{"title":"x","color":"red"}]}`},
		{"alertmanager", "application/json", "/api/v2/alerts", `[{"labels":{}}]`},
		{"alertmanager", "application/json", "/api/v2/alerts", `[{"labels":{"a-b":"c"}}]`},
		{"alertmanager", "application/json", "/api/v2/alerts", `{"labels":{"a":"c"}}`},
		{"loki", "application/json", "/loki/api/v1/push", `{"streams":[{"stream":{"a":"b"},"values":[[1700000000000000000,"x"]]}]}`},
		{"elasticsearch", "application/x-ndjson", "/_bulk", `{"create":{}}` + "\n" + `{"message":"x"}` + "\n"},
		{"elasticsearch", "application/x-ndjson", "/i/_bulk", `{"create":{}}`},
		{"otlp", "application/json", "/v1/logs", `{"resourceLogs":[{"resource":{"attributes":[{"key":"pod","value":{"stringValue":"x"}}]},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"x"}}]}]}]}`},
		{"otlp", "application/json", "/v1/logs", `{"resourceLogs":[{"resource":{},"scopeLogs":[{"logRecords":[{"severityNumber":"WARN"}]}]}]}`},
		{"cloudevents", "application/cloudevents+json", "", `{"specversion":"1.0","id":"1","source":"/x"}`},
		{"cloudevents", "application/json", "", `{"specversion":"1.0","id":"1","source":"/x","type":"t"}`},
	} {
		if errs := notifytest.Check(tc.format, notifytest.Request{Path: tc.path, ContentType: tc.contentType, Body: []byte(tc.body)}); len(errs) == 0 {
			t.Errorf("%s takes %s", tc.format, tc.body)
		}
	}
}

// TestShippedOrderNamesEveryFile: every file of formats/ is listed, once, with a
// description and a content type.
func TestShippedOrderNamesEveryFile(t *testing.T) {
	files, err := filepath.Glob("formats/*.jq")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".jq"))
	}
	if !slices.Equal(names, slices.Sorted(slices.Values(shippedOrder))) {
		t.Errorf("formats/ holds %q; shippedOrder lists %q", names, shippedOrder)
	}
	for _, f := range Shipped().List() {
		if f.Description == "" || f.ContentType == "" || !f.Shipped {
			t.Errorf("%s: %+v", f.Name, f)
		}
	}
}

// TestUserFormats: a config file's format replaces a shipped one or adds one; its header
// says its content type and batch; its errors name it.
func TestUserFormats(t *testing.T) {
	c, err := NewCatalog(map[string]string{
		"plain": "# One line per event.\n# content-type: text/plain\n# max-batch: 5\nmap(title) | join(\"\\n\")",
		"slack": "{text: (map(title) | join(\"\\n\"))}",
	})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := c.Lookup("plain")
	if err != nil || plain.ContentType != "text/plain" || plain.MaxBatch != 5 || plain.Description != "One line per event." || plain.Shipped {
		t.Fatalf("plain: %+v %v", plain, err)
	}
	compiled, err := plain.Compile()
	if err != nil {
		t.Fatal(err)
	}
	_, values := batch(t)
	body, err := compiled.Body(context.Background(), values[:2])
	if err != nil || string(body) != "added: Pod default/web-7d9f8-abc12 in cluster prod-eu\nmodified: Pod default/web-7d9f8-abc12" {
		t.Errorf("body %q, %v", body, err)
	}
	if s, _ := c.Lookup("slack"); s.Shipped || s.ContentType != DefaultContentType {
		t.Errorf("slack: %+v", s)
	}
	for _, bad := range []map[string]string{
		{"functions": "."}, {"Slack": "."}, {"x": "# max-batch: none\n."}, {"x": "# content-type:\n."},
	} {
		if _, err := NewCatalog(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	broken, _ := NewCatalog(map[string]string{"broken": "map(titl)"})
	b, _ := broken.Lookup("broken")
	if _, err := b.Compile(); err == nil || !strings.Contains(err.Error(), `format "broken"`) {
		t.Errorf("an undefined function: %v", err)
	}
	nothing, _ := NewCatalog(map[string]string{"nothing": "empty"})
	n, _ := nothing.Lookup("nothing")
	nc, _ := n.Compile()
	if _, err := nc.Body(context.Background(), values[:1]); err == nil {
		t.Error("a format that gives nothing made a body")
	}
}

// TestDocsListEveryFormat fails when docs/signal.md has no row for a shipped format, or
// one for a format that is not shipped.
func TestDocsListEveryFormat(t *testing.T) {
	doc, err := os.ReadFile("../../docs/signal.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n| format |")
	if !ok {
		t.Fatal("docs/signal.md has no table of the formats")
	}
	_, table, _ = strings.Cut(table, "\n") // the rest of the header line
	var rows []string
	for line := range strings.SplitSeq(table, "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ := strings.Cut(rest, "`")
			rows = append(rows, name)
		} else if !strings.HasPrefix(line, "|") {
			break
		}
	}
	if want := Shipped().Names(); !slices.Equal(rows, want) {
		t.Errorf("docs/signal.md lists the formats %v, want %v (in this order)", rows, want)
	}
}
