// Package top is `kubeevents top`: a live ranking of what changes the watched resources
// most over a sliding window: objects by changes per minute, fields (paths) by changes,
// field managers by writes, each with a sparkline of the window. It runs the engine's
// watch (the same types, selectors, namespaces and contexts as watch) with one sink of
// its own that counts every event (Ranking), and draws a frame every interval: redrawn
// in place on a terminal, a block of text elsewhere, or one JSON snapshot per line with
// -o json.
package top

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/episode"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/fastpath"
	"github.com/kubeevents/kubeevents/internal/listener"
)

// Config is one kubeevents top.
type Config struct {
	// Engine is what to watch (Watch, Color, ...); Run sets what top needs of the rest:
	// no configured sinks, the changes from now on, diffs on.
	Engine engine.Config
	// Window is the length of the sliding window; Interval how often a frame is drawn.
	Window, Interval time.Duration
	// JSON writes one JSON snapshot per interval instead of frames.
	JSON bool
	// Rows is the rows per section when the terminal's height does not say (off a
	// terminal, or its size unknown).
	Rows int
	// Size is the standard output's terminal size (width, height); nil when it is not a
	// terminal.
	Size func() (width, height int)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// DefaultWindow, DefaultInterval and DefaultRows are the flags' defaults.
const (
	DefaultWindow   = time.Minute
	DefaultInterval = 2 * time.Second
	DefaultRows     = 10
)

// Run runs top until ctx ends or the watch does, and returns the engine's error (bad
// usage, a failure to connect or watch; an interrupted run is none).
func Run(ctx context.Context, sys engine.System, cfg Config) error {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	ranking := NewRanking(cfg.Window, now())
	ec := cfg.Engine
	ec.Output.Sinks = nil
	ec.Events.WatchOnly = true // what exists at start-up is no change
	if ec.Output.Differ == nil {
		ec.Output.Differ = diff.NewDiffer(nil) // the fields come from the diffs
	}
	ec.Output.InProcess = append(ec.Output.InProcess, engine.InProcessSink{Name: "top", Build: func(d *diff.Differ) listener.Sink {
		return &sink{ranking: ranking, differ: d, board: episode.NewBoard()}
	}})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	terminal := cfg.Size != nil && !cfg.JSON
	d := &display{out: sys.Out, json: cfg.JSON, interval: cfg.Interval, now: now, ranking: ranking, stop: cancel,
		frame: frame{what: what(cfg.Engine), color: diag.Color(cfg.Engine.Output.Color, terminal, sys.LookupEnv), terminal: terminal,
			size: cfg.Size, rows: cfg.Rows}}
	starting := sys.Starting
	var started sync.Once
	sys.Starting = func(speed fastpath.Runtime) {
		if starting != nil {
			starting(speed)
		}
		started.Do(func() { d.start(ctx) })
	}
	_, err := engine.Run(ctx, sys, ec)
	d.finish()
	return err
}

// sink counts every event of the watch into the ranking, and follows the episodes of
// top's --on (package episode) to mark the objects in them.
type sink struct {
	ranking *Ranking
	differ  *diff.Differ
	board   *episode.Board
}

func (s *sink) Write(ev *event.Event) error {
	for _, o := range s.board.Follow(ev) {
		s.ranking.Episodes(boardObject(o), s.board.Marks(o), s.board.Open())
	}
	if ev.Type == event.Sync || ev.Related || ev.Type == event.EpisodeStep || ev.Type == event.DigestStep {
		return nil
	}
	c := Change{Time: ev.Time, Object: objectOf(ev)}
	if ev.Type == event.Modified {
		if _, paths, err := s.differ.ReadableChanges(ev); err == nil {
			c.Paths = paths
		}
	}
	if a := attribution.Of(ev, s.differ); a != nil {
		c.By = a.By
	}
	s.ranking.Add(c)
	return nil
}

func (s *sink) Close() error { return nil }

// objectOf names ev's object as a row shows it: the kind as -o name writes it
// (pod, deployment.apps).
func objectOf(ev *event.Event) ObjectID {
	o := ObjectID{Cluster: ev.Cluster, Kind: kindName(ev.Kind, ev.Resource.Group)}
	if m := ev.Meta(); m != nil {
		o.Namespace, o.Name = m.GetNamespace(), m.GetName()
	}
	return o
}

func kindName(kind, group string) string {
	kind = strings.ToLower(kind)
	if group != "" {
		kind += "." + group
	}
	return kind
}

// boardObject is an episode's object as a row names it.
func boardObject(o episode.Object) ObjectID {
	return ObjectID{Cluster: o.Cluster, Kind: kindName(o.Kind, o.Group), Namespace: o.Namespace, Name: o.Name}
}

// display draws a frame (or writes a JSON snapshot) every interval, from its own
// goroutine, once the watch has started.
type display struct {
	out      io.Writer
	json     bool
	interval time.Duration
	now      func() time.Time
	ranking  *Ranking
	frame    frame
	stop     func() // ends the run: nobody reads the output any more

	mu      sync.Mutex
	running bool
	done    chan struct{}
	quit    chan struct{}
	buf     []byte
}

func (d *display) start(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running, d.done, d.quit = true, make(chan struct{}), make(chan struct{})
	if d.frame.terminal {
		_, _ = io.WriteString(d.out, "\x1b[?25l") // no cursor blinking over the frame
	}
	go func() {
		defer close(d.done)
		t := time.NewTicker(d.interval)
		defer t.Stop()
		d.draw()
		for {
			select {
			case <-ctx.Done():
				return
			case <-d.quit:
				return
			case <-t.C:
				if !d.draw() {
					return
				}
			}
		}
	}()
}

// draw writes the frame of now; false once the output cannot be written.
func (d *display) draw() bool {
	s := d.ranking.Snapshot(d.now(), d.frame.limit())
	d.buf = d.buf[:0]
	if d.json {
		raw, err := json.Marshal(s)
		if err != nil {
			return true
		}
		d.buf = append(append(d.buf, raw...), '\n')
	} else {
		d.buf = d.frame.draw(d.buf, s)
	}
	if _, err := d.out.Write(d.buf); err != nil {
		d.stop()
		return false
	}
	return true
}

// finish stops the drawing and leaves the terminal as it was, the last frame on it.
func (d *display) finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.running {
		return
	}
	close(d.quit)
	<-d.done
	if d.frame.terminal {
		_, _ = io.WriteString(d.out, "\x1b[?25h")
	}
}

// what is the title's description of what is watched: the types as given, and where.
func what(cfg engine.Config) string {
	s := strings.Join(cfg.Watch.Types, ",")
	switch {
	case cfg.Watch.AllNamespaces:
		s += " in all namespaces"
	case cfg.Watch.NamespaceGiven:
		s += " in " + cfg.Watch.Namespace
	}
	if cfg.Watch.Context != "" {
		s += " (" + cfg.Watch.Context + ")"
	}
	return s
}
