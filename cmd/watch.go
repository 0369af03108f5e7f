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
	"golang.org/x/term"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/clusterstore"
	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/metrics"
	"github.com/kubeevents/kubeevents/internal/quietio"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/wire"
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
	NoScreen      bool
	MetricsAddr   string
	Owned         ownedFlags
	Resume        string // checkpoint file (--resume, or the config file's resume), or a store in the cluster: secret:NAME
	ResumeReset   bool
	LeaderElect   leader.Flags
	EventTypes    []string
	// ExcludeNamespaces are names or globs of namespaces left out of -A.
	ExcludeNamespaces []string

	// AllContexts watches every context of the kubeconfig (several clusters at once, as
	// --context a,b or a glob does).
	AllContexts bool

	// From arguments.
	TypeArgs []string // "pods", "deployments.apps", ...
	Names    []string

	// Set by Complete.
	restConfig *rest.Config
	namespace  string
	namespaces []string // -n a,b,c: several namespaces (namespace is then "")
	resources  []resource.Resource
	sinks      []config.Sink
	differ     *render.Differ
	// noFastPaths decodes, encodes and diffs every object whole (wire.FastPathsEnv=off).
	noFastPaths bool
	// plainIO dials the watches' connection as client-go does and writes to stdout with
	// its own Write (quietio.Env=off).
	plainIO bool
	// stdoutWriter is what sinks write the standard output through (stdout).
	stdoutWriter io.Writer
	until        *render.JQ
	queries      map[string]*render.JQ // each jq sink's compiled expression, by sink name
	metrics      *metrics.Metrics      // nil without --metrics-addr
	elector      *leader.Elector       // nil without --leader-elect
	flagsSet     func(name string) bool
	// printerCols are the watched CRDs' additionalPrinterColumns (pretty and wide
	// output); headerPrinters the terminal's printers, whose headers a re-sync repeats.
	printerCols    render.PrinterColumns
	headerPrinters *headerPrinters
	// clusters are the clusters watched when there are several (contexts.go); nil for
	// one, which restConfig, namespace and resources describe. With several, those are
	// the first cluster's config, the namespace all share ("" when they differ:
	// namespacesDiffer) and every cluster's types.
	clusters         []clusterConn
	namespacesDiffer bool
	// typesPerCluster makes Connect note a type the cluster does not serve in
	// unresolved, rather than fail: one of several clusters may lack a CRD.
	typesPerCluster bool
	unresolved      []unresolvedType
	// noticePrefix starts every diagnostic line (warnf): "cluster NAME: " in the options
	// of one of several clusters.
	noticePrefix string

	// Seams, so tests can replace what the process and the cluster give: the kubeconfig,
	// REST mapper and discovery (ConfigFlags, as in kubectl's factory), the API clients
	// from the REST config, which streams are terminals, and the environment.
	clientGetter genericclioptions.RESTClientGetter
	// contextGetter is clientGetter for one named context (several clusters).
	contextGetter func(name string) genericclioptions.RESTClientGetter
	newClients    func(*rest.Config) (informer.Clients, error)
	terminals     terminals
	lookupEnv     func(key string) (string, bool)
}

