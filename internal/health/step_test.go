package health

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// deploy is a Deployment of 3 replicas with available of them available.
func deploy(name string, available int32) *appsv1.Deployment {
	three := int32(3)
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: &three},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: available, AvailableReplicas: available,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: "True", Reason: "NewReplicaSetAvailable"}}}}
	if available == 3 {
		d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: "True"})
	}
	return d
}

func change(typ event.EventType, at time.Time, obj *appsv1.Deployment) *event.Event {
	return &event.Event{Type: typ, Time: at, Resource: deployments, Kind: "Deployment", Object: obj}
}

// Each event's health says the status of the object's previous event; a deletion is
// NotFound and forgets the object; a SYNC changes nothing; a core Event has none.
func TestStepPrevious(t *testing.T) {
	s := New(Config{})
	t0 := time.Now()
	var got []string
	for _, ev := range []*event.Event{
		change(event.Added, t0, deploy("web", 1)),
		change(event.Modified, t0, deploy("web", 3)),
		change(event.Sync, t0, deploy("web", 3)),
		change(event.Deleted, t0, deploy("web", 3)),
		change(event.Added, t0, deploy("web", 3)),
	} {
		s.Process(ev)
		got = append(got, string(ev.Health.Previous)+">"+string(ev.Health.Status))
	}
	want := []string{">InProgress", "InProgress>Current", "Current>Current", "Current>NotFound", ">Current"}
	if !slices.Equal(got, want) {
		t.Errorf("previous>status = %q, want %q", got, want)
	}
	related := &event.Event{Type: event.Added, Related: true, Resource: deployments, Kind: "Deployment", Object: deploy("web", 3)}
	if s.Process(related); related.Health != nil {
		t.Errorf("a core Event got health %+v", related.Health)
	}
	d := deploy("old", 3)
	d.DeletionTimestamp = &metav1.Time{Time: t0}
	ev := change(event.Modified, t0, d)
	if s.Process(ev); ev.Health.Status != event.HealthTerminating {
		t.Errorf("an object being deleted: %+v", ev.Health)
	}
}

// collector is a take function that keeps what it is handed.
type collector struct {
	mu  sync.Mutex
	got []*event.Event
}

func (c *collector) take(ev *event.Event) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, ev)
	return true
}

func (c *collector) stalled() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ev := range c.got {
		if ev.Type == event.Stalled {
			out = append(out, ev.Meta().GetName()+" "+ev.Health.Message)
		}
	}
	return out
}

// An object InProgress for StallAfter without progress gets one STALLED event, at the
// time it stalled; progress (a new message) starts the time again; Current stops it.
func TestStepStallsLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{StallAfter: time.Minute})
		c := &collector{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Run(ctx, c.take) }()
		start := time.Now()
		s.Process(change(event.Added, time.Now(), deploy("stuck", 1)))
		s.Process(change(event.Added, time.Now(), deploy("slow", 1)))
		s.Process(change(event.Added, time.Now(), deploy("fine", 1)))
		time.Sleep(40 * time.Second)
		s.Process(change(event.Modified, time.Now(), deploy("slow", 2))) // progress
		s.Process(change(event.Modified, time.Now(), deploy("fine", 3))) // Current
		s.Process(change(event.Modified, time.Now(), deploy("stuck", 1)))
		time.Sleep(25 * time.Second)
		synctest.Wait()
		if got := c.stalled(); len(got) != 1 || got[0] != "stuck no progress for 1m0s: Available: 1/3" {
			t.Errorf("after 65s: stalled %q, want stuck alone", got)
		}
		c.mu.Lock()
		if at := c.got[0].Time.Sub(start); at != time.Minute {
			t.Errorf("stuck stalled at +%s, want +1m", at)
		}
		c.mu.Unlock()
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := c.stalled(); len(got) != 2 || got[1] != "slow no progress for 1m0s: Available: 2/3" {
			t.Errorf("an hour later: stalled %q, want stuck then slow, each once", got)
		}
		cancel()
		<-done
	})
}

// source is a recording's events, handed over in order.
type source []*event.Event

func (s source) Run(_ context.Context, take func(*event.Event) bool) error {
	for _, ev := range s {
		if !take(ev) {
			return nil
		}
	}
	return nil
}

