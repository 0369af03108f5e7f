package cmd

import (
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/internal/conditions"
)

// The flags of --owned are checked before anything connects (--kubeconfig names a file
// that does not exist: reaching the cluster code would give exit 1).
func TestOwnedUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"deployments", "--owned"}, "--owned follows one object: give it as TYPE/NAME"},
		{[]string{"deployment", "a", "b", "--owned"}, "--owned follows one object"},
		{[]string{"deployment/web", "--owned", "-A"}, "drop -A/--all-namespaces"},
		{[]string{"deployment/web", "--owned", "-l", "app=web"}, "drop -l/--selector and --field-selector"},
		{[]string{"deployment/web", "--owned", "--until-rollout", "--until", ".x"}, "--until-rollout cannot be combined with --until"},
		{[]string{"deployment/web", "--owned", "--until-rollout", "--metadata-only"}, "--metadata-only leaves out"},
		{[]string{"deployment/web", "--owned-types", "pods"}, "--owned-types applies to --owned only"},
		{[]string{"deployment/web", "--until-rollout"}, "add --owned"},
		{[]string{"deployment/web", "web-2"}, "TYPE/NAME deployment/web is one object"},
		{[]string{"deployment/", "--owned"}, `"deployment/": give one object as TYPE/NAME`},
		{[]string{"deployment/a/b", "--owned"}, "give one object as TYPE/NAME"},
		{[]string{"pods,deployments/web"}, "give one object as TYPE/NAME"},
	} {
		code, _, stderr := runCommand(t, append([]string{"watch", "--kubeconfig", "/nonexistent/kubeconfig"}, c.args...)...)
		if code != ExitUsage || !strings.HasPrefix(stderr, "kubeevents: ") || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("watch %s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}

func TestRolloutFailedExitsOne(t *testing.T) {
	var b strings.Builder
	err := &conditions.FailedError{Message: `deployment "web" exceeded its progress deadline`}
	if code := ExitCode(err, &b); code != ExitError || b.String() != "kubeevents: rollout failed: deployment \"web\" exceeded its progress deadline\n" {
		t.Errorf("ExitCode = %d, printed %q", code, b.String())
	}
}
