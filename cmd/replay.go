package cmd

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/compile"
	"github.com/kubeevents/kubeevents/internal/complete"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/recording"
	"github.com/kubeevents/kubeevents/internal/replay"
	"github.com/kubeevents/kubeevents/internal/timetravel"
)

const replayExample = `  # A recording again, as the terminal showed it, with what changed in each update
  kubeevents replay events.jsonl

  # A file sink's directory (the file and its rotated, compressed backups), in time order
  kubeevents replay /var/log/kubeevents/ pods -n shop --since 2h

  # A rollout: the Deployment, its ReplicaSets and pods, with their owner chains
  kubeevents replay events.jsonl deployment/web --owned --since-time 2026-11-23T14:00:00Z

  # A recording being written, from another terminal, across its rotation
  kubeevents replay events.jsonl --follow

  # What a store sink recorded of namespace shop in a window, through the store's indexes
  kubeevents replay --store events.db -n shop --since-time 2026-11-23T14:00:00Z --until-time 2026-11-23T14:30:00Z`

// showSecretsHelp is replay's and history's --show-secrets.
const showSecretsHelp = "show the Secret values a recording holds (one made with --show-secrets); redacted by default, in every sink, as watch redacts them"

// replayFlags are the flags of `kubeevents replay` (and of history's stream).
type replayFlags struct {
	outputFlags
	labelSelector        string
	allNamespaces        bool
	follow, skipBadLines bool
	since                time.Duration
	sinceTime, untilTime string
	by, notBy            []string
	owned, withEvents    bool
	showSecrets          bool
	on                   []string
	store                string
	// closeStore closes the store a replay --store reads, once it has run.
	closeStore func() error
}

// runReplay runs a replay; tests replace it to see what the command line makes.
var runReplay = engine.RunReplay

// NewReplayCommand is `kubeevents replay FILE... [TYPE[,TYPE...] [NAME...]]`.
func NewReplayCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, verbosity *int) *cobra.Command {
	f := &replayFlags{}
	c := &cobra.Command{
		Use:   "replay (FILE... | --store FILE) [TYPE[,TYPE...] [NAME...] | TYPE/NAME]",
		Short: "Stream a recording again: JSON Lines kubeevents wrote, through every output and sink",
		Long: `Reads JSON Lines that kubeevents wrote (a file sink's default format, or -o json) and streams
their events again as watch does: every output format, diffs (computed between consecutive
versions where the recording has none), --jq, sinks. FILE is a file, a directory of a file
sink's files (its rotated and .gz backups too), a quoted pattern, or - for stdin; several
are read in time order. The other arguments select as watch's do: types, names, TYPE/NAME
--owned. Every namespace recorded is replayed unless -n says which. --store reads a history
store (a store sink's, or kubeevents store import's) instead of files, through its indexes;
store: in the config file is the default when neither is given.`,
		Example: replayExample,
		RunE: func(c *cobra.Command, args []string) error {
			f.changed = c.Flags().Changed
			cfg, rp, err := f.config(args, configFlags, streams, *verbosity)
			if err != nil {
				return err
			}
			if f.closeStore != nil {
				defer f.closeStore()
			}
			_, err = runReplay(c.Context(), system(configFlags, streams, *verbosity), cfg, rp)
			return err
		},
	}
	fs := c.Flags()
	f.addFlags(fs, "of the terminal")
	fs.StringVarP(&f.labelSelector, "selector", "l", "", "label selector, e.g. -l app=web,tier!=db: an object that stops matching is DELETED, as in a watch")
	addRecordingWhereFlags(fs, configFlags)
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "every namespace recorded (the default without -n)")
	fs.BoolVarP(&f.follow, "follow", "f", false, "keep reading the files as they grow and across their rotation, as tail -F")
	fs.BoolVar(&f.skipBadLines, "skip-bad-lines", false, "skip the lines that are not events kubeevents wrote (counted), rather than stop at the first")
	fs.DurationVar(&f.since, "since", 0, "only the events of the last DURATION, e.g. 2h")
	fs.StringVar(&f.sinceTime, "since-time", "", "only the events at or after this RFC 3339 time, e.g. 2026-11-23T14:00:00Z")
	fs.StringVar(&f.untilTime, "until-time", "", "only the events at or before this RFC 3339 time")
	fs.StringArrayVar(&f.by, "by", nil, "only the events made by this field manager (glob; repeatable), where the recording says who made them")
	fs.StringArrayVar(&f.notBy, "not-by", nil, "leave out the events made by this field manager (glob; repeatable)")
	fs.BoolVar(&f.owned, "owned", false, "with TYPE/NAME: also what it owns, transitively, with owner chains rebuilt from the recorded objects")
	fs.BoolVar(&f.withEvents, "with-events", false, "show the recorded core Events about the objects replayed as EVENT lines")
	fs.BoolVar(&f.showSecrets, "show-secrets", false, showSecretsHelp)
	fs.StringVar(&f.store, "store", "", "a history store (a store sink's, or kubeevents store import's) rather than FILE")
	fs.StringSliceVar(&f.on, "on", nil, "only events in which one of these transitions happened, each object's previous recorded version its previous state, e.g. --on crashloop,oomkilled (kubeevents on lists them)")
	recorded := complete.Recorded{Files: func(_ *cobra.Command, args []string) []string {
		files, _ := splitReplayArgs(args)
		return files
	}}
	registerReplayCompletions(c, recorded, recorded.ReplayArgs(recording.LooksLikeInput))
	return c
}

