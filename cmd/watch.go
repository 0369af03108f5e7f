package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
)

const watchExample = `  # Coloured live stream of pods in the current namespace
  kubeevents watch pods

  # Deployments in all namespaces, one JSON object per line
  kubeevents watch deploy -A -o json | my-script

  # Terminal, a file and a jq filter at once, from one informer
  kubeevents watch pods --sink file=events.jsonl --sink 'jq=select(.type=="DELETED")'

  # Wait until a pod is deleted, for at most 2 minutes
  kubeevents watch pod web-0 --until-deleted --timeout 2m`

// WatchOptions are the settings of one `kubeevents watch`, filled from flags by cobra,
// completed from the kubeconfig and the cluster by Complete, checked by Validate.
type WatchOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	Streams     genericiooptions.IOStreams
	Verbosity   *int

	// From flags.
	Output        string
	Color         string
	Timestamps    bool
	AllNamespaces bool
	LabelSelector string
	FieldSelector string
	SinkSpecs     []string
	ConfigFile    string
	JQ            string
	RawOutput     bool
	Buffer        int
	OnFull        string
	Resync        time.Duration
	Grace         time.Duration
	WatchOnly     bool
	ChangesOnly   bool
	ShowOld       bool
	NoDiff        bool
	IgnorePaths   []string
	MaxEvents     int
	Timeout       time.Duration
	Until         string
	UntilDeleted  bool
	ShowSecrets   bool
	MetadataOnly  bool
	WithEvents    bool

	// From arguments.
	TypeArgs []string // "pods", "deployments.apps", ...
	Names    []string

	// Set by Complete.
	restConfig *rest.Config
	namespace  string
	resources  []informer.Resource
	sinks      []config.Sink
	differ     *render.Differ
	until      *render.JQ
	queries    map[string]*render.JQ // each jq sink's compiled expression, by sink name
	flagsSet   func(name string) bool
}

// NewWatchCommand is `kubeevents watch TYPE[,TYPE...] [NAME...]`.
func NewWatchCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, verbosity *int) *cobra.Command {
	o := &WatchOptions{ConfigFlags: configFlags, Streams: streams, Verbosity: verbosity}
	c := &cobra.Command{
		Use:     "watch TYPE[.VERSION][.GROUP][,TYPE...] [NAME...]",
		Short:   "Stream changes to resources of one or more types",
		Example: watchExample,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.flagsSet = func(name string) bool { return c.Flags().Changed(name) }
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.Connect(); err != nil {
				if c.Context().Err() != nil {
					return nil // interrupted while connecting: the request was given up, not failed
				}
				return err
			}
			if c.Context().Err() != nil {
				return nil
			}
			return o.Run(c.Context())
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Output, "output", "o", string(render.FormatPretty), "output format of the terminal: "+strings.Join(render.Formats(), "|"))
	f.StringVar(&o.Color, "color", "auto", "colour the terminal output: auto|always|never (auto: only on a terminal, and never when NO_COLOR is set)")
	f.BoolVar(&o.Timestamps, "timestamps", false, "full RFC 3339 times instead of 15:04:05 in pretty output")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "watch every namespace")
	f.StringVarP(&o.LabelSelector, "selector", "l", "", "label selector, e.g. -l app=web,tier!=db")
	f.StringVar(&o.FieldSelector, "field-selector", "", "field selector, e.g. --field-selector status.phase=Pending")
	f.StringArrayVar(&o.SinkSpecs, "sink", nil, config.SinkSyntaxHelp)
	f.StringVar(&o.ConfigFile, "config", "", "config file with sinks and defaults (default "+displayPath(config.DefaultPath())+" if it exists)")
	f.StringVar(&o.JQ, "jq", "", "jq expression applied to each event of the standard output stream (envelope: type, time, seq, resource, object, old, diff)")
	f.BoolVarP(&o.RawOutput, "raw-output", "r", false, "with --jq: print strings raw, not as JSON")
	f.IntVar(&o.Buffer, "buffer", listener.DefaultBuffer, "events each sink may queue")
	f.StringVar(&o.OnFull, "on-full", string(listener.Block), "what a sink does when its buffer is full: "+strings.Join(listener.Policies(), "|"))
	f.DurationVar(&o.Resync, "resync", 0, "re-deliver every cached object to the sinks as SYNC events this often (0: never)")
	f.DurationVar(&o.Grace, "grace", 5*time.Second, "on exit, how long sinks may take to write what they still hold")
	f.BoolVar(&o.WatchOnly, "watch-only", false, "do not print the objects that exist at start-up, only later changes")
	f.BoolVar(&o.ChangesOnly, "changes-only", false, "leave out MODIFIED events whose diff is empty after ignored paths")
	f.BoolVar(&o.ShowOld, "show-old", false, "put the whole previous object into JSON output as \"old\"")
	f.BoolVar(&o.NoDiff, "no-diff", false, "do not compute or show what changed")
	f.StringArrayVar(&o.IgnorePaths, "ignore-path", nil, "leave a field out of diffs (JSON pointer or dotted path, * for any key; repeatable), e.g. status.conditions.*.lastHeartbeatTime")
	f.IntVar(&o.MaxEvents, "max-events", 0, "exit after this many events (0: no limit)")
	f.DurationVar(&o.Timeout, "timeout", 0, "exit after this long; exit code 3 if --until or --until-deleted was not met by then")
	f.StringVar(&o.Until, "until", "", "exit 0 once an event makes this jq expression true (after printing it)")
	f.BoolVar(&o.UntilDeleted, "until-deleted", false, "with NAME arguments: exit 0 once all named objects are deleted")
	f.BoolVar(&o.ShowSecrets, "show-secrets", false, "show Secret values (redacted by default, in every sink)")
	f.BoolVar(&o.WithEvents, "with-events", false, "also show new core Events about the watched objects, interleaved (EVENT, or WARNING highlighted)")
	f.BoolVar(&o.MetadataOnly, "metadata-only", false, "cache and report only object metadata (much less memory on large clusters)")
	c.ValidArgsFunction = completeWatchArgs(configFlags)
	_ = c.RegisterFlagCompletionFunc("output", completeFormats)
	_ = c.RegisterFlagCompletionFunc("color", completeColor)
	_ = c.RegisterFlagCompletionFunc("on-full", completeOnFull)
	_ = c.RegisterFlagCompletionFunc("sink", completeSink)
	for _, name := range []string{"selector", "field-selector", "jq", "buffer", "resync", "grace", "ignore-path", "max-events", "timeout", "until"} {
		_ = c.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
	return c
}

