package engine

import (
	"io"
	"time"

	"github.com/kubeevents/kubeevents/internal/health"

	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/crashcontext"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/episode"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/fastpath"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// Config is one run as the command compiled it: its jq programs, selectors, transitions,
// formats and ignored paths compiled, and every flag checked against the others
// (plan.Check). What needs the clusters (types against discovery, the checkpoint) Run
// resolves in one place, before any sink opens.
type Config struct {
	// Watch is what to watch, resolved against the clusters by plan.Resolve.
	Watch  plan.Request
	Output Output
	Events Events
	End    End
	// Resume is where the checkpoint is kept (--resume): a file, or objects in the
	// cluster (secret:[NAMESPACE/]NAME, configmap:...: package clusterstore); Reset
	// starts afresh, replacing whatever it holds.
	Resume      string
	ResumeReset bool
	// LeaderElect streams only while this replica holds a Lease (--leader-elect).
	LeaderElect leader.Flags
	MetricsAddr string // serve Prometheus metrics on HOST:PORT ("" off)
	// UI shows the full-screen view on the terminal instead of the stream's lines
	// (--ui; package ui): the terminal sink is the view. UIHistory is how many changes
	// of each object it keeps.
	UI        bool
	UIHistory int
	Speed     fastpath.Settings
	// Health, when set, gives every event its object's health (package health: the
	// command compiles the rules; the run adds the custom resources whose status a
	// controller writes, from discovery).
	Health *health.Config
}

// Output is what the sinks are and what they show.
type Output struct {
	// Sinks are the outputs, the terminal's among them, with every default applied and
	// their settings compiled (package sinkkind).
	Sinks []sinkkind.Spec
	// InProcess are sinks the caller builds itself rather than from a config row
	// (kubeevents top's ranking): each gets a listener after those of Sinks.
	InProcess []InProcessSink
	// Color is "auto", "always" or "never" for the terminal; Timestamps prints full
	// times in the view's lines (the terminal sink's settings say it for its own).
	Color      string
	Timestamps bool
	// Differ computes what changed, with the ignored paths (nil: --no-diff); ShowOld puts
	// the previous object in JSON, and in jq's input.
	Differ  *diff.Differ
	ShowOld bool
}

// Events is which changes become events.
type Events struct {
	WatchOnly bool // leave out the objects that exist at start-up
	// WithEvents also shows core Events about the watched objects; Since, with it, those
	// of that long before the start first, marked past (with a checkpoint to resume
	// from, those since it was written).
	WithEvents bool
	Since      time.Duration
	// Types, when not empty, are the only event types made: the others are left out
	// before they are numbered, as ChangesOnly's updates whose diff is empty after the
	// ignored paths.
	Types       []event.EventType
	ChangesOnly bool
	// NoAttribution leaves managedFields unread (--no-by); By is --by and --not-by.
	NoAttribution bool
	By            attribution.Filter
	// On names the transitions whose events alone are made (--on); Transitions are every
	// transition the run names (--on and the sinks' on=), compiled (nil: none).
	On          []string
	Transitions *transition.Set
	// FoldRollouts folds the events of rollouts in progress into ROLLOUT lines in every
	// sink but those whose fold is false (package fold).
	FoldRollouts bool
	// Episodes are the sinks' episodes, by the sink's index (Output.Sinks, then
	// InProcess), nil for a sink without; Opposites the transitions that resolve them
	// (package episode). Transitions holds the opposites too.
	Episodes  []*episode.Settings
	Opposites map[string]episode.Opposite
	// CrashContext, when set, has the events of crashes carry what the crash left behind
	// (package crashcontext), fetched as it says (--context-lines).
	CrashContext *crashcontext.Options
}

// End is when the stream ends.
type End struct {
	MaxEvents uint64    // stop after this many events (0: no limit)
	Until     *jq.Query // stop after the event that makes it true (nil: none)
	Timeout   time.Duration
	Grace     time.Duration // how long the sinks have to write what they hold at the end
}

// InProcessSink is a sink of the caller's: its name (in diagnostics and the summary) and
// how it is built, given the run's Differ (nil with --no-diff).
type InProcessSink struct {
	Name  string
	Build func(differ *diff.Differ) listener.Sink
}

// System is what a run is given by the process: its streams, the kubeconfig, the
// environment, and the process-wide settings the command owns (the engine changes
// nothing process-wide itself).
type System struct {
	Out, ErrOut io.Writer
	Terminals   Terminals
	LookupEnv   func(key string) (string, bool)
	Verbosity   int // -v
	Kubeconfig  plan.Kubeconfig
	// NewClients builds a cluster's API clients (informer.NewClients; tests give fakes),
	// with the run's Speed.Recovery.
	NewClients func(*rest.Config, fastpath.Recovery) (informer.Clients, error)
	// Synced is called once every informer has its initial list, with the run's
	// Speed.Runtime; what it returns is called when the run ends. The command tunes the
	// process for watching there.
	Synced func(fastpath.Runtime) (undo func())
	// SecretsWatched is called, before anything is listed, when Secrets are watched and
	// their values must not reach client-go's logs: it returns the -v the logs were capped
	// at, or 0 if they needed no cap.
	SecretsWatched func() (cappedFrom int)
	// Starting is called, with the run's Speed.Runtime, once everything is resolved and
	// before the informers list (the start-up pages' release).
	Starting func(fastpath.Runtime)
}

// Terminals says which output streams are terminals and how wide they are.
type Terminals interface {
	IsTerminal(w io.Writer) bool
	// Width returns a function that reads the width of the terminal w is, asked for
	// every line so that a resized window is followed; nil when w is not a terminal.
	Width(w io.Writer) func() int
}