// config is the engine's Config and the replay from the flags and the arguments.
func (f *replayFlags) config(args []string, configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, verbosity int) (engine.Config, engine.Replay, error) {
	cfg, file, err := f.engineConfig(streams, 0, false)
	if err != nil {
		return cfg, engine.Replay{}, err
	}
	var transitions map[string]string
	var healthRules map[string]health.Rule
	if file != nil {
		transitions, healthRules = file.Transitions, file.Health
	}
	cfg.Events.On = f.on
	if err := compile.Signal(&cfg, f.on, cfg.Output.Sinks, transitions, warnTo(streams)); err != nil {
		return cfg, engine.Replay{}, err
	}
	if err := compile.Health(&cfg, f.health, f.stalledAfter, healthRules); err != nil {
		return cfg, engine.Replay{}, err
	}
	files, selectors := splitReplayArgs(args)
	if len(files) == 0 && f.store == "" && file != nil {
		f.store = file.Store
	}
	switch {
	case len(files) > 0 && f.store != "":
		return cfg, engine.Replay{}, usageErrorf("%s and --store both say what to read: give one", files[0])
	case len(files) == 0 && f.store == "":
		return cfg, engine.Replay{}, usageErrorf("no recording given: kubeevents replay FILE... (a file, a directory of a file sink's files, a quoted pattern, or - for stdin), or --store FILE")
	case f.store != "" && (f.follow || f.skipBadLines):
		return cfg, engine.Replay{}, usageErrorf("--follow and --skip-bad-lines read files; a store holds events kubeevents wrote, all of them: drop them with --store")
	}
	sel := replay.Selection{LabelSelector: f.labelSelector, By: f.by, NotBy: f.notBy, Owned: f.owned, WithEvents: f.withEvents}
	if len(selectors) > 0 {
		if sel.Types, sel.Names, err = typesAndNames(selectors, "replay FILE..."); err != nil {
			return cfg, engine.Replay{}, err
		}
	}
	if err := f.window(&sel); err != nil {
		return cfg, engine.Replay{}, err
	}
	if err := selectWhere(&sel, configFlags, f.changed, f.allNamespaces); err != nil {
		return cfg, engine.Replay{}, err
	}
	if err := plan.Check(plan.Features{Replay: true, Types: len(sel.Types), Names: len(sel.Names), Owned: f.owned,
		Namespaces: sel.Namespaces, Until: cfg.End.Until != nil, On: len(f.on) > 0}); err != nil {
		return cfg, engine.Replay{}, err
	}
	return f.source(cfg, files, sel, streams, verbosity)
}

