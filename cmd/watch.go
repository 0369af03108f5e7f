package cmd

import (
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/switches"
	"github.com/kubeevents/kubeevents/internal/ui"
)

const watchExample = `  # Coloured live stream of pods in the current namespace
  kubeevents watch pods

  # Deployments in all namespaces, one JSON object per line
  kubeevents watch deploy -A -o json | my-script

  # Terminal, a file and a jq filter at once, from one informer
  kubeevents watch pods --sink file=events.jsonl --sink 'jq=select(.type=="DELETED")'

  # Wait until a pod is deleted, for at most 2 minutes
  kubeevents watch pod web-0 --until-deleted --timeout 2m

  # Follow a rollout: the Deployment, its ReplicaSets, their pods and their Events,
  # until it succeeds (exit 0) or passes its progress deadline (exit 1)
  kubeevents watch deployment/web --owned --with-events --until-rollout --timeout 5m`

// watchFlags are the flags of `kubeevents watch`, as cobra fills them. config turns them,
// with the arguments and the config file, into the engine's one Config.
type watchFlags struct {
	output, color, labelSelector, fieldSelector string
	timestamps, allNamespaces, allContexts      bool
	outputWatchEvents                           bool
	sinks                                       []string
	configFile, jq                              string
	rawOutput, noScreen                         bool
	buffer                                      int
	onFull                                      string
	resync, grace, timeout                      time.Duration
	watchOnly, changesOnly, showOld, noDiff     bool
	ignorePaths                                 []string
	maxEvents                                   int
	until                                       string
	untilDeleted, showSecrets, metadataOnly     bool
	withEvents                                  bool
	owned, untilRollout                         bool
	ownedTypes                                  []string
	metricsAddr, resume                         string
	resumeReset                                 bool
	excludeNamespaces, eventTypes               []string
	leaderElect                                 leader.Flags
	ui                                          bool
	uiHistory                                   int

	// changed reports whether a flag was given on the command line.
	changed func(name string) bool
}

// runEngine runs a watch; tests replace it to see the Config the command line makes.
var runEngine = engine.Run

