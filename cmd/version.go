package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/version"
)

// NewVersionCommand is `kubeevents version [--client] [-o json|yaml]`, in kubectl's
// form: the client's version, then the API server's (of the kubeconfig's cluster, or of
// -s/--server URL), unless --client.
func NewVersionCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var output string
	var clientOnly bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubeevents and of the API server (--client: only kubeevents')",
		Example: `  # kubeevents' version and the version of the current context's API server
  kubeevents version

  # Only kubeevents' version, without connecting
  kubeevents version --client -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return usageErrorf("-o %q: use json or yaml, or leave -o out for text", output)
			}
			v := version.Get()
			var serverErr error
			if !clientOnly {
				if err := checkRequestTimeout(configFlags); err != nil {
					return err
				}
				v.ServerVersion, serverErr = version.Server(configFlags)
				if c.Context().Err() != nil {
					return nil // interrupted while waiting for the server
				}
			}
			if err := version.Write(streams.Out, v, output); err != nil {
				return err
			}
			return serverErr
		},
	}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if err.Error() == "flag needs an argument: --server" {
			// The switch `version --server` of earlier releases.
			return usageErrorf("--server takes the API server's address (-s URL); the server's version is shown without any flag (--client leaves it out)")
		}
		return &UsageError{Err: err}
	})
	c.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default: text)")
	c.Flags().BoolVar(&clientOnly, "client", false, "only kubeevents' own version: do not ask the API server")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"json\tone JSON object", "yaml\tone YAML document"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}
