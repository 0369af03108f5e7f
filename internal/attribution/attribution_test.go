package attribution

import (
	"cmp"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

var (
	t0   = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

func entry(manager, sub string, second int, fields string) metav1.ManagedFieldsEntry {
	ts := metav1.NewTime(t0.Add(time.Duration(second) * time.Second))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		Subresource: sub, Time: &ts, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// versions are a pod's versions as the informer's transform leaves them, each with the
// record the tracker made of it (as the informer's handler takes it).
type versions struct {
	tracker *managedfields.Tracker
	last    *corev1.Pod
}

func (v *versions) next(typ event.EventType, change func(p *corev1.Pod), entries ...metav1.ManagedFieldsEntry) *event.Event {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", CreationTimestamp: metav1.NewTime(t0)},
		Spec:       corev1.PodSpec{SchedulerName: "default-scheduler", Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
	if v.last != nil {
		p = v.last.DeepCopy()
	}
	p.ResourceVersion += "1"
	change(p)
	p.ManagedFields = entries
	v.tracker.Observe(p)
	p.ManagedFields = nil
	ev := &event.Event{Type: typ, Resource: pods, Kind: "Pod", Object: p, ManagedFields: v.tracker.Take(p)}
	if v.last != nil && typ == event.Modified {
		ev.Old = v.last
	}
	v.last = p
	return ev
}

func names(a *Attribution) string {
	if a == nil {
		return "<nil>"
	}
	return Mark(a.By, a.Ambiguous)
}

const replicas = `{"f:spec":{"f:replicas":{}}}`

func TestOf(t *testing.T) {
	d := diff.NewDiffer(nil)
	v := &versions{tracker: managedfields.NewTracker()}
	created := entry("kube-controller-manager", "", 0, `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}`)
	added := v.next(event.Added, func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web"} }, created)
	if got := names(Of(added, d)); got != "kube-controller-manager" {
		t.Errorf("ADDED: %s, want the creator", got)
	}
	// Bound within the creation's second: no entry moved, nobody owns spec.nodeName.
	bound := v.next(event.Modified, func(p *corev1.Pod) { p.Spec.NodeName = "kwok-node-1" }, created)
	if got := names(Of(bound, d)); got != "default-scheduler (binding) or another client" {
		t.Errorf("binding: %s, want default-scheduler (binding) or another client", got)
	}
	status := entry("kwok", "status", 3, `{"f:status":{"f:phase":{}}}`)
	running := v.next(event.Modified, func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }, created, status)
	if got := names(Of(running, d)); got != "kwok (status)" {
		t.Errorf("status: %s, want kwok (status)", got)
	}
	// Deleted: deletionTimestamp, which no manager owns, in kwok's latest second.
	terminating := v.next(event.Modified, func(p *corev1.Pod) { ts := metav1.NewTime(t0.Add(3 * time.Second)); p.DeletionTimestamp = &ts }, created, status)
	if a := Of(terminating, d); a == nil || len(a.By) != 0 {
		t.Errorf("deletion: %s, want nobody", names(a))
	}
	deleted := &event.Event{Type: event.Deleted, Resource: pods, Object: v.last, ManagedFields: terminating.ManagedFields}
	if a := Of(deleted, d); a != nil {
		t.Errorf("DELETED: %s, want nothing", names(a))
	}
	first, again := Of(running, d), Of(running, d)
	if first != again {
		t.Error("Of is not computed once per event")
	}
}

func TestFilter(t *testing.T) {
	d := diff.NewDiffer(nil)
	v := &versions{tracker: managedfields.NewTracker()}
	creator := entry("kubectl-create", "", 0, replicas)
	added := v.next(event.Added, func(*corev1.Pod) {}, creator)
	byKwok := v.next(event.Modified, func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }, creator,
		entry("kwok", "status", 2, `{"f:status":{"f:phase":{}}}`))
	nobody := v.next(event.Modified, func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = new(int64) }, creator,
		entry("kwok", "status", 2, `{"f:status":{"f:phase":{}}}`))
	deleted := &event.Event{Type: event.Deleted, Resource: pods, Object: v.last}

	for _, tc := range []struct {
		filter Filter
		kept   []*event.Event
	}{
		{Filter{By: []string{"kwok"}}, []*event.Event{byKwok}},
		{Filter{By: []string{"kubectl-*"}}, []*event.Event{added}},
		{Filter{NotBy: []string{"kwok", "kube*"}}, []*event.Event{nobody, deleted}},
		{Filter{By: []string{"kwok", "kubectl-create"}}, []*event.Event{added, byKwok}},
	} {
		skip := tc.filter.Skip(d)
		var kept []*event.Event
		for _, ev := range []*event.Event{added, byKwok, nobody, deleted} {
			if !skip(ev) {
				kept = append(kept, ev)
			}
		}
		if len(kept) != len(tc.kept) {
			t.Errorf("%+v kept %d events, want %d", tc.filter, len(kept), len(tc.kept))
			continue
		}
		for i := range kept {
			if kept[i] != tc.kept[i] {
				t.Errorf("%+v kept %s %s, want %s %s", tc.filter, kept[i].Type, names(Of(kept[i], d)), tc.kept[i].Type, names(Of(tc.kept[i], d)))
			}
		}
	}
	if (Filter{}).Skip(d) != nil {
		t.Error("an empty filter skips")
	}
	if err := (Filter{NotBy: []string{"kube[", "ok"}}).Check(); err == nil || !strings.Contains(err.Error(), `--not-by "kube["`) {
		t.Errorf("Check of a broken glob: %v", err)
	}
	if !matches("system:serviceaccount:ns/x", []string{"system:*"}) {
		t.Error("* does not match across '/'")
	}
}

func TestAppendJSON(t *testing.T) {
	got := string(AppendJSON(nil, []Entry{
		{Manager: "kubectl-scale", Operation: "Update", Subresource: "scale", Time: t0},
		{Manager: "default-scheduler", Subresource: "binding"},
	}))
	want := `[{"manager":"kubectl-scale","operation":"Update","subresource":"scale","time":"2026-11-27T10:00:00Z"},{"manager":"default-scheduler","subresource":"binding"}]`
	if got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
}

// The previous object is built along the changes' paths only, with the same values
// there as the whole of it: the list elements walked through are those it had.
func TestOldAlongThePathsAsWhole(t *testing.T) {
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"a/b": "1"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "web:1",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: "TCP"}}}, {Name: "side", Image: "s:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	ev := &event.Event{Type: event.Modified, Resource: pods, Kind: "Pod", Object: old.DeepCopy(), Old: old}
	changes := []managedfields.Change{
		{Op: "replace", Path: "/spec/containers/1/image"},
		{Op: "replace", Path: "/spec/containers/0/ports/0/containerPort"},
		{Op: "replace", Path: "/metadata/labels/a~1b"},
		{Op: "add", Path: "/spec/containers/0/ports/0/name/x"},
	}
	got, err := oldAlong(ev, changes)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ev.OldValue()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range [][]string{{"spec", "containers"}, {"metadata", "labels"}} {
		g, w := at(got, path), at(whole, path)
		if g == nil || !reflect.DeepEqual(g, w) {
			t.Errorf("%v: %v, want %v", path, g, w)
		}
	}
	if at(got, []string{"status"}) != nil || at(got, []string{"spec", "nodeName"}) != nil {
		t.Errorf("built beyond the paths: %v", got)
	}
}

