package fold

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubeevents/kubeevents/internal/event"
)

var (
	t0          = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	podsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	deployments = Workloads[0].GVR
)

// web is Deployment web of 3 replicas, updated of them and old ones besides.
func web(generation, observed int64, updated, old, available int32) *appsv1.Deployment {
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: generation},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: updated + old, UpdatedReplicas: updated,
			AvailableReplicas: available, ReadyReplicas: available}}
}

func failedWeb() *appsv1.Deployment {
	d := web(2, 2, 1, 3, 3)
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	return d
}

// pod is a pod of ReplicaSet web-HASH (Deployment web), or of another controller.
func pod(name, ownerKind, ownerName, hash string, terminating bool) *corev1.Pod {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(name + "-uid"),
			Labels:          map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: ownerName, Controller: ptr.To(true)}}}}
	if terminating {
		p.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
	}
	return p
}

var seq uint64

func ev(typ event.EventType, obj, old runtime.Object) *event.Event {
	seq++
	gvk := obj.GetObjectKind().GroupVersionKind()
	gvr := podsGVR
	if gvk.Kind == "Deployment" {
		gvr = deployments
	}
	return &event.Event{Type: typ, Time: t0, Seq: seq, Resource: gvr, Kind: gvk.Kind, Object: obj, Old: old}
}

// folder is a Folder and what it delivered, as lines: "ROLLOUT progressing 1/3 updated,
// 0 available, 3 old (2)" or "MODIFIED shop/new-1 unfolded #5".
type folder struct {
	*Folder
	got []string
}

func newFolder(keep int) *folder {
	f := &folder{}
	f.Folder = New(Options{Keep: keep, Now: func() time.Time { return t0 }, Deliver: func(e *event.Event) {
		switch {
		case e.Type == event.RolloutStep:
			f.got = append(f.got, fmt.Sprintf("ROLLOUT %s %s (%d)", e.Rollout.State, e.Rollout.Message, e.FoldedEvents))
		case e.UnfoldedSeq != 0:
			f.got = append(f.got, fmt.Sprintf("%s %s unfolded #%d", e.Type, e.Key(), e.UnfoldedSeq))
		default:
			f.got = append(f.got, "unexpected "+string(e.Type))
		}
	}})
	return f
}

// made asks the Folder about each event and returns those it folded, as "TYPE name".
func (f *folder) made(events ...*event.Event) []string {
	var folded []string
	for _, e := range events {
		f.Made(e)
		if e.Folded {
			folded = append(folded, string(e.Type)+" "+e.Meta().GetName())
		}
	}
	return folded
}

func (f *folder) delivered() []string {
	got := f.got
	f.got = nil
	return got
}

// A rollout that completes: a ROLLOUT line per step and one at its end; its pods'
// events folded meanwhile, and those of its old pods still terminating until they are
// gone; the Deployment's own updates folded from the one after its start.
func TestFoldsARolloutThatCompletes(t *testing.T) {
	f := newFolder(0)
	observer := observerOf(f.Folder)
	observer.Add(ev(event.Added, web(1, 1, 3, 0, 3), nil)) // complete: nothing to say
	if got := f.delivered(); got != nil {
		t.Fatalf("a complete Deployment: %q", got)
	}
	started := ev(event.Modified, web(2, 1, 3, 0, 3), web(1, 1, 3, 0, 3))
	observer.Add(started)
	if got := f.delivered(); !slices.Equal(got, []string{"ROLLOUT progressing update not yet seen by the controller (0)"}) {
		t.Fatalf("the start: %q", got)
	}
	// The Deployment's own start is shown; its pods' events are folded, a pod of
	// another workload's or of none are not.
	folded := f.made(started,
		ev(event.Added, pod("new-1", "ReplicaSet", "web-b2", "b2", false), nil),
		ev(event.Added, pod("other-1", "ReplicaSet", "api-c3", "c3", false), nil),
		ev(event.Added, pod("alone", "ReplicaSet", "web-b2", "xx", false), nil), // not DEPLOYMENT-HASH
		ev(event.Modified, pod("old-1", "ReplicaSet", "web-a1", "a1", true), pod("old-1", "ReplicaSet", "web-a1", "a1", false)),
	)
	if !slices.Equal(folded, []string{"ADDED new-1", "MODIFIED old-1"}) {
		t.Errorf("folded %q", folded)
	}
	step := ev(event.Modified, web(2, 2, 1, 2, 3), web(2, 1, 3, 0, 3))
	observer.Add(step)
	observer.Add(ev(event.Modified, web(2, 2, 1, 2, 3), web(2, 2, 1, 2, 3))) // the same step again: no line
	if got := f.delivered(); !slices.Equal(got, []string{"ROLLOUT progressing 1/3 updated, 3 available, 2 old (2)"}) {
		t.Fatalf("a step: %q", got)
	}
	if folded := f.made(step); !slices.Equal(folded, []string{"MODIFIED web"}) {
		t.Errorf("the Deployment's own update in its rollout: folded %q", folded)
	}
	done := ev(event.Modified, web(2, 2, 3, 0, 3), web(2, 2, 1, 2, 3))
	observer.Add(done)
	if got := f.delivered(); !slices.Equal(got, []string{`ROLLOUT complete deployment "web" successfully rolled out (1)`}) {
		t.Fatalf("the end: %q", got)
	}
	// After it: its last update folded; the old pod terminating since folded until it is
	// gone; other pods of the Deployment shown again.
	folded = f.made(done,
		ev(event.Modified, pod("old-1", "ReplicaSet", "web-a1", "a1", true), pod("old-1", "ReplicaSet", "web-a1", "a1", true)),
		ev(event.Deleted, pod("old-1", "ReplicaSet", "web-a1", "a1", true), nil),
		ev(event.Modified, pod("new-1", "ReplicaSet", "web-b2", "b2", false), pod("new-1", "ReplicaSet", "web-b2", "b2", false)),
		ev(event.Deleted, pod("old-1", "ReplicaSet", "web-a1", "a1", true), nil),
	)
	if !slices.Equal(folded, []string{"MODIFIED web", "MODIFIED old-1", "DELETED old-1"}) {
		t.Errorf("after the rollout, folded %q", folded)
	}
	if len(f.workloads) != 0 {
		t.Errorf("the Folder still keeps %d workloads", len(f.workloads))
	}
}

