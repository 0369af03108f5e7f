// Package replay turns recordings (package recording) back into the events a watch
// made, for the engine to send through the sinks as a watch's (kubeevents replay and
// history): it selects them as a watch selects objects (types, names, namespaces, label
// selectors, clusters, a window of time, the field managers, an owner and what it owns),
// keeps the last recorded version of each object selected (the previous state of the
// next event: its diff where the recording has none, --show-old), rebuilds owner chains
// from the recorded objects, and reads one object's state at a given time (At).
//
// Memory is bounded by the objects selected, not by the recording's length: one version
// of each, forgotten when it is deleted.
package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"path"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/recording"
)

// Selection says which recorded events are replayed. Empty fields select everything.
type Selection struct {
	// Types are resource types as typed (pods, po, deploy, deployments.apps, a custom
	// resource's plural or kind, all); Names object names.
	Types []string
	Names []string
	// Namespaces select namespaced objects (cluster-scoped ones have none).
	Namespaces []string
	// LabelSelector selects by labels, as -l: an object that stops matching is DELETED
	// (reason "selector"), one that starts matching ADDED, as a watch reports them.
	LabelSelector string
	// Clusters are the kubeconfig contexts recorded (several clusters in one recording).
	Clusters []string
	// Since and Until bound the time of the events (zero: unbounded).
	Since, Until time.Time
	// By and NotBy are field managers (globs: 'kube-*') of the recorded "by": an event
	// made by none of By is left out, and one made by any of NotBy. Events recorded
	// without "by" have no manager.
	By, NotBy []string
	// Owned follows Types[0]/Names[0] and everything it owns, transitively, as watch
	// --owned does: chains are rebuilt from the recorded objects.
	Owned bool
	// WithEvents adds the core Events about the objects selected, as --with-events does
	// (EVENT lines); without it core Events are objects like any other.
	WithEvents bool
}

// Options say what to replay and how.
type Options struct {
	// Args are the recordings as given (files, directories, patterns, "-").
	Args   []string
	Read   recording.Options
	Select Selection
	// Objects decodes every object selected whole (what pretty output, templates and
	// jq read: engine.Config.ReadsObjects); otherwise only their metadata is, and
	// their JSON is written as recorded, which costs a fraction. Diffs says that diffs
	// are on: an update recorded without one then has its objects decoded whole, for
	// the diff to be computed.
	Objects, Diffs bool
	// ShowSecrets keeps the values of the Secrets recorded; by default they are
	// redacted as a watch redacts them (a recording made with --show-secrets holds them).
	ShowSecrets bool
	// Warn prints one diagnostic line.
	Warn func(format string, args ...any)
	// Records, when set, are replayed instead of Args: records from elsewhere than a
	// recording's files (a store), in time order.
	Records iter.Seq2[recording.Record, error]
}

// Source replays recordings: engine.Source.
type Source struct {
	opts     Options
	inputs   []recording.Input
	types    []typeArg
	matched  []bool // per type, whether it matched any record
	selector labels.Selector
	decoder  *decoder
	// objects are the selected objects' last recorded versions, by objectKey; left
	// those that left the label selection, whose return is an ADDED.
	objects map[objectKey]*version
	left    map[objectKey]bool
	// roles are the role of each resource read (roleOf), which also says what the
	// recording holds.
	roles    map[schema.GroupVersionResource]role
	owned    *ownedTree // nil without Selection.Owned
	redactor *redactor  // nil with ShowSecrets
	// seen is what the recording held of what was selected, to say at the end which
	// clusters, namespaces and names given matched nothing; quiet leaves that to the
	// caller (history says it in its error).
	seen  seen
	quiet bool
}

// seen is what the records read held: the clusters (with --cluster), the namespaces of
// the records of the types selected in those clusters (with -n), the names of those in
// those namespaces (with names); how many records were read and events emitted.
type seen struct {
	clusters, namespaces, names map[string]bool
	records, selected, emitted  int // selected: records of the types selected, in the clusters selected
}

// objectKey names an object across resources and clusters.
type objectKey struct {
	cluster, group, kind, namespace, name string
}

// version is one recorded version of an object: the object and its JSON.
type version struct {
	obj     runtime.Object
	raw     []byte
	whole   bool // obj is decoded whole, not only its metadata (Options.Objects)
	matched bool // by the label selector
}

