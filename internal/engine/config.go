package engine

import (
	"io"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/leader"
	"github.com/kubeevents/kubeevents/internal/plan"
)

// Config is one `kubeevents watch` as the command line and the config file say it: plain
// values, each checked for its form by the command. Run resolves and checks the rest.
type Config struct {
	// Watch is what to watch, resolved against the clusters by plan.Resolve.
	Watch plan.Request

	// Sinks are the outputs, the terminal's among them, with every default applied
	// (config.Assemble).
	Sinks []config.Sink
	// Color is "auto", "always" or "never" for the terminal; Timestamps prints full
	// times in pretty lines.
	Color      string
	Timestamps bool

	WatchOnly  bool // leave out the objects that exist at start-up
	WithEvents bool // also core Events about the watched objects
	// EventsSince, with WithEvents, also shows the core Events of that long before the
	// start about the objects that exist then, marked past, before the changes; with a
	// checkpoint to resume from, those since it was written are shown instead.
	EventsSince time.Duration
	// ChangesOnly leaves out MODIFIED events whose diff is empty after IgnorePaths,
	// before they are numbered: no gap in seq, not counted against MaxEvents.
	ChangesOnly bool
	// EventTypes, when not empty, are the only event types made (ADDED, MODIFIED,
	// DELETED): the others are left out like ChangesOnly's, before they are numbered.
	EventTypes  []event.EventType
	NoDiff      bool
	IgnorePaths []string
	ShowOld     bool // the previous object as "old" in JSON, and in jq's input
	// On names transitions (package transition): only events in which one of them
	// happened are made, the others left out like ChangesOnly's, before they are
	// numbered. Transitions and Formats are the config file's own, which add to the
	// shipped ones or replace them by name.
	On          []string
	Transitions map[string]string
	Formats     map[string]string
	// FoldRollouts folds the events of rollouts in progress into ROLLOUT lines in every
	// sink but those whose fold is false (package fold).
	FoldRollouts bool

	MaxEvents uint64        // stop after this many events (0: no limit)
	Until     string        // a jq expression: stop after the event that makes it true
	Timeout   time.Duration // stop after this long (0: never)
	Grace     time.Duration // how long the sinks have to write what they hold at the end

	MetricsAddr string // serve Prometheus metrics on HOST:PORT ("" off)
	// Resume is where the checkpoint is kept (--resume): a file, or objects in the
	// cluster (secret:[NAMESPACE/]NAME, configmap:...: package clusterstore).
	Resume      string
	ResumeReset bool // start afresh, replacing whatever the checkpoint holds
	// LeaderElect streams only while this replica holds a Lease (--leader-elect).
	LeaderElect leader.Flags

	// UI shows the full-screen view on the terminal instead of the stream's lines
	// (--ui; package ui): the terminal sink is the view. UIHistory is how many changes
	// of each object it keeps (0: ui.DefaultHistory).
	UI        bool
	UIHistory int

	// NoFastPaths decodes, encodes and diffs every object whole; PlainIO dials the
	// watches' connection as client-go does, PlainStdout writes stdout with the file's
	// own Write (the environment's switches: package switches).
	NoFastPaths bool
	PlainIO     bool
	PlainStdout bool
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
	// NewClients builds a cluster's API clients (informer.NewClients; tests give fakes).
	NewClients func(*rest.Config) (informer.Clients, error)
	// Synced is called once every informer has its initial list; what it returns is
	// called when the run ends. The command tunes the process for watching there.
	Synced func() (undo func())
	// SecretsWatched is called, before anything is listed, when Secrets are watched and
	// their values must not reach client-go's logs: it returns the -v the logs were capped
	// at, or 0 if they needed no cap.
	SecretsWatched func() (cappedFrom int)
	// Starting is called once everything is resolved and before the informers list
	// (the start-up pages' release).
	Starting func()
}

// Terminals says which output streams are terminals and how wide they are.
type Terminals interface {
	IsTerminal(w io.Writer) bool
	// Width returns a function that reads the width of the terminal w is, asked for
	// every line so that a resized window is followed; nil when w is not a terminal.
	Width(w io.Writer) func() int
}