func at(v any, path []string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// scheduled is the PodScheduled condition as kube-scheduler writes it (False, with a
// reason) and as a binding leaves it (True).
func scheduled(p *corev1.Pod, status corev1.ConditionStatus) {
	c := corev1.PodCondition{Type: corev1.PodScheduled, Status: status, LastTransitionTime: metav1.NewTime(t0.Add(9 * time.Second))}
	if status == corev1.ConditionFalse {
		c.Reason, c.Message = corev1.PodReasonUnschedulable, "0/3 nodes are available"
	}
	p.Status.Conditions = []corev1.PodCondition{c}
}

const schedulerStatus = `{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}}}}`

// A pod first unschedulable (kube-scheduler wrote its status), then bound: the binding
// records no entry, so its maker cannot be known. The change is the binding's (the
// pod's scheduler, or another client), never kube-scheduler's status entry, which
// owns the condition the binding changed but made none of it.
func TestBindingAfterUnschedulable(t *testing.T) {
	for _, scheduler := range []string{"", "no-such-scheduler"} {
		v := &versions{tracker: managedfields.NewTracker()}
		created := entry("kubectl-create", "", 0, `{"f:spec":{"f:schedulerName":{}}}`)
		v.next(event.Added, func(p *corev1.Pod) { p.Spec.SchedulerName = scheduler }, created)
		unschedulable := entry("kube-scheduler", "status", 2, schedulerStatus)
		v.next(event.Modified, func(p *corev1.Pod) { scheduled(p, corev1.ConditionFalse) }, created, unschedulable)
		bound := v.next(event.Modified, func(p *corev1.Pod) {
			p.Spec.NodeName = "kwok-node-1"
			scheduled(p, corev1.ConditionTrue)
		}, created, unschedulable)
		want := cmp.Or(scheduler, "default-scheduler")
		for _, d := range []*diff.Differ{diff.NewDiffer(nil), nil} { // nil: --no-diff
			a := Of(bound, d)
			if a == nil || len(a.By) != 1 || a.By[0] != (Entry{Manager: want, Subresource: "binding"}) || !a.Ambiguous || a.Changes != nil {
				t.Errorf("scheduler %q, differ %v: %+v, want %s (binding), ambiguous", scheduler, d != nil, a, want)
			}
		}
	}
}

// A binding missed among other writes (a re-list, a coalesced change): spec.nodeName
// is the binding's, the status kwok's.
func TestBindingAmongOtherWrites(t *testing.T) {
	v := &versions{tracker: managedfields.NewTracker()}
	created := entry("kubectl-create", "", 0, `{"f:spec":{"f:schedulerName":{}}}`)
	v.next(event.Added, func(*corev1.Pod) {}, created)
	kwok := entry("kwok", "status", 3, `{"f:status":{"f:phase":{}}}`)
	ev := v.next(event.Modified, func(p *corev1.Pod) {
		p.Spec.NodeName = "kwok-node-1"
		p.Status.Phase = corev1.PodRunning
	}, created, kwok)
	d := diff.NewDiffer(nil)
	a := Of(ev, d)
	if got := names(a); got != "default-scheduler (binding) or kwok (status) or another client" {
		t.Errorf("by %s", got)
	}
	changes, _ := d.Changes(ev)
	for i, c := range changes {
		want := map[string]string{"/spec/nodeName": "default-scheduler (binding)", "/status/phase": "kwok (status)"}[c.Path]
		if got := Mark(a.ChangeBy(i), false); got != want {
			t.Errorf("%s: by %q, want %q", c.Path, got, want)
		}
	}
}

// Where managedFields record the binding (an entry of the binding subresource), that
// entry is its maker, as any write's.
func TestBindingRecorded(t *testing.T) {
	v := &versions{tracker: managedfields.NewTracker()}
	created := entry("kubectl-create", "", 0, `{}`)
	v.next(event.Added, func(*corev1.Pod) {}, created)
	binder := entry("my-binder", "binding", 4, `{"f:spec":{"f:nodeName":{}}}`)
	ev := v.next(event.Modified, func(p *corev1.Pod) { p.Spec.NodeName = "kwok-node-1" }, created, binder)
	if a := Of(ev, nil); names(a) != "my-binder (binding)" || a.By[0].Operation != "Update" || a.Ambiguous {
		t.Errorf("by %+v, want my-binder (binding), its entry", a)
	}
}

// Without diffs shown (--no-diff), a write its time cannot tell is told by its fields
// all the same.
func TestNoDiffSameAttribution(t *testing.T) {
	v := &versions{tracker: managedfields.NewTracker()}
	creator := entry("creator", "", 0, `{}`)
	v.next(event.Added, func(*corev1.Pod) {}, creator)
	labels := `{"f:metadata":{"f:labels":{".":{},"f:a":{}}}}`
	v.next(event.Modified, func(p *corev1.Pod) { p.Labels = map[string]string{"a": "1"} }, creator, entry("labeller", "", 5, labels))
	again := v.next(event.Modified, func(p *corev1.Pod) { p.Labels = map[string]string{"a": "2"} }, creator, entry("labeller", "", 5, labels))
	if got := names(Of(again, nil)); got != "labeller" {
		t.Errorf("--no-diff: by %q, want labeller", got)
	}
}
