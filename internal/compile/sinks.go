package compile

import (
	"os"
	"slices"
	"time"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// screenKind is the kind of the default sink on stdout, whose format -o sets; --jq makes
// a jq sink in its place.
const screenKind = "terminal"

// SinkFlags are what the command line says about the sinks, besides the config file.
type SinkFlags struct {
	Specs []string // --sink values
	// Output is -o, the terminal's format; OutputGiven says -o was given explicitly.
	Output      string
	OutputGiven bool
	JQ          string // --jq: the standard output's stream through an expression
	Raw         bool   // -r
	NoScreen    bool   // --no-screen: nothing on stdout
	// Buffer, OnFull and Resync are the flags' defaults for every sink; each *Given says
	// the flag was given, which then beats the config file's defaults.
	Buffer      int
	BufferGiven bool
	OnFull      string
	OnFullGiven bool
	Resync      time.Duration
	ResyncGiven bool
	// Stdout is the process's standard output, to recognise a path that names it.
	Stdout *os.File
}

// Sinks gathers the sinks of the config file (nil for none) and of the command
// line, applies the defaults, and adds the terminal sink ("screen", or --jq's) unless
// another sink already writes to stdout or --no-screen is given. The command line decides
// what goes to stdout, as flags beat config files in kubectl. Every error is bad usage.
func Sinks(file *config.File, cl SinkFlags) ([]sinkkind.Spec, error) {
	onFull, onFullErr := listener.ParsePolicy(cl.OnFull)
	defaults := config.Defaults{Buffer: cl.Buffer, OnFull: onFull, Resync: cl.Resync}
	if file != nil {
		if !cl.BufferGiven && file.Defaults.Buffer != 0 {
			defaults.Buffer = file.Defaults.Buffer
		}
		if !cl.OnFullGiven && !file.Defaults.OnFull.IsZero() {
			defaults.OnFull, onFullErr = file.Defaults.OnFull, nil
		}
		if !cl.ResyncGiven && file.Defaults.Resync != 0 {
			defaults.Resync = file.Defaults.Resync
		}
	}
	if onFullErr != nil {
		return nil, diag.Usagef("--on-full: %v", onFullErr)
	}
	if defaults.Buffer < 1 || defaults.Buffer > sinkkind.MaxBuffer {
		return nil, diag.Usagef("--buffer %d: give a number of events from 1 to %d", defaults.Buffer, sinkkind.MaxBuffer)
	}
	if defaults.Resync != 0 && defaults.Resync < sinkkind.MinResync {
		return nil, diag.Usagef("--resync %s: use 0 (never) or at least %s", defaults.Resync, sinkkind.MinResync)
	}

	var fileSinks, flagSinks []sinkkind.Spec
	if file != nil {
		for _, s := range file.Sinks {
			fileSinks = append(fileSinks, s.Clone())
		}
	}
	for _, spec := range cl.Specs {
		s, err := config.ParseSinkSpec(spec)
		if err != nil {
			return nil, diag.Usage(err)
		}
		flagSinks = append(flagSinks, s)
	}
	for _, list := range [][]sinkkind.Spec{fileSinks, flagSinks} {
		for i := range list {
			if err := cl.completeStdout(&list[i]); err != nil {
				return nil, err
			}
		}
	}
	fileSinks, err := cl.stdoutFromCommandLine(fileSinks, flagSinks)
	if err != nil {
		return nil, err
	}
	sinks := append(fileSinks, flagSinks...)
	if !cl.NoScreen && !slices.ContainsFunc(sinks, sinkkind.Spec.WritesStdout) {
		sinks = append([]sinkkind.Spec{cl.screen()}, sinks...)
	}
	if len(sinks) == 0 {
		return nil, diag.Usagef("--no-screen leaves no sink to write to; add one, e.g. --sink file=events.jsonl")
	}
	for i := range sinks {
		sinks[i] = defaults.Apply(sinks[i])
		if f := sinks[i].Text("format"); sinks[i].Kind.Name == screenKind && *f == "" {
			*f = cl.Output
		}
	}
	config.AssignNames(sinks)
	if err := config.CheckNames(sinks); err != nil {
		return nil, diag.Usage(err)
	}
	return sinks, nil
}

// screen is the sink on stdout when no other writes there: the terminal's, or --jq's
// (-r: raw).
func (cl SinkFlags) screen() sinkkind.Spec {
	k, _ := sinkkind.Lookup(screenKind)
	s, origin := sinkkind.New(k), "the standard output"
	if cl.JQ != "" {
		k, _ = sinkkind.Lookup("jq")
		s, origin = sinkkind.New(k), "--jq"
		raw, _ := k.Row("raw")
		s.Set(k.TargetRow(), sinkkind.Value{Text: cl.JQ})
		s.Set(raw, sinkkind.Value{On: cl.Raw})
	}
	s.Name, s.AutoName, s.Origin = "screen", true, origin
	return s
}

// stdoutFromCommandLine lets the command line decide what goes to stdout: when it says
// (--jq, --no-screen, a --sink that writes to stdout), the config file's sinks that write
// to stdout are left out; an explicit -o sets the format of the file's terminal sinks and
// leaves out its other stdout sinks. It returns the config file's sinks that stay.
func (cl SinkFlags) stdoutFromCommandLine(fileSinks, flagSinks []sinkkind.Spec) ([]sinkkind.Spec, error) {
	flagStdout := slices.ContainsFunc(flagSinks, sinkkind.Spec.WritesStdout)
	switch {
	case cl.NoScreen && flagStdout:
		for _, s := range flagSinks {
			if s.WritesStdout() {
				return nil, diag.Usagef("--no-screen turns off the standard output stream, but %s writes to it; drop one of them", s.Origin)
			}
		}
	case cl.NoScreen && cl.JQ != "":
		return nil, diag.Usagef("--no-screen turns off the standard output stream that --jq filters; drop one of them")
	case cl.NoScreen && cl.OutputGiven:
		return nil, diag.Usagef("--no-screen turns off the standard output stream whose format -o sets; drop one of them")
	case cl.JQ != "" && flagStdout:
		return nil, diag.Usagef("--jq filters the standard output stream, but a sink already writes to stdout; put the expression into that sink instead")
	case cl.OutputGiven && flagStdout:
		// -o is the terminal sink's format; a --sink of another kind that writes to stdout
		// replaces that sink, and would leave -o changing nothing.
		for _, s := range flagSinks {
			if s.WritesStdout() && s.Kind.Name != screenKind {
				return nil, diag.Usagef("-o sets the format of the terminal stream, but %s writes to stdout in its place; give that sink its format (e.g. --sink 'file(format=json)=-') and drop -o", s.Origin)
			}
		}
	}
	var kept []sinkkind.Spec
	for _, s := range fileSinks {
		switch {
		case !s.WritesStdout():
		case cl.NoScreen || cl.JQ != "" || flagStdout:
			continue
		case cl.OutputGiven:
			if s.Kind.Name != screenKind {
				continue
			}
			*s.Text("format") = cl.Output
		}
		kept = append(kept, s)
	}
	return kept, nil
}

// completeStdout makes the path a sink writes to (a file sink's path, a jq sink's output)
// Stdout when it names the standard output ("-", /dev/stdout, or the very file stdout
// is), so that it is written as stdout: once, by one sink, never rotated or renamed.
func (cl SinkFlags) completeStdout(s *sinkkind.Spec) error {
	path, ok := s.Destination()
	if !ok || path == "" || !cl.isStdout(path) {
		return nil
	}
	if s.Kind.ToStdout != nil {
		if err := s.Kind.ToStdout(*s, path); err != nil {
			return diag.Usage(err)
		}
	}
	s.SetStdout()
	return nil
}

// isStdout reports whether path names the standard output: "-", /dev/stdout (or
// /dev/fd/1, /proc/self/fd/1), or any path to the file or pipe stdout is. A device
// (/dev/null, as under cron or nohup) is not: two writers of one device are harmless.
func (cl SinkFlags) isStdout(path string) bool {
	switch path {
	case sinkkind.Stdout, "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	if cl.Stdout == nil {
		return false
	}
	outInfo, err := cl.Stdout.Stat()
	if err != nil || outInfo.Mode()&os.ModeDevice != 0 {
		return false
	}
	info, err := os.Stat(path)
	return err == nil && os.SameFile(info, outInfo)
}
