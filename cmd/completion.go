package cmd

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/kubeevents/kubeevents/internal/complete"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

const completionLong = `Prints the shell completion script for bash, zsh, fish or PowerShell. The scripts
complete commands and flags, and ask kubeevents itself for resource types (short names and
custom resources too), object names, namespaces, contexts, output formats and sinks.
Completion that needs the cluster gives up quietly after 2 seconds.

Packages install the scripts (see completions/ in the release archives); by hand:

  bash:        kubeevents completion bash > ~/.local/share/bash-completion/completions/kubeevents
               (needs the bash-completion package; or: source <(kubeevents completion bash) in ~/.bashrc)
  zsh:         kubeevents completion zsh > "${fpath[1]}/_kubeevents"
               (compinit must be enabled: autoload -U compinit; compinit)
  fish:        kubeevents completion fish > ~/.config/fish/completions/kubeevents.fish
  PowerShell:  kubeevents completion powershell | Out-String | Invoke-Expression
               (add it to $PROFILE to keep it)`

// NewCompletionCommand is `kubeevents completion bash|zsh|fish|powershell`.
func NewCompletionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	noDescriptions := false
	c := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for bash, zsh, fish or PowerShell",
		Long:  completionLong,
		ValidArgs: []string{
			"bash\tcompletion script for bash",
			"zsh\tcompletion script for zsh",
			"fish\tcompletion script for fish",
			"powershell\tcompletion script for PowerShell",
		},
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		DisableFlagsInUseLine: true,
		RunE: func(c *cobra.Command, args []string) error {
			return complete.Script(c.Root(), args[0], streams.Out, !noDescriptions)
		},
	}
	c.Flags().BoolVar(&noDescriptions, "no-descriptions", false, "leave the descriptions out of the completions")
	return c
}

// The kubectl plugin: krew does not accept names starting with "kube", so the plugin is
// "tail-resources", and kubectl runs it as the executable kubectl-tail_resources (a copy
// of, or a link to, kubeevents).
const (
	pluginExecutable  = "kubectl-tail_resources"
	pluginDisplayName = "kubectl tail-resources"
)

// setPluginDisplayName makes help and usage say `kubectl tail-resources` when kubeevents
// runs as the kubectl plugin (arg0 is os.Args[0]).
func setPluginDisplayName(root *cobra.Command, arg0 string) {
	base := filepath.Base(arg0)
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".EXE")
	if base != pluginExecutable {
		return
	}
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = pluginDisplayName
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = strings.ReplaceAll(c.Example, root.Name()+" ", pluginDisplayName+" ")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// registerConfigFlagCompletions completes kubectl's connection flags: namespaces from
// the cluster, contexts, clusters and users from the kubeconfig.
func registerConfigFlagCompletions(root *cobra.Command, configFlags *genericclioptions.ConfigFlags) {
	_ = root.RegisterFlagCompletionFunc("namespace", complete.NamespaceList(configFlags, true))
	_ = root.RegisterFlagCompletionFunc("context", complete.Contexts(configFlags))
	_ = root.RegisterFlagCompletionFunc("cluster", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return complete.Kubeconfig(configFlags, "cluster", toComplete), complete.NoFiles
	})
	_ = root.RegisterFlagCompletionFunc("user", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return complete.Kubeconfig(configFlags, "user", toComplete), complete.NoFiles
	})
}

// registerWatchCompletions registers how `watch`'s arguments and flag values complete.
func registerWatchCompletions(c *cobra.Command, configFlags *genericclioptions.ConfigFlags) {
	c.ValidArgsFunction = complete.WatchArgs(configFlags)
	_ = c.RegisterFlagCompletionFunc("output", complete.Formats)
	_ = c.RegisterFlagCompletionFunc("color", complete.Color)
	_ = c.RegisterFlagCompletionFunc("on-full", complete.OnFull)
	_ = c.RegisterFlagCompletionFunc("sink", complete.Sink)
	_ = c.RegisterFlagCompletionFunc("event-types", complete.EventTypes)
	_ = c.RegisterFlagCompletionFunc("on", complete.Transitions)
	_ = c.RegisterFlagCompletionFunc("exclude-namespace", complete.NamespaceList(configFlags, false))
	_ = c.RegisterFlagCompletionFunc("owned-types", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return complete.Cluster(cmd, configFlags, func(context.Context) []cobra.Completion {
			return complete.Types(configFlags, toComplete)
		}), complete.NoFiles
	})
	for _, name := range append([]string{"selector", "field-selector", "jq", "buffer", "resync", "grace", "ignore-path", "max-events", "timeout", "until", "metrics-addr", "since", "ui-history", "by", "not-by"}, leader.FlagNames[1:]...) {
		_ = c.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
}

// registerReplayCompletions registers the completions of replay and history: their
// arguments (args) and -n and --cluster from what the recordings hold, the flags shared
// with watch as watch's.
func registerReplayCompletions(c *cobra.Command, recorded complete.Recorded, args cobra.CompletionFunc) {
	c.ValidArgsFunction = args
	_ = c.RegisterFlagCompletionFunc("namespace", recorded.Namespaces)
	_ = c.RegisterFlagCompletionFunc("cluster", recorded.Clusters)
	for name, f := range map[string]cobra.CompletionFunc{"output": complete.Formats, "color": complete.Color,
		"on-full": complete.OnFull, "sink": complete.Sink, "event-types": complete.EventTypes, "on": complete.Transitions} {
		_ = c.RegisterFlagCompletionFunc(name, f)
	}
	for _, name := range []string{"selector", "jq", "buffer", "grace", "ignore-path", "max-events", "timeout", "until",
		"since", "since-time", "until-time", "by", "not-by", "at"} {
		if c.Flags().Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
		}
	}
}
