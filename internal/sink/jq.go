package sink

import (
	"context"
	"io"
	"strconv"
	"time"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
)

// JQ runs a jq program on each event's envelope and writes what it yields: JSON lines, or
// raw text for strings. An event for which it yields nothing, false or null is left out.
type JQ struct {
	name    string
	query   *jq.Query
	differ  *diff.Differ
	showOld bool
	raw     bool
	// escapeRaw escapes raw strings, for a terminal: they come from objects.
	escapeRaw bool
	w         io.Writer
	describe  string
	closeFn   func() error
	warn      func(format string, args ...any)

	buf      []byte
	notice   listener.Throttle // how often failing events are reported
	failures int
}

// JQOptions configure a jq sink.
type JQOptions struct {
	Name    string
	Query   *jq.Query
	Differ  *diff.Differ
	ShowOld bool
	Raw     bool
	// Terminal says Out is a terminal: raw strings are then escaped as in pretty output.
	Terminal bool
	Out      io.Writer
	Describe string       // "stdout" or "file deletions.txt"
	CloseFn  func() error // nil for stdout
	Warn     func(format string, args ...any)
}

func NewJQ(o JQOptions) *JQ {
	return &JQ{name: o.Name, notice: listener.Throttle{Period: listener.NoticeEvery}, query: o.Query, differ: o.Differ, showOld: o.ShowOld, raw: o.Raw, escapeRaw: o.Raw && o.Terminal,
		w: o.Out, describe: o.Describe, closeFn: o.CloseFn, warn: o.Warn}
}

func (s *JQ) Write(ev *event.Event) error {
	if !s.query.Selects(string(ev.Type)) {
		return listener.ErrFiltered // it would give nothing (jq/types.go)
	}
	input, err := s.query.Input(ev, s.differ, s.showOld)
	if err != nil {
		return err
	}
	outputs, err := s.query.Run(context.Background(), input)
	if err != nil {
		s.runtimeError(ev, err)
		return listener.ErrFiltered
	}
	s.buf = s.buf[:0]
	for _, v := range outputs {
		if !jq.Truthy(v) {
			continue
		}
		if str, ok := v.(string); ok && s.escapeRaw {
			s.buf = append(escape.Append(s.buf, str), '\n')
			continue
		}
		if s.buf, err = jq.AppendOutput(s.buf, v, s.raw); err != nil {
			s.runtimeError(ev, err)
			return listener.ErrFiltered
		}
	}
	if len(s.buf) == 0 {
		return listener.ErrFiltered
	}
	return writeAll(s.w, s.buf, s.describe)
}

// runtimeError reports a jq error on one event (rate-limited); the stream goes on.
func (s *JQ) runtimeError(ev *event.Event, err error) {
	s.failures++
	if !s.notice.Allow(time.Now()) {
		return
	}
	more := ""
	if s.failures > 1 {
		more = " (" + strconv.Itoa(s.failures) + " events failed so far)"
	}
	s.warn("jq sink %q: %v on %s %s %s; skipping it%s", s.name, err, ev.Type, ev.Kind, ev.Key(), more)
}

func (s *JQ) Close() error {
	if s.closeFn == nil {
		return nil
	}
	return s.closeFn()
}