// New checks what opts give (the inputs exist, the selector parses) and prepares the
// replay. Its errors are the user's (diag.UsageError).
func New(opts Options) (*Source, error) {
	if opts.Warn == nil {
		opts.Warn = func(string, ...any) {}
	}
	if opts.Read.Warn == nil {
		opts.Read.Warn = opts.Warn
	}
	inputs, err := recording.Expand(opts.Args, opts.Read.Follow)
	if err != nil {
		return nil, diag.Usage(err)
	}
	s := &Source{opts: opts, inputs: inputs, types: parseTypes(opts.Select.Types), decoder: newDecoder(),
		objects: map[objectKey]*version{}, left: map[objectKey]bool{}, roles: map[schema.GroupVersionResource]role{}}
	s.matched = make([]bool, len(s.types))
	if !opts.ShowSecrets {
		s.redactor = newRedactor()
	}
	if len(opts.Select.Clusters) > 0 {
		s.seen.clusters = map[string]bool{}
	}
	if len(opts.Select.Namespaces) > 0 {
		s.seen.namespaces = map[string]bool{}
	}
	if len(opts.Select.Names) > 0 && !opts.Select.Owned {
		s.seen.names = map[string]bool{}
	}
	if sel := opts.Select.LabelSelector; sel != "" {
		if s.selector, err = labels.Parse(sel); err != nil {
			return nil, diag.Usagef("-l/--selector %q: %v", sel, err)
		}
	}
	for _, p := range append(slices.Clone(opts.Select.By), opts.Select.NotBy...) {
		if _, err := path.Match(p, ""); err != nil {
			return nil, diag.Usagef("--by/--not-by %q: not a name or glob pattern (*, ?, [a-z])", p)
		}
	}
	if opts.Select.Owned {
		if len(opts.Select.Types) != 1 || len(opts.Select.Names) != 1 {
			return nil, diag.Usagef("--owned follows one object: give it as TYPE/NAME")
		}
		s.owned = newOwnedTree(s, opts.Warn)
	}
	return s, nil
}

// What names what is replayed, for the line at the start.
func (s *Source) What() string {
	switch len(s.inputs) {
	case 1:
		if s.inputs[0].Path == "-" {
			return "the standard input"
		}
		return s.inputs[0].Path
	}
	return fmt.Sprintf("%s and %d more inputs", s.inputs[0].Path, len(s.inputs)-1)
}

// ShowKind says whether several types may be replayed, so that the kind leads each name.
func (s *Source) ShowKind() bool {
	sel := s.opts.Select
	return len(s.types) != 1 || sel.WithEvents || sel.Owned
}

// Namespace is the one namespace replayed ("" for several, or every one).
func (s *Source) Namespace() string {
	if len(s.opts.Select.Namespaces) == 1 {
		return s.opts.Select.Namespaces[0]
	}
	return ""
}

// untilSlack is how far past Until the recording is read: the events of one file are
// in the order they were numbered, and several informers may number theirs a moment
// apart from when they timed them.
const untilSlack = time.Second

