package cmd

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/timetravel"
)

const getExample = `  # A namespace's Deployments and pods as kubectl get printed them 5 minutes ago
  kubeevents get deploy,pods -n shop --at 5m --store events.db

  # One ConfigMap at 14:05, as YAML, deleted since or not
  kubeevents get cm settings -n shop --at 2026-11-23T14:05:00Z --store events.db -o yaml`

// NewGetCommand is `kubeevents get TYPE[,TYPE...] [NAME...] --at TIME --store FILE`.
func NewGetCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	f := &storeFlags{}
	var at, selector, output string
	var allNamespaces bool
	c := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] --at TIME [--store FILE]",
		Short: "What kubectl get printed at a time, from a history store",
		Long: `Prints what kubectl get would have printed at TIME, read from a history store (kubeevents
store import): the server's columns as of then (AGE relative to TIME), objects deleted
since included. Types are resolved against what the store holds (short names, kinds,
plurals, as kubectl does); -n, -A, -l and -o as kubectl get's. TIME is RFC 3339 or how
long ago (10m, 2h ago).`,
		Example: getExample,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			types, names, err := typesAndNames(args, "get")
			if err != nil {
				return err
			}
			path, err := f.path()
			if err != nil {
				return err
			}
			cfg := timetravel.GetConfig{Store: path, Types: types, Names: names, AllNamespaces: allNamespaces,
				LabelSelector: selector, Output: output, Out: streams.Out, ErrOut: streams.ErrOut}
			if cfg.At, err = timetravel.ParseTime("--at", at, time.Now()); err != nil {
				return err
			}
			if cfg.Namespace, err = namespaceOf(configFlags, c.Flags().Changed("namespace")); err != nil {
				return err
			}
			if allNamespaces && c.Flags().Changed("namespace") {
				return usageErrorf("-A/--all-namespaces and -n both say which namespaces: give one")
			}
			return timetravel.Get(c.Context(), cfg)
		},
	}
	fs := c.Flags()
	f.addFlags(fs)
	fs.StringVar(&at, "at", "0s", "the time: RFC 3339 (2026-11-23T14:05:00Z) or how long ago (10m, 2h ago); default now")
	fs.StringVarP(&selector, "selector", "l", "", "label selector, as kubectl get -l, on the labels the objects had then")
	fs.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "every namespace, as kubectl get -A")
	fs.StringVarP(&output, "output", "o", "", "as kubectl get -o: wide|json|yaml|name|"+strings.Join(kubectl.TemplateFormats(), "|"))
	_ = c.RegisterFlagCompletionFunc("at", cobra.NoFileCompletions)
	return c
}

// namespaceOf is -n, else the kubeconfig context's namespace, else default, as kubectl
// takes it (a store needs no cluster: a missing kubeconfig is no error).
func namespaceOf(configFlags *genericclioptions.ConfigFlags, given bool) (string, error) {
	if given && configFlags.Namespace != nil {
		if strings.Contains(*configFlags.Namespace, ",") {
			return "", usageErrorf("-n %s: get shows one namespace, as kubectl get (or -A for all)", *configFlags.Namespace)
		}
		return *configFlags.Namespace, nil
	}
	if ns, _, err := configFlags.ToRawKubeConfigLoader().Namespace(); err == nil && ns != "" {
		return ns, nil
	}
	return "default", nil
}
