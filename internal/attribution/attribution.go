// Package attribution says which field manager made each change: the informer keeps what
// an object's managedFields say (package managedfields, Event.ManagedFields), and Of
// decides, for each event once, with the event's diff where the managers' times alone
// cannot tell. Filter is --by and --not-by. Every sink, the filters and kubeevents top
// read the same answer.
package attribution

import (
	"fmt"
	"path"
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
// wrote the change (with the changes of d where times alone cannot tell: a nil d then
// leaves it unsaid), for DELETED and SYNC nobody. Computed once per event and Differ,
// shared by every caller, who must not modify it.
func Of(ev *event.Event, d *diff.Differ) *Attribution {
	if ev.ManagedFields == nil || (ev.Type != event.Added && ev.Type != event.Modified) {
		return nil
	}
	m := ev.Memo(memoKey{d}, func() any { return new(memo) }).(*memo)
	m.once.Do(func() { m.a = resolve(ev, d) })
	return &m.a
}

func resolve(ev *event.Event, d *diff.Differ) Attribution {
	if a, decided := ev.ManagedFields.Decided(ev.Type == event.Added); decided {
		return a
	}
	// Without a diff (--no-diff, or one that failed) only the times can decide: several
	// entries that moved still all wrote.
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
	a := ev.ManagedFields.ResolveLazily(cs, func() (any, bool) {
		old, err := oldAlong(ev, cs)
		if err != nil {
			changes = nil // as without a diff: only the times decide (and no binding)
		}
		return old, err == nil
	})
	if len(a.By) == 0 {
		if binder, ok := binding(ev, changes); ok {
			return Attribution{By: []Entry{binder}}
		}
	}
	return a
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

// binding is the binder of a pod whose change set spec.nodeName. The API server records
// no managedFields entry for a binding (pods/binding writes the pod directly), and
// nodeName can be set on an existing pod by a binding only: the one the pod names in
// spec.schedulerName made it (kube-scheduler's is default-scheduler).
func binding(ev *event.Event, changes []diff.Change) (Entry, bool) {
	if ev.Resource.Group != "" || ev.Resource.Resource != "pods" {
		return Entry{}, false
	}
	bound := false
	for _, c := range changes {
		if c.Path == "/spec/nodeName" && (c.Op == diff.OpAdd || c.Op == diff.OpReplace && c.Old == "") {
			bound = true
		}
	}
	if !bound {
		return Entry{}, false
	}
	scheduler := corev1.DefaultSchedulerName
	switch p := ev.Object.(type) {
	case *corev1.Pod:
		if p.Spec.SchedulerName != "" {
			scheduler = p.Spec.SchedulerName
		}
	case *unstructured.Unstructured:
		if name, _, _ := unstructured.NestedString(p.Object, "spec", "schedulerName"); name != "" {
			scheduler = name
		}
	}
	return Entry{Manager: scheduler, Subresource: "binding"}, true
}

// Mark is the short form of who made a change, as pretty output shows it: the managers
// with their subresource in brackets ("kubectl-scale (scale)", "kwok (status)"), joined
// by ", ", or by " or " when ambiguous; "" for nobody.
func Mark(entries []Entry, ambiguous bool) string {
	if len(entries) == 0 {
		return ""
	}
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = Name(e)
	}
	if ambiguous {
		return strings.Join(parts, " or ")
	}
	return strings.Join(parts, ", ")
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
