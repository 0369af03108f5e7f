package crashcontext

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Start's context: the sinks wait for it within the bound and, past it, all go without
// the log, with how the container ended; the fetch goes on, and what came late is there
// for a sink that can add it.
func TestStartLateLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pod := crashLooping("web-1")
		release := make(chan struct{})
		cs := &slowLogs{Interface: fake.NewClientset(), answer: func(req *http.Request) (string, error) {
			return "the last words\n", waitOr(req, release)
		}}
		p := New(cs, DefaultOptions(), nil).Start(t.Context(), pod, "")
		start := time.Now()
		c := p.Wait()
		if took := time.Since(start); took != time.Second || c.Log != nil || c.LogError != "no answer within 1s" ||
			c.LastTermination == nil || c.LastTermination.Message != "config missing" || c.Container != "app" {
			t.Fatalf("after %s: %+v", took, c)
		}
		if !p.Late() || p.Wait() != c {
			t.Error("a second Wait differs from the first")
		}
		time.Sleep(2 * time.Second)
		close(release)
		<-p.Ended()
		if got := p.Fetched(); got.Log == nil || got.Log.Lines[0] != "the last words" {
			t.Errorf("late: %+v", got)
		}
		if c := p.Wait(); c.Log != nil {
			t.Error("a Wait after the late answer shows it: the sinks would differ")
		}
	})
}

// Within the bound, Wait gives what was fetched.
func TestStartInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := &slowLogs{Interface: fake.NewClientset(), answer: func(*http.Request) (string, error) { return "bye\n", nil }}
		p := New(cs, DefaultOptions(), nil).Start(t.Context(), crashLooping("web-1"), "app")
		if c := p.Wait(); c.Log == nil || c.Log.Lines[0] != "bye" || p.Late() {
			t.Errorf("%+v", c)
		}
	})
}

// The step fetches a pod's context once per episode (and once per crash without one),
// only for the events of crash transitions, and not for one every sink holds.
func TestStageOncePerPodPerEpisode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := &slowLogs{Interface: fake.NewClientset(), answer: func(*http.Request) (string, error) { return "bye\n", nil }}
		s := NewStage(map[string]kubernetes.Interface{"": cs}, DefaultOptions(), false, func(string, string) {})
		ep := func(id string, action event.EpisodeAction) []event.EpisodeDecision {
			return []event.EpisodeDecision{{Action: action, Episode: &event.Episode{ID: id}}}
		}
		pod := crashLooping("web-1")
		mk := func(on string, d []event.EpisodeDecision) *event.Event {
			ev := &event.Event{Type: event.Modified, Kind: "Pod", Object: pod, On: []string{on}, Episodes: d}
			s.Process(ev)
			synctest.Wait() // fetched: a later one is a request of its own
			return ev
		}
		first := mk("crashloop", ep("e1", event.EpisodeOpen))
		second := mk("crashloop", ep("e1", event.EpisodeUpdate))
		if first.Context == nil || second.Context != first.Context {
			t.Fatal("one context per pod and episode")
		}
		if mk("crashloop", ep("e2", event.EpisodeHeld)).Context != nil {
			t.Error("a context fetched for an event every sink holds")
		}
		if mk("ready", nil).Context != nil {
			t.Error("a context for another transition")
		}
		if other := mk("crashloop", ep("e3", event.EpisodeOpen)); other.Context == nil || other.Context == first.Context {
			t.Error("another episode shares the first's context")
		}
		plain := mk("crashloop", nil)
		if plain.Context == nil || mk("oomkilled", nil).Context != plain.Context {
			t.Error("without an episode: one context per crash")
		}
		synctest.Wait()
		if n := cs.count.Load(); n != 3 {
			t.Errorf("%d log requests, want 3", n)
		}
	})
}
