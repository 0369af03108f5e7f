package cmd

import (
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/compile"
	"github.com/kubeevents/kubeevents/internal/complete"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/recording"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/replay"
	"github.com/kubeevents/kubeevents/internal/timetravel"
)

const historyExample = `  # Every recorded version of a Deployment, oldest first, with what changed each time
  kubeevents history deployment/web --file events.jsonl -n shop

  # The ConfigMap as it was at 14:05, as kubectl get -o yaml printed it then
  kubeevents history cm/settings --file /var/log/kubeevents/ --at 2026-11-23T14:05:00Z`

// historyFlags are the flags of `kubeevents history`.
type historyFlags struct {
	outputFlags
	files         []string
	store         string
	at            string
	skipBadLines  bool
	showSecrets   bool
	allNamespaces bool
}

// NewHistoryCommand is `kubeevents history TYPE/NAME --file FILE...`.
func NewHistoryCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, verbosity *int) *cobra.Command {
	f := &historyFlags{}
	c := &cobra.Command{
		Use:   "history TYPE/NAME (--file FILE... | --store FILE) [--at TIME]",
		Short: "Every recorded version of one object, with what changed; or the object at a time",
		Long: `Reads recordings as replay does (--file: files, directories of a file sink's files, quoted
patterns, - for stdin) and streams every recorded version of one object, oldest first,
with the diff between consecutive versions. --at TIME prints the object as it was then
instead: its last version recorded at or before TIME, as kubectl get -o yaml (or -o json)
printed it. --store reads a history store (kubeevents store import) instead, through its
indexes; store: in the config file is the default when neither is given.`,
		Example: historyExample,
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			f.changed = c.Flags().Changed
			if err := f.defaultStore(); err != nil {
				return err
			}
			opts, err := f.options(args, configFlags, streams)
			if err != nil {
				return err
			}
			if f.at != "" {
				return f.printAt(c, opts, streams)
			}
			cfg, file, err := f.engineConfig(streams, 0, false)
			if err != nil {
				return err
			}
			var healthRules map[string]health.Rule
			if file != nil {
				healthRules = file.Health
			}
			if err := compile.Health(&cfg, f.health, f.stalledAfter, healthRules); err != nil {
				return err
			}
			opts.Objects, opts.Diffs = cfg.ReadsObjects(), cfg.Output.Differ != nil
			var src interface {
				engine.Source
				What() string
				Namespace() string
				Clusters() []string
			}
			if f.store != "" {
				// The store's indexes select the object: a replay of its records.
				h, herr := timetravel.OpenHistory(c.Context(), f.storeHistory(opts))
				if herr != nil {
					return herr
				}
				defer h.Close()
				opts.Records = h.Records(c.Context())
				src, err = replay.New(opts)
			} else {
				src, err = replay.NewHistory(opts, f.allNamespaces)
			}
			if err != nil {
				return err
			}
			what := f.store // a store's replay has no files to name
			if what == "" {
				what = src.What()
			}
			_, err = runReplay(c.Context(), system(configFlags, streams, *verbosity), cfg,
				engine.Replay{Source: src, What: what, Namespace: src.Namespace(), Clusters: src.Clusters()})
			return err
		},
	}
	fs := c.Flags()
	f.addFlags(fs, "(with --at: yaml or json)")
	fs.StringArrayVar(&f.files, "file", nil, "a recording: a file, a directory of a file sink's files, a quoted pattern, or - for stdin (repeatable)")
	fs.StringVar(&f.store, "store", "", "a history store (kubeevents store import) rather than --file")
	fs.StringVar(&f.at, "at", "", "print the object as it was at this time: RFC 3339 (2026-11-23T14:05:00Z) or how long ago (10m, 2h ago)")
	addRecordingWhereFlags(fs, configFlags)
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "the versions of the objects of that name in every namespace recorded (without it, a name recorded in several asks for -n)")
	fs.BoolVar(&f.skipBadLines, "skip-bad-lines", false, "skip the lines that are not events kubeevents wrote (counted), rather than stop at the first")
	fs.BoolVar(&f.showSecrets, "show-secrets", false, showSecretsHelp)
	recorded := complete.Recorded{Files: func(cmd *cobra.Command, _ []string) []string {
		files, _ := cmd.Flags().GetStringArray("file")
		return files
	}}
	registerReplayCompletions(c, recorded, recorded.HistoryArgs())
	return c
}

// options are the replay of the one object the arguments name.
func (f *historyFlags) options(args []string, configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) (replay.Options, error) {
	switch {
	case len(f.files) > 0 && f.store != "":
		return replay.Options{}, usageErrorf("--file and --store both say what to read: give one")
	case len(f.files) == 0 && f.store == "":
		return replay.Options{}, usageErrorf("no recording given: kubeevents history TYPE/NAME --file FILE... (or --store FILE)")
	}
	types, names, err := typesAndNames(args, "history")
	switch {
	case err != nil:
		return replay.Options{}, err
	case len(types) != 1 || len(names) != 1:
		return replay.Options{}, usageErrorf("history shows one object: give it as TYPE/NAME, e.g. deployment/web")
	}
	sel := replay.Selection{Types: types, Names: names}
	if err := selectWhere(&sel, configFlags, f.changed, f.allNamespaces); err != nil {
		return replay.Options{}, err
	}
	if f.allNamespaces && f.at != "" {
		return replay.Options{}, usageErrorf("--at prints one object: -A does not apply; choose its namespace with -n")
	}
	warn := warnTo(streams)
	return replay.Options{Args: f.files, Select: sel, Warn: warn, ShowSecrets: f.showSecrets,
		Read: recording.Options{SkipBadLines: f.skipBadLines, Stdin: streams.In}}, nil
}

// printAt prints the object at --at.
func (f *historyFlags) printAt(c *cobra.Command, opts replay.Options, streams genericiooptions.IOStreams) error {
	t, err := timetravel.ParseTime("--at", f.at, time.Now())
	if err != nil {
		return err
	}
	format := string(render.FormatYAML)
	if f.changed("output") {
		format = f.output
	}
	if format != string(render.FormatYAML) && format != string(render.FormatJSON) {
		return usageErrorf("-o %s: --at prints the object as kubectl get does, -o yaml (the default) or -o json", format)
	}
	if f.store != "" {
		return timetravel.HistoryAt(c.Context(), f.storeHistory(opts), t, format, streams.Out)
	}
	return replay.At(c.Context(), opts, t, format, streams.Out)
}

// defaultStore is the config file's store, when neither --file nor --store is given.
func (f *historyFlags) defaultStore() error {
	if len(f.files) > 0 || f.store != "" {
		return nil
	}
	file, err := loadConfigFile(f.configFile)
	if err == nil && file != nil {
		f.store = file.Store
	}
	return err
}

// storeHistory is the history of the object opts select, from the store.
func (f *historyFlags) storeHistory(opts replay.Options) timetravel.HistoryConfig {
	sel := opts.Select
	return timetravel.HistoryConfig{Store: f.store, Type: sel.Types[0], Name: sel.Names[0], Namespaces: sel.Namespaces, Clusters: sel.Clusters}
}
