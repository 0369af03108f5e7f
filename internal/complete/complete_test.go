package complete

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func TestLimitRequestTimeout(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: one\n  cluster: {server: https://127.0.0.1:1}\n" +
		"users:\n- name: ann\n  user: {token: t1}\ncontexts:\n- name: alpha\n  context: {cluster: one, user: ann}\ncurrent-context: alpha\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		flag string
		want time.Duration
	}{
		{"0", Timeout},
		{"1m", Timeout},
		{"500ms", 500 * time.Millisecond},
	} {
		flags := genericclioptions.NewConfigFlags(true)
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		flags.AddFlags(fs)
		if err := fs.Parse([]string{"--kubeconfig", kc, "--request-timeout", tt.flag}); err != nil {
			t.Fatal(err)
		}
		LimitRequestTimeout(flags)
		cfg, err := flags.ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Timeout != tt.want {
			t.Errorf("--request-timeout %s: completion timeout = %s, want %s", tt.flag, cfg.Timeout, tt.want)
		}
	}
}

func TestTypeCandidates(t *testing.T) {
	lw := []string{"get", "list", "watch"}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", ShortNames: []string{"po"}, Verbs: lw},
			{Name: "pods/log", Kind: "Pod", Verbs: []string{"get"}},
			{Name: "events", Kind: "Event", ShortNames: []string{"ev"}, Verbs: lw},
			{Name: "bindings", Kind: "Binding", Verbs: []string{"create"}},
			{Name: "componentstatuses", Kind: "ComponentStatus", ShortNames: []string{"cs"}, Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: lw},
		}},
		{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "events", Kind: "Event", ShortNames: []string{"ev"}, Verbs: lw},
		}},
		{GroupVersion: "completion.kubeevents.dev/v1", APIResources: []metav1.APIResource{
			{Name: "gadgets", Kind: "Gadget", ShortNames: []string{"gdg"}, Verbs: lw},
		}},
		nil,
	}
	values := func(comps []cobra.Completion) []string {
		var v []string
		for _, c := range comps {
			v = append(v, strings.SplitN(c, "\t", 2)[0])
		}
		return v
	}
	tests := []struct {
		toComplete string
		want       []string
	}{
		{"", []string{"deploy", "deployments", "ev", "events", "events.events.k8s.io", "gadgets", "gdg", "po", "pods"}},
		{"p", []string{"po", "pods"}},
		{"g", []string{"gadgets", "gdg"}},
		{"pods,de", []string{"pods,deploy", "pods,deployments"}},
		{"pods,po", []string{"pods,po"}}, // pods is given already; po is another name for it, still offered
		{"deployments.", []string{"deployments.apps"}},
		{"gadgets.c", []string{"gadgets.completion.kubeevents.dev"}},
		{"cs", nil},
		{"bindings", nil},
	}
	for _, tt := range tests {
		prefix, last := "", tt.toComplete
		if i := strings.LastIndex(tt.toComplete, ","); i >= 0 {
			prefix, last = tt.toComplete[:i+1], tt.toComplete[i+1:]
		}
		typed := map[string]bool{}
		for _, p := range strings.Split(prefix, ",") {
			typed[p] = true
		}
		got := values(typeCandidates(lists, prefix, last, typed))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.toComplete, got, tt.want)
		}
	}
	// Descriptions name the kind and group/version, and what a short name stands for.
	for _, c := range typeCandidates(lists, "", "d", nil) {
		if c != "deploy\tDeployment (apps/v1), short for deployments.apps" && c != "deployments\tDeployment (apps/v1)" {
			t.Errorf("unexpected completion %q", c)
		}
	}
}

func TestOptionListEnd(t *testing.T) {
	for _, tt := range []struct {
		in             string
		closeAt, segAt int
	}{
		{"", -1, 0},
		{"raw", -1, 0},
		{"raw,out", -1, 4},
		{"raw)", 3, 0},
		{`output="a,b)",r`, -1, 14},
		{`output="a\"),b",r`, -1, 16},
		{`output="x")=`, 10, 0},
	} {
		closeAt, segAt := optionListEnd(tt.in)
		if closeAt != tt.closeAt || segAt != tt.segAt {
			t.Errorf("optionListEnd(%q) = %d, %d; want %d, %d", tt.in, closeAt, segAt, tt.closeAt, tt.segAt)
		}
	}
}
