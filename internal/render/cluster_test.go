package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fatih/color"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/jq"
)

// Several clusters: a cluster column after the time in pretty output (headed CLUSTER on
// a terminal, changes indented past it), "cluster" in JSON, YAML and jq's input; with
// one cluster, none of it.
func TestClusterColumn(t *testing.T) {
	events := func() []*event.Event {
		evs := eventtest.Events()[:2] // ADDED, then MODIFIED with a diff
		evs[0].Cluster, evs[1].Cluster = "prod-eu", "dev"
		return evs
	}
	o := Options{Location: time.UTC, Diff: diff.NewDiffer(nil), Namespace: "default", Clusters: []string{"prod-eu", "dev"}}
	out := string(render(t, o, events()))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "15:04:05  prod-eu  ADDED ") || !strings.HasPrefix(lines[1], "15:04:07  dev      MODIFIED ") {
		t.Errorf("cluster column:\n%s", out)
	}
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l, strings.Repeat(" ", len("15:04:05  prod-eu  "))) {
			t.Errorf("change %q is not indented past the cluster column:\n%s", l, out)
		}
	}

	o.Headers = true
	out = string(render(t, o, events()))
	if !strings.HasPrefix(out, "TIME      CLUSTER  EVENT") || !strings.Contains(out, "\n15:04:05  prod-eu  ADDED ") {
		t.Errorf("header:\n%s", out)
	}

	o = Options{Location: time.UTC, Namespace: "default", Clusters: []string{"prod-eu", "dev"}, Color: true}
	out = string(render(t, o, events()))
	if !strings.Contains(out, "\x1b[") || !strings.Contains(out, "prod-eu\x1b[0m  ") {
		t.Errorf("no coloured cluster label:\n%q", out)
	}

	// One cluster: no column, as before.
	evs := eventtest.Events()[:1]
	one := string(render(t, Options{Location: time.UTC, Namespace: "default", Clusters: []string{"dev"}}, evs))
	if !strings.HasPrefix(one, "15:04:05  ADDED ") {
		t.Errorf("one cluster:\n%s", one)
	}

	// JSON, YAML and jq: "cluster" after seq, only when set.
	line := string(render(t, Options{Format: FormatJSON}, events()[:1]))
	if !strings.Contains(line, `"seq":1,"cluster":"prod-eu","resource":`) {
		t.Errorf("JSON: %s", line)
	}
	if plain := string(render(t, Options{Format: FormatJSON}, eventtest.Events()[:1])); strings.Contains(plain, `"cluster"`) {
		t.Errorf("JSON of one cluster has a cluster: %s", plain)
	}
	if y := string(render(t, Options{Format: FormatYAML}, events()[:1])); !strings.Contains(y, "\ncluster: prod-eu\n") {
		t.Errorf("YAML:\n%s", y)
	}
	env, err := jq.EnvelopeValue(events()[0], nil, false)
	if err != nil || env["cluster"] != "prod-eu" {
		t.Errorf("jq envelope: %v %v", env["cluster"], err)
	}
	var decoded map[string]any
	if err := json.Unmarshal([]byte(line), &decoded); err != nil || decoded["cluster"] != env["cluster"] {
		t.Errorf("JSON and jq disagree: %v vs %v", decoded["cluster"], env["cluster"])
	}
}

// Labels: long context names (EKS ARNs) are shortened in the middle unless that makes
// two alike; colours follow the name, so a cluster keeps its colour whatever is beside it.
func TestClusterLabels(t *testing.T) {
	arn := "arn:aws:eks:eu-west-1:123456789012:cluster/prod"
	c := newClusterColumn([]string{arn, "dev"}, false)
	if got := string(c.append(nil, arn)); got != "arn:aws:ek…ster/prod  " {
		t.Errorf("label %q", got)
	}
	if c.width != maxClusterColumn {
		t.Errorf("width %d", c.width)
	}
	twins := newClusterColumn([]string{arn, strings.Replace(arn, "eu-west", "us-east", 1)}, false)
	if twins.width != len(arn) {
		t.Errorf("names alike once shortened are kept whole: width %d", twins.width)
	}
	if newClusterColumn([]string{"one"}, true) != nil {
		t.Error("a column for one cluster")
	}
	// prod keeps its own colour beside any cluster whose colour is another.
	own := clusterColour("prod", nil)
	want := color.New(own)
	want.EnableColor()
	for _, other := range []string{"dev", "staging", "qa", "test", "eu", "us"} {
		if clusterColour(other, nil) == own {
			continue
		}
		c := newClusterColumn([]string{"prod", other}, true)
		if got := c.labels["prod"].styled; got != want.Sprint("prod") {
			t.Errorf("prod beside %s: %q, want %q", other, got, want.Sprint("prod"))
		}
	}
	// Two names on one colour: the later (sorted) takes the next.
	taken := map[color.Attribute]bool{own: true}
	if clusterColour("prod", taken) == own {
		t.Error("a taken colour was given again")
	}
}
