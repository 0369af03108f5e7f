// Package sink holds the outputs a listener delivers to: the terminal (stdout), files
// (JSON Lines by default, rotated by size) and jq programs. Each sink is used by exactly
// one listener goroutine, renders each event into its own buffer and writes it with one
// Write call, so a line is never split between writers, files or rotations.
package sink

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
)

// Printer writes rendered events to w: the terminal sink, and file sinks in any format.
type Printer struct {
	w       io.Writer
	printer *render.Printer
	buf     []byte
	// closeFn flushes and closes the destination; nil for stdout, which is not ours.
	closeFn func() error
	// describe names the destination in errors: "stdout", "file events.jsonl".
	describe string
	// name and warn report a template that fails on an event (SkipFailedTemplates); with
	// warn nil such an event stops the sink.
	name     string
	warn     func(format string, args ...any)
	notice   listener.Throttle
	failures int
}

// NewPrinter makes a sink that renders with p and writes to w; closeFn (may be nil)
// runs once at Close.
func NewPrinter(w io.Writer, p *render.Printer, describe string, closeFn func() error) *Printer {
	return &Printer{w: w, printer: p, describe: describe, closeFn: closeFn}
}

// SkipFailedTemplates has an event that the sink's template (-o jsonpath=...) fails on
// left out, said on warn (at most once per listener.NoticeEvery, with the count so far),
// rather than stop the sink: as a jq sink's run-time errors, so that one object of
// unexpected shape does not end a long watch (kubectl get -w would end there). name is
// the sink's.
func (s *Printer) SkipFailedTemplates(name string, warn func(format string, args ...any)) {
	s.name, s.warn, s.notice = name, warn, listener.Throttle{Period: listener.NoticeEvery}
}

func (s *Printer) Write(ev *event.Event) error {
	var err error
	s.buf, err = s.printer.Append(s.buf[:0], ev)
	var failed *kubectl.ExecError
	if s.warn != nil && errors.As(err, &failed) {
		s.templateFailed(ev, failed)
		return listener.ErrFiltered
	}
	if err != nil {
		return err
	}
	return writeAll(s.w, s.buf, s.describe)
}

// maxTemplateError is where a template's error is cut: it may quote a part of the object.
const maxTemplateError = 300

func (s *Printer) templateFailed(ev *event.Event, err error) {
	s.failures++
	if !s.notice.Allow(time.Now()) {
		return
	}
	msg := err.Error()
	if len(msg) > maxTemplateError {
		msg = strings.ToValidUTF8(msg[:maxTemplateError], "") + "..."
	}
	more := ""
	if s.failures > 1 {
		more = " (" + strconv.Itoa(s.failures) + " events so far)"
	}
	s.warn("sink %q: the template failed on %s %s %s: %s; leaving it out%s", s.name, ev.Type, ev.Kind, escape.Append(nil, ev.Key()), escape.Append(nil, msg), more)
}

func (s *Printer) Close() error {
	if s.closeFn == nil {
		return nil
	}
	return s.closeFn()
}

// writeAll writes one rendered event. A reader that went away (EPIPE) is reported as
// listener.ErrOutputClosed, so the sink stops without a word, as `kubectl get -w | head`
// users expect.
func writeAll(w io.Writer, b []byte, describe string) error {
	if _, err := w.Write(b); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			return fmt.Errorf("%s: %w", describe, listener.ErrOutputClosed)
		}
		return fmt.Errorf("writing %s: %w", describe, unwrapPathError(err))
	}
	return nil
}

// unwrapPathError drops the "write /path:" prefix of an *os.PathError: callers name the
// file themselves.
func unwrapPathError(err error) error {
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) {
		if inner := pe.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}
