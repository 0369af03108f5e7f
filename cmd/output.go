package cmd

import (
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/compile"
	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	_ "github.com/kubeevents/kubeevents/internal/sinkkind/kinds" // every sink kind
	"github.com/kubeevents/kubeevents/internal/switches"
)

// configFileDefault is where the config file is when --config does not say.
const configFileDefault = "(default $XDG_CONFIG_HOME/kubeevents/config.yaml, or ~/.config/kubeevents/config.yaml, if it exists)"

// outputFlags are the flags of every command that streams events (watch, replay,
// history): the formats, the sinks and the config file's, diffs, and when to stop.
type outputFlags struct {
	output, color                string
	timestamps, watchEvents      bool
	sinks                        []string
	configFile, jq               string
	rawOutput, noScreen          bool
	buffer                       int
	onFull                       string
	grace, timeout               time.Duration
	changesOnly, showOld, noDiff bool
	ignorePaths                  []string
	maxEvents                    int
	until                        string
	eventTypes                   []string
	health                       bool
	stalledAfter                 time.Duration

	// changed reports whether a flag was given on the command line.
	changed func(name string) bool
}

// addFlags adds the flags; where says whose output -o formats ("of the terminal").
func (f *outputFlags) addFlags(fs *pflag.FlagSet, where string) {
	fs.StringVarP(&f.output, "output", "o", string(render.FormatPretty), "output format "+where+": "+strings.Join(render.Formats(), "|"))
	fs.StringVar(&f.color, "color", "auto", "colour the terminal output: auto|always|never (auto: only on a terminal, and never when NO_COLOR is set)")
	fs.BoolVar(&f.timestamps, "timestamps", false, "full RFC 3339 times instead of 15:04:05 in pretty output")
	fs.BoolVar(&f.watchEvents, "output-watch-events", false, "as kubectl get -w: -o custom-columns=, jsonpath= and go-template= (and such file sinks) see the watch event {type, object} instead of the object; the other formats show the event type anyway")
	fs.StringArrayVar(&f.sinks, "sink", nil, config.SinkSyntaxHelp())
	fs.StringVar(&f.configFile, "config", "", "config file with sinks and defaults "+configFileDefault)
	fs.StringVar(&f.jq, "jq", "", "jq expression applied to each event of the standard output stream (envelope: type, time, seq, resource, object, old, diff)")
	fs.BoolVarP(&f.rawOutput, "raw-output", "r", false, "with --jq: print strings raw, not as JSON")
	fs.BoolVar(&f.noScreen, "no-screen", false, "write no events to stdout, only to the --sink and config file sinks (an archiving run)")
	fs.IntVar(&f.buffer, "buffer", listener.DefaultBuffer, "events each sink may queue")
	fs.StringVar(&f.onFull, "on-full", listener.Block.String(), "what a sink does when its buffer is full: "+strings.Join(listener.Policies(), "|"))
	fs.DurationVar(&f.grace, "grace", 5*time.Second, "on exit, how long sinks may take to write what they still hold")
	fs.BoolVar(&f.changesOnly, "changes-only", false, "leave out MODIFIED events whose diff is empty after ignored paths")
	fs.BoolVar(&f.showOld, "show-old", false, "put the whole previous object into JSON output as \"old\"")
	fs.BoolVar(&f.noDiff, "no-diff", false, "do not compute or show what changed")
	fs.StringArrayVar(&f.ignorePaths, "ignore-path", nil, "leave a field out of diffs (JSON pointer or dotted path, * for any key; repeatable), e.g. status.conditions.*.lastHeartbeatTime")
	fs.IntVar(&f.maxEvents, "max-events", 0, "exit after this many events (0: no limit); exit code 3 if --until or --until-deleted was not met by then")
	fs.DurationVar(&f.timeout, "timeout", 0, "exit after this long; exit code 3 if --until, --until-deleted or --until-rollout was not met by then")
	fs.StringVar(&f.until, "until", "", "exit 0 once an event makes this jq expression true (after printing it)")
	fs.StringSliceVar(&f.eventTypes, "event-types", nil, "only these event types, e.g. --event-types ADDED,DELETED (ADDED, MODIFIED, DELETED, SYNC, STALLED; left out before any sink)")
	fs.BoolVar(&f.health, "health", false, "compute each object's health (Current, InProgress, Failed...: kstatus and the health rules) and show it: JSON's \"health\", a mark on pretty lines where it changed (on by itself with what reads it: --until-ready, --owned, -o wide, --ui, the ready, degraded and stalled transitions)")
	fs.DurationVar(&f.stalledAfter, "stalled-after", 0, "make a STALLED event (the stalled transition) for an object InProgress this long without progress, e.g. 5m (0: never); with --until-ready, a stall exits 1")
}

