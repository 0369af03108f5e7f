package notify

import (
	"context"
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/notify/notifytest"
)

// Every shipped format takes the health transitions (degraded, stalled) as its receiver
// takes any event; those that write text say which, of what, and the health's message as
// the detail; those that grade severity count them as problems.
func TestFormatsSayHealth(t *testing.T) {
	evs := eventtest.HealthEvents()
	degraded, stalled := evs[1], evs[2]
	degraded.On, stalled.On = []string{"degraded"}, []string{"stalled"}
	var values []any
	for _, ev := range []*event.Event{degraded, stalled} {
		v, err := jq.EnvelopeValue(ev, diff.NewDiffer(nil), false)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	for _, f := range Shipped().List() {
		c, err := f.Compile()
		if err != nil {
			t.Fatal(err)
		}
		n := len(values)
		if f.MaxBatch > 0 {
			n = min(n, f.MaxBatch)
		}
		for start := 0; start < len(values); start += n {
			body, err := c.Body(context.Background(), values[start:min(start+n, len(values))])
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			for _, err := range notifytest.Check(f.Name, notifytest.Request{Path: paths[f.Name], ContentType: f.ContentType, Body: body}) {
				t.Errorf("%s: %v\n%s", f.Name, err, body)
			}
		}
	}
	for _, name := range []string{"slack", "mattermost", "teams", "discord"} {
		f, _ := Shipped().Lookup(name)
		c, err := f.Compile()
		if err != nil {
			t.Fatal(err)
		}
		body, err := c.Body(context.Background(), values)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"degraded: Deployment default/web", "Failed: Progress deadline exceeded",
			"stalled: Deployment default/web", "InProgress: no progress for 5m0s: Available: 3/5"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("%s does not say %q:\n%s", name, want, body)
			}
		}
	}
	alerts := run[[]struct {
		Labels map[string]string `json:"labels"`
	}](t, "alertmanager", values)
	if len(alerts) != 2 || alerts[0].Labels["alertname"] != "degraded" || alerts[0].Labels["severity"] != "warning" ||
		alerts[1].Labels["alertname"] != "stalled" || alerts[1].Labels["severity"] != "warning" {
		t.Errorf("alerts %+v, want degraded and stalled, each a warning", alerts)
	}
}