func displayPath(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(p, home+"/") {
		return "~/" + strings.TrimPrefix(p, home+"/")
	}
	return p
}

// Complete reads the arguments and the config file, and compiles the jq expressions and
// ignored paths: everything that needs no cluster, so bad input is reported before
// anything connects.
func (o *WatchOptions) Complete(args []string) error {
	if err := o.parseArgs(args); err != nil {
		return err
	}
	if err := o.completeSinks(); err != nil {
		return err
	}
	return o.completeQueries()
}

// Connect loads the kubeconfig and resolves the resource types against the cluster's
// discovery information.
func (o *WatchOptions) Connect() error {
	var err error
	if o.restConfig, err = o.ConfigFlags.ToRESTConfig(); err != nil {
		return kubeconfigError(err)
	}
	o.restConfig.WarningHandler = rest.NoWarnings{}
	if o.AllNamespaces {
		o.namespace = ""
	} else if o.namespace, _, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
		return kubeconfigError(err)
	}
	mapper, err := o.ConfigFlags.ToRESTMapper()
	if err != nil {
		return kubeconfigError(err)
	}
	disco, err := o.ConfigFlags.ToDiscoveryClient()
	if err != nil {
		return kubeconfigError(err)
	}
	// Discovery once, before the REST mapper: after a failure the mapper tries again, so a
	// server that never answers would be waited for twice the request's time limit. What
	// this fetches is what the mapper needs, and is then cached.
	if _, _, err := disco.ServerGroupsAndResources(); err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return informer.APIError(err, "discover", informer.Resource{})
	}
	seen := map[schema.GroupVersionResource]bool{}
	for _, arg := range o.TypeArgs {
		res, err := informer.Resolve(arg, mapper, disco)
		if err != nil {
			var unknown *informer.UnknownTypeError
			var notWatchable *informer.NotWatchableError
			if errors.As(err, &unknown) || errors.As(err, &notWatchable) {
				return &UsageError{Err: err}
			}
			return informer.APIError(err, "discover", informer.Resource{})
		}
		if !seen[res.GVR] {
			seen[res.GVR] = true
			o.resources = append(o.resources, res)
		}
	}
	return nil
}