// A rollout that fails unfolds what led to it, the last Keep events, before the line that
// says it failed; what happens next is shown.
func TestUnfoldsARolloutThatFails(t *testing.T) {
	f := newFolder(2)
	observer := observerOf(f.Folder)
	observer.Add(ev(event.Added, web(2, 2, 1, 3, 3), nil)) // in progress at start
	f.delivered()
	events := []*event.Event{
		ev(event.Added, pod("new-1", "ReplicaSet", "web-b2", "b2", false), nil),
		ev(event.Modified, pod("new-1", "ReplicaSet", "web-b2", "b2", false), pod("new-1", "ReplicaSet", "web-b2", "b2", false)),
		ev(event.Modified, pod("new-1", "ReplicaSet", "web-b2", "b2", false), pod("new-1", "ReplicaSet", "web-b2", "b2", false)),
	}
	if folded := f.made(events...); len(folded) != 3 {
		t.Fatalf("folded %q", folded)
	}
	observer.Add(ev(event.Modified, failedWeb(), web(2, 2, 1, 3, 3)))
	want := []string{
		fmt.Sprintf("MODIFIED shop/new-1 unfolded #%d", events[1].Seq),
		fmt.Sprintf("MODIFIED shop/new-1 unfolded #%d", events[2].Seq),
		`ROLLOUT failed deployment "web" exceeded its progress deadline (unfolded the last 2 of its 3 folded events) (3)`,
	}
	if got := f.delivered(); !slices.Equal(got, want) {
		t.Fatalf("the failure: %q, want %q", got, want)
	}
	if folded := f.made(ev(event.Modified, pod("new-1", "ReplicaSet", "web-b2", "b2", false), pod("new-1", "ReplicaSet", "web-b2", "b2", false))); folded != nil {
		t.Errorf("after the failure, folded %q", folded)
	}
}

func pod4(name, kind, owner string) *corev1.Pod { return pod(name, kind, owner, "", false) }

// StatefulSets' and DaemonSets' pods are theirs directly; an event in which a transition
// happened is never folded; a workload deleted in its rollout says so; a dynamic
// informer's unstructured workloads are read as the typed ones.
func TestFoldsOtherWorkloads(t *testing.T) {
	f := newFolder(0)
	observer := observerOf(f.Folder)
	sts := &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", Generation: 2},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)},
		Status:     appsv1.StatefulSetStatus{ObservedGeneration: 2, ReadyReplicas: 2, UpdatedReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"}}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sts)
	if err != nil {
		t.Fatal(err)
	}
	observer.Add(&event.Event{Type: event.Added, Time: t0, Resource: Workloads[1].GVR, Kind: "StatefulSet", Object: &unstructured.Unstructured{Object: raw}})
	if got := f.delivered(); !slices.Equal(got, []string{"ROLLOUT progressing 1/3 updated, 2/3 ready (0)"}) {
		t.Fatalf("a StatefulSet rolling out: %q", got)
	}
	crashed := ev(event.Modified, pod4("db-0", "StatefulSet", "db"), pod4("db-0", "StatefulSet", "db"))
	crashed.On = []string{"crashloop"}
	folded := f.made(
		ev(event.Modified, pod4("db-1", "StatefulSet", "db"), pod4("db-1", "StatefulSet", "db")),
		crashed,
		ev(event.Modified, pod4("log-1", "DaemonSet", "log"), pod4("log-1", "DaemonSet", "log")),
	)
	if !slices.Equal(folded, []string{"MODIFIED db-1"}) {
		t.Errorf("folded %q", folded)
	}
	observer.Add(&event.Event{Type: event.Deleted, Time: t0, Resource: Workloads[1].GVR, Kind: "StatefulSet", Object: sts})
	if got := f.delivered(); !slices.Equal(got, []string{`ROLLOUT deleted statefulset "db" was deleted (1)`}) {
		t.Errorf("deleted in its rollout: %q", got)
	}
}

// Step says a rollout's progress in a few words for each workload kind.
func TestStep(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 1},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 2, NumberAvailable: 1}}
	for obj, want := range map[runtime.Object]string{
		web(2, 2, 1, 2, 3): "1/3 updated, 3 available, 2 old",
		web(3, 2, 1, 2, 3): "update not yet seen by the controller",
		ds:                 "2/3 updated, 1/3 available",
		&corev1.Pod{}:      "",
	} {
		if got := Step(obj); got != want {
			t.Errorf("Step(%T) = %q, want %q", obj, got, want)
		}
	}
	if !strings.Contains(fmt.Sprint(Workloads), "deployments") {
		t.Error(Workloads)
	}
}

// observerOf feeds the Folder as its workload informers do.
type observer struct{ f *Folder }

func (o observer) Add(ev *event.Event) { o.f.Observe(ev) }

func observerOf(f *Folder) observer { return observer{f} }
