package render

import (
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

// JSON and YAML carry the object's health (its previous status but on its first event);
// pretty lines mark where it changed, and every STALLED line; -o wide has a HEALTH
// column.
func TestHealth(t *testing.T) {
	events := eventtest.HealthEvents()
	for i, want := range []string{
		`"health":{"status":"InProgress","message":"Available: 3/5"},"object"`,
		`"health":{"status":"Failed","message":"Progress deadline exceeded","previous":"InProgress"},"object"`,
		`{"type":"STALLED","time":"2026-11-22T15:09:05.123456789Z","seq":22,`,
	} {
		line, err := AppendEnvelopeWithDiff(nil, events[i], nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(line), want) {
			t.Errorf("event %d: %s\nwant it to hold %s", i+1, line, want)
		}
	}
	yaml := string(render(t, Options{Format: FormatYAML, Location: time.UTC}, eventtest.HealthEvents()[1:2]))
	if !strings.Contains(yaml, "health:\n  status: Failed\n  message: Progress deadline exceeded\n  previous: InProgress\nobject:") {
		t.Errorf("YAML lacks the health:\n%s", yaml)
	}
	pretty := strings.Split(strings.TrimSpace(string(render(t, Options{Location: time.UTC}, eventtest.HealthEvents()))), "\n")
	for i, want := range []string{
		"… InProgress: Available: 3/5",
		"✗ Failed: Progress deadline exceeded",
		"STALLED",
	} {
		if i >= len(pretty) || !strings.Contains(pretty[i], want) {
			t.Errorf("pretty line %d lacks %q:\n%s", i+1, want, strings.Join(pretty, "\n"))
		}
	}
	if last := pretty[len(pretty)-1]; strings.Contains(last, "Failed") || !strings.HasPrefix(strings.Fields(last)[1], "SYNC") {
		t.Errorf("a SYNC whose health did not change is marked: %q", last)
	}
	if !strings.Contains(pretty[2], "… InProgress: no progress for 5m0s") {
		t.Errorf("the STALLED line does not say why: %q", pretty[2])
	}
	wide := strings.Split(strings.TrimSpace(string(render(t, Options{Format: FormatWide, Location: time.UTC, Headers: true}, eventtest.HealthEvents()[:2]))), "\n")
	if len(wide) != 3 || !strings.HasSuffix(wide[0], " HEALTH") || !strings.Contains(wide[1], " InProgress  … InProgress") {
		t.Errorf("-o wide has no HEALTH column:\n%s", strings.Join(wide, "\n"))
	}
	// Without health (a run that does not compute it), nothing of it.
	plain := eventtest.Events()[0]
	if line, _ := AppendEnvelopeWithDiff(nil, plain, nil, false); strings.Contains(string(line), `"health"`) {
		t.Errorf("an event without health has one: %s", line)
	}
}