// engineConfig is the part of the engine's Config these flags make, with the sinks of
// the command line and of the config file (returned too: the command may take more from
// it); resync is the command's --resync, if it has one.
func (f *outputFlags) engineConfig(streams genericiooptions.IOStreams, resync time.Duration, resyncGiven bool) (engine.Config, *config.File, error) {
	cfg := engine.Config{
		Output: engine.Output{Color: f.color, Timestamps: f.timestamps, ShowOld: f.showOld},
		Events: engine.Events{ChangesOnly: f.changesOnly},
		End:    engine.End{MaxEvents: uint64(max(f.maxEvents, 0)), Timeout: f.timeout, Grace: f.grace},
	}
	var err error
	if cfg.Events.Types, err = parseEventTypes(f.eventTypes); err != nil {
		return cfg, nil, err
	}
	if err := f.validate(); err != nil {
		return cfg, nil, err
	}
	file, err := loadConfigFile(f.configFile)
	if err != nil {
		return cfg, nil, err
	}
	stdout, _ := streams.Out.(*os.File)
	cfg.Output.Sinks, err = compile.Sinks(file, compile.SinkFlags{Specs: f.sinks, Output: f.output, OutputGiven: f.changed("output"),
		JQ: f.jq, Raw: f.rawOutput, NoScreen: f.noScreen, Buffer: f.buffer, BufferGiven: f.changed("buffer"),
		OnFull: f.onFull, OnFullGiven: f.changed("on-full"), Resync: resync, ResyncGiven: resyncGiven, Stdout: stdout})
	if err != nil {
		return cfg, nil, err
	}
	if err := applySwitches(&cfg); err != nil {
		return cfg, nil, err
	}
	if cfg.Output.Differ, err = compile.Differ(f.noDiff, f.ignorePaths, cfg.Speed.NoFastPaths); err != nil {
		return cfg, nil, err
	}
	var formats map[string]string
	if file != nil {
		formats = file.Formats
	}
	return cfg, file, compile.Output(&cfg, f.until, sinkkind.Compiling{Formats: formats, Timestamps: f.timestamps, WatchEvents: f.watchEvents})
}

// applySwitches sets what the environment's switches (package switches) say of a run:
// the one place that reads them.
func applySwitches(cfg *engine.Config) (err error) {
	if cfg.Speed, err = switches.Settings(os.Getenv); err != nil {
		return usageErrorf("%v", err)
	}
	return nil
}

// validate checks these flags against each other.
func (f *outputFlags) validate() error {
	if _, err := render.ParseFormat(f.output); err != nil {
		return usageErrorf("-o: %v", err)
	}
	// Flags that would change nothing are refused rather than ignored.
	switch {
	case f.rawOutput && f.jq == "":
		return usageErrorf("-r/--raw-output applies to --jq only; add --jq EXPRESSION (for a jq sink: --sink 'jq(raw)=EXPRESSION')")
	case f.jq != "" && f.changed("output") && f.output != string(render.FormatJSON):
		return usageErrorf("-o %s does not apply with --jq, which prints the expression's results as JSON (strings raw with -r); drop -o", f.output)
	case f.color != "auto" && f.color != "always" && f.color != "never":
		return usageErrorf("--color %q: use auto, always or never", f.color)
	case f.maxEvents < 0:
		return usageErrorf("--max-events %d: give a positive number, or 0 for no limit", f.maxEvents)
	case f.timeout < 0:
		return usageErrorf("--timeout %s: give a positive duration, e.g. 30s or 5m, or 0 for no limit", f.timeout)
	case f.grace < 0:
		return usageErrorf("--grace %s: give a positive duration, e.g. 5s, or 0 to drop what sinks still hold", f.grace)
	case f.noDiff && (f.changesOnly || len(f.ignorePaths) > 0):
		return usageErrorf("--changes-only and --ignore-path need diffs; drop --no-diff")
	case f.stalledAfter < 0:
		return usageErrorf("--stalled-after %s: give a positive duration, e.g. 5m, or 0 for never", f.stalledAfter)
	}
	return nil
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
