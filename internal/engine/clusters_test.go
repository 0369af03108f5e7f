package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/watch"
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
	cfg.clusters = []watch.Cluster{
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
}
