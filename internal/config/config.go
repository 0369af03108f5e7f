// Package config reads kubeevents' output sinks from --sink flags and from a YAML
// config file, and checks them before anything is started: the grammar of both over the
// registry of sink kinds (package sinkkind), whose rows say which settings each kind
// takes, what their values are and what they mean. The rows write the --sink help
// (SinkSyntaxHelp) and the settings reference in docs/sinks.md (go generate
// ./internal/config), so the keys are listed nowhere else.
//
// # The --sink flag
//
// Each --sink flag defines one sink:
//
//	KIND[(OPTIONS)][=TARGET]
//
// TARGET is everything after the '=' that follows KIND or the closing ')', taken
// verbatim: a jq expression may contain commas, '=', parentheses and quotes. Which
// setting it is depends on the kind (Kind.Target); all kinds but terminal need one.
//
// OPTIONS is a comma-separated list of key=value, or a bare key for a boolean (key=true
// and key=false work too). Spaces around keys and values are ignored. A value may be
// double-quoted to hold a comma or ')', with \" and \\ as the only escapes inside the
// quotes: output="a,b.txt". SinkSyntaxHelp shows examples.
//
// # The config file
//
// The config file (DefaultPath, unless the caller is told otherwise) is YAML with the
// same settings in camelCase, under defaults (applied to every sink that leaves them
// unset) and sinks (docs/sinks.md shows one). Relative paths in it are relative to the
// config file's directory (see Load). It is decoded strictly: unknown and duplicate keys,
// values of the wrong type and settings that do not fit the sink's type are errors, each
// reported as "PATH:LINE:COLUMN: what is wrong".
//
// The command combines the file's sinks with the flags' (Resolved, Defaults.Apply),
// numbers the default names (AssignNames) and checks them (CheckNames).
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/health"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// File is a parsed config file.
type File struct {
	Defaults Defaults        // applied to sinks that leave a field unset; see Resolved
	Sinks    []sinkkind.Spec // as written, without Defaults applied
	// Resume is the checkpoint of --resume, which the flag overrides: a file, made
	// relative to the config file's directory by Load, or a store in the cluster
	// (secret:NAME, package clusterstore), taken as it is.
	Resume string
	// Store is the history store that get, history and store import use when --store
	// does not say, made relative to the config file's directory by Load.
	Store string
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
func (d Defaults) Apply(s sinkkind.Spec) sinkkind.Spec {
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

// Resolved returns a copy of the file's sinks, settings and all, with Defaults applied
// to each. A nil File has no sinks.
func (f *File) Resolved() []sinkkind.Spec {
	if f == nil || len(f.Sinks) == 0 {
		return nil
	}
	sinks := make([]sinkkind.Spec, len(f.Sinks))
	for i, s := range f.Sinks {
		sinks[i] = f.Defaults.Apply(s.Clone())
	}
	return sinks
}

// AssignNames makes default names unique, in place: the sinks whose AutoName is set
// keep their default name if no other sink has it and get "-2", "-3", ... appended
// otherwise ("jq", "jq-2", "jq-3"). Names the user gave are never changed, and win over
// default ones. Call it before CheckNames, on all sinks (config file and flags).
func AssignNames(sinks []sinkkind.Spec) {
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
func CheckNames(sinks []sinkkind.Spec) error {
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

func origin(s sinkkind.Spec, i int) string {
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

// defaultFormat gives a sink that names no format its kind's default.
func defaultFormat(s *sinkkind.Spec) {
	if p := s.Text("format"); p != nil && *p == "" {
		*p = s.Kind.DefaultFormat
	}
}

// The settings tables of docs/sinks.md are written from the sink kinds' rows
// (sinkkind.UpdateDoc), as the --sink help is.
//
//go:generate go run ../../hack/gendocs ../../docs/sinks.md

// sinkExamples are --sink values the help shows; a test parses each.
var sinkExamples = []string{
	`file=events.jsonl`,
	`file(format=pretty,max-size=100,compress)=events.log`,
	`jq(raw,output=names.txt)=select(.type=="DELETED") | .object.metadata.name`,
	`terminal(format=json,resync=30s)`,
	`exec(retries=3)=./on-change.sh`,
	`http(header="Authorization=env:HOOK_TOKEN")=https://hooks.example.com/k8s`,
}

// SinkSyntaxHelp describes the --sink flag, for its help text: its syntax, and the kinds
// and options registered.
func SinkSyntaxHelp() string {
	return "output sink, repeatable: KIND[(OPTIONS)][=TARGET]\n" + sinkkind.KindsHelp() +
		"OPTIONS: comma-separated key=value (a boolean's bare key means true): " + sinkkind.OptionsHelp() +
		". Quote values holding ',' or ')': output=\"a,b.txt\".\n" +
		"Examples: " + strings.Join(sinkExamples, "  ")
}
