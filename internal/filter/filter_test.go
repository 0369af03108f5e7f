package filter

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

// leftOutBy runs the filter step of cfg on ev and says why it left it out.
func leftOutBy(cfg Config, ev *event.Event) event.LeftOut {
	if s := New(cfg); s != nil {
		s.Process(ev)
	}
	return ev.LeftOut
}

func TestNamespaceFilterMatchesGlobs(t *testing.T) {
	if New(Config{ExcludeNamespaces: []string{"kube-system"}}) != nil {
		t.Error("a plain name needs no client-side filter")
	}
	cfg := Config{ExcludeNamespaces: []string{"team-*", "x?"}}
	for ns, want := range map[string]bool{"team-a": true, "team-": true, "xy": true, "xyz": false, "default": false, "": false} {
		ev := &event.Event{Type: event.Added, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns}}}
		if got := leftOutBy(cfg, ev) == event.LeftOutNamespace; got != want {
			t.Errorf("namespace %q left out = %v, want %v", ns, got, want)
		}
	}
}

func TestFilterKeepsOnlyEventTypes(t *testing.T) {
	cfg := Config{EventTypes: []event.EventType{event.Added, event.Deleted}}
	for typ, want := range map[event.EventType]bool{event.Added: false, event.Modified: true, event.Deleted: false} {
		ev := &event.Event{Type: typ, Object: &corev1.Pod{}}
		if got := leftOutBy(cfg, ev) == event.LeftOutEventType; got != want {
			t.Errorf("%s left out = %v, want %v", typ, got, want)
		}
	}
	if New(Config{}) != nil {
		t.Error("no filter set: no filter step")
	}
}

// --by and --not-by are part of the filter step, before numbering: what they leave out is
// not counted as unchanged.
func TestFilterByManager(t *testing.T) {
	events := eventtest.AttributedEvents() // kube-controller-manager, default-scheduler, kwok, DELETED, ...
	differ := diff.NewDiffer(nil)
	filter := New(Config{By: attribution.Filter{By: []string{"kwok", "default-*"}}, ChangesOnly: true, Differ: differ})
	var kept []string
	for _, ev := range events[:4] {
		if filter.Process(ev); ev.LeftOut == event.Kept {
			kept = append(kept, string(ev.Type)+" "+attribution.Mark(attribution.Of(ev, differ).By, false))
		}
	}
	if want := []string{"MODIFIED default-scheduler (binding)", "MODIFIED kwok (status)"}; !slices.Equal(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	for _, ev := range events[:4] {
		if ev.LeftOut == event.LeftOutUnchanged {
			t.Errorf("an event left out by --by said to be unchanged")
		}
	}
}
