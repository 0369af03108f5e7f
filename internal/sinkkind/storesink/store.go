// Package storesink is the store sink kind: every event kept in a history store (package
// store), one SQLite file that get --at, history --store and replay --store read.
package storesink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/store"
)

// Kind is the store sink kind.
var Kind = &sinkkind.Kind{
	Name: "store", Description: "a history store: one SQLite file, for get --at and history", TargetHint: ": store=PATH",
	AfterOptions: "then the store's PATH",
	Target:       "path", TargetNoun: "a path", TargetDoc: "the store's path", NameDoc: "the file's base name",
	Rows: []*sinkkind.Setting{
		{YAML: "path", Value: sinkkind.Path, Meta: "PATH", Help: "the store written (created if it does not exist)", Default: "required", Place: sinkkind.AfterName},
		{Flag: "max-age", YAML: "maxAge", Value: sinkkind.Text, Meta: "AGE", Help: "drop the versions superseded longer ago than this (every object's state since stays whole)",
			Default: "keep all", Check: func(s string) error { _, err := store.ParseAge(s); return err }, ValueDoc: "a duration: 14d, 36h, 90m"},
		{Flag: "max-size", YAML: "maxSize", Value: sinkkind.Text, Meta: "SIZE", Help: "keep the file and its log within this size, within 5%, the oldest versions dropped first",
			Default: "no limit", Check: func(s string) error { _, err := store.ParseSize(s); return err }, ValueDoc: "a size: 5GiB, 500MiB, 2G"},
	},
	Elsewhere: true,
	Output:    "path",
	New:       func() sinkkind.Settings { return &Settings{} },
	DefaultName: func(s sinkkind.Settings) string {
		return filepath.Base(s.(*Settings).Path)
	},
	ToStdout: func(spec sinkkind.Spec, path string) error {
		return fmt.Errorf("sink %q: %s is the standard output, and a store is a file SQLite writes in place; give it a file's path", spec.Name, path)
	},
	Check: check,
	Build: build,
}

// Settings are a store sink's: its file, and its retention (as the user wrote them;
// "": none).
type Settings struct {
	Path    string `sink:"path"`
	MaxAge  string `sink:"max-age"`
	MaxSize string `sink:"max-size"`
}

// options are the Writer's options the settings give.
func (s *Settings) options(warn func(string, ...any)) (store.Options, error) {
	opts := store.Options{Warn: warn}
	var err error
	if s.MaxAge != "" {
		if opts.MaxAge, err = store.ParseAge(s.MaxAge); err != nil {
			return opts, fmt.Errorf("max-age: %w", err)
		}
	}
	if s.MaxSize != "" {
		if opts.MaxSize, err = store.ParseSize(s.MaxSize); err != nil {
			return opts, fmt.Errorf("max-size: %w", err)
		}
	}
	return opts, nil
}

// check (config validate): the file is a store, or can be made one, and no other
// kubeevents writes it.
func check(settings sinkkind.Settings) error {
	s := settings.(*Settings)
	opts, err := s.options(nil)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(s.Path)
	w, err := store.Create(context.Background(), s.Path, opts)
	if err != nil {
		if errors.Is(statErr, os.ErrNotExist) {
			removeStore(s.Path)
		}
		return err
	}
	err = w.Close(context.Background())
	if errors.Is(statErr, os.ErrNotExist) {
		removeStore(s.Path) // it was checked, not asked for yet
	}
	return err
}

// build opens the store: a file that is not a store is bad usage, as every command
// that reads one refuses it; a store another kubeevents writes, or a file that cannot
// be opened, fails the sink as a file sink's file does.
func build(spec sinkkind.Spec, env sinkkind.Env) (listener.Sink, error) {
	s := spec.Settings.(*Settings)
	opts, err := s.options(env.Warn)
	if err != nil {
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: err}
	}
	_, statErr := os.Stat(s.Path)
	w, err := store.Create(context.Background(), s.Path, opts)
	var notStore *store.NotStoreError
	switch {
	case errors.As(err, &notStore):
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: err}
	case err != nil:
		return nil, err
	}
	out := &storeSink{path: s.Path, w: w, differ: env.Differ, created: errors.Is(statErr, os.ErrNotExist),
		settle: func(*event.Event, error) {}, stop: func(error) {}}
	if env.Opened != nil {
		env.Opened(out)
	}
	return out, nil
}

// storeSink writes each event's line, as a file sink writes it, to the store. Its
// Writer commits a transaction every store.BatchInterval at most (and when idle, by a
// timer): an event counts as delivered, and so as written for the checkpoint, only once
// it is committed.
type storeSink struct {
	path    string
	differ  *diff.Differ // the diff, as a file sink writes it (nil: --no-diff)
	created bool         // the file did not exist before

	mu      sync.Mutex // the Writer, held and the fields below
	w       *store.Writer
	line    []byte
	held    []*event.Event // written, not committed yet, in order
	settled uint64         // Writer.Committed() when held[0] came
	timer   *time.Timer    // the idle commit, while events are pending
	err     error          // the failure that stopped the sink; reported says Write returned it
	closed  bool
	settle  func(ev *event.Event, err error)
	stop    func(err error) // the listener's: the sink out of service, said at once

	reported bool
}

// Hold implements listener.Holder.
func (s *storeSink) Hold(settle func(ev *event.Event, err error)) { s.settle = settle }