func (o *WatchOptions) parseArgs(args []string) error {
	for _, t := range strings.Split(args[0], ",") {
		if t = strings.TrimSpace(t); t != "" {
			o.TypeArgs = append(o.TypeArgs, t)
		}
	}
	if len(o.TypeArgs) == 0 {
		return usageErrorf("no resource type given; e.g. kubeevents watch pods")
	}
	for _, name := range args[1:] {
		if strings.Contains(name, "/") {
			return usageErrorf("NAME %q: give the type once as the first argument and plain names after it (kubeevents watch pods web-0 web-1)", name)
		}
		o.Names = append(o.Names, name)
	}
	return nil
}

// completeSinks gathers the sinks from the config file and --sink flags, applies the
// defaults and adds the terminal sink unless another sink already writes to stdout.
func (o *WatchOptions) completeSinks() error {
	path := o.ConfigFile
	var file *config.File
	if path == "" {
		if def := config.DefaultPath(); def != "" {
			if _, err := os.Stat(def); err == nil {
				path = def
			}
		}
	}
	if path != "" {
		var err error
		if file, err = config.Load(path); err != nil {
			return &UsageError{Err: err}
		}
	}
	// Flags given explicitly override the file's defaults.
	defaults := config.Defaults{Buffer: o.Buffer, OnFull: o.OnFull, Resync: o.Resync}
	if file != nil {
		if !o.flagsSet("buffer") && file.Defaults.Buffer != 0 {
			defaults.Buffer = file.Defaults.Buffer
		}
		if !o.flagsSet("on-full") && file.Defaults.OnFull != "" {
			defaults.OnFull = file.Defaults.OnFull
		}
		if !o.flagsSet("resync") && file.Defaults.Resync != 0 {
			defaults.Resync = file.Defaults.Resync
		}
	}
	if _, err := listener.ParsePolicy(defaults.OnFull); err != nil {
		return usageErrorf("--on-full: %v", err)
	}
	if defaults.Buffer < 1 || defaults.Buffer > config.MaxBuffer {
		return usageErrorf("--buffer %d: give a number of events from 1 to %d", defaults.Buffer, config.MaxBuffer)
	}
	if defaults.Resync != 0 && defaults.Resync < config.MinResync {
		return usageErrorf("--resync %s: use 0 (never) or at least %s", defaults.Resync, config.MinResync)
	}

	var sinks []config.Sink
	if file != nil {
		sinks = append(sinks, file.Sinks...)
	}
	for _, spec := range o.SinkSpecs {
		s, err := config.ParseSinkSpec(spec)
		if err != nil {
			return &UsageError{Err: err}
		}
		sinks = append(sinks, s)
	}
	if !writesToStdout(sinks) {
		screen := config.Sink{Name: "screen", Type: config.KindTerminal, AutoName: true, Origin: "the standard output"}
		if o.JQ != "" {
			screen = config.Sink{Name: "screen", Type: config.KindJQ, Expr: o.JQ, Raw: o.RawOutput, AutoName: true, Origin: "--jq"}
		}
		sinks = append([]config.Sink{screen}, sinks...)
	} else if o.JQ != "" {
		return usageErrorf("--jq filters the standard output stream, but a sink already writes to stdout; put the expression into that sink instead")
	}
	for i := range sinks {
		sinks[i] = defaults.Apply(sinks[i])
		if sinks[i].Type == config.KindTerminal && sinks[i].Format == "" {
			sinks[i].Format = o.Output
		}
	}
	config.AssignNames(sinks)
	if err := config.CheckNames(sinks); err != nil {
		return &UsageError{Err: err}
	}
	o.sinks = sinks
	return nil
}

func writesToStdout(sinks []config.Sink) bool {
	for _, s := range sinks {
		if s.Type == config.KindTerminal || (s.Type == config.KindJQ && (s.Output == "" || s.Output == "-")) {
			return true
		}
	}
	return false
}

