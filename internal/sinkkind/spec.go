package sinkkind

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/listener"
)

// Stdout is the path, for a sink that writes a file, that stands for the standard output.
const Stdout = "-"

// Spec is one output sink as the user defined it, by a --sink flag or in the config file.
type Spec struct {
	// Name is unique among all sinks; AutoName says it is the kind's default ("screen",
	// the file's base name, "jq"), which may be numbered ("jq-2").
	Name     string
	Kind     *Kind
	Settings Settings // the kind's own
	Buffer   int      // events queued at most; 0 means the default
	OnFull   listener.Policy
	Resync   time.Duration // 0: none; else at least MinResync
	// EventTypes and On, when set, are the only event types (ADDED|DELETED) and the
	// transitions (crashloop|oomkilled, package transition) whose events the sink writes,
	// "|"-separated; the others count as filtered. Fold says whether it folds rollouts in
	// progress (package fold); nil: as --fold-rollouts says.
	EventTypes, On string
	Fold           *bool
	// Group, Cooldown, ResolveAfter and Digest are the episodes' settings of a sink with
	// On (package episode); "" and 0: the defaults, none for Digest.
	Group                          string
	Cooldown, ResolveAfter, Digest time.Duration
	AutoName                       bool
	// Origin says where the sink was defined, for messages: `--sink "jq=."` or
	// "config.yaml:12:5".
	Origin string
}

// New returns a sink of kind k with nothing set.
func New(k *Kind) Spec { return Spec{Kind: k, Settings: k.New()} }

// Field returns a pointer to the field of the settings tagged key, or nil.
func Field(settings Settings, key string) any {
	if settings == nil {
		return nil
	}
	v := reflect.ValueOf(settings).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Tag.Get("sink") == key {
			return v.Field(i).Addr().Interface()
		}
		if f.Anonymous { // settings several kinds share
			if p := Field(v.Field(i).Addr().Interface(), key); p != nil {
				return p
			}
		}
	}
	return nil
}

// Set stores v as the setting of the row; a kind's row only when the spec has a kind.
func (s *Spec) Set(set *Setting, v Value) {
	if set.set != nil {
		set.set(s, v)
		return
	}
	switch p := Field(s.Settings, set.Key()).(type) {
	case *string:
		*p = v.Text
	case *bool:
		*p = v.On
	case *int:
		*p = v.N
	case **int:
		*p = &v.N
	case *time.Duration:
		*p = v.Period
	}
}

// Text returns the string setting of the row key; nil when the kind has none.
func (s Spec) Text(key string) *string {
	p, _ := Field(s.Settings, key).(*string)
	return p
}

// IsSet reports whether the setting of the row key is set (not zero).
func (s Spec) IsSet(key string) bool {
	p := Field(s.Settings, key)
	return p != nil && !reflect.ValueOf(p).Elem().IsZero()
}

// Format is the sink's format; "" when it has none.
func (s Spec) Format() string {
	if p := s.Text("format"); p != nil {
		return *p
	}
	return ""
}

// Clone returns s with a copy of its settings, which may then change without changing s.
func (s Spec) Clone() Spec {
	if s.Settings != nil {
		v := reflect.ValueOf(s.Settings)
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(v.Elem())
		s.Settings = c.Interface()
	}
	return s
}

// WritesStdout reports whether the sink writes to the standard output: a terminal
// always, a sink that writes a file when it is Stdout ("-") or not given, exec and http
// sinks never. Paths that name stdout otherwise (/dev/stdout) count once SetStdout made
// them Stdout.
func (s Spec) WritesStdout() bool {
	path, ok := s.Destination()
	return s.Kind != nil && !s.Kind.Elsewhere && (!ok || path == "" || path == Stdout)
}

// Destination returns the file the sink writes to, as written ("" when it writes to
// stdout without naming it), and whether its kind writes to a file at all.
func (s Spec) Destination() (string, bool) {
	if s.Kind == nil || s.Kind.Output == "" {
		return "", false
	}
	return *s.Text(s.Kind.Output), true
}

// SetStdout makes the file the sink writes to Stdout, for a path found to be the
// standard output (/dev/stdout, or the very file stdout is), with the default name for
// stdout unless the sink was given one. It does nothing for a kind that writes no file.
func (s *Spec) SetStdout() {
	if _, ok := s.Destination(); ok {
		*s.Text(s.Kind.Output) = Stdout
		if s.AutoName {
			s.Name = s.Kind.NameOf(s.Settings)
		}
	}
}

// Reads says what the sink reads of the events beyond their JSON.
func (s Spec) Reads() Reads {
	if s.Kind == nil || s.Kind.Reads == nil {
		return Reads{}
	}
	return s.Kind.Reads(s.Settings)
}

// Compile compiles and completes the sink's settings (Kind.Compile).
func (s Spec) Compile(c Compiling) error {
	if s.Kind.Compile == nil {
		return nil
	}
	return s.Kind.Compile(s.Settings, c)
}

// Compiling is what the command line and the config file give every sink to compile
// with: the config file's formats for http sinks (name → jq program, package notify),
// --timestamps (full times in pretty lines) and --output-watch-events (templates get the
// watch event rather than the object).
type Compiling struct {
	Formats                 map[string]string
	Timestamps, WatchEvents bool
}

// Env is what a run gives every sink it builds.
type Env struct {
	Stdout   io.Writer
	Terminal Terminal // what Stdout is
	Warn     func(format string, args ...any)
	// Opened is told of every file a sink opens, for the run to close it when a later
	// sink fails, or remove it when the run never starts.
	Opened  func(File)
	Watched Watched
	Differ  *diff.Differ // nil: --no-diff
	ShowOld bool         // the previous object in JSON and jq's input (--show-old)
}

// Terminal is what the standard output is: a terminal, coloured, how wide (asked at each
// line; nil when unknown). Printed is told of a printer that prints header lines on it,
// to print them again when a notice on stderr scrolled them away.
type Terminal struct {
	Is, Color bool
	Width     func() int
	Printed   func(HeaderPrinter)
}

// HeaderPrinter prints header lines, and prints them again when asked.
type HeaderPrinter interface{ HeadersAgain() }

// Watched is what the run tells its sinks of what they are given: whether several kinds
// come (lines name the kind), the one namespace (left out on the terminal), the custom
// resources' printer columns and the clusters' names when there are several.
type Watched struct {
	ShowKind  bool
	Namespace string
	Columns   kubectl.PrinterColumns
	Clusters  []string
}

// File is a file a sink opened.
type File interface {
	Close() error
	RemoveIfUnused() // if nothing was ever written to it
}

// InvalidError is a sink whose settings cannot be built (a format the renderer does not
// know, settings that contradict each other): bad usage, unlike a file that cannot be
// opened.
type InvalidError struct {
	Sink string
	Err  error
}

func (e *InvalidError) Error() string { return fmt.Sprintf("sink %q: %v", e.Sink, e.Err) }
func (e *InvalidError) Unwrap() error { return e.Err }

// Build makes a sink's writer, as its kind says. Errors opening a file are returned as
// package sink gives them; settings that cannot be built are an *InvalidError.
func Build(s Spec, env Env) (listener.Sink, error) {
	if s.Kind == nil {
		return nil, &InvalidError{Sink: s.Name, Err: errors.New("no sink kind to build it")}
	}
	return s.Kind.Build(s, env)
}
