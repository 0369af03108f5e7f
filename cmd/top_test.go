package cmd

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/top"
)

// Bad input to top is reported before anything connects, as watch's is.
func TestTopUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // the start of stderr's first line
	}{
		{"bad output", []string{"top", "pods", "-o", "yaml"}, `kubeevents: -o "yaml": top writes pretty (the default) or json`},
		{"short window", []string{"top", "pods", "--window", "10ms"}, `kubeevents: --window 10ms: give a duration of a second or more`},
		{"bad selector", []string{"top", "pods", "-l", "a in (b"}, `kubeevents: -l/--selector "a in (b":`},
		{"no type", []string{"top"}, `kubeevents: no resource type given; usage: kubeevents top TYPE`},
	}
	for _, tc := range cases {
		code, stdout, stderr := runCommand(t, append([]string{"--kubeconfig", "/nonexistent/kubeconfig"}, tc.args...)...)
		if code != ExitUsage || !strings.HasPrefix(stderr, tc.want) || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, nothing, and one line starting %q", tc.name, code, stdout, stderr, ExitUsage, tc.want)
		}
	}
}

// kubeevents top watches what watch would, and ranks it as its flags say.
func TestTopConfigFromFlags(t *testing.T) {
	var got top.Config
	runTop = func(_ context.Context, _ engine.System, cfg top.Config) error {
		got = cfg
		return nil
	}
	defer func() { runTop = top.Run }()
	args := []string{"top", "pods,deploy", "-A", "--exclude-namespace", "kube-*", "-l", "app=web", "--context", "a,b",
		"-o", "json", "--window", "5m", "--interval", "10s", "--rows", "3", "--timeout", "1m"}
	if code, _, stderr := runCommand(t, args...); code != 0 {
		t.Fatalf("kubeevents %s: exit %d, %s", strings.Join(args, " "), code, stderr)
	}
	w := got.Engine.Watch
	if !slices.Equal(w.Types, []string{"pods", "deploy"}) || !w.AllNamespaces || !slices.Equal(w.ExcludeNamespaces, []string{"kube-*"}) ||
		w.LabelSelector != "app=web" || w.Context != "a,b" {
		t.Errorf("watch request %+v", w)
	}
	if !got.JSON || got.Window != 5*time.Minute || got.Interval != 10*time.Second || got.Rows != 3 || got.Engine.End.Timeout != time.Minute || got.Size != nil {
		t.Errorf("top config %+v", got)
	}
}