// NewWatchCommand is `kubeevents watch TYPE[,TYPE...] [NAME...]`.
func NewWatchCommand(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, verbosity *int) *cobra.Command {
	o := &WatchOptions{ConfigFlags: configFlags, Streams: streams, Verbosity: verbosity, clientGetter: configFlags, newClients: informer.NewClients,
		terminals: osTerminals{}, lookupEnv: os.LookupEnv,
		contextGetter: func(name string) genericclioptions.RESTClientGetter { return contextFlags(configFlags, name) }}
	c := &cobra.Command{
		Use:     "watch TYPE[.VERSION][.GROUP][,TYPE...] [NAME...]",
		Short:   "Stream changes to resources of one or more types",
		Example: watchExample,
		Args:    watchArgs,
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
	f.BoolVar(&o.NoScreen, "no-screen", false, "write no events to stdout, only to the --sink and config file sinks (an archiving run)")
	f.IntVar(&o.Buffer, "buffer", listener.DefaultBuffer, "events each sink may queue")
	f.StringVar(&o.OnFull, "on-full", listener.Block.String(), "what a sink does when its buffer is full: "+strings.Join(listener.Policies(), "|"))
	f.DurationVar(&o.Resync, "resync", 0, "re-deliver every cached object to the sinks as SYNC events this often (0: never)")
	f.DurationVar(&o.Grace, "grace", 5*time.Second, "on exit, how long sinks may take to write what they still hold")
	f.StringVar(&o.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics on HOST:PORT/metrics, e.g. 127.0.0.1:9090 (off by default)")
	_ = c.RegisterFlagCompletionFunc("metrics-addr", cobra.NoFileCompletions)
	f.BoolVar(&o.WatchOnly, "watch-only", false, "do not print the objects that exist at start-up, only later changes")
	f.BoolVar(&o.ChangesOnly, "changes-only", false, "leave out MODIFIED events whose diff is empty after ignored paths")
	f.BoolVar(&o.ShowOld, "show-old", false, "put the whole previous object into JSON output as \"old\"")
	f.BoolVar(&o.NoDiff, "no-diff", false, "do not compute or show what changed")
	f.StringArrayVar(&o.IgnorePaths, "ignore-path", nil, "leave a field out of diffs (JSON pointer or dotted path, * for any key; repeatable), e.g. status.conditions.*.lastHeartbeatTime")
	f.IntVar(&o.MaxEvents, "max-events", 0, "exit after this many events (0: no limit); exit code 3 if --until or --until-deleted was not met by then")
	f.DurationVar(&o.Timeout, "timeout", 0, "exit after this long; exit code 3 if --until, --until-deleted or --until-rollout was not met by then")
	f.StringVar(&o.Until, "until", "", "exit 0 once an event makes this jq expression true (after printing it)")
	f.BoolVar(&o.UntilDeleted, "until-deleted", false, "with NAME arguments: exit 0 once all named objects are deleted")
	f.BoolVar(&o.ShowSecrets, "show-secrets", false, "show Secret values (redacted by default, in every sink)")
	f.BoolVar(&o.WithEvents, "with-events", false, "also show new core Events about the watched objects, interleaved (EVENT, or WARNING highlighted)")
	f.BoolVar(&o.MetadataOnly, "metadata-only", false, "cache and report only object metadata (much less memory on large clusters)")
	o.Owned.addFlags(c, configFlags)
	f.StringVar(&o.Resume, "resume", "", "checkpoint file: keep what the sinks were given there, and on the next start with it emit only what changed while kubeevents was down; secret:[NAMESPACE/]NAME or configmap:[NAMESPACE/]NAME keeps it in the cluster, for --leader-elect replicas")
	o.LeaderElect.AddFlags(f)
	f.BoolVar(&o.ResumeReset, "resume-reset", false, "with --resume: start afresh, replacing the checkpoint file whatever it holds")
	f.StringArrayVar(&o.ExcludeNamespaces, "exclude-namespace", nil, "with -A: leave out namespaces with this name or glob (repeatable), e.g. --exclude-namespace 'kube-*'")
	f.BoolVar(&o.AllContexts, "all-contexts", false, "watch every context of the kubeconfig at once (see --context, which also takes a comma list and globs: --context 'prod-*,staging')")
	f.StringSliceVar(&o.EventTypes, "event-types", nil, "only these event types, e.g. --event-types ADDED,DELETED (ADDED, MODIFIED, DELETED; left out before any sink)")
	c.ValidArgsFunction = completeWatchArgs(configFlags)
	_ = c.RegisterFlagCompletionFunc("output", completeFormats)
	_ = c.RegisterFlagCompletionFunc("color", completeColor)
	_ = c.RegisterFlagCompletionFunc("on-full", completeOnFull)
	_ = c.RegisterFlagCompletionFunc("sink", completeSink)
	_ = c.RegisterFlagCompletionFunc("event-types", completeEventTypes)
	_ = c.RegisterFlagCompletionFunc("exclude-namespace", completeNamespaceList(configFlags, false))
	for _, name := range append([]string{"selector", "field-selector", "jq", "buffer", "resync", "grace", "ignore-path", "max-events", "timeout", "until"}, leader.FlagNames[1:]...) {
		_ = c.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
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
	fastPaths, err := wire.FastPathsFromEnv(os.Getenv)
	if err != nil {
		return usageErrorf("%v", err)
	}
	o.noFastPaths = !fastPaths
	quiet, err := quietio.FromEnv(os.Getenv)
	if err != nil {
		return usageErrorf("%v", err)
	}
	o.plainIO = !quiet
	return o.completeQueries()
}

// Connect loads the kubeconfig and resolves the resource types against the cluster's
// discovery information.
func (o *WatchOptions) Connect() error {
	if !o.typesPerCluster {
		contexts, err := o.selectClusters()
		if err != nil {
			return err
		}
		if contexts != nil {
			return o.connectClusters(contexts)
		}
	}
	var err error
	if o.restConfig, err = o.clientGetter.ToRESTConfig(); err != nil {
		return kubeconfigError(err)
	}
	o.restConfig.WarningHandler = rest.NoWarnings{}
	if o.AllNamespaces {
		o.namespace = ""
	} else if o.namespace, _, err = o.clientGetter.ToRawKubeConfigLoader().Namespace(); err != nil {
		return kubeconfigError(err)
	} else if strings.Contains(o.namespace, ",") {
		// -n a,b,c: several namespaces, each checked in Validate.
		o.namespaces, o.namespace = splitNamespaces(o.namespace), ""
		if len(o.namespaces) == 1 {
			o.namespace, o.namespaces = o.namespaces[0], nil
		}
	} else if err := o.checkNamespaceName(o.namespace); err != nil {
		return err
	}
	mapper, err := o.clientGetter.ToRESTMapper()
	if err != nil {
		return kubeconfigError(err)
	}
	disco, err := o.clientGetter.ToDiscoveryClient()
	if err != nil {
		return kubeconfigError(err)
	}
	// Discovery once, before the REST mapper: after a failure the mapper tries again, so a
	// server that never answers would be waited for twice the request's time limit. What
	// this fetches is what the mapper needs, and is then cached.
	if _, _, err := disco.ServerGroupsAndResources(); err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return informer.APIError(err, "discover", resource.Resource{})
	}
	seen := map[schema.GroupVersionResource]bool{}
	for _, arg := range o.expandCategories(disco) {
		res, err := resource.Resolve(arg, mapper, disco)
		if err != nil {
			var unknown *resource.UnknownTypeError
			var notWatchable *resource.NotWatchableError
			if errors.As(err, &unknown) || errors.As(err, &notWatchable) {
				if o.typesPerCluster {
					o.unresolved = append(o.unresolved, unresolvedType{arg: arg, err: err})
					continue
				}
				return &UsageError{Err: err}
			}
			return informer.APIError(err, "discover", resource.Resource{})
		}
		if !seen[res.GVR] {
			seen[res.GVR] = true
			o.resources = append(o.resources, res)
		}
	}
	if err := o.checkNames(); err != nil {
		return err
	}
	return o.connectOwned(mapper, disco)
}

// checkNamespaceName refuses a namespace that cannot exist, as the API server would
// (a DNS-1123 label), rather than watch it forever for objects that never come.
// -n is checked in Validate, before the kubeconfig is read; the context's namespace here.
func (o *WatchOptions) checkNamespaceName(ns string) error {
	if len(validation.IsDNS1123Label(ns)) == 0 {
		return nil
	}
	const rule = "use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"
	if o.flagsSet("namespace") {
		return usageErrorf("-n/--namespace %q is not a valid namespace name: %s", ns, rule)
	}
	return usageErrorf("namespace %q of the kubeconfig's context is not a valid namespace name: %s; fix the context or give -n", ns, rule)
}

// checkNames refuses NAME arguments that no object of the watched types can have, and
// names with -A for namespaced types (a name is looked up in one namespace, as kubectl
// does); cluster-scoped types take names with or without -A.
func (o *WatchOptions) checkNames() error {
	for _, res := range o.resources {
		if o.AllNamespaces && len(o.Names) > 0 && res.Namespaced {
			return usageErrorf("NAME arguments cannot be used with -A/--all-namespaces: %s are namespaced, and names are looked up in one namespace (use -n NAMESPACE)", res)
		}
		for _, name := range o.Names {
			if err := checkObjectName(res, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkObjectName applies the API server's rule for the names of res's objects: a
// DNS-1123 subdomain for nearly every type (custom resources too); RBAC objects may be
// named with any path segment ("system:node-proxier").
func checkObjectName(res resource.Resource, name string) error {
	if res.GVR.Group == rbacv1.GroupName {
		if msgs := content.IsPathSegmentName(name); len(msgs) > 0 {
			return usageErrorf("NAME %q is not a valid name for %s: %s", name, res, strings.Join(msgs, "; "))
		}
		return nil
	}
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return usageErrorf("NAME %q is not a valid name for %s: use at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", name, res)
	}
	return nil
}

func (o *WatchOptions) parseArgs(args []string) error {
	if typ, name, ok := strings.Cut(args[0], "/"); ok {
		if err := o.parseTypeSlashName(typ, name, args[1:]); err != nil {
			return err
		}
		args = []string{typ, name}
	}
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
// defaults and adds the terminal sink unless another sink already writes to stdout or
// --no-screen is given.
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
	// The flag's policy is parsed once, here, like the file's and the sinks' policies
	// where they are read.
	onFull, onFullErr := listener.ParsePolicy(o.OnFull)
	defaults := config.Defaults{Buffer: o.Buffer, OnFull: onFull, Resync: o.Resync}
	if file != nil {
		if !o.flagsSet("resume") && file.Resume != "" {
			o.Resume = file.Resume
		}
		if !o.flagsSet("buffer") && file.Defaults.Buffer != 0 {
			defaults.Buffer = file.Defaults.Buffer
		}
		if !o.flagsSet("on-full") && !file.Defaults.OnFull.IsZero() {
			defaults.OnFull, onFullErr = file.Defaults.OnFull, nil
		}
		if !o.flagsSet("resync") && file.Defaults.Resync != 0 {
			defaults.Resync = file.Defaults.Resync
		}
	}
	if onFullErr != nil {
		return usageErrorf("--on-full: %v", onFullErr)
	}
	if defaults.Buffer < 1 || defaults.Buffer > config.MaxBuffer {
		return usageErrorf("--buffer %d: give a number of events from 1 to %d", defaults.Buffer, config.MaxBuffer)
	}
	if defaults.Resync != 0 && defaults.Resync < config.MinResync {
		return usageErrorf("--resync %s: use 0 (never) or at least %s", defaults.Resync, config.MinResync)
	}

	var fileSinks, flagSinks []config.Sink
	if file != nil {
		fileSinks = file.Sinks
	}
	for _, spec := range o.SinkSpecs {
		s, err := config.ParseSinkSpec(spec)
		if err != nil {
			return &UsageError{Err: err}
		}
		flagSinks = append(flagSinks, s)
	}
	for _, list := range [][]config.Sink{fileSinks, flagSinks} {
		for i := range list {
			if err := o.completeStdout(&list[i]); err != nil {
				return err
			}
		}
	}
	fileSinks, err := o.stdoutFromCommandLine(fileSinks, flagSinks)
	if err != nil {
		return err
	}
	sinks := append(fileSinks, flagSinks...)
	if !o.NoScreen && !writesToStdout(sinks) {
		screen := config.Sink{Name: "screen", Type: config.KindTerminal, AutoName: true, Origin: "the standard output"}
		if o.JQ != "" {
			screen = config.Sink{Name: "screen", Type: config.KindJQ, Expr: o.JQ, Raw: o.RawOutput, AutoName: true, Origin: "--jq"}
		}
		sinks = append([]config.Sink{screen}, sinks...)
	}
	if len(sinks) == 0 {
		return usageErrorf("--no-screen leaves no sink to write to; add one, e.g. --sink file=events.jsonl")
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

// stdoutFromCommandLine lets the command line decide what goes to stdout, as flags beat
// config files in kubectl: when it says (--jq, --no-screen, a --sink that writes to
// stdout), the config file's sinks that write to stdout are left out; an explicit -o sets
// the format of the file's terminal sinks and leaves out its other stdout sinks. It
// returns the config file's sinks that stay.
func (o *WatchOptions) stdoutFromCommandLine(fileSinks, flagSinks []config.Sink) ([]config.Sink, error) {
	flagStdout := writesToStdout(flagSinks)
	switch {
	case o.NoScreen && flagStdout:
		for _, s := range flagSinks {
			if s.WritesStdout() {
				return nil, usageErrorf("--no-screen turns off the standard output stream, but %s writes to it; drop one of them", s.Origin)
			}
		}
	case o.NoScreen && o.JQ != "":
		return nil, usageErrorf("--no-screen turns off the standard output stream that --jq filters; drop one of them")
	case o.NoScreen && o.flagsSet("output"):
		return nil, usageErrorf("--no-screen turns off the standard output stream whose format -o sets; drop one of them")
	case o.JQ != "" && flagStdout:
		return nil, usageErrorf("--jq filters the standard output stream, but a sink already writes to stdout; put the expression into that sink instead")
	case o.flagsSet("output") && flagStdout:
		// -o is the terminal sink's format; a --sink of another kind that writes to stdout
		// replaces that sink, and would leave -o changing nothing.
		for _, s := range flagSinks {
			if s.WritesStdout() && s.Type != config.KindTerminal {
				return nil, usageErrorf("-o sets the format of the terminal stream, but %s writes to stdout in its place; give that sink its format (e.g. --sink 'file(format=json)=-') and drop -o", s.Origin)
			}
		}
	}
	var kept []config.Sink
	for _, s := range fileSinks {
		switch {
		case !s.WritesStdout():
		case o.NoScreen || o.JQ != "" || flagStdout:
			continue
		case o.flagsSet("output"):
			if s.Type != config.KindTerminal {
				continue
			}
			s.Format = o.Output
		}
		kept = append(kept, s)
	}
	return kept, nil
}

// completeStdout makes the path a sink writes to (a file sink's path, a jq sink's output)
// config.Stdout when it names the standard output ("-", /dev/stdout, or the very file
// stdout is), so that it is written as stdout: once, by one sink, never rotated or
// renamed.
func (o *WatchOptions) completeStdout(s *config.Sink) error {
	path, ok := s.Destination()
	if !ok || path == "" || !o.isStdout(path) {
		return nil
	}
	if s.Rotate.MaxSizeMB > 0 {
		return usageErrorf("sink %q: %s is the standard output, which cannot be rotated (rotation renames the file); %s", s.Name, path, dropRotation(*s))
	}
	s.SetStdout()
	return nil
}

// dropRotation says how to turn a sink's rotation off, where it was defined.
func dropRotation(s config.Sink) string {
	if strings.HasPrefix(s.Origin, "--sink") {
		return "drop max-size"
	}
	return "remove its rotate settings (" + s.Origin + ")"
}

// isStdout reports whether path names the standard output: "-", /dev/stdout (or
// /dev/fd/1, /proc/self/fd/1), or any path to the file, terminal or pipe stdout is.
func (o *WatchOptions) isStdout(path string) bool {
	switch path {
	case config.Stdout, "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	out, ok := o.Streams.Out.(*os.File)
	if !ok {
		return false
	}
	outInfo, err := out.Stat()
	if err != nil {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && os.SameFile(info, outInfo)
}

// writesToStdout reports whether one of the sinks writes to stdout.
func writesToStdout(sinks []config.Sink) bool {
	for _, s := range sinks {
		if s.WritesStdout() {
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
		if o.noFastPaths {
			o.differ = o.differ.WithoutFastPaths()
		}
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
		if s.Type != config.KindJQ && s.Expr == "" { // exec and http sinks may have one
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
	if err := checkRequestTimeout(o.ConfigFlags); err != nil {
		return err
	}
	// Flags that would change nothing are refused rather than ignored.
	if o.RawOutput && o.JQ == "" {
		return usageErrorf("-r/--raw-output applies to --jq only; add --jq EXPRESSION (for a jq sink: --sink 'jq(raw)=EXPRESSION')")
	}
	if o.JQ != "" && o.flagsSet("output") && o.Output != string(render.FormatJSON) {
		return usageErrorf("-o %s does not apply with --jq, which prints the expression's results as JSON (strings raw with -r); drop -o", o.Output)
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
	if o.flagsSet("namespace") && !o.AllNamespaces {
		for _, ns := range splitNamespaces(*o.ConfigFlags.Namespace) {
			if err := o.checkNamespaceName(ns); err != nil {
				return err
			}
		}
		if len(splitNamespaces(*o.ConfigFlags.Namespace)) == 0 {
			return o.checkNamespaceName(*o.ConfigFlags.Namespace)
		}
	}
	if err := o.checkExcludeNamespaces(); err != nil {
		return err
	}
	if o.UntilDeleted && len(o.Names) == 0 {
		return usageErrorf("--until-deleted needs the names of the objects to wait for: kubeevents watch TYPE NAME... --until-deleted")
	}
	if o.MaxEvents < 0 {
		return usageErrorf("--max-events %d: give a positive number, or 0 for no limit", o.MaxEvents)
	}
	if o.Timeout < 0 {
		return usageErrorf("--timeout %s: give a positive duration, e.g. 30s or 5m, or 0 for no limit", o.Timeout)
	}
	if o.Grace < 0 {
		return usageErrorf("--grace %s: give a positive duration, e.g. 5s, or 0 to drop what sinks still hold", o.Grace)
	}
	if err := checkMetricsAddr(o.MetricsAddr); err != nil {
		return err
	}
	if err := o.checkEventTypes(); err != nil {
		return err
	}
	if o.NoDiff && (o.ChangesOnly || len(o.IgnorePaths) > 0) {
		return usageErrorf("--changes-only and --ignore-path need diffs; drop --no-diff")
	}
	if o.ResumeReset && o.Resume == "" {
		return usageErrorf("--resume-reset applies to --resume only; add --resume FILE")
	}
	if o.Resume != "" && len(o.namespaces) > 1 {
		return usageErrorf("--resume takes one namespace (-n NAME) or all (-A), not several: a checkpoint keeps one watch's objects; drop one")
	}
	if o.Resume != "" && o.Owned.Owned {
		return usageErrorf("--resume and --owned do not go together: a checkpoint keeps the objects of the types given, not of an owner's tree; drop one")
	}
	if _, _, err := clusterstore.ParseRef(o.Resume); err != nil {
		return &UsageError{Err: err}
	}
	if err := o.LeaderElect.Validate(o.flagsSet); err != nil {
		return &UsageError{Err: err}
	}
	if o.Resume != "" && o.WatchOnly {
		return usageErrorf("--resume and --watch-only do not go together: a resumed start emits what changed while kubeevents was down, which --watch-only leaves out; drop one")
	}
	return o.validateOwned()
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
	return informer.APIError(err, "discover", resource.Resource{})
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
	if _, ok := o.lookupEnv("NO_COLOR"); ok {
		return false
	}
	if term, _ := o.lookupEnv("TERM"); term == "dumb" {
		return false
	}
	return o.terminals.IsTerminal(w)
}

// terminals says which output streams are terminals and how wide they are. osTerminals
// asks the operating system; tests give a fake, as the GitHub CLI's IOStreams let them.
type terminals interface {
	IsTerminal(w io.Writer) bool
	// Width returns a function that reads the width of the terminal w is, asked for
	// every line so that a resized window is followed; nil when w is not a terminal.
	Width(w io.Writer) func() int
}

type osTerminals struct{}

func (osTerminals) IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

func (t osTerminals) Width(w io.Writer) func() int {
	f, ok := w.(*os.File)
	if !ok || !t.IsTerminal(w) {
		return nil
	}
	fd := int(f.Fd())
	return func() int {
		width, _, err := term.GetSize(fd)
		if err != nil {
			return 0
		}
		return width
	}
}

// warnf prints one diagnostic line on stderr; safe from any goroutine.
func (o *WatchOptions) warnf(format string, args ...any) {
	fmt.Fprintf(o.Streams.ErrOut, "kubeevents: "+o.noticePrefix+format+"\n", args...)
}

// infof prints a diagnostic that only a person at a terminal (or -v) wants.
func (o *WatchOptions) infof(format string, args ...any) {
	if o.summaryShown() {
		o.warnf(format, args...)
	}
}

// checkNamespace warns when the namespace does not exist, and says so; the watch goes on, since the
// namespace may be created later and its objects will then show up.
func (o *WatchOptions) checkNamespace(ctx context.Context) (missing bool) {
	if len(o.namespaces) > 0 {
		for _, ns := range o.namespaces {
			one := *o
			one.namespace, one.namespaces = ns, nil
			one.checkNamespace(ctx)
		}
		return false
	}
	if o.namespace == "" {
		return false
	}
	namespaced := false
	for _, r := range o.resources {
		namespaced = namespaced || r.Namespaced
	}
	if !namespaced {
		return false
	}
	client, err := kubernetes.NewForConfig(o.restConfig)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := client.CoreV1().Namespaces().Get(ctx, o.namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		o.warnf("namespace %q does not exist (yet); watching anyway, its objects will show up if it is created", o.namespace)
		return true
	}
	return false
}
