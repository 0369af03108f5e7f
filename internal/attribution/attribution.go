// Package attribution says which field manager made each change: the informer keeps what
// an object's managedFields say (package managedfields, Event.ManagedFields), and Of
// decides, for each event once, with the event's diff where the managers' times alone
// cannot tell. Filter is --by and --not-by. Every sink, the filters and kubeevents top
// read the same answer.
package attribution

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/generic"
	"github.com/kubeevents/kubeevents/internal/jsonw"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// Attribution is who made a change (see managedfields.Attribution).
type Attribution = managedfields.Attribution

// Entry is one manager's write.
type Entry = managedfields.Entry

// memoKey keys an event's attribution by the Differ that gave its changes.
type memoKey struct{ differ *diff.Differ }

type memo struct {
	once sync.Once
	a    Attribution
}

// Of is who made ev: for ADDED the creating manager, for MODIFIED the managers that
// wrote the change (with its diff where times alone cannot tell), for DELETED and SYNC
// nobody; for an event replayed, what the recording says (event.Event.RecordedBy).
// Computed once per event and Differ, shared by every caller, who must not modify it. A
// nil d (--no-diff) changes nothing of the answer: the diff attribution needs is then
// computed without being shown.
func Of(ev *event.Event, d *diff.Differ) *Attribution {
	if ev.Type != event.Added && ev.Type != event.Modified {
		return nil
	}
	if ev.RecordedBy != nil {
		return recorded(ev, d)
	}
	if ev.ManagedFields == nil {
		return nil
	}
	m := ev.Memo(memoKey{d}, func() any { return new(memo) }).(*memo)
	m.once.Do(func() { m.a = resolve(ev, d) })
	return &m.a
}

// plain is the Differ attribution uses when diffs are not shown: what changed decides
// who changed it, whether or not the change is printed.
var plain = diff.NewDiffer(nil)

func resolve(ev *event.Event, d *diff.Differ) Attribution {
	r := ev.ManagedFields
	binder, bound := binding(ev)
	if bound && r.Moved(bindingSubresource) {
		bound = false // the binding's own entry says who made it (as any write's)
	}
	if bound && r.NoneMoved() {
		// No manager's write is recorded: this version is the binding's, all of it (the
		// node, the PodScheduled condition), and nobody else's.
		return Attribution{By: []Entry{binder}, Ambiguous: true}
	}
	if a, decided := r.Decided(ev.Type == event.Added); decided && !bound {
		return a
	}
	if d == nil {
		d = plain
	}
	// Without a diff (one that failed) only the times can decide: several entries that
	// moved still all wrote.
	changes, err := d.Changes(ev)
	if err != nil {
		changes = nil
	}
	cs := make([]managedfields.Change, len(changes))
	for i, c := range changes {
		cs[i] = managedfields.Change{Op: c.Op, Path: c.Path, Value: c.Value, Old: c.Old}
	}
	// The previous object names the list elements of the changes' paths (diff indexes
	// them as they were); made only when the candidates' fields need it.
	a := r.ResolveLazily(cs, func() (any, bool) {
		old, err := oldAlong(ev, cs)
		if err != nil {
			cs = nil // as without a diff: only the times decide
		}
		return old, err == nil
	})
	if bound {
		a = withBinding(a, binder, cs)
	}
	return a
}

// withBinding adds the binding to a, the attribution of a change that bound a pod along
// with other writes (versions missed, or changes coalesced): spec.nodeName is the
// binding's, whoever else owns it; the rest is as a says.
func withBinding(a Attribution, binder Entry, changes []managedfields.Change) Attribution {
	by := append([]Entry{binder}, a.By...)
	out := Attribution{By: by, Ambiguous: true, Changes: make([][]int, len(changes))}
	for i, c := range changes {
		if c.Path == nodeNamePath {
			out.Changes[i] = []int{0}
			continue
		}
		for _, e := range a.ChangeBy(i) {
			out.Changes[i] = append(out.Changes[i], 1+slices.Index(a.By, e))
		}
	}
	if len(changes) == 0 {
		out.Changes = nil
	}
	return out
}