// Run reads the recordings and hands the events selected to emit, in time order, until
// the input ends (or, past Selection.Until, the window does).
func (s *Source) Run(ctx context.Context, emit func(*event.Event) bool) error {
	if s.owned != nil {
		if err := s.owned.prepare(ctx); err != nil {
			return err
		}
	}
	if s.opts.Records != nil {
		for rec, err := range s.opts.Records {
			if err != nil {
				return err
			}
			if s.pastUntil(rec) {
				return nil
			}
			if stop, err := s.replay(rec, nil, emit); stop || err != nil {
				return err
			}
		}
		return nil
	}
	r, err := recording.Open(s.inputs, s.opts.Read)
	if err != nil {
		return diag.Usage(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if s.pastUntil(rec) {
			break
		}
		if stop, err := s.replay(rec, r, emit); stop || err != nil {
			return err
		}
	}
	s.sayWhatWasLeft(r)
	return nil
}

// pastUntil reports whether rec is past the window: the replay is over.
func (s *Source) pastUntil(rec recording.Record) bool {
	until := s.opts.Select.Until
	return !until.IsZero() && rec.Time.After(until.Add(untilSlack))
}

// replay hands rec's event to emit, if it is selected; stop says emit ended the replay.
// A bad record is skipped (and counted by r) with Read.SkipBadLines.
func (s *Source) replay(rec recording.Record, r *recording.Reader, emit func(*event.Event) bool) (stop bool, err error) {
	ev, err := s.event(rec)
	if err != nil {
		var bad *recording.BadLineError
		if errors.As(err, &bad) && s.opts.Read.SkipBadLines && r != nil {
			r.Skip(bad)
			return false, nil
		}
		return true, err
	}
	s.seen.records++
	if ev == nil {
		return false, nil
	}
	s.seen.emitted++
	return !emit(ev), nil
}

// see notes the namespace and the name of an object of a type selected.
func (s *Source) see(m metav1.Object) {
	s.seen.selected++
	if s.seen.namespaces != nil && m.GetNamespace() != "" {
		s.seen.namespaces[m.GetNamespace()] = true
	}
	if s.seen.names != nil && s.namespaceSelected(m) {
		s.seen.names[m.GetName()] = true
	}
}

// sayWhatWasLeft says, at the end, what was not replayed that the user may have
// expected: bad lines skipped; the clusters, types, namespaces and names given that
// the recording does not hold (each with what it holds instead), or, when it holds
// them all but nothing was replayed, that nothing matched.
func (s *Source) sayWhatWasLeft(r *recording.Reader) {
	if n, first := r.Skipped(); n > 0 {
		s.opts.Warn("skipped %s that kubeevents did not write (the first: %v)", diag.Count(n)+" line"+diag.Plural(n), first.At)
	}
	sel := s.opts.Select
	said, nothing := false, false
	say := func(format string, args ...any) {
		s.opts.Warn(format, args...)
		said = true
	}
	// Each selection is said missing only when the one before matched something: a
	// cluster that is not there leaves nothing to look in for a namespace.
	if missing := notSeen(sel.Clusters, s.seen.clusters); len(missing) > 0 && !s.quiet {
		held := seenNames(s.seen.clusters)
		if len(held) == 0 {
			say("--cluster %s: the recording names no cluster (it was made of one cluster; drop --cluster)", strings.Join(missing, ","))
		} else {
			say("no events of cluster %s in the recording, which holds the clusters %s", strings.Join(missing, ", "), strings.Join(held, ", "))
		}
		nothing = len(missing) == len(sel.Clusters)
	}
	if !nothing {
		var missing []string
		for i, t := range s.types {
			if !s.matched[i] && !slices.Contains(missing, t.given) {
				missing = append(missing, t.given)
			}
		}
		if len(missing) > 0 && len(s.roles) > 0 {
			var held []string
			for gvr := range s.roles {
				held = append(held, resourceName(gvr))
			}
			slices.Sort(held)
			say("no events of %s in the recording, which holds %s", strings.Join(missing, ", "), strings.Join(held, ", "))
			nothing = !slices.Contains(s.matched, true)
		}
	}
	if s.quiet {
		return
	}
	nothing = nothing || s.seen.selected == 0
	what := "objects"
	if len(sel.Types) > 0 {
		what = strings.Join(sel.Types, ",")
	}
	if missing := notSeen(sel.Namespaces, s.seen.namespaces); len(missing) > 0 && !nothing {
		namespaces := seenNames(s.seen.namespaces)
		switch {
		case len(namespaces) > 0 && len(sel.Types) == 0:
			say("no events in namespace %s in the recording, which holds the namespace%s %s", strings.Join(missing, ", "),
				diag.Plural(len(namespaces)), strings.Join(namespaces, ", "))
		case len(namespaces) > 0:
			say("no events of %s in namespace %s in the recording, which holds %s in namespace%s %s", what, strings.Join(missing, ", "),
				what, diag.Plural(len(namespaces)), strings.Join(namespaces, ", "))
		default:
			say("no events of %s in namespace %s in the recording: the %s it holds are cluster-scoped", what, strings.Join(missing, ", "), what)
		}
		nothing = len(missing) == len(sel.Namespaces)
	}
	if missing := notSeen(sel.Names, s.seen.names); len(missing) > 0 && !nothing {
		in := ""
		if len(sel.Namespaces) > 0 {
			in = " in namespace " + strings.Join(sel.Namespaces, ",")
		}
		say("no events of %s named %s%s in the recording", what, strings.Join(missing, ", "), in)
	}
	switch {
	case said || s.seen.emitted > 0:
	case s.seen.records == 0:
		s.opts.Warn("%s holds no events", s.What())
	default:
		s.opts.Warn("none of the %s recorded matches the selection", diag.Count(s.seen.records)+" event"+diag.Plural(s.seen.records))
	}
}

// notSeen are the values given that were not seen (none when nothing was given).
func notSeen(given []string, seen map[string]bool) []string {
	var missing []string
	for _, v := range given {
		if !seen[v] && !slices.Contains(missing, v) {
			missing = append(missing, v)
		}
	}
	return missing
}

// seenNames are the values seen, sorted, but "".
func seenNames(seen map[string]bool) []string {
	var names []string
	for v := range seen {
		if v != "" {
			names = append(names, v)
		}
	}
	slices.Sort(names)
	return names
}

func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}

