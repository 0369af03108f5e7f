package cmd

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/compile"
	"github.com/kubeevents/kubeevents/internal/crashcontext"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/kubeevents/kubeevents/internal/plan"
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

  # Only what matters: crash loops and failed rollouts; rollouts folded into their steps
  kubeevents watch pods,deployments -A --on crashloop,oomkilled,rollout-failed
  kubeevents watch pods,deployments --fold-rollouts

  # Follow a rollout: the Deployment, its ReplicaSets, their pods and their Events,
  # until it succeeds (exit 0) or passes its progress deadline (exit 1)
  kubeevents watch deployment/web --owned --with-events --until-rollout --timeout 5m

  # Any kind: wait until a custom resource and everything it owns is Current (exit 0),
  # or exit 1 saying why it failed
  kubeevents watch myapps.example.com/web --owned --until-ready --timeout 5m`

// watchFlags are the flags of `kubeevents watch`, as cobra fills them. config turns them,
// with the arguments and the config file, into the engine's one Config.
type watchFlags struct {
	outputFlags
	labelSelector, fieldSelector            string
	allNamespaces, allContexts, allTypes    bool
	resync, since                           time.Duration
	watchOnly                               bool
	untilDeleted, showSecrets, metadataOnly bool
	withEvents                              bool
	owned, untilRollout, untilReady         bool
	ownedTypes                              []string
	metricsAddr, resume                     string
	resumeReset                             bool
	excludeNamespaces                       []string
	on                                      []string
	foldRollouts                            bool
	leaderElect                             leader.Flags
	by, notBy                               []string
	noBy                                    bool
	ui                                      bool
	uiHistory                               int
	contextLines                            int
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
	f.addFlags(fs, "of the terminal")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "watch every namespace")
	fs.BoolVar(&f.allTypes, "all-types", false, "watch every type the cluster serves that can be listed and watched, instead of TYPE: ConfigMaps, Secrets and custom resources too, also those defined after the start (kubectl's all is a few workload types)")
	fs.StringVarP(&f.labelSelector, "selector", "l", "", "label selector, e.g. -l app=web,tier!=db")
	fs.StringVar(&f.fieldSelector, "field-selector", "", "field selector, e.g. --field-selector status.phase=Pending")
	fs.DurationVar(&f.resync, "resync", 0, "re-deliver every cached object to the sinks as SYNC events this often (0: never)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on HOST:PORT/metrics, e.g. 127.0.0.1:9090 (off by default)")
	fs.BoolVar(&f.watchOnly, "watch-only", false, "do not print the objects that exist at start-up, only later changes")
	fs.BoolVar(&f.untilDeleted, "until-deleted", false, "with NAME arguments: exit 0 once all named objects are deleted (in every namespace given)")
	fs.BoolVar(&f.showSecrets, "show-secrets", false, "show Secret values (redacted by default, in every sink)")
	fs.BoolVar(&f.withEvents, "with-events", false, "also show new core Events about the watched objects, interleaved (EVENT, or WARNING highlighted)")
	fs.DurationVar(&f.since, "since", 0, "with --with-events: first the core Events of the last DURATION about the objects that exist (e.g. 10m), marked past")
	fs.BoolVar(&f.metadataOnly, "metadata-only", false, "cache and report only object metadata (much less memory on large clusters)")
	fs.BoolVar(&f.owned, "owned", false, "with TYPE/NAME: also follow every object it owns, transitively (a Deployment's ReplicaSets and their pods, a CronJob's Jobs and their pods, ...)")
	fs.StringSliceVar(&f.ownedTypes, "owned-types", nil, "with --owned: also watch these types for children (e.g. a custom controller's resources), besides the defaults of the owner's kind")
	fs.BoolVar(&f.untilRollout, "until-rollout", false, "with --owned: exit 0 once the object's rollout completes, 1 when it fails (as kubectl rollout status; a Job: complete or failed)")
	fs.BoolVar(&f.untilReady, "until-ready", false, "with NAME arguments or TYPE/NAME: exit 0 once every named object's health is Current (with --owned, and everything it owns), 1 when one becomes Failed (or stalls, with --stalled-after), 3 on --timeout; any kind (docs/health.md)")
	fs.StringVar(&f.resume, "resume", "", "checkpoint file: keep what the sinks were given there, and on the next start with it emit only what changed while kubeevents was down; secret:[NAMESPACE/]NAME or configmap:[NAMESPACE/]NAME keeps it in the cluster, for --leader-elect replicas")
	f.leaderElect.AddFlags(fs)
	fs.BoolVar(&f.ui, "ui", false, "a full-screen live view instead of the stream: every object now, what just changed highlighted, Enter for an object's history (sinks keep working; needs a terminal)")
	fs.IntVar(&f.uiHistory, "ui-history", ui.DefaultHistory, "with --ui: how many changes of each object its history keeps")
	fs.BoolVar(&f.resumeReset, "resume-reset", false, "with --resume: start afresh, replacing the checkpoint file whatever it holds")
	fs.StringArrayVar(&f.excludeNamespaces, "exclude-namespace", nil, "with -A: leave out namespaces with this name or glob (repeatable), e.g. --exclude-namespace 'kube-*'")
	fs.BoolVar(&f.allContexts, "all-contexts", false, "watch every context of the kubeconfig at once (see --context, which also takes a comma list and globs: --context 'prod-*,staging')")
	fs.StringArrayVar(&f.by, "by", nil, "only the changes made by this field manager (name or glob, repeatable), e.g. --by kubectl --by 'helm*' (left out before any sink)")
	fs.StringArrayVar(&f.notBy, "not-by", nil, "leave out the changes made only by this field manager (name or glob, repeatable), e.g. --not-by 'kube-*'")
	fs.BoolVar(&f.noBy, "no-by", false, "do not read managedFields: no event names the field managers that made it")
	fs.StringSliceVar(&f.on, "on", nil, "only events in which one of these transitions happened, e.g. --on crashloop,oomkilled,rollout-failed (kubeevents on lists them)")
	fs.IntVar(&f.contextLines, "context-lines", crashcontext.DefaultLines, "how many of a crashed container's last log lines the events of crashloop, oomkilled, failed and image-pull carry, with its last termination and the pod's Warning Events (0: no log)")
	fs.BoolVar(&f.foldRollouts, "fold-rollouts", false, "fold the events of rollouts in progress (their pods', ReplicaSets', status updates) into one ROLLOUT line per step; a failed rollout unfolds them (a sink's fold=false: every event)")
	registerWatchCompletions(c, configFlags)
	return c
}

// watchArgs wants at least the TYPE argument (of watch, or top); without it, the usage
// line and an example.
func watchArgs(c *cobra.Command, args []string) error {
	if all, _ := c.Flags().GetBool("all-types"); all {
		if len(args) > 0 {
			return usageErrorf("--all-types watches every type: give no TYPE or NAME arguments (%s), or drop --all-types", strings.Join(args, " "))
		}
		return nil
	}
	if len(args) == 0 {
		return usageErrorf("no resource type given; usage: %s %s TYPE[.VERSION][.GROUP][,TYPE...] [NAME...] [flags], e.g. %s %s pods (see --help)",
			c.Root().DisplayName(), c.Name(), c.Root().DisplayName(), c.Name())
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
	if f.ui && f.noScreen {
		// Said before the sinks are put together, whose complaint without a --sink (no
		// sink to write to) would advise the one change that does not help.
		return engine.Config{}, usageErrorf("%s", plan.UINoScreen)
	}
	cfg, file, err := f.engineConfig(streams, f.resync, f.changed("resync"))
	if err != nil {
		return cfg, err
	}
	cfg.Watch, cfg.Events.WatchOnly, cfg.Events.WithEvents, cfg.Events.Since = req, f.watchOnly, f.withEvents, f.since
	cfg.MetricsAddr, cfg.Resume, cfg.ResumeReset, cfg.LeaderElect = f.metricsAddr, f.resume, f.resumeReset, f.leaderElect
	cfg.UI, cfg.UIHistory, cfg.Events.On, cfg.Events.FoldRollouts = f.ui, f.uiHistory, f.on, f.foldRollouts
	cfg.Events.NoAttribution, cfg.Events.By = f.noBy, attribution.Filter{By: f.by, NotBy: f.notBy}
	var transitions map[string]string
	var healthRules map[string]health.Rule
	if file != nil {
		healthRules = file.Health
		if !f.changed("resume") && file.Resume != "" {
			cfg.Resume = file.Resume
		}
		if !f.changed("metrics-addr") && file.MetricsAddr != "" {
			cfg.MetricsAddr = file.MetricsAddr
		}
		transitions = file.Transitions
	}
	if err := f.validate(&cfg, streams); err != nil {
		return cfg, err
	}
	if err := compile.Signal(&cfg, f.on, cfg.Output.Sinks, transitions, warnTo(streams)); err != nil {
		return cfg, err
	}
	if f.contextLines < 0 {
		return cfg, usageErrorf("--context-lines %d: give a number of log lines, 0 for none", f.contextLines)
	}
	opts := crashcontext.DefaultOptions()
	opts.Lines = f.contextLines
	cfg.Events.CrashContext = &opts
	return cfg, compile.Health(&cfg, f.health, f.stalledAfter, healthRules)
}

// request reads the arguments and the flags that say what to watch.
func (f *watchFlags) request(args []string, configFlags *genericclioptions.ConfigFlags) (plan.Request, error) {
	req := plan.Request{AllNamespaces: f.allNamespaces, ExcludeNamespaces: f.excludeNamespaces, AllContexts: f.allContexts,
		LabelSelector: f.labelSelector, FieldSelector: f.fieldSelector, MetadataOnly: f.metadataOnly, ShowSecrets: f.showSecrets,
		Owned: f.owned, OwnedTypes: f.ownedTypes, UntilRollout: f.untilRollout, UntilDeleted: f.untilDeleted, UntilReady: f.untilReady}
	var err error
	if f.allTypes {
		req.AllTypes = true
	} else if req.Types, req.Names, err = typesAndNames(args, "watch"); err != nil {
		return req, err
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

// typesAndNames reads the arguments that say what to stream: TYPE[,TYPE...] [NAME...],
// or TYPE/NAME; command is the command's words for the messages ("watch").
func typesAndNames(args []string, command string) (types, names []string, err error) {
	if typ, name, ok := strings.Cut(args[0], "/"); ok {
		switch {
		case len(args) > 1:
			return nil, nil, usageErrorf("TYPE/NAME %s/%s is one object: give no other arguments after it (for several, kubeevents %s TYPE NAME...)", typ, name, command)
		case typ == "" || name == "" || strings.Contains(typ, ",") || strings.Contains(name, "/"):
			return nil, nil, usageErrorf("%q: give one object as TYPE/NAME, e.g. deployment/web", typ+"/"+name)
		}
		args = []string{typ, name}
	}
	for _, t := range strings.Split(args[0], ",") {
		if t = strings.TrimSpace(t); t != "" {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return nil, nil, usageErrorf("no resource type given; e.g. kubeevents %s pods", command)
	}
	for _, name := range args[1:] {
		if strings.Contains(name, "/") {
			return nil, nil, usageErrorf("NAME %q: give the type once as the first argument and plain names after it (kubeevents %s pods web-0 web-1)", name, command)
		}
		names = append(names, name)
	}
	return types, names, nil
}
