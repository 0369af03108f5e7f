// Package recordtest is a sink kind for tests: a sink of it records the events it is
// given under its target's name, for Recorded. No product code registers it; a test does,
// with sinkkind.Register(recordtest.Kind), which is all a new kind takes besides its own
// package.
package recordtest

import (
	"sync"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// Kind is the recordtest sink kind: recordtest(opt=N)=NAME records at most N events
// (0: all) under NAME.
var Kind = &sinkkind.Kind{
	Name: "recordtest", Description: "a recording in memory, for tests", TargetHint: ": recordtest=NAME", AfterOptions: "then the recording's NAME",
	Target: "target", TargetNoun: "a name", TargetDoc: "the recording's name", NameDoc: "recordtest",
	Rows: []*sinkkind.Setting{
		{YAML: "target", Value: sinkkind.Text, Meta: "NAME", Help: "the recording the events go to", Default: "required"},
		{Flag: "opt", YAML: "opt", Value: sinkkind.Count, Meta: "N", Help: "events recorded at most", Default: "0: all"},
	},
	Elsewhere: true,
	New:       func() sinkkind.Settings { return &Settings{} },
	Build: func(spec sinkkind.Spec, _ sinkkind.Env) (listener.Sink, error) {
		s := spec.Settings.(*Settings)
		return &recorder{name: s.Target, limit: s.Opt}, nil
	},
}

// Settings are a recordtest sink's.
type Settings struct {
	Target string `sink:"target"`
	Opt    int    `sink:"opt"`
}

var recordings = struct {
	sync.Mutex
	m map[string][]*event.Event
}{m: map[string][]*event.Event{}}

// Recorded returns the events the sinks recording under name were given.
func Recorded(name string) []*event.Event {
	recordings.Lock()
	defer recordings.Unlock()
	return recordings.m[name]
}

type recorder struct {
	name  string
	limit int
}

func (r *recorder) Write(ev *event.Event) error {
	recordings.Lock()
	defer recordings.Unlock()
	if r.limit > 0 && len(recordings.m[r.name]) >= r.limit {
		return listener.ErrFiltered
	}
	recordings.m[r.name] = append(recordings.m[r.name], ev)
	return nil
}

func (r *recorder) Close() error { return nil }