// source makes the replay of files.
func (f *replayFlags) source(cfg engine.Config, files []string, sel replay.Selection, streams genericiooptions.IOStreams, verbosity int) (engine.Config, engine.Replay, error) {
	if f.follow && len(files) == 1 && files[0] == "-" {
		return cfg, engine.Replay{}, usageErrorf("--follow keeps reading files; the standard input is read to its end anyway: drop --follow")
	}
	warn := warnTo(streams)
	opts := replay.Options{Args: files, Select: sel, Warn: warn, Objects: cfg.ReadsObjects(), Diffs: cfg.Output.Differ != nil,
		ShowSecrets: f.showSecrets, Read: recording.Options{Follow: f.follow, SkipBadLines: f.skipBadLines, Stdin: streams.In}}
	if f.store != "" {
		// The same source as a recording's, its records read from the store's indexes.
		st, err := timetravel.OpenReplay(context.Background(), f.store, sel)
		if err != nil {
			return cfg, engine.Replay{}, err
		}
		f.closeStore = st.Close
		opts.Records = st.Records(context.Background())
	}
	src, err := replay.New(opts)
	if err != nil {
		return cfg, engine.Replay{}, err
	}
	what := f.store
	if what == "" {
		what = src.What()
	}
	return cfg, engine.Replay{Source: src, What: what, ShowKind: src.ShowKind(), Namespace: src.Namespace(), Clusters: src.Clusters()}, nil
}

// window reads --since, --since-time and --until-time.
func (f *replayFlags) window(sel *replay.Selection) error {
	var err error
	switch {
	case f.since < 0:
		return usageErrorf("--since %s: give a positive duration, e.g. 2h", f.since)
	case f.since > 0 && f.sinceTime != "":
		return usageErrorf("--since and --since-time both say where to start: give one")
	case f.since > 0:
		sel.Since = time.Now().Add(-f.since)
	}
	if sel.Since.IsZero() && f.sinceTime != "" {
		if sel.Since, err = parseTime("--since-time", f.sinceTime); err != nil {
			return err
		}
	}
	if f.untilTime != "" {
		if sel.Until, err = parseTime("--until-time", f.untilTime); err != nil {
			return err
		}
	}
	if !sel.Since.IsZero() && !sel.Until.IsZero() && sel.Until.Before(sel.Since) {
		return usageErrorf("--until-time %s is before the start (%s): nothing to replay", f.untilTime, sel.Since.Format(time.RFC3339))
	}
	return nil
}

// parseTime reads a time flag: RFC 3339, as kubectl's --since-time.
func parseTime(flag, value string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		return t, usageErrorf("%s %q: give an RFC 3339 time, e.g. 2026-11-23T14:05:00Z or 2026-11-23T15:05:00+01:00", flag, value)
	}
	return t, nil
}

// addRecordingWhereFlags gives replay and history -n and --cluster of their own:
// kubectl's connection flags, which every command inherits, say where to connect, while
// here they select within the recording. They set the same values as kubectl's.
func addRecordingWhereFlags(fs *pflag.FlagSet, configFlags *genericclioptions.ConfigFlags) {
	fs.StringVarP(configFlags.Namespace, "namespace", "n", "", "only the objects of these namespaces recorded, e.g. -n shop or -n shop,db (cluster-scoped objects are kept)")
	fs.StringVar(configFlags.ClusterName, "cluster", "", "only the events of these clusters, in a recording of several (watch --context a,b: the contexts' names), e.g. --cluster prod")
}

// selectWhere reads -n, -A and --cluster (kubectl's flags, here the namespaces and
// contexts recorded).
func selectWhere(sel *replay.Selection, configFlags *genericclioptions.ConfigFlags, changed func(string) bool, all bool) error {
	if changed("namespace") && configFlags.Namespace != nil {
		if all {
			return usageErrorf("-A/--all-namespaces and -n both say which namespaces: give one")
		}
		for _, ns := range strings.Split(*configFlags.Namespace, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				sel.Namespaces = append(sel.Namespaces, ns)
			}
		}
	}
	if changed("cluster") && configFlags.ClusterName != nil {
		sel.Clusters = strings.Split(*configFlags.ClusterName, ",")
	}
	return nil
}

// splitReplayArgs tells the recordings among the arguments (-, what exists, patterns,
// names of recordings to come) from the types and names that select from them.
func splitReplayArgs(args []string) (files, selectors []string) {
	for _, arg := range args {
		if recording.LooksLikeInput(arg) {
			files = append(files, arg)
		} else {
			selectors = append(selectors, arg)
		}
	}
	return files, selectors
}
