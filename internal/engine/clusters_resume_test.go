package engine

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// forbidden is clients whose every list is refused (403).
func forbidden(t *testing.T) informer.Clients {
	c := fakeClientsAt(t, nil)
	c.Dynamic.(*dynamicfake.FakeDynamicClient).PrependReactor("list", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(configMaps.GVR.GroupResource(), "", nil)
	})
	return c
}

// Several clusters: each resumes from its own section; one whose rights are missing at
// start keeps its section as it was read; a section of a cluster not asked for too.
func TestRunResumesSeveralClusters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt")
	watchOf := func(server string) checkpoint.Watch {
		return checkpoint.Watch{Server: server, Resources: []string{"configmaps.v1"}, Namespaces: []string{"ns"}}
	}
	east, west := watchOf("https://east"), watchOf("https://west")
	cluster := func(name string, clients informer.Clients) Cluster {
		return Cluster{Name: name, Clients: clients, Resources: []resource.Resource{configMaps}, Namespaces: []string{"ns"}}
	}
	sink := &recording{}
	cfg := newConfig(sink)
	cfg.Timeout = 300 * time.Millisecond
	cfg.Several = true
	cfg.Clusters = []Cluster{
		cluster("east", fakeClientsAt(t, map[string]string{"e1": "1", "e2": "1"})),
		cluster("west", fakeClientsAt(t, map[string]string{"w1": "1"})),
	}
	cfg.Resume = &Resume{Path: path, Clusters: map[string]ClusterResume{"east": {Watch: east}, "west": {Watch: west}}}
	if _, err := runOn(context.Background(), fakeClients(t), cfg); err != nil {
		t.Fatal(err)
	}
	file, err := checkpoint.Load(path)
	if err != nil || file == nil || len(file.Sections) != 2 {
		t.Fatalf("checkpoint after the first run: %+v, %v; want sections east and west", file, err)
	}
	saved := map[string]*checkpoint.Saved{}
	for _, s := range file.Sections {
		saved[s.Context] = s
	}
	if saved["east"].Count() != 2 || saved["west"].Count() != 1 {
		t.Fatalf("east %d objects, west %d; want 2 and 1", saved["east"].Count(), saved["west"].Count())
	}
	other := &checkpoint.Saved{Path: path, Context: "north", Written: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Watch: watchOf("https://north"), Objects: map[string][][]byte{}}

	// East changed while down; west refuses the rights now.
	sink = &recording{}
	cfg = newConfig(sink)
	cfg.Timeout = 300 * time.Millisecond
	cfg.Several = true
	cfg.Clusters = []Cluster{
		cluster("east", fakeClientsAt(t, map[string]string{"e1": "2", "e3": "1"})),
		cluster("west", forbidden(t)),
	}
	cfg.Resume = &Resume{Path: path, Kept: []*checkpoint.Saved{other}, Clusters: map[string]ClusterResume{
		"east": {Watch: east, Saved: saved["east"]}, "west": {Watch: west, Saved: saved["west"]}}}
	if _, err := runOn(context.Background(), fakeClients(t), cfg); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(sink.got()))
	if want := []string{"ADDED ns/e3", "DELETED ns/e2", "MODIFIED ns/e1"}; !slices.Equal(got, want) {
		t.Errorf("resumed run: %v, want exactly %v", got, want)
	}
	file, err = checkpoint.Load(path)
	if err != nil || len(file.Sections) != 3 {
		t.Fatalf("checkpoint after the resumed run: %+v, %v; want east, west and north", file, err)
	}
	for _, s := range file.Sections {
		switch s.Context {
		case "east":
			if s.Count() != 2 || !s.Written.After(saved["east"].Written) {
				t.Errorf("east: %d objects written %v, want 2 (e1, e3) written anew", s.Count(), s.Written)
			}
		case "west":
			if s.Count() != 1 || !s.Written.Equal(saved["west"].Written) || string(s.Objects["configmaps.v1"][0]) != string(saved["west"].Objects["configmaps.v1"][0]) {
				t.Errorf("west, left out at start: %d objects written %v, want its section as it was", s.Count(), s.Written)
			}
		case "north":
			if !s.Written.Equal(other.Written) || s.Watch.Server != "https://north" {
				t.Errorf("north, not asked for: %+v, want it as it was", s)
			}
		}
	}
}