// NewWatchCommand is `kubeevents watch TYPE[,TYPE...] [NAME...]`.
func NewWatchCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, verbosity *int) *cobra.Command {
	f := &watchFlags{}
	c := &cobra.Command{
		Use:     "watch TYPE[.VERSION][.GROUP][,TYPE...] [NAME...]",
		Short:   "Stream changes to resources of one or more types",
		Example: watchExample,
		Args:    watchArgs,
		RunE: func(c *cobra.Command, args []string) error {
			f.changed = c.Flags().Changed
			cfg, err := f.config(args, configFlags, streams)
			if err != nil {
				return err
			}
			_, err = runEngine(c.Context(), system(configFlags, streams, *verbosity), cfg)
			return err
		},
	}
	fs := c.Flags()
	fs.StringVarP(&f.output, "output", "o", string(render.FormatPretty), "output format of the terminal: "+strings.Join(render.Formats(), "|"))
	fs.StringVar(&f.color, "color", "auto", "colour the terminal output: auto|always|never (auto: only on a terminal, and never when NO_COLOR is set)")
	fs.BoolVar(&f.timestamps, "timestamps", false, "full RFC 3339 times instead of 15:04:05 in pretty output")
	fs.BoolVar(&f.outputWatchEvents, "output-watch-events", false, "as kubectl get -w: -o custom-columns=, jsonpath= and go-template= (and such file sinks) see the watch event {type, object} instead of the object; the other formats show the event type anyway")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "watch every namespace")
	fs.StringVarP(&f.labelSelector, "selector", "l", "", "label selector, e.g. -l app=web,tier!=db")
	fs.StringVar(&f.fieldSelector, "field-selector", "", "field selector, e.g. --field-selector status.phase=Pending")
	fs.StringArrayVar(&f.sinks, "sink", nil, config.SinkSyntaxHelp)
	fs.StringVar(&f.configFile, "config", "", "config file with sinks and defaults (default $XDG_CONFIG_HOME/kubeevents/config.yaml, or ~/.config/kubeevents/config.yaml, if it exists)")
	fs.StringVar(&f.jq, "jq", "", "jq expression applied to each event of the standard output stream (envelope: type, time, seq, resource, object, old, diff)")
	fs.BoolVarP(&f.rawOutput, "raw-output", "r", false, "with --jq: print strings raw, not as JSON")
	fs.BoolVar(&f.noScreen, "no-screen", false, "write no events to stdout, only to the --sink and config file sinks (an archiving run)")
	fs.IntVar(&f.buffer, "buffer", listener.DefaultBuffer, "events each sink may queue")
	fs.StringVar(&f.onFull, "on-full", listener.Block.String(), "what a sink does when its buffer is full: "+strings.Join(listener.Policies(), "|"))
	fs.DurationVar(&f.resync, "resync", 0, "re-deliver every cached object to the sinks as SYNC events this often (0: never)")
	fs.DurationVar(&f.grace, "grace", 5*time.Second, "on exit, how long sinks may take to write what they still hold")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on HOST:PORT/metrics, e.g. 127.0.0.1:9090 (off by default)")
	fs.BoolVar(&f.watchOnly, "watch-only", false, "do not print the objects that exist at start-up, only later changes")
	fs.BoolVar(&f.changesOnly, "changes-only", false, "leave out MODIFIED events whose diff is empty after ignored paths")
	fs.BoolVar(&f.showOld, "show-old", false, "put the whole previous object into JSON output as \"old\"")
	fs.BoolVar(&f.noDiff, "no-diff", false, "do not compute or show what changed")
	fs.StringArrayVar(&f.ignorePaths, "ignore-path", nil, "leave a field out of diffs (JSON pointer or dotted path, * for any key; repeatable), e.g. status.conditions.*.lastHeartbeatTime")
	fs.IntVar(&f.maxEvents, "max-events", 0, "exit after this many events (0: no limit); exit code 3 if --until or --until-deleted was not met by then")
	fs.DurationVar(&f.timeout, "timeout", 0, "exit after this long; exit code 3 if --until, --until-deleted or --until-rollout was not met by then")
	fs.StringVar(&f.until, "until", "", "exit 0 once an event makes this jq expression true (after printing it)")
	fs.BoolVar(&f.untilDeleted, "until-deleted", false, "with NAME arguments: exit 0 once all named objects are deleted (in every namespace given)")
	fs.BoolVar(&f.showSecrets, "show-secrets", false, "show Secret values (redacted by default, in every sink)")
	fs.BoolVar(&f.withEvents, "with-events", false, "also show new core Events about the watched objects, interleaved (EVENT, or WARNING highlighted)")
	fs.BoolVar(&f.metadataOnly, "metadata-only", false, "cache and report only object metadata (much less memory on large clusters)")
	fs.BoolVar(&f.owned, "owned", false, "with TYPE/NAME: also follow every object it owns, transitively (a Deployment's ReplicaSets and their pods, a CronJob's Jobs and their pods, ...)")
	fs.StringSliceVar(&f.ownedTypes, "owned-types", nil, "with --owned: also watch these types for children (e.g. a custom controller's resources), besides the defaults of the owner's kind")
	fs.BoolVar(&f.untilRollout, "until-rollout", false, "with --owned: exit 0 once the object's rollout completes, 1 when it fails (as kubectl rollout status; a Job: complete or failed)")
	fs.StringVar(&f.resume, "resume", "", "checkpoint file: keep what the sinks were given there, and on the next start with it emit only what changed while kubeevents was down; secret:[NAMESPACE/]NAME or configmap:[NAMESPACE/]NAME keeps it in the cluster, for --leader-elect replicas")
	f.leaderElect.AddFlags(fs)
	fs.BoolVar(&f.ui, "ui", false, "a full-screen live view instead of the stream: every object now, what just changed highlighted, Enter for an object's history (sinks keep working; needs a terminal)")
	fs.IntVar(&f.uiHistory, "ui-history", ui.DefaultHistory, "with --ui: how many changes of each object its history keeps")
	fs.BoolVar(&f.resumeReset, "resume-reset", false, "with --resume: start afresh, replacing the checkpoint file whatever it holds")
	fs.StringArrayVar(&f.excludeNamespaces, "exclude-namespace", nil, "with -A: leave out namespaces with this name or glob (repeatable), e.g. --exclude-namespace 'kube-*'")
	fs.BoolVar(&f.allContexts, "all-contexts", false, "watch every context of the kubeconfig at once (see --context, which also takes a comma list and globs: --context 'prod-*,staging')")
	fs.StringSliceVar(&f.eventTypes, "event-types", nil, "only these event types, e.g. --event-types ADDED,DELETED (ADDED, MODIFIED, DELETED, SYNC; left out before any sink)")
	registerWatchCompletions(c, configFlags)
	return c
}

// watchArgs wants at least the TYPE argument; without it, the usage line and an example.
func watchArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usageErrorf("no resource type given; usage: %s watch TYPE[.VERSION][.GROUP][,TYPE...] [NAME...] [flags], e.g. %s watch pods (see --help)",
			c.Root().DisplayName(), c.Root().DisplayName())
	}
	return nil
}

