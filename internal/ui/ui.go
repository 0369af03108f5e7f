// Package ui is the full-screen live view of `kubeevents watch --ui`: a table of the
// watched objects as they are now, redrawn in place on the terminal's alternate screen,
// with what just changed highlighted, each object's recent history (its changes and
// their diffs, its Events) and its YAML a key away.
//
// The view is a sink like the others (View implements listener.Sink): its listener
// hands it the events on its own goroutine, and Write only records them in a store (the
// newest state of each object and its last changes, rendered as the stream would print
// them), which never waits for the terminal. The terminal is drawn by bubbletea on its
// own goroutine, from the store, at most 20 times a second (frameEvery) and only when
// something changed, however many events come; while changes keep coming, at most 4
// times a second (frameEveryBusy). A slow terminal holds up nothing but itself, and the
// cost of drawing does not grow with the event rate.
//
// Nothing in it grows without bound: a deleted object goes a few seconds after its
// deletion (strikeFor), every history holds the last Options.History changes, and the
// diagnostics held back while the view has the screen are capped (noticesKept).
package ui

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/render"
)

// DefaultHistory is how many changes of each object the view keeps, when
// Options.History is not set.
const DefaultHistory = 50

// An entry of a history keeps at most these many lines (the event's and its diff's)
// and bytes: one change of a large object cannot hold much memory.
const (
	entryLines = 60
	entryBytes = 16 << 10
)