// role is what a record's resource is to the selection.
type role int

const (
	notSelected role = iota
	selected         // of a type asked for (or any, when none is)
	related          // a core Event, to be shown if it is about an object selected
	child            // a type followed for what the owner owns (Owned)
)

// roleOf is what the records of resource gvr, of kind, are to the selection.
func (s *Source) roleOf(gvr schema.GroupVersionResource, kind string) role {
	sel := s.opts.Select
	isCoreEvent := gvr.Group == "" && gvr.Resource == "events"
	r := notSelected
	for i, t := range s.types {
		if t.matches(gvr, kind) {
			s.matched[i] = true
			r = selected
		}
	}
	switch {
	case r == selected:
	case len(s.types) == 0 && !(sel.WithEvents && isCoreEvent):
		r = selected
	case s.owned != nil && s.owned.isChild(gvr, kind):
		r = child
	}
	if sel.WithEvents && isCoreEvent && !(r == selected && len(s.types) > 0) {
		r = related
	}
	return r
}

// event makes the event of a record, or nil if the selection leaves it out. It keeps
// the state of the objects selected, whether their event is in the window or not.
func (s *Source) event(rec recording.Record) (*event.Event, error) {
	sel := s.opts.Select
	if s.seen.clusters != nil {
		s.seen.clusters[rec.Cluster] = true
	}
	if len(sel.Clusters) > 0 && !slices.Contains(sel.Clusters, rec.Cluster) {
		return nil, nil
	}
	gvk, err := s.decoder.kindOf(rec.Resource, rec.Object)
	if err != nil {
		return nil, &recording.BadLineError{At: rec.At, Err: err}
	}
	role, known := s.roles[rec.Resource]
	if !known {
		role = s.roleOf(rec.Resource, gvk.Kind)
		s.roles[rec.Resource] = role
	}
	if role == notSelected {
		return nil, nil
	}
	if s.redactor != nil && isSecrets(rec.Resource) {
		s.redactor.record(&rec)
	}
	whole := s.opts.Objects || role == related || s.owned != nil ||
		rec.Type == event.Modified && rec.Diff == nil && s.opts.Diffs
	var obj runtime.Object
	if whole {
		obj, err = s.decoder.decode(gvk, rec.Object)
	} else {
		obj, err = metadataOnly(gvk, rec.Object)
	}
	if err != nil {
		return nil, &recording.BadLineError{At: rec.At, Err: fmt.Errorf("its %s cannot be read: %v", gvk.Kind, err)}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, &recording.BadLineError{At: rec.At, Err: err}
	}
	if role == selected {
		s.see(m)
	}
	if !s.namespaceSelected(m) || role == selected && len(sel.Names) > 0 && !sel.Owned && !slices.Contains(sel.Names, m.GetName()) {
		return nil, nil
	}
	ev := &event.Event{Type: rec.Type, Time: rec.Time, Cluster: rec.Cluster, Resource: rec.Resource, Kind: gvk.Kind,
		Object: obj, FinalStateUnknown: rec.FinalStateUnknown, Past: rec.Past, Reason: rec.Reason, Owners: rec.Owners, Rollout: rec.Rollout, Health: rec.Health}
	inWindow := (sel.Since.IsZero() || !rec.Time.Before(sel.Since)) && (sel.Until.IsZero() || !rec.Time.After(sel.Until))
	switch {
	case role == related:
		ev.Related = true
		if !s.involvesSelected(rec.Cluster, obj) {
			return nil, nil
		}
		ev.SetJSON(rec.Object, nil)
	case s.owned != nil:
		if !s.owned.accept(role, ev, m) {
			return nil, nil
		}
		s.track(ev, rec, m, whole)
	default:
		if !s.track(ev, rec, m, whole) {
			return nil, nil
		}
	}
	if s.owned != nil {
		s.owned.tree.Annotate(ev)
	}
	if !inWindow || !s.byManager(rec) {
		return nil, nil
	}
	if rec.By != nil && !ev.Related {
		var changes []byte
		if rec.Type == event.Modified {
			changes = rec.Diff
		}
		if ev.RecordedBy, err = attribution.Recorded(rec.By, changes, rec.ByAmbiguous); err != nil {
			return nil, &recording.BadLineError{At: rec.At, Err: err}
		}
	}
	return ev, nil
}

