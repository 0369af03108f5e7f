package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/internal/diag"
)

// features are the parts of a run that can conflict, each as it turns itself on (with
// what it needs to be whole: --until-rollout follows an object, so it comes with
// --owned).
var features = []struct {
	name string
	on   func(*Features)
}{
	{"several namespaces", func(f *Features) { f.Namespaces = []string{"a", "b"} }},
	{"several clusters", func(f *Features) { f.Contexts = 2 }},
	{"--resume", func(f *Features) { f.Resume = "ck" }},
	{"--owned", func(f *Features) { f.Owned = true }},
	{"--ui", func(f *Features) { f.UI, f.Screen, f.StdoutTerminal = true, "pretty", true }},
	{"--leader-elect", func(f *Features) { f.LeaderElect = true }},
	{"--until", func(f *Features) { f.Until = true }},
	{"--until-deleted", func(f *Features) { f.UntilDeleted = true }},
	{"--until-rollout", func(f *Features) { f.UntilRollout, f.Owned = true, true }},
	{"--until-ready", func(f *Features) { f.UntilReady = true }},
	{"--watch-only", func(f *Features) { f.WatchOnly = true }},
	{"--metadata-only", func(f *Features) { f.MetadataOnly = true }},
	{"replay", func(f *Features) { f.Replay = true }},
}

// refused are the pairs that do not go together, and what the refusal says; every other
// pair is accepted.
var refused = map[[2]string]string{
	{"several namespaces", "--owned"}:         "--owned follows one object in one namespace, but -n names 2 (a,b); give one namespace",
	{"several namespaces", "--until-rollout"}: "--owned follows one object in one namespace, but -n names 2 (a,b)",
	{"several clusters", "--owned"}:           "--owned follows one object in one cluster, but several contexts are watched; give one --context",
	{"several clusters", "--until-rollout"}:   "--owned follows one object in one cluster",
	{"several clusters", "--leader-elect"}:    "--leader-elect takes one cluster, the one whose Lease it holds",
	{"several clusters", "--until-deleted"}:   "--until-deleted waits for objects of one cluster, but several contexts are watched",
	{"--resume", "--owned"}:                   "--resume and --owned do not go together",
	{"--resume", "--until-rollout"}:           "--resume and --owned do not go together",
	{"--resume", "--watch-only"}:              "--resume and --watch-only do not go together",
	{"--resume", "replay"}:                    "--resume applies to a watch of a cluster, and a replay reads a recording: drop --resume",
	{"--ui", "--leader-elect"}:                "--ui is a view for a person at a terminal, --leader-elect is for replicas in a cluster; drop one",
	{"--ui", "replay"}:                        "--ui applies to a watch of a cluster",
	{"--leader-elect", "replay"}:              "--leader-elect applies to a watch of a cluster",
	{"--until", "--until-rollout"}:            "--until-rollout cannot be combined with --until or --until-deleted: give one condition",
	{"--until-deleted", "--until-rollout"}:    "--until-rollout cannot be combined with --until or --until-deleted",
	{"--until-deleted", "replay"}:             "--until-deleted applies to a watch of a cluster",
	{"--until-rollout", "--metadata-only"}:    "--until-rollout reads the object's status, which --metadata-only leaves out",
	{"--until-rollout", "replay"}:             "--until-rollout applies to a watch of a cluster",
	{"--watch-only", "replay"}:                "--watch-only applies to a watch of a cluster",
	{"--metadata-only", "replay"}:             "--metadata-only applies to a watch of a cluster",
	{"--resume", "--until-ready"}:             "--until-ready needs the objects as they are at start-up, which --watch-only and --resume leave out",
	{"--until", "--until-ready"}:              "--until-ready cannot be combined with --until, --until-deleted or --until-rollout: give one condition",
	{"--until-deleted", "--until-ready"}:      "--until-ready cannot be combined with --until, --until-deleted or --until-rollout",
	{"--until-rollout", "--until-ready"}:      "--until-ready cannot be combined with --until, --until-deleted or --until-rollout",
	{"--until-ready", "--watch-only"}:         "--until-ready needs the objects as they are at start-up",
	{"--until-ready", "--metadata-only"}:      "--until-ready reads the objects' status, which --metadata-only leaves out",
	{"--until-ready", "replay"}:               "--until-ready applies to a watch of a cluster",
}

// TestEveryPairOfFeatures runs Check on every pair of features that can conflict: each
// refused pair is a usage error saying what to do, every other pair goes together (the
// end-to-end tests run the accepted pairs that involve --resume, several namespaces or
// several clusters: test/e2e/combinations_test.go).
func TestEveryPairOfFeatures(t *testing.T) {
	seen := map[[2]string]bool{}
	for i, a := range features {
		for _, b := range features[i+1:] {
			pair := [2]string{a.name, b.name}
			seen[pair] = true
			f := Features{Types: 1, Names: 1}
			a.on(&f)
			b.on(&f)
			err := Check(f)
			want, isRefused := refused[pair]
			var usage *diag.UsageError
			switch {
			case !isRefused && err != nil:
				t.Errorf("%s × %s: %v; want them accepted", a.name, b.name, err)
			case isRefused && (!errors.As(err, &usage) || !strings.Contains(err.Error(), want)):
				t.Errorf("%s × %s: %v; want a usage error with %q", a.name, b.name, err, want)
			}
		}
	}
	for pair := range refused {
		if !seen[pair] {
			t.Errorf("refused pair %v is not a pair of the features (misspelt, or in the other order)", pair)
		}
	}
	// Each feature alone is accepted.
	for _, a := range features {
		f := Features{Types: 1, Names: 1}
		a.on(&f)
		if err := Check(f); err != nil {
			t.Errorf("%s alone: %v", a.name, err)
		}
	}
}

// The checks that need the clusters wait for them: a count of contexts that is not known
// yet (a glob, --all-contexts) refuses nothing, and Secrets only once known.
func TestChecksWaitForWhatOnlyTheClustersKnow(t *testing.T) {
	f := Features{Types: 1, Names: 1, Owned: true, Contexts: 0}
	if err := Check(f); err != nil {
		t.Errorf("--owned with contexts not known yet: %v", err)
	}
	f.Contexts = 2
	if err := Check(f); err == nil {
		t.Error("--owned in two contexts accepted")
	}
	f = Features{Types: 1, Resume: "configmap:ns/ck"}
	if err := Check(f); err != nil {
		t.Errorf("a ConfigMap checkpoint before the types are known: %v", err)
	}
	f.Secrets = true
	for show, want := range map[bool]string{false: "holds the key behind the fingerprints", true: "holds their values (--show-secrets)"} {
		f.ShowSecrets = show
		if err := Check(f); err == nil || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "keep it in Secrets: --resume secret:ns/ck") {
			t.Errorf("show secrets %v: %v", show, err)
		}
	}
	// What the request says is read from it.
	req := Request{Types: []string{"deploy"}, Names: []string{"web"}, Namespace: "a,b", NamespaceGiven: true, Owned: true, Context: "x,y"}
	got := FeaturesOf(req)
	if fmt.Sprint(got.Namespaces) != "[a b]" || got.Contexts != 2 || !got.Owned || got.Types != 1 || got.Names != 1 {
		t.Errorf("FeaturesOf: %+v", got)
	}
	if FeaturesOf(Request{Context: "prod-*"}).Contexts != 0 || FeaturesOf(Request{AllContexts: true}).Contexts != 0 {
		t.Error("a glob or --all-contexts counted before Resolve")
	}
}