// Options configure a View.
type Options struct {
	// Out is the terminal the view takes (the standard output); In is where keys come
	// from, nil for the standard input (or the controlling terminal when the standard
	// input is not one).
	Out io.Writer
	In  io.Reader
	// Color: colours, highlights and text attributes; without (--color never,
	// NO_COLOR, TERM=dumb), the view writes no attribute at all (no SGR sequence), and
	// a marker column shows the selected row and the rows new, changed or deleted.
	Color bool
	// Wide shows kubectl's -o wide columns.
	Wide bool
	// Timestamps prints full RFC 3339 times in the histories.
	Timestamps bool
	// Watched says what is watched, for the top line ("pods in shop").
	Watched string
	// Clusters are the clusters' names when several are watched: a CLUSTER column.
	Clusters []string
	// Namespace is the one namespace watched ("" for several or all): without it, a
	// NAMESPACE column.
	Namespace string
	// Kinds are the kinds watched, in the order given: one table each, in that order.
	Kinds []schema.GroupKind
	// Owned draws the owner tree of the followed object (--owned), its rollout on top.
	Owned bool
	// History is how many changes of each object are kept (DefaultHistory if 0).
	History int
	// Differ computes what changed, for the histories; nil: no diffs (--no-diff).
	Differ *diff.Differ
	// PrinterColumns are the watched custom resources' columns.
	PrinterColumns kubectl.PrinterColumns
	// Quit is called when the person at the terminal quits (q, Ctrl-C): the run is to
	// stop as Ctrl-C stops a stream. The view has left the screen by then.
	Quit func()
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

func (o *Options) showKind() bool { return len(o.Kinds) > 1 }

// View is the full-screen view and the sink that feeds it. Write and Close are the
// sink's (one goroutine, the listener's); Start, Stop and Err may be called from any.
type View struct {
	opts    Options
	now     func() time.Time
	store   *store
	notices *notices

	// The sink's goroutine only: the histories' lines are rendered as the stream's.
	printer *render.Printer
	buf     []byte

	// The terminal's goroutine only.
	kubectlTable *kubectl.Table
	kindOrder    map[schema.GroupKind]int

	width atomic.Int64 // the terminal's width, for the histories' diffs

	// programOptions are more options for the program (tests: no terminal).
	programOptions []tea.ProgramOption

	mu      sync.Mutex
	model   *model
	program *tea.Program
	done    chan struct{} // closed once the program ended and the terminal is restored
	err     error
	stopped bool
}

// New makes the view; Start puts it on the screen.
func New(o Options) (*View, error) {
	if o.History <= 0 {
		o.History = DefaultHistory
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	format := render.FormatPretty
	if o.Wide {
		format = render.FormatWide
	}
	v := &View{opts: o, now: now, store: newStore(o.History, strikeFor), kindOrder: map[schema.GroupKind]int{}}
	v.width.Store(80)
	var err error
	v.printer, err = render.NewPrinter(render.Options{Format: format, Color: o.Color, Timestamps: o.Timestamps,
		Diff: o.Differ, Namespace: o.Namespace, PrinterColumns: o.PrinterColumns,
		TerminalWidth: func() int { return int(v.width.Load()) }})
	if err != nil {
		return nil, err
	}
	if v.kubectlTable, err = kubectl.NewTable(o.PrinterColumns, o.Wide); err != nil {
		return nil, err
	}
	for i, k := range o.Kinds {
		if _, seen := v.kindOrder[k]; !seen {
			v.kindOrder[k] = i
		}
	}
	v.notices = &notices{now: now, out: io.Discard}
	return v, nil
}

// Diagnostics returns the writer the run's diagnostics (its stderr lines) go through:
// the view shows the latest on its bottom line. When stderr is the terminal the view
// takes, lines written while the view has the screen are held back and printed once it
// has left it; otherwise they go straight through.
func (v *View) Diagnostics(stderr io.Writer, stderrIsTerminal bool) io.Writer {
	v.notices.mu.Lock()
	v.notices.out = stderr
	v.notices.mu.Unlock()
	v.notices.holdWhileShown = stderrIsTerminal
	return v.notices
}

// Write records one event; it never waits for the terminal.
func (v *View) Write(ev *event.Event) error {
	var text string
	if ev.Type != event.Sync {
		var err error
		v.buf, err = v.printer.Append(v.buf[:0], ev)
		if err != nil {
			text = string(ev.Type) + "  (cannot be shown: " + err.Error() + ")\n"
		} else {
			text = bounded(v.buf)
		}
	}
	v.store.apply(ev, text)
	return nil
}

// bounded is an event's lines, cut to entryLines and entryBytes.
func bounded(b []byte) string {
	n, cut := 0, len(b)
	for i, c := range b {
		if c == '\n' {
			n++
			if n == entryLines {
				cut = i + 1
				break
			}
		}
	}
	cut = min(cut, entryBytes)
	if cut == len(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b[:cut]), "") + "          … (cut)\n"
}

// Close leaves the screen (the run is over); the sink's end.
func (v *View) Close() error {
	v.Stop()
	return nil
}

// Start puts the view on the screen and runs it until the person quits or Stop. An
// error of the terminal is returned by Err once it ended (the run is stopped through
// Options.Quit then).
func (v *View) Start() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.program != nil || v.stopped {
		return
	}
	opts := []tea.ProgramOption{tea.WithOutput(v.opts.Out), tea.WithFPS(int(time.Second / frameEvery)),
		// The process has its own handling of SIGINT and SIGTERM: they stop the run,
		// whose end stops the view. Ctrl-C typed at the view is a key (raw mode).
		tea.WithoutSignalHandler()}
	if v.opts.In != nil {
		opts = append(opts, tea.WithInput(v.opts.In))
	}
	if !v.opts.Color {
		// The renderer drops every style, should one be drawn: no SGR sequence at all.
		opts = append(opts, tea.WithColorProfile(colorprofile.NoTTY))
	}
	opts = append(opts, v.programOptions...)
	m := newModel(v)
	v.model = m
	v.program = tea.NewProgram(m, opts...)
	v.done = make(chan struct{})
	if v.notices.holdWhileShown {
		v.notices.holdBack()
	}
	go func() {
		_, err := v.program.Run()
		v.notices.release()
		if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
			v.mu.Lock()
			v.err = err
			v.mu.Unlock()
			if !m.quitting && v.opts.Quit != nil {
				v.opts.Quit() // the run cannot go on without its screen
			}
		}
		close(v.done)
	}()
}

// stopWithin is how long Stop waits for the terminal to be restored before it kills
// the program (which restores it without a last frame).
const stopWithin = 5 * time.Second

// Stop leaves the screen, restoring the terminal (main screen, cursor shown), and prints
// the diagnostics held back meanwhile. It may be called more than once.
func (v *View) Stop() {
	v.mu.Lock()
	v.stopped = true
	p, done := v.program, v.done
	v.mu.Unlock()
	if p == nil {
		v.notices.release()
		return
	}
	go p.Quit()
	select {
	case <-done:
	case <-time.After(stopWithin):
		p.Kill()
		<-done
	}
}

// Err is the terminal's error that ended the view early, if any.
func (v *View) Err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}

// Part is the view as a part of a run: it takes the screen when the stream starts (the
// start line goes to its bottom line), and leaves it once the stream ended, before the
// summary is printed; its error is the terminal's, if it failed.
func (v *View) Part() pipeline.Part { return viewPart{v} }

type viewPart struct{ v *View }

func (p viewPart) Start(context.Context) error { p.v.Start(); return nil }
func (viewPart) Synced()                       {}
func (p viewPart) Stop() error                 { p.v.Stop(); return p.v.Err() }