// config is the engine's Config from the flags, the arguments and the config file.
// Everything that needs no cluster is checked here, so bad input is reported before
// anything connects.
func (f *watchFlags) config(args []string, configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) (engine.Config, error) {
	req, err := f.request(args, configFlags)
	if err != nil {
		return engine.Config{}, err
	}
	cfg := engine.Config{Watch: req, Color: f.color, Timestamps: f.timestamps, OutputWatchEvents: f.outputWatchEvents, WatchOnly: f.watchOnly,
		WithEvents: f.withEvents, ChangesOnly: f.changesOnly, NoDiff: f.noDiff, IgnorePaths: f.ignorePaths,
		ShowOld: f.showOld, MaxEvents: uint64(max(f.maxEvents, 0)), Until: f.until, Timeout: f.timeout, Grace: f.grace,
		MetricsAddr: f.metricsAddr, Resume: f.resume, ResumeReset: f.resumeReset, LeaderElect: f.leaderElect,
		UI: f.ui, UIHistory: f.uiHistory}
	if cfg.EventTypes, err = parseEventTypes(f.eventTypes); err != nil {
		return cfg, err
	}
	file, err := loadConfigFile(f.configFile)
	if err != nil {
		return cfg, err
	}
	if file != nil {
		if !f.changed("resume") && file.Resume != "" {
			cfg.Resume = file.Resume
		}
		if !f.changed("metrics-addr") && file.MetricsAddr != "" {
			cfg.MetricsAddr = file.MetricsAddr
		}
	}
	stdout, _ := streams.Out.(*os.File)
	cfg.Sinks, err = config.Assemble(file, config.CommandLine{Specs: f.sinks, Output: f.output, OutputGiven: f.changed("output"),
		JQ: f.jq, Raw: f.rawOutput, NoScreen: f.noScreen, Buffer: f.buffer, BufferGiven: f.changed("buffer"),
		OnFull: f.onFull, OnFullGiven: f.changed("on-full"), Resync: f.resync, ResyncGiven: f.changed("resync"), Stdout: stdout})
	if err != nil {
		return cfg, err
	}
	if err := switches.Check(os.Getenv); err != nil {
		return cfg, usageErrorf("%v", err)
	}
	cfg.NoFastPaths = !switches.FastPaths.Enabled()
	cfg.PlainIO = !switches.QuietReads.Enabled()
	cfg.PlainStdout = !switches.QuietStdout.Enabled()
	return cfg, f.validate(cfg)
}

// request reads the arguments and the flags that say what to watch.
func (f *watchFlags) request(args []string, configFlags *genericclioptions.ConfigFlags) (plan.Request, error) {
	req := plan.Request{AllNamespaces: f.allNamespaces, ExcludeNamespaces: f.excludeNamespaces, AllContexts: f.allContexts,
		LabelSelector: f.labelSelector, FieldSelector: f.fieldSelector, MetadataOnly: f.metadataOnly, ShowSecrets: f.showSecrets,
		Owned: f.owned, OwnedTypes: f.ownedTypes, UntilRollout: f.untilRollout, UntilDeleted: f.untilDeleted}
	if typ, name, ok := strings.Cut(args[0], "/"); ok {
		switch {
		case len(args) > 1:
			return req, usageErrorf("TYPE/NAME %s/%s is one object: give no other arguments after it (for several, kubeevents watch TYPE NAME...)", typ, name)
		case typ == "" || name == "" || strings.Contains(typ, ",") || strings.Contains(name, "/"):
			return req, usageErrorf("%q: give one object as TYPE/NAME, e.g. deployment/web", typ+"/"+name)
		}
		args = []string{typ, name}
	}
	for _, t := range strings.Split(args[0], ",") {
		if t = strings.TrimSpace(t); t != "" {
			req.Types = append(req.Types, t)
		}
	}
	if len(req.Types) == 0 {
		return req, usageErrorf("no resource type given; e.g. kubeevents watch pods")
	}
	for _, name := range args[1:] {
		if strings.Contains(name, "/") {
			return req, usageErrorf("NAME %q: give the type once as the first argument and plain names after it (kubeevents watch pods web-0 web-1)", name)
		}
		req.Names = append(req.Names, name)
	}
	if configFlags.Namespace != nil && f.changed("namespace") {
		req.Namespace, req.NamespaceGiven = *configFlags.Namespace, true
	}
	if configFlags.Context != nil {
		req.Context = *configFlags.Context
	}
	for _, flag := range []string{"server", "cluster"} {
		if f.changed(flag) {
			req.ClusterFlags = append(req.ClusterFlags, flag)
		}
	}
	return req, checkRequestTimeout(configFlags)
}

// loadConfigFile reads the config file: the one given, else the default one if it
// exists; nil when there is none.
func loadConfigFile(path string) (*config.File, error) {
	if path == "" {
		def := config.DefaultPath()
		if _, err := os.Stat(def); def == "" || err != nil {
			return nil, nil
		}
		path = def
	}
	file, err := config.Load(path)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return file, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