// completeQueries compiles the jq expressions and the ignored paths once, so their errors
// come before anything connects.
func (o *WatchOptions) completeQueries() error {
	if !o.NoDiff {
		var ignores []render.IgnorePath
		for _, p := range o.IgnorePaths {
			ip, err := render.ParseIgnorePath(p)
			if err != nil {
				return usageErrorf("--ignore-path %q: %v", p, err)
			}
			ignores = append(ignores, ip)
		}
		o.differ = render.NewDiffer(ignores)
	}
	if o.Until != "" {
		q, err := render.CompileJQ(o.Until)
		if err != nil {
			return usageErrorf("--until: %v", err)
		}
		o.until = q
	}
	o.queries = map[string]*render.JQ{}
	for _, s := range o.sinks {
		if s.Type != config.KindJQ {
			continue
		}
		q, err := render.CompileJQ(s.Expr)
		switch {
		case err != nil && s.Origin == "--jq":
			return usageErrorf("--jq: %v", err)
		case err != nil:
			return usageErrorf("sink %q: %v", s.Name, err)
		}
		o.queries[s.Name] = q
	}
	return nil
}

// Validate checks the flags against each other.
func (o *WatchOptions) Validate() error {
	if _, err := render.ParseFormat(o.Output); err != nil {
		return usageErrorf("-o: %v", err)
	}
	switch o.Color {
	case "auto", "always", "never":
	default:
		return usageErrorf("--color %q: use auto, always or never", o.Color)
	}
	if o.LabelSelector != "" {
		if _, err := labels.Parse(o.LabelSelector); err != nil {
			return usageErrorf("-l/--selector %q: %v", o.LabelSelector, oneLine(err))
		}
	}
	if o.FieldSelector != "" {
		if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
			return usageErrorf("--field-selector %q: %v", o.FieldSelector, oneLine(err))
		}
	}
	if o.UntilDeleted && len(o.Names) == 0 {
		return usageErrorf("--until-deleted needs the names of the objects to wait for: kubeevents watch TYPE NAME... --until-deleted")
	}
	if o.MaxEvents < 0 {
		return usageErrorf("--max-events %d: give a positive number, or 0 for no limit", o.MaxEvents)
	}
	if o.Timeout < 0 || o.Grace < 0 {
		return usageErrorf("--timeout and --grace take a positive duration, e.g. 30s or 5m")
	}
	if o.NoDiff && (o.ChangesOnly || len(o.IgnorePaths) > 0) {
		return usageErrorf("--changes-only and --ignore-path need diffs; drop --no-diff")
	}
	if o.AllNamespaces && len(o.Names) > 0 {
		return usageErrorf("NAME arguments cannot be used with -A/--all-namespaces: names are looked up in one namespace (use -n NAMESPACE)")
	}
	return nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// kubeconfigError makes a kubeconfig problem one line with a hint.
func kubeconfigError(err error) error {
	msg := oneLine(err)
	switch {
	case strings.Contains(msg, "no such file or directory"):
		return fmt.Errorf("cannot load kubeconfig: %s (check --kubeconfig and $KUBECONFIG)", msg)
	case strings.Contains(msg, "invalid configuration"), strings.Contains(msg, "yaml"), strings.Contains(msg, "json"):
		return fmt.Errorf("cannot use kubeconfig: %s (fix the file, or pick another with --kubeconfig)", msg)
	}
	return informer.APIError(err, "discover", informer.Resource{})
}

// colorFor decides colour for one output stream: never a global switch, since stdout
// and stderr may differ (stdout piped, stderr a terminal).
func (o *WatchOptions) colorFor(w io.Writer) bool {
	switch o.Color {
	case "always":
		return true
	case "never":
		return false
	}
	if _, ok := os.LookupEnv("NO_COLOR"); ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// warnf prints one diagnostic line on stderr; safe from any goroutine.
func (o *WatchOptions) warnf(format string, args ...any) {
	fmt.Fprintf(o.Streams.ErrOut, "kubeevents: "+format+"\n", args...)
}

// infof prints a diagnostic that only a person at a terminal (or -v) wants.
func (o *WatchOptions) infof(format string, args ...any) {
	if (o.Verbosity != nil && *o.Verbosity >= 1) || isTerminal(o.Streams.ErrOut) {
		o.warnf(format, args...)
	}
}

// checkNamespace warns when the namespace does not exist; the watch goes on, since the
// namespace may be created later and its objects will then show up.
func (o *WatchOptions) checkNamespace(ctx context.Context) {
	if o.namespace == "" {
		return
	}
	namespaced := false
	for _, r := range o.resources {
		namespaced = namespaced || r.Namespaced
	}
	if !namespaced {
		return
	}
	client, err := kubernetes.NewForConfig(o.restConfig)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := client.CoreV1().Namespaces().Get(ctx, o.namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		o.warnf("namespace %q does not exist (yet); watching anyway, its objects will show up if it is created", o.namespace)
	}
}