// oldAlong is the previous object as generic JSON, as far as the changes' paths need
// it: the keys along them (a path is walked through the previous object only), the rest
// left out; the whole of it where it cannot be built in part.
func oldAlong(ev *event.Event, changes []managedfields.Change) (any, error) {
	part := &generic.Part{Keys: map[string]*generic.Part{}}
	for _, c := range changes {
		if c.Path == "" || c.Path[0] != '/' {
			continue
		}
		node := part
		for token := range strings.SplitSeq(c.Path[1:], "/") {
			if node.Whole {
				break
			}
			token = strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
			next := node.Keys[token]
			if next == nil {
				next = &generic.Part{Keys: map[string]*generic.Part{}}
				node.Keys[token] = next
			}
			node = next
		}
		node.Whole, node.Keys = true, nil
	}
	if ev.Old != nil {
		if old, built, err := generic.PartOf(ev.Old, part); built {
			return old, err
		}
	}
	return ev.OldValue()
}

// bindingSubresource is the subresource a pod is bound through (pods/binding).
const bindingSubresource = "binding"

const nodeNamePath = "/spec/nodeName"

// binding is the binding of a pod that a change bound to a node: spec.nodeName set,
// which only a binding (pods/binding) does to an existing pod. The API server records no
// managedFields entry for a binding, so its maker cannot be known: the scheduler the pod
// names in spec.schedulerName (kube-scheduler's is default-scheduler) made it, or any
// other client allowed to bind pods. The entry names the pod's scheduler, with no
// operation (it is no managedFields entry); Inferred says it is such a guess.
func binding(ev *event.Event) (Entry, bool) {
	if ev.Type != event.Modified || ev.Resource.Group != "" || ev.Resource.Resource != "pods" || ev.Old == nil {
		return Entry{}, false
	}
	before, _ := podSpec(ev.Old, "nodeName")
	after, _ := podSpec(ev.Object, "nodeName")
	if before != "" || after == "" {
		return Entry{}, false
	}
	scheduler, _ := podSpec(ev.Object, "schedulerName")
	if scheduler == "" {
		scheduler = corev1.DefaultSchedulerName
	}
	return Entry{Manager: scheduler, Subresource: bindingSubresource}, true
}

// podSpec is a string field of a pod's spec (nodeName, schedulerName); false if the
// object has no spec (metadata only).
func podSpec(obj any, field string) (string, bool) {
	switch p := obj.(type) {
	case *corev1.Pod:
		if field == "nodeName" {
			return p.Spec.NodeName, true
		}
		return p.Spec.SchedulerName, true
	case *unstructured.Unstructured:
		v, found, _ := unstructured.NestedString(p.Object, "spec", field)
		return v, found
	}
	return "", false
}

// Inferred reports whether e is no managedFields entry but kubeevents' guess: the
// binding of a pod (see binding), which names the pod's scheduler though another client
// may have made it.
func Inferred(e Entry) bool { return e.Subresource == bindingSubresource && e.Operation == "" }

// Mark is the short form of who made a change, as pretty output shows it: the managers
// with their subresource in brackets ("kubectl-scale (scale)", "kwok (status)"), joined
// by ", ", or by " or " when ambiguous, where a binding's guess ends with " or another
// client" (see binding); "" for nobody.
func Mark(entries []Entry, ambiguous bool) string {
	if len(entries) == 0 {
		return ""
	}
	parts := make([]string, len(entries))
	guessed := false
	for i, e := range entries {
		parts[i] = Name(e)
		guessed = guessed || Inferred(e)
	}
	if !ambiguous {
		return strings.Join(parts, ", ")
	}
	if guessed {
		parts = append(parts, "another client")
	}
	return strings.Join(parts, " or ")
}

