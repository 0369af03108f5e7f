package cmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/store"
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

// TestReplayStoreFlags: replay --store reads the store instead of files, names it at the
// start, and is refused with a file beside it or with the flags that read files.
func TestReplayStoreFlags(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	db, rec := filepath.Join(dir, "events.db"), filepath.Join(dir, "events.jsonl")
	w, err := store.Create(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(run func(context.Context, engine.System, engine.Config, engine.Replay) (engine.Result, error)) {
		runReplay = run
	}(runReplay)
	var got engine.Replay
	runReplay = func(_ context.Context, _ engine.System, _ engine.Config, rp engine.Replay) (engine.Result, error) {
		got = rp
		return engine.Result{}, nil
	}
	run := func(args ...string) error {
		var out, errOut bytes.Buffer
		root := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		root.SetArgs(append([]string{"replay"}, args...))
		return root.ExecuteContext(context.Background())
	}
	if err := run("--store", db, "-n", "shop"); err != nil || got.What != db || got.Namespace != "shop" || got.Source == nil {
		t.Errorf("replay --store: %v, %+v", err, got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{rec, "--store", db}, rec + " and --store both say what to read: give one"},
		{[]string{"--store", db, "--follow"}, "--follow and --skip-bad-lines read files"},
		{[]string{"pods"}, "no recording given: kubeevents replay FILE... (a file, a directory of a file sink's files, a quoted pattern, or - for stdin), or --store FILE"},
		{[]string{"--store", rec}, "not a kubeevents store"},
	} {
		if err := run(c.args...); err == nil || !strings.Contains(err.Error(), c.want) || ExitCode(err, io.Discard) != ExitUsage {
			t.Errorf("replay %v: %v (exit %d), want exit 2 and %q", c.args, err, ExitCode(err, io.Discard), c.want)
		}
	}
}
