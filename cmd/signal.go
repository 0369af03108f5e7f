package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// NewOnCommand is `kubeevents on [NAME]`: the named transitions of --on and on=.
func NewOnCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var configFile string
	c := &cobra.Command{
		Use:   "on [NAME]",
		Short: "List the named transitions of --on, or print one's jq program",
		Long: `Lists the transitions --on and a sink's on= name (a container entered CrashLoopBackOff,
a node stopped being Ready, ...), the config file's among them; with a NAME, prints its jq
program, which sees the previous object as .old and the new one as .object: copy it into
the config file's transitions: to change it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			file, err := configFileOrNone(configFile)
			if err != nil {
				return err
			}
			catalog, err := transition.NewCatalog(file.Transitions)
			if err != nil {
				return usageErrorf("%v", err)
			}
			if len(args) == 0 {
				return catalog.WriteList(streams.Out)
			}
			t, err := catalog.Lookup(args[0])
			if err != nil {
				return usageErrorf("%v", err)
			}
			return jq.WriteProgram(streams.Out, t.Program)
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return transition.Shipped().Names(), cobra.ShellCompDirectiveNoFileComp
		},
	}
	c.Flags().StringVar(&configFile, "config", "", "config file whose transitions to list too "+configFileDefault)
	return c
}

// NewFormatCommand is `kubeevents format [NAME]`: the receivers' formats of http sinks.
func NewFormatCommand(streams genericiooptions.IOStreams) *cobra.Command {
	var configFile string
	c := &cobra.Command{
		Use:   "format [NAME]",
		Short: "List the formats an http sink posts in (http(format=NAME)), or print one's jq program",
		Long: `Lists the formats of http sinks (chat webhooks, Alertmanager, log stores, CloudEvents), the
config file's among them; with a NAME, prints its jq program, whose input is one batch of
events (an array of envelopes) and whose output is the request's body; its first comment
lines give its content type and the most events a request may hold. "kubeevents format
` + notify.FunctionsName + `" prints the functions every format may use. Copy a program into the config
file's formats: to change it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			file, err := configFileOrNone(configFile)
			if err != nil {
				return err
			}
			catalog, err := notify.NewCatalog(file.Formats)
			if err != nil {
				return usageErrorf("%v", err)
			}
			switch {
			case len(args) == 0:
				return catalog.WriteList(streams.Out)
			case args[0] == notify.FunctionsName:
				return jq.WriteProgram(streams.Out, notify.Functions())
			}
			f, err := catalog.Lookup(args[0])
			if err != nil {
				return usageErrorf("%v", err)
			}
			return jq.WriteProgram(streams.Out, f.Program)
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return append(notify.Shipped().Names(), notify.FunctionsName), cobra.ShellCompDirectiveNoFileComp
		},
	}
	c.Flags().StringVar(&configFile, "config", "", "config file whose formats to list too "+configFileDefault)
	return c
}

// configFileOrNone is the config file (see loadConfigFile), or an empty one when there
// is none.
func configFileOrNone(path string) (*config.File, error) {
	file, err := loadConfigFile(path)
	if file == nil && err == nil {
		file = &config.File{}
	}
	return file, err
}