// A replay makes the STALLED events from the recording's times, before the first event
// after them; one the recording holds is made again rather than shown twice.
func TestStepStallsReplayed(t *testing.T) {
	s := New(Config{StallAfter: 5 * time.Minute})
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	recorded := source{
		change(event.Added, t0, deploy("stuck", 1)),
		change(event.Added, t0.Add(time.Minute), deploy("other", 3)),
		{Type: event.Stalled, Time: t0.Add(5 * time.Minute), Resource: deployments, Kind: "Deployment", Object: deploy("stuck", 1)},
		change(event.Modified, t0.Add(10*time.Minute), deploy("other", 2)),
	}
	c := &collector{}
	_ = s.Replayed(recorded).Run(context.Background(), func(ev *event.Event) bool {
		s.Process(ev) // as the pipeline's health step
		return c.take(ev)
	})
	var order []string
	for _, ev := range c.got {
		order = append(order, string(ev.Type)+" "+ev.Meta().GetName()+" "+ev.Time.Sub(t0).String())
	}
	want := []string{"ADDED stuck 0s", "ADDED other 1m0s", "STALLED stuck 5m0s", "MODIFIED other 10m0s"}
	if !slices.Equal(order, want) {
		t.Errorf("replayed %q, want %q", order, want)
	}
}

// A custom resource whose definition has a status subresource, and no status yet, is
// InProgress: its controller has not reported on it (kstatus alone says Current).
func TestStepWaitsForTheControllersStatus(t *testing.T) {
	fresh := `{apiVersion: example.com/v1, kind: MyApp, metadata: {name: web, generation: 1}, spec: {size: 1}}`
	s := New(Config{StatusWritten: []schema.GroupResource{{Group: "example.com", Resource: "myapps"}}})
	ev := eventOf(custom(t, fresh))
	if s.Process(ev); ev.Health.Status != event.HealthInProgress {
		t.Errorf("no status yet: %+v", ev.Health)
	}
	reported := eventOf(custom(t, `{apiVersion: example.com/v1, kind: MyApp, metadata: {name: web, generation: 1}, status: {observedGeneration: 1}}`))
	if s.Process(reported); reported.Health.Status != event.HealthCurrent {
		t.Errorf("a status without conditions: %+v", reported.Health)
	}
	if h := Kstatus(custom(t, fresh)); h.Status != event.HealthCurrent {
		t.Errorf("kstatus alone: %+v", h)
	}
	other := New(Config{})
	ev = eventOf(custom(t, fresh))
	if other.Process(ev); ev.Health.Status != event.HealthCurrent {
		t.Errorf("a kind without a status subresource: %+v", ev.Health)
	}
}

// The object --owned follows (owners known, none above it) gets its health as its
// rollout line when its kind has none of its own; a child, an object --owned does not
// follow, and a Deployment's own rollout are left as they are.
func TestStepRolloutOfTheFollowed(t *testing.T) {
	myapps := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "myapps"}
	myapp := func(conditions ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "MyApp",
			"metadata": map[string]any{"name": "web", "namespace": "shop", "generation": int64(1)},
			"status":   map[string]any{"observedGeneration": int64(1), "conditions": conditions}}}
	}
	cond := func(typ, status, reason, message string) any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": message}
	}
	s := New(Config{})
	root := func(obj *unstructured.Unstructured) *event.Event {
		return &event.Event{Type: event.Modified, Time: time.Now(), Resource: myapps, Kind: "MyApp", Object: obj, Owners: []event.Owner{}}
	}
	for _, tc := range []struct {
		obj  *unstructured.Unstructured
		want event.RolloutState
		msg  string
	}{
		{myapp(cond("Reconciling", "True", "Progressing", "reconciling generation 1")), event.RolloutProgressing, "InProgress: reconciling generation 1"},
		{myapp(cond("Ready", "True", "Succeeded", "ready")), event.RolloutComplete, "Current: Resource is Ready"},
		{myapp(cond("Stalled", "True", "Invalid", "replicas must be positive")), event.RolloutFailed, "Failed: replicas must be positive"},
	} {
		ev := root(tc.obj)
		s.Process(ev)
		if ev.Rollout == nil || ev.Rollout.State != tc.want || ev.Rollout.Message != tc.msg {
			t.Errorf("health %+v: rollout %+v, want %s %q", ev.Health, ev.Rollout, tc.want, tc.msg)
		}
	}
	child := &event.Event{Type: event.Modified, Time: time.Now(), Resource: deployments, Kind: "Deployment", Object: deploy("web", 1),
		Owners: []event.Owner{{Kind: "MyApp", Name: "web"}}}
	plain := &event.Event{Type: event.Modified, Time: time.Now(), Resource: myapps, Kind: "MyApp", Object: myapp()}
	own := &event.Event{Type: event.Modified, Time: time.Now(), Resource: deployments, Kind: "Deployment", Object: deploy("web", 1),
		Owners: []event.Owner{}, Rollout: &event.Rollout{State: event.RolloutProgressing, Message: "1 of 3 updated replicas are available"}}
	for _, ev := range []*event.Event{child, plain, own} {
		s.Process(ev)
	}
	if child.Rollout != nil || plain.Rollout != nil || own.Rollout.Message != "1 of 3 updated replicas are available" {
		t.Errorf("rollouts changed: child %+v, not followed %+v, a Deployment's own %+v", child.Rollout, plain.Rollout, own.Rollout)
	}
}
