package cmd

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// NewConfigCommand is `kubeevents config validate [FILE]`.
func NewConfigCommand(streams genericiooptions.IOStreams) *cobra.Command {
	c := &cobra.Command{Use: "config", Short: "Work with the config file"}
	c.AddCommand(&cobra.Command{
		Use:   "validate [FILE]",
		Short: "Check a config file without connecting to a cluster",
		Long:  "Checks a config file (default $XDG_CONFIG_HOME/kubeevents/config.yaml, or ~/.config/kubeevents/config.yaml): keys, types, durations, URLs, sink names, jq expressions, and that exec commands can be run and http header and TLS files read.",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			path := config.DefaultPath()
			if len(args) == 1 {
				path = args[0]
			}
			file, err := config.Load(path)
			if err != nil {
				return &UsageError{Err: err}
			}
			sinks := file.Resolved()
			config.AssignNames(sinks)
			if err := config.CheckNames(sinks); err != nil {
				return &UsageError{Err: err}
			}
			if err := checkSignal(file, sinks); err != nil {
				return usageErrorf("%s: %v", path, err)
			}
			for _, s := range sinks {
				err := s.Compile(sinkkind.Compiling{Formats: file.Formats})
				if err == nil && s.Kind.Check != nil {
					err = s.Kind.Check(s.Settings)
				}
				if err != nil {
					return usageErrorf("%s: sink %q: %v", s.Origin, s.Name, err)
				}
			}
			fmt.Fprintf(streams.Out, "%s: OK, %d sink%s\n", path, len(sinks), diag.Plural(len(sinks)))
			return nil
		},
	})
	return c
}

// checkSignal compiles the file's own transitions, formats and health rules, and looks
// up those its sinks name, as a watch would.
func checkSignal(file *config.File, sinks []sinkkind.Spec) error {
	transitions, err := transition.NewCatalog(file.Transitions)
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(file.Transitions))
	for _, s := range sinks {
		if s.On != "" {
			names = append(names, strings.Split(s.On, "|")...)
		}
	}
	if _, err := transitions.Compile(names, nil); err != nil {
		return err
	}
	formats, err := notify.NewCatalog(file.Formats)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(file.Formats)) {
		f, _ := formats.Lookup(name)
		if _, err := f.Compile(); err != nil {
			return err
		}
	}
	for _, s := range sinks {
		if !s.Kind.NamedFormats || s.Format() == "" {
			continue
		}
		if _, err := formats.Lookup(s.Format()); err != nil {
			return fmt.Errorf("sink %q: %v", s.Name, err)
		}
	}
	if len(file.Health) > 0 {
		rules, err := health.NewCatalog(file.Health)
		if err != nil {
			return err
		}
		if _, err := rules.Compile(); err != nil {
			return err
		}
	}
	return nil
}
