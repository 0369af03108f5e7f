// Package config reads kubeevents' output sinks from --sink flags and from a YAML
// config file, checks them before anything is started, and builds them (Build).
//
// Each sink kind is one registration in kinds (kinds.go): the settings it takes, its
// target, formats and default name, whether it writes to stdout, its completion and how
// it is built. Every setting is one row of the settings table (validate.go): its --sink
// key, its config file key, the kinds that take it, its value, default and meaning.
// Both --sink and the config file read options through that table, and it writes the
// --sink help (SinkSyntaxHelp) and the settings reference in docs/sinks.md
// (SettingsMarkdown; go generate ./internal/config), so the keys are listed nowhere
// else.
//
// # The --sink flag
//
// Each --sink flag defines one sink:
//
//	KIND[(OPTIONS)][=TARGET]
//
// TARGET is everything after the '=' that follows KIND or the closing ')', taken
// verbatim: a jq expression may contain commas, '=', parentheses and quotes. Which
// setting it is depends on the kind (Kind.target); all kinds but terminal need one.
//
// OPTIONS is a comma-separated list of key=value, or a bare key for a boolean (key=true
// and key=false work too). Spaces around keys and values are ignored. A value may be
// double-quoted to hold a comma or ')', with \" and \\ as the only escapes inside the
// quotes: output="a,b.txt". For example:
//
//	file(format=pretty,max-size=100,max-backups=5,compress)=events.log
//	jq(raw,output=deletions.txt,on-full=drop-oldest,buffer=4096)=select(.type=="DELETED") | .object.metadata.name
//	terminal(format=json,resync=30s)
//
// The exec sink's TARGET is its command line, split into words without a shell (see
// SplitCommand).
//
// # The config file
//
// The config file (DefaultPath, unless the caller is told otherwise) is YAML with the
// same settings in camelCase:
//
//	defaults:            # applied to every sink that leaves a field unset
//	  buffer: 2048
//	  onFull: drop-oldest
//	  resync: 10m
//	sinks:
//	  - name: screen
//	    type: terminal
//	    format: pretty
//	  - name: archive
//	    type: file
//	    path: events.jsonl
//	    rotate: {maxSizeMB: 100, maxBackups: 5, maxAgeDays: 7, compress: true}
//	    resync: 5m
//	    buffer: 4096
//	    onFull: block
//	  - name: deletions
//	    type: jq
//	    expr: 'select(.type=="DELETED") | .object.metadata.name'
//	    raw: true
//	    output: deletions.txt
//
// Relative paths in it (path, output, caFile, certFile, keyFile) are relative to the
// config file's directory (see Load). It is decoded strictly: unknown and duplicate
// keys, values of the wrong type and settings that do not fit the sink's type are
// errors, each reported as "PATH:LINE:COLUMN: what is wrong".
//
// # Putting sinks together
//
// The caller combines the file's sinks with the flags' sinks like this:
//
//	sinks := f.Resolved()                       // file sinks, with f.Defaults applied
//	for _, s := range flagSinks {
//		sinks = append(sinks, f.Defaults.Apply(s)) // if the defaults should reach flag sinks too
//	}
//	config.AssignNames(sinks)                   // jq, jq-2, ... for names not given
//	if err := config.CheckNames(sinks); err != nil { ... }
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/listener"
)

// Stdout is the path, for a file sink, and the output, for a jq sink, that stands for
// the standard output.
const Stdout = "-"

// Sink kinds.
const (
	KindTerminal = "terminal"
	KindFile     = "file"
	KindJQ       = "jq"
	KindExec     = "exec"
	KindHTTP     = "http"
)

// MinResync is the shortest resync period accepted. client-go silently raises shorter
// periods to this, so they are refused instead.
const MinResync = time.Second

// MaxBuffer is the largest buffer accepted. A listener allocates its whole buffer up
// front, so an absurd value would exhaust memory rather than fail cleanly.
const MaxBuffer = 1 << 24

// Sink is one output sink's settings, from a --sink flag or the config file.
type Sink struct {
	// Name is unique among all sinks. When not given it defaults to "screen" for
	// terminal, the file's base name for file ("events.jsonl") and "jq" for jq, and
	// AutoName is set so that AssignNames may number repeats ("jq-2", ...).
	Name string
	// Type is KindTerminal, KindFile or KindJQ.
	Type string
	// Format is, for terminal: pretty, wide, json, yaml or name, "" meaning the -o
	// flag's format; for file: json (set when not given), pretty or yaml; for http: the
	// receiver's (package notify), "" for JSON Lines; for jq: "".
	Format string
	Path   string // file: the file written (required); Stdout ("-") means stdout
	Expr   string // jq: the expression (required)
	Raw    bool   // jq: strings are printed raw
	Output string // jq: file the results go to; "" or Stdout ("-") means stdout
	Rotate Rotate // file: rotation

	Command string // exec: the command line (split by SplitCommand; no shell)
	URL     string // http: where events are POSTed
	// Batch is the events per run (exec) or request (http) at most, BatchBytes the
	// bytes per request (http), BatchInterval how long a batch that is not full waits
	// for more; 0 means the kind's default.
	Batch         int
	BatchBytes    int
	BatchInterval time.Duration
	Single        bool          // http: one JSON object per request (application/json)
	Timeout       time.Duration // exec, http: time limit per run or request; 0 means the default
	Retries       *int          // exec, http: retries after a failed attempt; nil means the default
	Concurrency   int           // exec: runs at once at most; 0 means 1
	// Headers are an http sink's request headers, "NAME=REF; NAME=REF", where REF is
	// env:VAR, file:PATH or the text itself; see sink.ParseHeaders.
	Headers                   string
	CAFile, CertFile, KeyFile string // http: TLS

	Buffer int // events queued at most; 0 means the default
	// OnFull is the on-full policy, parsed where the sink was read; zero means the default.
	OnFull listener.Policy
	// Resync is the resync period; 0 means none, otherwise it is at least MinResync.
	Resync time.Duration
	// EventTypes, when set, are the only event types the sink writes, "|"-separated
	// (ADDED|DELETED); the others count as filtered in its summary. A string, so that a
	// Sink stays comparable.
	EventTypes string
	// On, when set, names the transitions (package transition) the sink writes the events
	// of, "|"-separated (crashloop|oomkilled); the others count as filtered.
	On string
	// Fold says whether the sink folds rollouts in progress (package fold); nil: as
	// --fold-rollouts says.
	Fold *bool

	// AutoName reports that Name is a default rather than given by the user.
	AutoName bool
	// Origin says where the sink was defined, for messages: `--sink "jq=."` or
	// "config.yaml:12:5".
	Origin string
}

