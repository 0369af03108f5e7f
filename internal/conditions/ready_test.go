package conditions

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
)

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// ev is an event of the widget name with health status (none when ""); owners marks it
// as part of --owned's tree (nil: not).
func ev(typ event.EventType, name string, status event.HealthStatus, owners []event.Owner) *event.Event {
	e := &event.Event{Type: typ, Resource: widgets, Kind: "Widget", Owners: owners,
		Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}}}
	if status != "" {
		e.Health = &event.Health{Status: status, Message: "because"}
	}
	return e
}

type watched struct{ ns string }

func (w watched) Namespace() string  { return w.ns }
func (w watched) Store() cache.Store { return cache.NewStore(cache.MetaNamespaceKeyFunc) }

func named(names ...string) func(*event.Event) bool {
	return func(e *event.Event) bool { return slices.Contains(names, e.Meta().GetName()) }
}

// --until-ready with names: met once every named object (in every informer watched) is
// Current; one that becomes Failed, is deleted or stalls (when stalls fail) ends it with
// why; the others' events change nothing.
func TestUntilReadyNamed(t *testing.T) {
	newWait := func(stallsFail bool) *Conditions {
		c := New(Config{Names: []string{"a", "b"}, Ready: UntilReady(named("a", "b"), 0, false, stallsFail)})
		c.Watch(watched{"shop"})
		return c
	}
	c := newWait(false)
	for _, step := range []struct {
		ev  *event.Event
		met bool
	}{
		{ev(event.Added, "a", "InProgress", nil), false},
		{ev(event.Added, "b", "Current", nil), false},
		{ev(event.Added, "other", "Failed", nil), false},
		{ev(event.Modified, "a", "Current", nil), true},
	} {
		if got := c.MetBy(step.ev); got != step.met {
			t.Errorf("%s %s %s: met %v, want %v", step.ev.Type, step.ev.Meta().GetName(), step.ev.Health.Status, got, step.met)
		}
	}
	if _, _, failed := c.Failed(); failed {
		t.Error("met, yet failed")
	}

	for _, tc := range []struct {
		ev         *event.Event
		stallsFail bool
		why        string
	}{
		{ev(event.Modified, "a", "Failed", nil), false, `widget "a" failed: because`},
		{ev(event.Deleted, "b", "NotFound", nil), false, `widget "b" was deleted`},
		{ev(event.Stalled, "a", "InProgress", nil), true, `widget "a" stalled: because`},
	} {
		c := newWait(tc.stallsFail)
		if !c.MetBy(tc.ev) {
			t.Errorf("%s %s: did not end the wait", tc.ev.Type, tc.ev.Health.Status)
		}
		if what, why, failed := c.Failed(); !failed || what != "not ready" || why != tc.why {
			t.Errorf("%s: failed %v, %q %q; want not ready: %q", tc.ev.Type, failed, what, why, tc.why)
		}
	}
	if c := newWait(false); c.MetBy(ev(event.Stalled, "a", "InProgress", nil)) {
		t.Error("a stall ended the wait without --stalled-after")
	}
	if err := newWait(false).NotMet("timed out after 3s"); err.Error() != "timed out after 3s before --until-ready was met (2 not seen)" {
		t.Errorf("NotMet: %v", err)
	}
}

// --owned --until-ready: the followed object and everything it owns Current, once the
// tree is known whole (synced); what cannot be judged (Unknown) holds up nothing, a
// child that fails or is deleted does not end it.
func TestUntilReadyTree(t *testing.T) {
	root := []event.Owner{}
	child := []event.Owner{{Kind: "Widget", Name: "root"}}
	c := New(Config{Ready: UntilReady(func(e *event.Event) bool { return e.Owners != nil && len(e.Owners) == 0 }, 1, true, false)})
	for _, step := range []struct {
		ev  *event.Event
		met bool
	}{
		{ev(event.Added, "root", "Current", root), false}, // not synced yet
		{ev(event.Added, "pod-1", "InProgress", child), false},
		{ev(event.Added, "meta", "Unknown", child), false},
		{ev(event.Modified, "pod-2", "Failed", child), false},
	} {
		if got := c.MetBy(step.ev); got != step.met {
			t.Errorf("%s: met %v", step.ev.Meta().GetName(), got)
		}
	}
	if c.Synced() {
		t.Error("met at sync with children not ready")
	}
	if c.MetBy(ev(event.Modified, "pod-1", "Current", child)) {
		t.Error("met with pod-2 Failed")
	}
	if !c.MetBy(ev(event.Deleted, "pod-2", "NotFound", child)) {
		t.Error("not met once the failed child was gone and every other one Current")
	}
	if _, _, failed := c.Failed(); failed {
		t.Error("a child's failure failed the wait")
	}
}

// --until-rollout is the same machinery: the followed object's rollout, complete or
// failed (with kubectl's message).
func TestUntilRollout(t *testing.T) {
	isRoot := func(e *event.Event) bool { return e.Meta().GetName() == "web" }
	rollout := func(name string, state event.RolloutState) *event.Event {
		e := ev(event.Modified, name, "", nil)
		e.Rollout = &event.Rollout{State: state, Message: "deployment \"web\" exceeded its progress deadline"}
		return e
	}
	c := New(Config{Ready: UntilRollout(isRoot)})
	if c.MetBy(rollout("web", event.RolloutProgressing)) || c.MetBy(rollout("other", event.RolloutComplete)) {
		t.Error("met before the root's rollout ended")
	}
	if !c.MetBy(rollout("web", event.RolloutComplete)) {
		t.Error("not met by the root's complete rollout")
	}
	c = New(Config{Ready: UntilRollout(isRoot)})
	if !c.MetBy(rollout("web", event.RolloutFailed)) {
		t.Error("not ended by the root's failed rollout")
	}
	if what, why, failed := c.Failed(); !failed || what != "rollout failed" || why != `deployment "web" exceeded its progress deadline` {
		t.Errorf("failed %v %q %q", failed, what, why)
	}
	if c.Awaited() != "--until-rollout" {
		t.Errorf("Awaited %q", c.Awaited())
	}
}
