package cmd

import (
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/compile"
	"github.com/kubeevents/kubeevents/internal/complete"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/top"
	"github.com/kubeevents/kubeevents/internal/ui"
)

const topExample = `  # What changes most among the pods of the current namespace, over the last minute
  kubeevents top pods

  # Every namespace, deployments and pods, ranked over five minutes
  kubeevents top deploy,pods -A --window 5m

  # A JSON snapshot every 10 seconds, for scripts
  kubeevents top pods -A -o json --interval 10s`

// topFlags are the flags of `kubeevents top`: what to watch, as watch takes it (the
// same fields of watchFlags, so the same request and checks), and the ranking's own.
type topFlags struct {
	watch            watchFlags
	window, interval time.Duration
	rows             int
	on               []string
}

// topOn are the transitions whose episodes top marks unless --on says otherwise.
var topOn = []string{"crashloop", "oomkilled", "image-pull", "not-ready", "rollout-failed"}

// runTop runs top; tests replace it to see the Config the command line makes.
var runTop = top.Run

// NewTopCommand is `kubeevents top TYPE[,TYPE...] [NAME...]`.
func NewTopCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, verbosity *int) *cobra.Command {
	f := &topFlags{}
	c := &cobra.Command{
		Use:     "top TYPE[.VERSION][.GROUP][,TYPE...] [NAME...]",
		Short:   "Rank what changes most: objects, fields and field managers, over a sliding window",
		Example: topExample,
		Args:    watchArgs,
		RunE: func(c *cobra.Command, args []string) error {
			f.watch.changed = c.Flags().Changed
			cfg, err := f.config(args, configFlags, streams)
			if err != nil {
				return err
			}
			return runTop(c.Context(), system(configFlags, streams, *verbosity), cfg)
		},
	}
	fs := c.Flags()
	w := &f.watch
	fs.StringVarP(&w.output, "output", "o", "pretty", "pretty (a frame redrawn in place on a terminal) or json (a snapshot per interval, one per line)")
	fs.StringVar(&w.color, "color", "auto", "colour the frame: auto|always|never (auto: only on a terminal, and never when NO_COLOR is set)")
	fs.BoolVarP(&w.allNamespaces, "all-namespaces", "A", false, "watch every namespace")
	fs.StringVarP(&w.labelSelector, "selector", "l", "", "label selector, e.g. -l app=web,tier!=db")
	fs.StringVar(&w.fieldSelector, "field-selector", "", "field selector, e.g. --field-selector status.phase=Running")
	fs.StringArrayVar(&w.excludeNamespaces, "exclude-namespace", nil, "with -A: leave out namespaces with this name or glob (repeatable)")
	fs.BoolVar(&w.allContexts, "all-contexts", false, "watch every context of the kubeconfig at once (--context also takes a comma list and globs)")
	fs.BoolVar(&w.metadataOnly, "metadata-only", false, "cache only object metadata: ranks metadata changes only, in much less memory")
	fs.DurationVar(&w.timeout, "timeout", 0, "exit after this long (0: until Ctrl-C)")
	fs.DurationVar(&f.window, "window", top.DefaultWindow, "the sliding window the changes are counted over")
	fs.DurationVar(&f.interval, "interval", top.DefaultInterval, "how often the ranking is drawn (or written, with -o json)")
	fs.IntVar(&f.rows, "rows", top.DefaultRows, "rows per section off a terminal (on one, what fits its height)")
	fs.StringSliceVar(&f.on, "on", topOn, "mark the objects in open episodes of these transitions, and count them in the title (--on= for none; kubeevents on lists them)")
	c.ValidArgsFunction = complete.WatchArgs(configFlags)
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"pretty", "json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("color", complete.Color)
	_ = c.RegisterFlagCompletionFunc("on", complete.Transitions)
	_ = c.RegisterFlagCompletionFunc("exclude-namespace", complete.NamespaceList(configFlags, false))
	for _, name := range []string{"selector", "field-selector", "timeout", "window", "interval", "rows"} {
		_ = c.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
	return c
}

// config is top's Config: what to watch, read and checked as watch reads it, and the
// ranking's flags.
func (f *topFlags) config(args []string, configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) (top.Config, error) {
	req, err := f.watch.request(args, configFlags)
	if err != nil {
		return top.Config{}, err
	}
	// No sink holds events to write at the end: a short grace.
	cfg := top.Config{Engine: engine.Config{Watch: req, Output: engine.Output{Color: f.watch.color}, End: engine.End{Timeout: f.watch.timeout, Grace: time.Second}},
		Window: f.window, Interval: f.interval, Rows: f.rows, JSON: f.watch.output == "json"}
	if err := applySwitches(&cfg.Engine); err != nil {
		return cfg, err
	}
	switch {
	case f.watch.output != "pretty" && f.watch.output != "json":
		return cfg, usageErrorf("-o %q: top writes pretty (the default) or json", f.watch.output)
	case f.window < time.Second:
		return cfg, usageErrorf("--window %s: give a duration of a second or more, e.g. 1m", f.window)
	case f.interval < 100*time.Millisecond:
		return cfg, usageErrorf("--interval %s: give a duration of 100ms or more, e.g. 2s", f.interval)
	case f.rows < 1:
		return cfg, usageErrorf("--rows %d: give a positive number", f.rows)
	}
	if len(f.on) > 0 {
		// top's own sink (the ranking) has the episodes; the stream is every change.
		sinks := []sinkkind.Spec{{Name: "top", On: strings.Join(f.on, "|")}}
		if err := compile.Signal(&cfg.Engine, nil, sinks, nil, warnTo(streams)); err != nil {
			return cfg, err
		}
	}
	cfg.Size = terminalSize(streams.Out)
	// What validate checks of -o and --ui-history is watch's: top has neither of watch's.
	f.watch.output, f.watch.uiHistory = "pretty", ui.DefaultHistory
	return cfg, f.watch.validate(&cfg.Engine, streams)
}

// terminalSize is a function that reads the size of the terminal w is (width, height),
// asked for every frame so that a resized window is followed; nil when w is not one.
func terminalSize(w io.Writer) func() (int, int) {
	f, ok := w.(*os.File)
	if !ok || !terminals.IsTerminal(w) {
		return nil
	}
	fd := int(f.Fd())
	return func() (int, int) {
		width, height, err := term.GetSize(fd)
		if err != nil {
			return 0, 0
		}
		return width, height
	}
}
