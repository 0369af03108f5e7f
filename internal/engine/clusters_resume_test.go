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
	"github.com/kubeevents/kubeevents/internal/resume"
	"github.com/kubeevents/kubeevents/internal/watch"
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
	east, west, north := watchOf("https://east"), watchOf("https://west"), watchOf("https://north")
	cluster := func(name string, clients informer.Clients) watch.Cluster {
		return watch.Cluster{Name: name, Clients: clients, Resources: []resource.Resource{configMaps}, Namespaces: []string{"ns"}}
	}
	sink := &recording{}
	cfg := newConfig(sink)
	cfg.cfg.End.Timeout = 300 * time.Millisecond
	cfg.several = true
	cfg.clusters = []watch.Cluster{
		cluster("east", fakeClientsAt(t, map[string]string{"e1": "1", "e2": "1"})),
		cluster("west", fakeClientsAt(t, map[string]string{"w1": "1"})),
		cluster("north", fakeClientsAt(t, map[string]string{"n1": "1"})),
	}
	withResume(t, &cfg, path, resume.Cluster{Name: "east", Watch: east}, resume.Cluster{Name: "west", Watch: west},
		resume.Cluster{Name: "north", Watch: north})
	if _, err := runOn(context.Background(), fakeClients(t), cfg); err != nil {
		t.Fatal(err)
	}
	file, err := checkpoint.Load(path)
	if err != nil || file == nil || len(file.Sections) != 3 {
		t.Fatalf("checkpoint after the first run: %+v, %v; want sections east, west and north", file, err)
	}
	saved := map[string]*checkpoint.Saved{}
	for _, s := range file.Sections {
		saved[s.Context] = s
	}
	if saved["east"].Count() != 2 || saved["west"].Count() != 1 {
		t.Fatalf("east %d objects, west %d; want 2 and 1", saved["east"].Count(), saved["west"].Count())
	}
	other := saved["north"]

	// East changed while down; west refuses the rights now; north is not asked for.
	sink = &recording{}
	cfg = newConfig(sink)
	cfg.cfg.End.Timeout = 300 * time.Millisecond
	cfg.several = true
	cfg.clusters = []watch.Cluster{
		cluster("east", fakeClientsAt(t, map[string]string{"e1": "2", "e3": "1"})),
		cluster("west", forbidden(t)),
	}
	withResume(t, &cfg, path, resume.Cluster{Name: "east", Watch: east}, resume.Cluster{Name: "west", Watch: west})
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
