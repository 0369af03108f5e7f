package conditions

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Ready is the wait of --until-ready and --until-rollout, one machinery for both: it is
// met once every awaited object is ready (and, for a tree, everything the followed
// object owns), and ends the run with a failure once one of them fails.
type Ready struct {
	// Flag names the wait in messages ("--until-ready"); Failure is what the error of a
	// failure starts with ("rollout failed", "not ready").
	Flag, Failure string
	// Awaited reports whether ev is about one of the objects waited for (a NAME argument,
	// --owned's followed object); Count is how many there are (0: each name in every
	// type and namespace watched, counted as the watched informers are given: Watch).
	Awaited    func(ev *event.Event) bool
	Count      int
	perWatched bool
	// Judge says where an awaited object stands at ev, and when it failed, why.
	Judge func(ev *event.Event) (Verdict, string)
	// Tree also waits for every object of --owned's tree (events with owners) to be
	// ready by TreeJudge, once every informer has its initial list (before that, the
	// tree is not known whole).
	Tree      bool
	TreeJudge func(ev *event.Event) Verdict

	mu      sync.Mutex
	awaited map[objectKey]Verdict
	tree    map[objectKey]Verdict
}

// Verdict is where an object stands for a wait.
type Verdict uint8

const (
	NotYet  Verdict = iota
	IsReady         // ready: the wait needs nothing more of it
	Failed          // it failed: the wait ends (awaited objects only)
	Ignored         // it cannot be judged (its health is Unknown): it holds up nothing
	Gone            // it was deleted: it is no longer part of the tree
)

// objectKey names an object of the run: by cluster, resource, namespace and name.
type objectKey struct {
	cluster  string
	resource schema.GroupResource
	ns, name string
}

func objectKeyOf(ev *event.Event) (objectKey, bool) {
	m := ev.Meta()
	if m == nil {
		return objectKey{}, false
	}
	return objectKey{ev.Cluster, ev.Resource.GroupResource(), m.GetNamespace(), m.GetName()}, true
}

// see takes ev into account; it reports whether the wait is decided, and a failure's
// message.
func (r *Ready) see(ev *event.Event, synced bool) (decided bool, failure string) {
	if ev.Related {
		return false, ""
	}
	key, ok := objectKeyOf(ev)
	if !ok {
		return false, ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.awaited == nil {
		r.awaited, r.tree = map[objectKey]Verdict{}, map[objectKey]Verdict{}
	}
	switch {
	case r.Awaited(ev):
		v, why := r.Judge(ev)
		if v == Failed {
			return true, why
		}
		r.awaited[key] = v
	case r.Tree && ev.Owners != nil:
		if v := r.TreeJudge(ev); v == Gone {
			delete(r.tree, key)
		} else {
			r.tree[key] = v
		}
	}
	return r.metLocked(synced), ""
}

// met reports whether every awaited object (and the tree) is ready.
func (r *Ready) met(synced bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.metLocked(synced)
}

func (r *Ready) metLocked(synced bool) bool {
	if r.Tree && !synced || len(r.awaited) < r.Count {
		return false
	}
	for _, v := range r.awaited {
		if v != IsReady {
			return false
		}
	}
	for _, v := range r.tree {
		if v != IsReady && v != Ignored {
			return false
		}
	}
	return true
}

// waiting says what the wait still waits for, for a message: the objects not ready yet.
func (r *Ready) waiting() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for k, v := range r.awaited {
		if v != IsReady {
			names = append(names, k.name)
		}
	}
	notReady := 0
	for _, v := range r.tree {
		if v != IsReady && v != Ignored {
			notReady++
		}
	}
	var parts []string
	if missing := r.Count - len(r.awaited); missing > 0 {
		parts = append(parts, fmt.Sprintf("%d not seen", missing))
	}
	if len(names) > 0 {
		parts = append(parts, "not ready: "+strings.Join(names, ", "))
	}
	if notReady > 0 {
		parts = append(parts, fmt.Sprintf("%d owned not ready", notReady))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// UntilReady is --until-ready's wait: awaited are the named objects (or --owned's
// followed object, with its tree), each ready once its health is Current; one that
// becomes Failed, is deleted, or stalls (when stallsFail) fails the wait. In the tree,
// an object whose health is Unknown (only its metadata watched) holds up nothing, and
// one that fails does not end the wait: its owner's controller may replace it, and
// the followed object's own health says what it makes of it.
func UntilReady(awaited func(*event.Event) bool, count int, tree, stallsFail bool) *Ready {
	return &Ready{Flag: "--until-ready", Failure: "not ready", Awaited: awaited, Count: count, perWatched: count == 0, Tree: tree,
		Judge: func(ev *event.Event) (Verdict, string) {
			h := ev.Health
			what := fmt.Sprintf("%s %q", strings.ToLower(ev.Kind), ev.Meta().GetName())
			switch {
			case ev.Type == event.Deleted && ev.Reason != event.ReasonSelector:
				return Failed, what + " was deleted"
			case ev.Type == event.Stalled && stallsFail:
				return Failed, what + " stalled: " + h.Message
			case h == nil:
				return NotYet, ""
			case h.Status == event.HealthFailed:
				return Failed, what + " failed: " + h.Message
			case h.Status == event.HealthCurrent:
				return IsReady, ""
			}
			return NotYet, ""
		},
		TreeJudge: func(ev *event.Event) Verdict {
			h := ev.Health
			switch {
			case ev.Type == event.Deleted:
				return Gone
			case h == nil || h.Status == event.HealthUnknown:
				return Ignored
			case h.Status == event.HealthCurrent:
				return IsReady
			}
			return NotYet
		}}
}

// UntilRollout is --until-rollout's wait: the followed object's rollout (event.Rollout,
// by kubectl rollout status's rules), complete or failed (a deletion fails it).
func UntilRollout(isRoot func(*event.Event) bool) *Ready {
	return &Ready{Flag: "--until-rollout", Failure: "rollout failed", Awaited: isRoot, Count: 1,
		Judge: func(ev *event.Event) (Verdict, string) {
			switch {
			case !ev.Rollout.Done():
				return NotYet, ""
			case ev.Rollout.State == event.RolloutComplete:
				return IsReady, ""
			}
			return Failed, ev.Rollout.Message
		}}
}

// ReadyWaitOptions say which wait a run has, if any (ReadyWait).
type ReadyWaitOptions struct {
	// Follow tells the followed object (--owned) from the others of its tree; nil
	// without --owned.
	Follow func(*event.Event) bool
	// UntilRollout and UntilReady are the flags; Names the objects named.
	UntilRollout, UntilReady bool
	Names                    []string
	// StallsFail fails --until-ready on a STALLED event (--stalled-after).
	StallsFail bool
}

// ReadyWait is the wait of --until-rollout or --until-ready, nil without either: the
// followed object's rollout; or the named objects' health, or the followed object's and
// everything it owns (--owned).
func ReadyWait(o ReadyWaitOptions) *Ready {
	switch {
	case o.Follow != nil && o.UntilRollout:
		return UntilRollout(o.Follow)
	case !o.UntilReady:
		return nil
	case o.Follow != nil:
		return UntilReady(o.Follow, 1, true, o.StallsFail)
	}
	names := o.Names
	return UntilReady(func(ev *event.Event) bool {
		m := ev.Meta()
		return !ev.Child && m != nil && slices.Contains(names, m.GetName())
	}, 0, false, o.StallsFail)
}