// Rotate is a file sink's rotation settings.
type Rotate struct {
	MaxSizeMB  int  // rotate when the file reaches this many megabytes; 0 means no rotation
	MaxBackups int  // rotated files kept at most; 0 means all
	MaxAgeDays int  // days a rotated file is kept at most; 0 means no limit
	Compress   bool // gzip rotated files
}

// File is a parsed config file.
type File struct {
	Defaults Defaults // applied to sinks that leave a field unset; see Resolved
	Sinks    []Sink   // as written, without Defaults applied
	// Resume is the checkpoint of --resume, which the flag overrides: a file, made
	// relative to the config file's directory by Load, or a store in the cluster
	// (secret:NAME, package clusterstore), taken as it is.
	Resume string
	// MetricsAddr is --metrics-addr's HOST:PORT, which the flag overrides.
	MetricsAddr string
	// Transitions are the file's own transitions, name → jq program (package
	// transition), and Formats its own formats for http sinks, name → jq program (package
	// notify): each adds to the shipped ones, or replaces the one of its name.
	Transitions map[string]string
	Formats     map[string]string
	// Health are the file's own health rules, by kind (package health): each adds to the
	// shipped ones, or replaces the one of its kind.
	Health map[string]health.Rule
}

// Defaults are the settings a sink gets when it leaves them unset (zero).
type Defaults struct {
	Buffer int
	OnFull listener.Policy
	Resync time.Duration
}

// Apply returns s with d's Buffer, OnFull and Resync filled in where s leaves them zero.
func (d Defaults) Apply(s Sink) Sink {
	if s.Buffer == 0 {
		s.Buffer = d.Buffer
	}
	if s.OnFull.IsZero() {
		s.OnFull = d.OnFull
	}
	if s.Resync == 0 {
		s.Resync = d.Resync
	}
	return s
}

// Resolved returns a copy of the file's sinks with Defaults applied to each. A nil File
// has no sinks.
func (f *File) Resolved() []Sink {
	if f == nil || len(f.Sinks) == 0 {
		return nil
	}
	sinks := make([]Sink, len(f.Sinks))
	for i, s := range f.Sinks {
		sinks[i] = f.Defaults.Apply(s)
	}
	return sinks
}

// AssignNames makes default names unique, in place: the sinks whose AutoName is set
// keep their default name if no other sink has it and get "-2", "-3", ... appended
// otherwise ("jq", "jq-2", "jq-3"). Names the user gave are never changed, and win over
// default ones. Call it before CheckNames, on all sinks (config file and flags).
func AssignNames(sinks []Sink) {
	taken := make(map[string]bool, len(sinks))
	for _, s := range sinks {
		if !s.AutoName {
			taken[s.Name] = true
		}
	}
	for i := range sinks {
		if !sinks[i].AutoName {
			continue
		}
		base, name := sinks[i].Name, sinks[i].Name
		for n := 2; taken[name]; n++ {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		taken[name] = true
		sinks[i].Name = name
	}
}

// CheckNames reports a sink without a name, or two sinks with the same name, naming
// where each was defined.
func CheckNames(sinks []Sink) error {
	first := make(map[string]int, len(sinks))
	for i, s := range sinks {
		if s.Name == "" {
			return fmt.Errorf("%s has no name; give it one", origin(s, i))
		}
		if j, ok := first[s.Name]; ok {
			return fmt.Errorf("duplicate sink name %q: %s and %s; give each sink its own name",
				s.Name, origin(sinks[j], j), origin(s, i))
		}
		first[s.Name] = i
	}
	return nil
}

func origin(s Sink, i int) string {
	if s.Origin != "" {
		return s.Origin
	}
	return fmt.Sprintf("sink #%d", i+1)
}

// DefaultPath returns the config file's usual place:
// $XDG_CONFIG_HOME/kubeevents/config.yaml, or ~/.config/kubeevents/config.yaml when
// XDG_CONFIG_HOME is unset, empty or relative (the XDG spec says to ignore relative
// paths). It returns "" if neither that nor the home directory is known.
func DefaultPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "kubeevents", "config.yaml")
}

func knownKind(k string) bool {
	_, ok := LookupKind(k)
	return ok
}

// kindList is "terminal, file or jq".
func kindList() string {
	return orList(Kinds())
}

// defaultName is a sink's name when none is given; s.Type is a known kind.
func defaultName(s *Sink) string {
	return kindOf(s).defaultName(s)
}