// Name is one manager as pretty output and kubeevents top show it: its name, with its
// subresource in brackets.
func Name(e Entry) string {
	if e.Subresource == "" {
		return e.Manager
	}
	return e.Manager + " (" + e.Subresource + ")"
}

// Filter is --by and --not-by: manager names or globs (path.Match's: *, ?, [...]).
type Filter struct {
	By, NotBy []string
}

// Check reports the first pattern that is not a valid glob, naming its flag.
func (f Filter) Check() error {
	for flag, list := range map[string][]string{"--by": f.By, "--not-by": f.NotBy} {
		for _, p := range list {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				return fmt.Errorf("%s %q: not a field manager's name or glob (*, ?, [a-z])", flag, p)
			}
		}
	}
	return nil
}

// Empty reports whether the filter keeps every event.
func (f Filter) Empty() bool { return len(f.By) == 0 && len(f.NotBy) == 0 }

// Skip is the informers' Skip for f (nil when f is empty): with --by, an event is kept
// when one of its managers matches (an ambiguous one's candidates count: one of them may
// have made it); with --not-by, it is left out when it has managers and every one
// matches. An event attributed to nobody (DELETED among them) is left out by --by and
// kept by --not-by.
func (f Filter) Skip(d *diff.Differ) func(*event.Event) bool {
	if f.Empty() {
		return nil
	}
	return func(ev *event.Event) bool {
		if ev.Type == event.Sync {
			return false
		}
		var by []Entry
		if a := Of(ev, d); a != nil {
			by = a.By
		}
		if len(f.By) > 0 && !anyMatches(by, f.By) {
			return true
		}
		if len(f.NotBy) > 0 && len(by) > 0 && allMatch(by, f.NotBy) {
			return true
		}
		return false
	}
}

func anyMatches(by []Entry, patterns []string) bool {
	for _, e := range by {
		if matches(e.Manager, patterns) {
			return true
		}
	}
	return false
}

func allMatch(by []Entry, patterns []string) bool {
	for _, e := range by {
		if !matches(e.Manager, patterns) {
			return false
		}
	}
	return true
}

// matches reports whether manager matches one of the globs, as a whole string: '*' and
// '?' match '/' too (manager names are not paths).
func matches(manager string, patterns []string) bool {
	const slash = "\x00" // a byte no manager name holds, which path.Match treats as any other
	manager = strings.ReplaceAll(manager, "/", slash)
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ReplaceAll(p, "/", slash), manager); ok {
			return true
		}
	}
	return false
}

// AppendJSON appends entries as the envelope's "by" array:
//
//	[{"manager":"kubectl-scale","operation":"Update","subresource":"scale","time":"2026-11-27T10:00:05Z"}]
//
// operation, subresource and time only when known (a binding has none of them but the
// subresource).
func AppendJSON(dst []byte, entries []Entry) []byte {
	dst = append(dst, '[')
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.AppendJSONField(dst, `{"manager":`, e.Manager)
		if e.Operation != "" {
			dst = jsonw.AppendJSONField(dst, `,"operation":`, e.Operation)
		}
		if e.Subresource != "" {
			dst = jsonw.AppendJSONField(dst, `,"subresource":`, e.Subresource)
		}
		if !e.Time.IsZero() {
			dst = append(dst, `,"time":"`...)
			dst = e.Time.UTC().AppendFormat(dst, time.RFC3339)
			dst = append(dst, '"')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// Value is entries as generic JSON values, the form jq and templates read: the same
// keys as AppendJSON writes.
func Value(entries []Entry) []any {
	out := make([]any, len(entries))
	for i, e := range entries {
		m := map[string]any{"manager": e.Manager}
		if e.Operation != "" {
			m["operation"] = e.Operation
		}
		if e.Subresource != "" {
			m["subresource"] = e.Subresource
		}
		if !e.Time.IsZero() {
			m["time"] = e.Time.UTC().Format(time.RFC3339)
		}
		out[i] = m
	}
	return out
}
