package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/fold"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// The noise reducers of a run: the named transitions (--on, the sinks' on=; package
// transition), the http sinks' formats (package notify) and rollout folding
// (--fold-rollouts, the sinks' fold; package fold).

// compileSignal compiles the transitions the run names and the http sinks' formats, so
// that a name that does not exist or a program that does not compile is said before
// anything connects.
func (w *session) compileSignal() error {
	catalog, err := transition.NewCatalog(w.cfg.Transitions)
	if err != nil {
		return diag.Usagef("transitions: %v", err)
	}
	var names []string
	add := func(where string, list []string) error {
		for _, name := range list {
			if _, err := catalog.Lookup(name); err != nil {
				return diag.Usagef("%s: %v", where, err)
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		return nil
	}
	if err := add("--on", w.cfg.On); err != nil {
		return err
	}
	for _, s := range w.cfg.Sinks {
		if err := add(fmt.Sprintf("sink %q: on", s.Name), sinkOn(s)); err != nil {
			return err
		}
	}
	if len(names) > 0 {
		if w.transitions, err = catalog.Compile(names, w.warnf); err != nil {
			return diag.Usage(err)
		}
	}
	formats, err := notify.NewCatalog(w.cfg.Formats)
	if err != nil {
		return diag.Usagef("formats: %v", err)
	}
	w.formats = map[string]*notify.Compiled{}
	for _, s := range w.cfg.Sinks {
		if s.Type != config.KindHTTP {
			continue
		}
		if err := config.CheckHTTP(s); err != nil {
			return diag.Usagef("sink %q: %v", s.Name, err)
		}
		if s.Format == "" {
			continue
		}
		f, err := formats.Lookup(s.Format)
		if err != nil {
			return diag.Usagef("sink %q: %v", s.Name, err)
		}
		if w.formats[s.Name], err = f.Compile(); err != nil {
			return diag.Usagef("sink %q: %v", s.Name, err)
		}
	}
	return nil
}

// sinkOn is a sink's on= as a list.
func sinkOn(s config.Sink) []string {
	if s.On == "" {
		return nil
	}
	return strings.Split(s.On, "|")
}

// transitionsSkip is the informers' Skip for the transitions (nil when the run names
// none): it says in each event which happened, before the event is numbered, and with
// --on leaves out the events in which none of its own did.
func transitionsSkip(set *transition.Set, only []string) func(*event.Event) bool {
	if set == nil {
		return nil
	}
	return func(ev *event.Event) bool {
		ev.On = set.Eval(ev)
		return len(only) > 0 && !slices.ContainsFunc(ev.On, func(name string) bool { return slices.Contains(only, name) })
	}
}

// filter is what sink s writes of the stream, and whether it folds rollouts.
func (w *session) filter(s config.Sink) sink.Filter {
	folds := w.cfg.FoldRollouts
	if s.Fold != nil {
		folds = *s.Fold
	}
	f := sink.Filter{EventTypes: s.EventTypes, On: sinkOn(s), Fold: folds}
	if w.transitions != nil {
		// The run evaluates the transitions every sink names, once per event; each sink
		// names in its events only those it asked for, or --on's.
		// Not nil even when empty: nil would name every transition.
		f.Shows = append([]string{}, f.On...)
		if len(f.Shows) == 0 {
			f.Shows = append(f.Shows, w.cfg.On...)
		}
	}
	return f
}

// newFolder is the run's Folder when some of its listeners fold rollouts (nil
// otherwise): it hands them the ROLLOUT lines and the events a failed rollout unfolds.
func newFolder(folding []*listener.Listener) *fold.Folder {
	if len(folding) == 0 {
		return nil
	}
	return fold.New(fold.Options{Deliver: func(ev *event.Event) {
		for _, l := range folding {
			l.Add(ev)
		}
	}})
}

// buildFoldInformers builds c's informers of the workloads whose rollouts fold, one per
// type and namespace watched, which tell the Folder alone: they are no part of the
// stream, number nothing and count against no limit.
func (r *run) buildFoldInformers(c *clusterRun, fatal func(error)) error {
	if r.cfg.Folder == nil {
		return nil
	}
	namespaces := c.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	for _, res := range fold.Workloads {
		for _, ns := range namespaces {
			inf, err := informer.New(res, c.Clients, informer.Options{Cluster: c.Name, Namespace: ns,
				NoFastPaths: r.cfg.NoFastPaths, Warn: c.warn, Fatal: fatal},
				[]informer.Registration{{Receiver: r.cfg.Folder.Observer()}})
			if err != nil {
				return err
			}
			c.folding = append(c.folding, inf)
			c.informers = append(c.informers, inf)
		}
	}
	return nil
}

// foldError says that an informer of --fold-rollouts' own could not watch.
type foldError struct{ err error }

func (e *foldError) Error() string { return "--fold-rollouts: " + e.err.Error() }
func (e *foldError) Unwrap() error { return e.err }

// chainMade is an informer's Made that calls a, when set, then b.
func chainMade(a, b func(*event.Event)) func(*event.Event) {
	if a == nil {
		return b
	}
	return func(ev *event.Event) { a(ev); b(ev) }
}
