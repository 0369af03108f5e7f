package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// clusterRecording keeps each event's cluster, seq and key.
type clusterRecording struct {
	mu     sync.Mutex
	events []string
	seqs   []uint64
}

func (r *clusterRecording) Write(ev *event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev.Cluster+" "+ev.Key())
	r.seqs = append(r.seqs, ev.Seq)
	return nil
}

func (r *clusterRecording) Close() error { return nil }

// Two clusters feed the same listeners: every event says its cluster, seq is one
// sequence over both, the result counts per cluster, and notices name their cluster.
func TestRunSeveralClusters(t *testing.T) {
	sinks := []*clusterRecording{{}, {}}
	var warnings []string
	var mu sync.Mutex
	cfg := runConfig{cfg: &Config{End: End{Grace: 1e9, MaxEvents: 5}}, several: true,
		hooks: hooks{warn: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			warnings = append(warnings, fmt.Sprintf(format, args...))
		}}}
	for i, s := range sinks {
		cfg.listeners = append(cfg.listeners, listener.New(listener.Config{Name: fmt.Sprintf("sink-%d", i)}, s, cfg.hooks.warn))
	}
	cfg.clusters = []Cluster{
		{Name: "east", Clients: fakeClients(t, "e1", "e2", "e3"), Resources: []resource.Resource{configMaps}, Namespaces: []string{"ns"}},
		{Name: "west", Clients: fakeClients(t, "w1", "w2"), Resources: []resource.Resource{configMaps}, Namespaces: []string{"ns"}},
	}
	res, err := runOn(context.Background(), fakeClients(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Made != 5 || len(res.Clusters) != 2 || res.Clusters[0].Name != "east" || res.Clusters[0].Made != 3 ||
		res.Clusters[1].Name != "west" || res.Clusters[1].Made != 2 {
		t.Fatalf("result %+v; want 5 events, east 3 and west 2", res)
	}
	for i, s := range sinks {
		got := slices.Sorted(slices.Values(s.events))
		want := []string{"east ns/e1", "east ns/e2", "east ns/e3", "west ns/w1", "west ns/w2"}
		if !slices.Equal(got, want) {
			t.Errorf("sink %d got %q, want %q", i, got, want)
		}
		seqs := slices.Sorted(slices.Values(s.seqs))
		if !slices.Equal(seqs, []uint64{1, 2, 3, 4, 5}) {
			t.Errorf("sink %d seqs %v, want one sequence 1..5 over both clusters", i, seqs)
		}
	}

	// A cluster's notices start with its name.
	c := (&run{runConfig: cfg}).clusterRuns()
	c[1].warn("watch of %s lost", "configmaps")
	if last := warnings[len(warnings)-1]; last != "cluster west: watch of configmaps lost" {
		t.Errorf("notice %q, want it to name the cluster", last)
	}
	if !slices.Equal(c[0].Namespaces, []string{"ns"}) {
		t.Errorf("a cluster's namespaces are not its own: %+v", c[0].Cluster)
	}
}

// One cluster's fatal error (a first list that failed) leaves it out and ends the run
// only with the last one.
func TestClusterFatalLeavesItOut(t *testing.T) {
	var warned []string
	r := newRun(runConfig{cfg: &Config{}, clusters: []Cluster{{Name: "a"}, {Name: "b"}}, several: true, hooks: hooks{warn: func(f string, args ...any) {
		warned = append(warned, fmt.Sprintf(f, args...))
	}}})
	runs := r.clusterRuns()
	r.live.Store(2)
	runs[0].fatalOf(r)(fmt.Errorf("forbidden"))
	runs[0].fatalOf(r)(fmt.Errorf("again")) // said once
	select {
	case err := <-r.fatal:
		t.Fatalf("the run ended (%v) with cluster b still watched", err)
	default:
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], "cluster a: forbidden; watching the other clusters without it") {
		t.Errorf("warnings %q", warned)
	}
	runs[1].fatalOf(r)(fmt.Errorf("gone"))
	if err := <-r.fatal; err == nil || err.Error() != "gone" {
		t.Errorf("fatal %v, want the last cluster's error", err)
	}
	if res := r.clusterResults(runs); res[0].Left == nil || res[1].Left == nil {
		t.Errorf("results %+v: both left", res)
	}
}
