package cmd

import (
	"context"
	"path"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// splitNamespaces reads -n a,b,c: kubectl's -n (genericclioptions owns the flag) takes
// one namespace; watch takes a comma-separated list, in order, without repeats.
func splitNamespaces(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, ns := range strings.Split(s, ",") {
		if ns = strings.TrimSpace(ns); ns != "" && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	return out
}

// checkExcludeNamespaces: --exclude-namespace takes names or globs, and applies to -A.
func (o *WatchOptions) checkExcludeNamespaces() error {
	if len(o.ExcludeNamespaces) == 0 {
		return nil
	}
	if !o.AllNamespaces {
		return usageErrorf("--exclude-namespace leaves namespaces out of -A/--all-namespaces; add -A (or list the namespaces to watch: -n a,b,c)")
	}
	for _, p := range o.ExcludeNamespaces {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return usageErrorf("--exclude-namespace %q: not a namespace name or glob pattern (*, ?, [a-z])", p)
		}
	}
	return nil
}

// completeNamespaceList completes namespaces from the cluster; with list, -n's comma
// list: the last element, after those given.
func completeNamespaceList(configFlags *genericclioptions.ConfigFlags, list bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); list && i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		skip := map[string]bool{}
		for _, ns := range splitNamespaces(done) {
			skip[ns] = true
		}
		names := clusterCompletion(cmd, configFlags, func(ctx context.Context) []cobra.Completion {
			return listNames(ctx, configFlags, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", metav1.ListOptions{}, last, skip)
		})
		for i := range names {
			names[i] = done + names[i]
		}
		return names, noFiles
	}
}