func (s *Source) namespaceSelected(m metav1.Object) bool {
	ns := m.GetNamespace()
	return len(s.opts.Select.Namespaces) == 0 || ns == "" || slices.Contains(s.opts.Select.Namespaces, ns)
}

// track completes ev with the object's previous version and keeps the new one; it
// reports whether ev is to be shown. With a label selector, an object that stops
// matching is DELETED (reason "selector", its last state that matched), and one that
// starts matching ADDED, as the API server's watch reports them.
func (s *Source) track(ev *event.Event, rec recording.Record, m metav1.Object, whole bool) bool {
	key := objectKey{cluster: rec.Cluster, group: rec.Resource.Group, kind: ev.Kind, namespace: m.GetNamespace(), name: m.GetName()}
	prev := s.objects[key]
	matches := s.selector == nil || s.selector.Matches(labels.Set(m.GetLabels()))
	wasMatching := prev != nil && prev.matched
	switch {
	case !matches && wasMatching && ev.Type != event.Deleted:
		// Left the selection: its last state that matched, as a deletion.
		delete(s.objects, key)
		s.left[key] = true
		ev.Type, ev.Reason, ev.Object = event.Deleted, event.ReasonSelector, prev.obj
		ev.SetJSON(prev.raw, nil)
		return true
	case !matches && !wasMatching:
		delete(s.objects, key)
		if ev.Type == event.Deleted {
			delete(s.left, key)
		}
		return false
	case matches && s.left[key]:
		delete(s.left, key)
		if ev.Type == event.Modified {
			ev.Type = event.Added // came back into the selection
		}
	}
	var oldRaw []byte
	if ev.Type == event.Modified || ev.Type == event.Sync {
		switch {
		case prev != nil && (prev.whole || !whole):
			ev.Old, oldRaw = prev.obj, prev.raw
		case prev != nil:
			// Decoded whole now, for the diff to be computed.
			if old, err := s.decoder.decode(ev.Object.GetObjectKind().GroupVersionKind(), prev.raw); err == nil {
				ev.Old, oldRaw = old, prev.raw
			}
		case rec.Old != nil:
			if old, err := s.decoder.decode(ev.Object.GetObjectKind().GroupVersionKind(), rec.Old); err == nil {
				ev.Old, oldRaw = old, rec.Old
			}
		}
	}
	if ev.Type == event.Modified {
		ev.RecordedDiff = rec.Diff
	}
	ev.SetJSON(rec.Object, oldRaw)
	if ev.Type == event.Deleted {
		delete(s.objects, key)
	} else {
		s.objects[key] = &version{obj: ev.Object, raw: rec.Object, whole: whole, matched: matches}
	}
	return true
}

// involvesSelected reports whether a core Event is about an object selected.
func (s *Source) involvesSelected(cluster string, obj runtime.Object) bool {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return false
	}
	if s.owned != nil {
		return s.owned.tree.AcceptEvent(ev)
	}
	ref := ev.InvolvedObject
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	_, ok = s.objects[objectKey{cluster: cluster, group: gv.Group, kind: ref.Kind, namespace: ref.Namespace, name: ref.Name}]
	return ok
}

// byManager applies --by and --not-by to the recorded "by".
func (s *Source) byManager(rec recording.Record) bool {
	sel := s.opts.Select
	if len(sel.By) == 0 && len(sel.NotBy) == 0 {
		return true
	}
	managers := rec.Managers()
	matchesAny := func(patterns []string) bool {
		for _, m := range managers {
			for _, p := range patterns {
				if ok, _ := path.Match(p, m); ok {
					return true
				}
			}
		}
		return false
	}
	return (len(sel.By) == 0 || matchesAny(sel.By)) && !matchesAny(sel.NotBy)
}

// Clusters are the clusters replayed when there are several (pretty output's cluster
// column): those of --cluster, else those the recording starts with; nil for one.
func (s *Source) Clusters() []string {
	clusters := s.opts.Select.Clusters
	if len(clusters) == 0 {
		clusters = recording.Clusters(s.inputs, 2000)
	}
	if len(clusters) < 2 {
		return nil
	}
	return clusters
}
