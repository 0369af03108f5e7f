package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/engine"
)

// TestReplayFlagsSelectWithinTheRecording: replay's and history's -n and --cluster say
// that they select within the recording (not kubectl's connection wording), and set the
// replay's selection; replay --on names the transitions.
func TestReplayFlagsSelectWithinTheRecording(t *testing.T) {
	isolate(t)
	root := NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
	for _, name := range []string{"replay", "history"} {
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		for _, flag := range []string{"namespace", "cluster"} {
			f := c.LocalFlags().Lookup(flag)
			if f == nil || !strings.Contains(f.Usage, "recording") && !strings.Contains(f.Usage, "recorded") {
				t.Errorf("%s --%s: %v, want its own wording: it selects within the recording", name, flag, f)
			}
		}
	}

	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var got engine.Replay
	var cfg engine.Config
	defer func(run func(context.Context, engine.System, engine.Config, engine.Replay) (engine.Result, error)) {
		runReplay = run
	}(runReplay)
	runReplay = func(_ context.Context, _ engine.System, c engine.Config, rp engine.Replay) (engine.Result, error) {
		cfg, got = c, rp
		return engine.Result{}, nil
	}
	var out, errOut bytes.Buffer
	root = NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs([]string{"replay", path, "-n", "shop", "--cluster", "prod,dev", "--on", "crashloop"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("%v; stderr:\n%s", err, errOut.String())
	}
	if got.Namespace != "shop" || !slices.Equal(got.Clusters, []string{"prod", "dev"}) || !slices.Equal(cfg.Events.On, []string{"crashloop"}) || !cfg.ReadsObjects() {
		t.Errorf("replay -n shop --cluster prod,dev --on crashloop: namespace %q, clusters %q, on %q", got.Namespace, got.Clusters, cfg.Events.On)
	}
}