// StopWith implements listener.Stopper: a commit that fails while events pause is said
// at once, not with the next event.
func (s *storeSink) StopWith(stop func(err error)) { s.stop = stop }

// Write adds ev to the open transaction; it is settled once committed.
func (s *storeSink) Write(ev *event.Event) error {
	switch ev.Type {
	case event.Added, event.Modified, event.Deleted, event.Sync:
	default:
		return listener.ErrFiltered // ROLLOUT lines are the terminal's; the store keeps the objects' versions
	}
	// Without the previous object (--show-old): it is the version stored before.
	line, err := render.AppendEnvelopeWithDiff(s.line[:0], ev, s.differ, false)
	if err != nil {
		return err
	}
	s.line = line
	var done []*event.Event
	s.mu.Lock()
	if s.err != nil {
		err = s.err
		s.reported = true
		s.mu.Unlock()
		return err
	}
	s.held = append(s.held, ev)
	err = s.w.WriteEvent(context.Background(), s.eventOf(ev, line))
	done, lost := s.committedLocked(err)
	if err == nil && s.timer == nil {
		s.timer = time.AfterFunc(store.BatchInterval, s.idle)
	}
	if err != nil {
		s.reported = true
	}
	s.mu.Unlock()
	s.settleAll(done, lost, err)
	return err
}

// eventOf is what the store keeps of ev, whose line is line: what the line says, taken
// from the event rather than parsed back.
func (s *storeSink) eventOf(ev *event.Event, line []byte) store.Event {
	object, _ := ev.ObjectJSON() // the bytes in line: encoded once, without error then
	var managers []string
	if by := attribution.Of(ev, s.differ); by != nil {
		for _, e := range by.By {
			managers = append(managers, e.Manager)
		}
	}
	return store.Event{Type: ev.Type, Time: ev.Time, Seq: ev.Seq, Cluster: ev.Cluster, Resource: ev.Resource,
		Object: object, Managers: managers, Line: line, Meta: metaOf(ev.Object, object)}
}

// metaOf is what the store indexes of obj, read from the object rather than from its
// JSON, object (an eighth of the sink's CPU an event on a status churn, were the store to
// read it back), but for its owner references, taken as the JSON says them. Nil when
// obj has no metadata: the store reads the JSON then.
func metaOf(obj runtime.Object, object []byte) *store.ObjectMeta {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	om := &store.ObjectMeta{Kind: obj.GetObjectKind().GroupVersionKind().Kind, Namespace: m.GetNamespace(), Name: m.GetName(),
		UID: string(m.GetUID()), ResourceVersion: m.GetResourceVersion(),
		Created: m.GetCreationTimestamp().Truncate(time.Second)} // as its JSON says it
	if len(m.GetOwnerReferences()) > 0 {
		om.Owners = gjson.GetBytes(object, "metadata.ownerReferences").Raw
	}
	return om
}

// idle commits what waits in the open transaction once store.BatchInterval has passed
// since it began, when no Write came to commit it.
func (s *storeSink) idle() {
	s.mu.Lock()
	s.timer = nil
	n, since := s.w.Pending()
	if n == 0 || s.closed || s.err != nil {
		s.mu.Unlock()
		return
	}
	if wait := store.BatchInterval - time.Since(since); wait > 0 {
		s.timer = time.AfterFunc(wait, s.idle)
		s.mu.Unlock()
		return
	}
	err := s.w.Flush(context.Background())
	done, lost := s.committedLocked(err)
	if err != nil {
		s.reported = true // said now, by the listener
	}
	s.mu.Unlock()
	s.settleAll(done, lost, err)
	if err != nil {
		s.stop(err)
	}
}

// committedLocked takes the events the Writer committed off held; after an error (the
// sink's failure), the rest too, as lost.
func (s *storeSink) committedLocked(err error) (done, lost []*event.Event) {
	n := int(s.w.Committed() - s.settled)
	done = s.held[:n:n]
	s.held = s.held[n:]
	s.settled += uint64(n)
	if err != nil {
		lost, s.held = s.held, nil
		if s.err == nil {
			s.err = err
		}
	}
	if len(s.held) == 0 {
		s.held = nil // not to keep the events given up above
	}
	return done, lost
}

func (s *storeSink) settleAll(done, lost []*event.Event, err error) {
	for _, ev := range done {
		s.settle(ev, nil)
	}
	for _, ev := range lost {
		s.settle(ev, err)
	}
}

// Close commits what is pending, settles it, and closes the store. A failure not yet
// reported by Write (an idle commit's) is its error.
func (s *storeSink) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	closeErr := s.w.Close(context.Background())
	done, lost := s.committedLocked(closeErr)
	err := s.err // the first failure, this one or an earlier one
	if s.reported {
		err = nil // said once, when Write returned it
	}
	s.mu.Unlock()
	s.settleAll(done, lost, closeErr)
	return err
}

// RemoveIfUnused closes the store of a run that never started, and removes it if the
// run created it (sinkkind.File).
func (s *storeSink) RemoveIfUnused() {
	s.mu.Lock()
	unused := s.created && s.w.Committed() == 0 && len(s.held) == 0
	s.mu.Unlock()
	_ = s.Close()
	if unused {
		removeStore(s.path)
	}
}

// removeStore removes a store's file and SQLite's files beside it.
func removeStore(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
}
