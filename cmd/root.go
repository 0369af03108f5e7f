// Package cmd holds kubeevents' cobra commands. Each is thin: flags fill an options
// struct, whose Complete, Validate and Run do the work, as kubectl's commands do.
package cmd

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/kubeclient"
	"github.com/kubeevents/kubeevents/internal/version"
)

// Execute runs kubeevents with the command line argv (the program name first), writing
// to streams, until ctx ends (Ctrl-C).
func Execute(ctx context.Context, streams genericiooptions.IOStreams, argv []string) error {
	root := NewRootCommand(streams)
	if len(argv) > 0 {
		setPluginDisplayName(root, argv[0]) // "kubectl tail-resources" when run as the kubectl plugin
		argv = argv[1:]
	}
	root.SetArgs(argv)
	err := root.ExecuteContext(ctx)
	if err != nil && isCobraUsageError(err) {
		return &UsageError{Err: err}
	}
	return err
}

// isCobraUsageError recognises the errors cobra itself returns for a bad command line.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires ", "invalid argument", "flag needs an argument", "bad flag syntax"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// NewRootCommand builds the command tree. Tests run it with fake streams.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	configFlags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:   "kubeevents",
		Short: "Tail changes to Kubernetes resources: what changed, to several sinks at once",
		Long: `kubeevents tails changes to any Kubernetes resource (custom resources too): a
coloured live stream in the terminal, JSON lines for scripts, jq filters and files,
from one shared informer, showing what changed in every update.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version.Short(version.Get()),
	}
	root.SetVersionTemplate(version.Template)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.CompletionOptions.DisableDefaultCmd = true // our own `completion` command: cmd/completion.go

	configFlags.AddFlags(root.PersistentFlags())
	kubeclient.Configure(configFlags, root.Context)
	verbosity := root.PersistentFlags().IntP("v", "v", 0, "diagnostics: 1 shows the start line and exit summary even when stderr is not a terminal; 6 and up also log client-go's requests (credentials masked)")
	root.PersistentPreRun = func(*cobra.Command, []string) {
		setupKlog(*verbosity, streams.ErrOut)
		setHTTP2HealthChecks(os.LookupEnv)
	}

	root.AddCommand(NewWatchCommand(configFlags, streams, verbosity))
	root.AddCommand(NewTopCommand(configFlags, streams, verbosity))
	root.AddCommand(NewReplayCommand(configFlags, streams, verbosity))
	root.AddCommand(NewHistoryCommand(configFlags, streams, verbosity))
	root.AddCommand(NewGetCommand(configFlags, streams))
	root.AddCommand(NewStoreCommand(streams))
	root.AddCommand(NewConfigCommand(streams))
	root.AddCommand(NewOnCommand(streams))
	root.AddCommand(NewFormatCommand(streams))
	root.AddCommand(NewCompletionCommand(streams))
	root.AddCommand(NewVersionCommand(configFlags, streams))
	registerConfigFlagCompletions(root, configFlags)
	return root
}
