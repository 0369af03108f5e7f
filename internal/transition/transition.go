// Package transition holds the named transitions of --on and of a sink's on=: each a jq
// program over an event's envelope, which sees the previous state of the object as "old"
// and the new one as "object", and is true when something worth telling happened between
// the two (a container entered CrashLoopBackOff, a node stopped being Ready, a rollout
// failed). The shipped ones are files of this package (shipped/NAME.jq), printed by
// `kubeevents on NAME`; the config file adds more, or replaces shipped ones by name.
//
// A run evaluates the transitions named anywhere (--on, the sinks' on=) once per event,
// as it is made and before it is numbered (Set.Eval): the event's On lists those that
// happened, every sink shows them, and --on and on= keep the events whose On names one
// of theirs.
package transition

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kubeevents/kubeevents/internal/catalog"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
)

//go:embed shipped/*.jq
var shippedFiles embed.FS

// shippedOrder is the order `kubeevents on` lists the shipped transitions in: a pod's
// troubles, readiness, then workloads' and any object's changes. Every file of shipped/
// is in it (TestShippedOrderNamesEveryFile).
var shippedOrder = []string{"crashloop", "oomkilled", "image-pull", "evicted", "failed", "not-ready", "ready",
	"restarted", "rollout-failed", "rollout-complete", "degraded", "stalled", "scaled", "image-changed", "deleted"}

// Transition is one named transition.
type Transition struct {
	Name string
	// Program is the jq program, its comment lines included, as `kubeevents on NAME`
	// prints it.
	Program string
	// Description is its first comment line, without the "# ".
	Description string
	// Shipped is false for one the config file defines.
	Shipped bool
}

// CheckName reports a name a transition cannot have.
func CheckName(name string) error { return catalog.CheckName("transition", name) }

// Catalog is the transitions a run knows: the shipped ones, and the config file's,
// which replace shipped ones of the same name.
type Catalog struct {
	*catalog.Catalog[Transition]
}

var kind = &catalog.Kind[Transition]{Noun: "transition", Lister: "kubeevents on", Files: shippedFiles, Dir: "shipped",
	Order: shippedOrder, Check: CheckName, Name: func(t Transition) string { return t.Name },
	Make: func(name, program string, shipped bool) (Transition, error) {
		return Transition{Name: name, Program: program, Description: catalog.Description(program), Shipped: shipped}, nil
	}}

// Shipped is the catalog of the shipped transitions alone.
func Shipped() *Catalog { return &Catalog{kind.Shipped()} }

// NewCatalog is the shipped transitions and the user's (name → jq program): the user's
// replace shipped ones of the same name and come after them in name order otherwise.
// A bad name is an error; programs are compiled by Compile.
func NewCatalog(user map[string]string) (*Catalog, error) {
	c, err := catalog.New(kind, user)
	if err != nil {
		return nil, err
	}
	return &Catalog{c}, nil
}

// Set is the transitions a run evaluates, compiled.
type Set struct {
	names   []string
	queries []*jq.Query
	warn    func(format string, args ...any)

	mu       sync.Mutex
	notice   listener.Throttle // how often failing runs are reported
	failures int
}

// Compile compiles the named transitions (each once, in the catalog's order). An unknown
// name or a program that does not compile is an error naming the transition.
func (c *Catalog) Compile(names []string, warn func(format string, args ...any)) (*Set, error) {
	s := &Set{warn: warn, notice: listener.Throttle{Period: listener.NoticeEvery}}
	if s.warn == nil {
		s.warn = func(string, ...any) {}
	}
	for _, name := range names {
		if _, err := c.Lookup(name); err != nil {
			return nil, err
		}
	}
	for _, t := range c.List() {
		if !slices.Contains(names, t.Name) {
			continue
		}
		q, err := jq.Compile(t.Program)
		if err != nil {
			return nil, fmt.Errorf("transition %q: %v", t.Name, err)
		}
		s.names = append(s.names, t.Name)
		s.queries = append(s.queries, q)
	}
	return s, nil
}

// WarnTo says where failing programs are reported from now on (Compile's warn until
// then): the run's diagnostics, which a full-screen view may take over. Call it before
// Eval is.
func (s *Set) WarnTo(warn func(format string, args ...any)) {
	if warn != nil {
		s.warn = warn
	}
}

// Reads reports whether one of the set's programs reads the envelope's key (jq.Query.Reads):
// the run computes an object's health only when something reads it.
func (s *Set) Reads(key string) bool {
	return s != nil && slices.ContainsFunc(s.queries, func(q *jq.Query) bool { return q.Reads(key) })
}

// Names lists the transitions the set evaluates.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Eval returns the names of the transitions that happened in ev, in the set's order; nil
// when none did. Each program sees ev's envelope with the previous object as "old"
// (whatever --show-old says) and no diff. A program that fails on an event counts as
// false there, said at most once per listener.NoticeEvery. Safe for concurrent use (the
// informers of every watched type call it).
func (s *Set) Eval(ev *event.Event) []string {
	var on []string
	for i, q := range s.queries {
		if !q.Selects(string(ev.Type)) {
			continue
		}
		if s.happened(q, ev, s.names[i]) {
			on = append(on, s.names[i])
		}
	}
	return on
}

func (s *Set) happened(q *jq.Query, ev *event.Event, name string) bool {
	input, err := q.Input(ev, nil, true)
	if err == nil {
		var outs []any
		if outs, err = q.Run(context.Background(), input); err == nil {
			return slices.ContainsFunc(outs, jq.Truthy)
		}
	}
	s.failed(ev, name, err)
	return false
}

// failed says that a program failed on an event: at most once per NoticeEvery, with the
// count so far.
func (s *Set) failed(ev *event.Event, name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	if !s.notice.Allow(time.Now()) {
		return
	}
	more := ""
	if s.failures > 1 {
		more = fmt.Sprintf(" (%d failures so far)", s.failures)
	}
	s.warn("transition %q: jq: %v on %s %s %s; taken as not happened%s", name, err, ev.Type, ev.Kind, ev.Key(), more)
}
