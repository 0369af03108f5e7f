// Package execsink is the exec sink kind: a command run per event, or per batch of
// events, with their JSON lines on its standard input.
package execsink

import (
	"cmp"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/sender"
)

// Defaults of an exec sink's settings.
const (
	DefaultTimeout = 30 * time.Second
	DefaultRetries = 2
)

// Kind is the exec sink kind.
var Kind = &sinkkind.Kind{
	Name: "exec", Description: "a command run per event or batch", TargetHint: ": exec=COMMAND ARGS...", AfterOptions: "then the COMMAND",
	Target: "command", TargetNoun: "a command", TargetDoc: "the command and its arguments (no shell)", NameDoc: "exec",
	Rows: []*sinkkind.Setting{
		{YAML: "command", Value: sinkkind.Text, Meta: "COMMAND", Help: "the command run with the events on its stdin", Default: "required",
			Check: func(line string) error { _, err := SplitCommand(line); return err }, ValueDoc: "a command line, split into words without a shell"},
		sender.JQ, sender.Batch(1), sender.Interval, sender.Timeout(DefaultTimeout), sender.Retries(strconv.Itoa(DefaultRetries)),
		{Flag: "concurrency", YAML: "concurrency", Value: sinkkind.Count, Meta: "N", Help: "runs at once at most; each object's events stay in order", Default: "1"},
	},
	Elsewhere: true,
	New:       func() sinkkind.Settings { return &Settings{} },
	Compile:   func(s sinkkind.Settings, _ sinkkind.Compiling) error { return s.(*Settings).Compile() },
	Check:     check,
	Reads:     func(s sinkkind.Settings) sinkkind.Reads { return sinkkind.Reads{Objects: s.(*Settings).JQ != ""} },
	Build:     build,
}

// Settings are an exec sink's: its command line (split by SplitCommand; no shell), what
// it shares with http sinks, and the runs at once at most (0: 1).
type Settings struct {
	Command string `sink:"command"`
	sender.Settings
	Concurrency int `sink:"concurrency"`
}

// check: the command can be found and run.
func check(settings sinkkind.Settings) error {
	argv, err := SplitCommand(settings.(*Settings).Command)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		var e *exec.Error
		if errors.As(err, &e) {
			err = e.Err
		}
		return fmt.Errorf("command %q: %w", argv[0], err)
	}
	return nil
}

// build makes an exec sink; a command that cannot be run (not found, not executable) is
// an error like a file that cannot be opened.
func build(spec sinkkind.Spec, env sinkkind.Env) (listener.Sink, error) {
	s := spec.Settings.(*Settings)
	argv, err := SplitCommand(s.Command)
	if err != nil {
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: err}
	}
	enc, err := s.Encoder(spec, env)
	if err != nil {
		return nil, err
	}
	return sink.NewExec(sink.ExecOptions{Name: spec.Name, Argv: argv, Batching: s.Batching(1, 0),
		Concurrency: s.Concurrency, Timeout: cmp.Or(s.Timeout, DefaultTimeout), Retries: s.RetriesOr(DefaultRetries),
		Encoder: enc, Warn: env.Warn})
}

// SplitCommand splits an exec sink's command line into words as a shell would split
// it, with no shell: words are separated by blanks, and single or double quotes keep
// blanks in a word ('\' escapes the next character outside single quotes). Nothing is
// expanded: no $VAR, no globs, no pipes. For those, ask for a shell: sh -c '...'.
func SplitCommand(line string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated ' in the command; close it")
			}
			word.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`+"`", line[i+1]) >= 0 {
					i++
				}
				word.WriteByte(line[i])
			}
			if i == len(line) {
				return nil, errors.New(`unterminated " in the command; close it`)
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inWord = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}
