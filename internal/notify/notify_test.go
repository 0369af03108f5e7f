package notify

import (
	"context"
	"encoding/json"
	"fmt"
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
	events := append(append(eventtest.Events(), eventtest.SignalEvents()...), eventtest.EpisodeEvents()...)
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
				for _, err := range notifytest.Check(f.Name, asSent(t, f, body)) {
					t.Errorf("%s on events %d to %d: %v\n%s", f.Name, start, start+size-1, err, body)
				}
			}
		}
	}
}

// asSent is the request an http sink makes of a format's body: the Web API's channel and
// token added for slack-api.
func asSent(t *testing.T, f Format, body []byte) notifytest.Request {
	t.Helper()
	req := notifytest.Request{Path: paths[f.Name], ContentType: f.ContentType, Body: body}
	if f.Edit == EditSlack {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		m["channel"] = "C0123456789"
		req.Body, _ = json.Marshal(m)
		req.Path, req.Authorization = "/api/chat.postMessage", "Bearer xoxb-1234-test"
	}
	return req
}

// TestFormatsSayWhatHappened: each event of a batch is there, with the transitions that
// happened in it, and a ROLLOUT line's message.
func TestFormatsSayWhatHappened(t *testing.T) {
	_, values := batch(t)
	signal := values[len(values)-8 : len(values)-4] // eventtest.SignalEvents: crashloop and not-ready; a step; the end; unfolded
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

// TestFormatsSayTheEpisode: an episode's events say what each is: the crash that opened
// it with the crash's last log line, its update naming its first message and counting,
// its resolution and by what, a digest of the open ones; Alertmanager keeps one alert per
// episode, the same labels in each, ended by the resolution.
func TestFormatsSayTheEpisode(t *testing.T) {
	_, values := batch(t)
	episode := values[len(values)-4:] // eventtest.EpisodeEvents: open, update, resolve, digest
	wants := [][]string{
		{"crashloop: Pod default/web-7d9f8-abc12", "panic: dial tcp 10.96.0.9:5432: connection refused", "app exited 2 (Error): config missing"},
		{"crashloop goes on: Pod default/web-7d9f8-abc12 (14 times since 15:04:45 UTC, 6 since the last message; first alerted 15:04:45 UTC)"},
		{"resolved crashloop: Pod default/web-7d9f8-abc12 (by ready at 15:17:45 UTC, after 14 times since 15:04:45 UTC"},
		{"digest: 2 open episodes", "oomkilled: StatefulSet default/db, 3 times since 15:04:45 UTC"},
	}
	for _, name := range []string{"slack", "slack-api", "mattermost", "teams", "discord", "elasticsearch", "otlp"} {
		f, err := Shipped().Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.Compile()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range episode {
			body, err := c.Body(context.Background(), []any{v})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var text any
			if err := json.Unmarshal(body, &text); err != nil { // elasticsearch: NDJSON
				text = string(body)
			}
			flat, _ := json.Marshal(text)
			for _, want := range wants[i] {
				quoted, _ := json.Marshal(want)
				if !strings.Contains(string(flat), strings.Trim(string(quoted), `"`)) {
					t.Errorf("%s, episode event %d, does not say %q:\n%s", name, i, want, body)
				}
			}
			if name != "elasticsearch" && strings.Contains(string(body), `\u001b`) { // its kubeevents.context is the data as it came
				t.Errorf("%s holds a terminal escape: %s", name, body)
			}
		}
	}

	type alert struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		StartsAt    string            `json:"startsAt"`
		EndsAt      string            `json:"endsAt"`
	}
	alerts := run[[]alert](t, "alertmanager", episode)
	if len(alerts) != 5 {
		t.Fatalf("alerts %+v, want open, update, resolve and the digest's two", alerts)
	}
	want := map[string]string{"alertname": "crashloop", "severity": "warning", "namespace": "default", "kind": "Deployment", "name": "web"}
	for i, a := range alerts[:4] {
		if !mapsEqual(a.Labels, want) || a.StartsAt != "2026-11-22T15:04:45.123456789Z" {
			t.Errorf("alert %d: %+v, want labels %v from the episode's start", i, a, want)
		}
	}
	if alerts[0].EndsAt != "2026-11-22T15:19:45.123456789Z" || alerts[2].EndsAt != "2026-11-22T15:17:45.123456789Z" ||
		!strings.Contains(alerts[0].Annotations["context"], "connection refused") {
		t.Errorf("open %+v, resolved %+v: want the open one to last until it would be quiet, the resolution to end it", alerts[0], alerts[2])
	}
	if alerts[4].Labels["alertname"] != "oomkilled" || alerts[4].Labels["name"] != "db" {
		t.Errorf("the digest's second: %+v", alerts[4])
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
		// Over the services' size limits.
		{"slack", "application/json", "", `{"text":"` + strings.Repeat("x", 40001) + `"}`},
		{"mattermost", "application/json", "", `{"text":"` + strings.Repeat("é", 16384) + `"}`},
		{"teams", "application/json", "", `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":{"type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"` + strings.Repeat("x", 28*1024) + `"}]}}]}`},
		{"discord", "application/json", "", `{"embeds":[{"title":"x","description":"` + strings.Repeat("x", 3000) + `"},{"description":"` + strings.Repeat("x", 3000) + `"}]}`},
		{"loki", "application/json", "/loki/api/v1/push", `{"streams":[{"stream":{"a":"b"},"values":[["1700000000000000000","` + strings.Repeat("x", 256001) + `"]]}]}`},
		{"cloudevents", "application/cloudevents+json", "", `{"specversion":"1.0","id":"1","source":"/x","type":"t","data":"` + strings.Repeat("x", 64<<10) + `"}`},
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
	slices.Sort(names)
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
		{"x": "# max-bytes: 0\n."}, {"x": "# max-chars: 16k\n."},
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

// TestFormatsKnowTheirServicesLimits: each shipped format says the size its service takes
// a request (its documentation is cited in the format's header); Alertmanager documents
// none. A user's format says its own.
func TestFormatsKnowTheirServicesLimits(t *testing.T) {
	want := map[string]Limit{
		"slack": {Chars: 40000}, "slack-api": {Chars: 40000}, "mattermost": {Chars: 16383}, "teams": {Bytes: 28000}, "discord": {Chars: 6000},
		"alertmanager": {}, "loki": {Bytes: 256000}, "elasticsearch": {Bytes: 100 << 20}, "otlp": {Bytes: 20 << 20},
		"cloudevents": {Bytes: 62 << 10},
	}
	for _, f := range Shipped().List() {
		if f.Limit != want[f.Name] {
			t.Errorf("%s: limit %s, want %s", f.Name, f.Limit, want[f.Name])
		}
		if !f.Limit.None() && !strings.Contains(f.Program, "https://") {
			t.Errorf("%s: its header cites no documentation", f.Name)
		}
	}
	c, err := NewCatalog(map[string]string{"both": "# max-bytes: 100\n# max-chars: 50\n."})
	if err != nil {
		t.Fatal(err)
	}
	both, _ := c.Lookup("both")
	if both.Limit != (Limit{Bytes: 100, Chars: 50}) || both.Limit.String() != "100 bytes and 50 characters" {
		t.Errorf("both: %+v", both.Limit)
	}
	for body, fits := range map[string]bool{strings.Repeat("a", 50): true, strings.Repeat("a", 51): false, strings.Repeat("é", 50): true, strings.Repeat("é", 51): false} {
		if both.Limit.Fits([]byte(body)) != fits {
			t.Errorf("%d bytes, %d characters: fits %v", len(body), len([]rune(body)), !fits)
		}
	}
	if got := (Limit{Bytes: 100}).Within(Limit{Bytes: 50, Chars: 10}); got != (Limit{Bytes: 50, Chars: 10}) {
		t.Errorf("Within: %+v", got)
	}
}

// TestOneCutsAnEventToFit: an event too large for one request alone is cut as little as
// makes it fit, and says so: its long strings end in the mark, its title in " [cut]", its
// envelope has "cut": true; one that fits is left whole; one that cannot fit is an error
// that says its size.
func TestOneCutsAnEventToFit(t *testing.T) {
	_, values := batch(t)
	envelope := values[1].(map[string]any)
	big := map[string]any{}
	for k, v := range envelope {
		big[k] = v
	}
	big["note"] = strings.Repeat("all work and no play ", 1000)
	var containers []any
	for i := range 500 {
		containers = append(containers, map[string]any{"name": fmt.Sprintf("c%03d", i), "state": map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff"}}})
	}
	big["object"] = map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "crowded", "namespace": "default"},
		"status": map[string]any{"phase": "Running", "containerStatuses": containers}}
	for _, name := range []string{"teams", "loki", "cloudevents"} {
		f, _ := Shipped().Lookup(name)
		c, err := f.Compile()
		if err != nil {
			t.Fatal(err)
		}
		limit := Limit{Bytes: 4000}
		whole, cut, err := c.One(context.Background(), envelope, limit)
		if err != nil || cut || strings.Contains(string(whole), "[cut]") {
			t.Errorf("%s: an event that fits: cut %v, %v: %s", name, cut, err, whole)
		}
		body, cut, err := c.One(context.Background(), big, limit)
		if err != nil || !cut || !limit.Fits(body) {
			t.Fatalf("%s: cut %v, %d bytes, %v", name, cut, len(body), err)
		}
		if !strings.Contains(string(body), "[cut]") {
			t.Errorf("%s: the body does not say it was cut: %s", name, body)
		}
		for _, err := range notifytest.Check(name, notifytest.Request{Path: paths[name], ContentType: f.ContentType, Body: body}) {
			t.Errorf("%s: %v", name, err)
		}
		if _, ok := big["cut"]; ok || len(big["note"].(string)) != 21000 {
			t.Fatalf("%s: the envelope was changed", name)
		}
		_, _, err = c.One(context.Background(), big, Limit{Bytes: 100})
		if !IsTooLarge(err) || !strings.Contains(err.Error(), "too large for one request even cut (") || !strings.Contains(err.Error(), "at most 100 bytes)") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A string cut keeps whole characters.
	if got := cutValue("ééééééééééé", 8, 1); got != "éé"+Mark {
		t.Errorf("cut %q", got)
	}
}

// An event whose crash context makes it too large for one request loses the start of its
// log first, said where the reader sees it: the last lines stay, the log says it was cut,
// and so does the title; the rest of the event is whole.
func TestOneCutsTheContextFirst(t *testing.T) {
	_, values := batch(t)
	open := values[len(values)-4].(map[string]any) // eventtest.EpisodeEvents' first
	for _, tc := range []struct {
		name  string
		limit Limit
	}{{"slack", Limit{Chars: 1400}}, {"teams", Limit{Bytes: 1800}}, {"mattermost", Limit{Chars: 1300}}, {"discord", Limit{Chars: 1400}}} {
		f, _ := Shipped().Lookup(tc.name)
		c, err := f.Compile()
		if err != nil {
			t.Fatal(err)
		}
		if whole, _ := c.Body(context.Background(), []any{open}); tc.limit.Fits(whole) {
			t.Fatalf("%s: the event fits %s whole; the test needs one that does not", tc.name, tc.limit)
		}
		body, cut, err := c.One(context.Background(), open, tc.limit)
		if err != nil || !cut || !tc.limit.Fits(body) {
			t.Fatalf("%s: cut %v, %s, %v", tc.name, cut, tc.limit.Size(body), err)
		}
		text := string(body)
		for _, want := range []string{"(cut):", "main.go:53", "[cut]…", "crashloop: Pod default/web-7d9f8-abc12", "[cut]", "app exited 2 (Error): config missing"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the body cut to %s does not say %q: %s", tc.name, tc.limit, want, text)
			}
		}
		if strings.Contains(text, "starting web 1.27") {
			t.Errorf("%s: the log's first line kept, its last cut: %s", tc.name, text)
		}
		for _, err := range notifytest.Check(tc.name, asSent(t, f, body)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if c := open["context"].(map[string]any)["log"].(map[string]any); len(c["lines"].([]any)) != 20 || c["cut"] != nil {
		t.Error("the envelope was changed")
	}
}
