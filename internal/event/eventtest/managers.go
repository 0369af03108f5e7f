package eventtest

import (
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// NoTime is the second of an entry without a time (the scale subresource writes none).
const NoTime = math.MinInt32

// Entry is a managedFields entry: manager, operation, subresource, the second of its
// write after T0 (or NoTime) and the fields it owns, as the API server writes them.
func Entry(manager, operation, subresource string, second int, fields string) metav1.ManagedFieldsEntry {
	e := metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(operation), APIVersion: "v1",
		Subresource: subresource, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	if second != NoTime {
		ts := metav1.NewTime(T0.Truncate(time.Second).Add(time.Duration(second) * time.Second))
		e.Time = &ts
	}
	return e
}

// Versions makes the events of one object's versions as the informer does: each
// version's managedFields read by a tracker (the event's ManagedFields), then dropped.
type Versions struct {
	Tracker *managedfields.Tracker
	GVR     schema.GroupVersionResource
	Kind    string
	last    runtime.Object
}

// Next is the event of obj (with its managedFields set) after the versions before it:
// ADDED for the first, MODIFIED (from the last) for the others, or typ when given.
func (v *Versions) Next(seq uint64, obj runtime.Object, typ ...event.EventType) *event.Event {
	if v.Tracker == nil {
		v.Tracker = managedfields.NewTracker()
	}
	v.Tracker.Observe(obj)
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	ev := &event.Event{Type: event.Added, Time: T0.Add(time.Duration(seq) * time.Second), Seq: seq, Resource: v.GVR,
		Kind: v.Kind, Object: obj, ManagedFields: v.Tracker.Take(obj)}
	if v.last != nil {
		ev.Type, ev.Old = event.Modified, v.last
	}
	if len(typ) > 0 {
		ev.Type = typ[0]
		if ev.Type != event.Modified {
			ev.Old = nil
		}
	}
	v.last = obj
	return ev
}

// The fields of the managers of the attributed events.
const (
	podCreatorFields = `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}`
	kubeletFields    = `{"f:status":{"f:containerStatuses":{},"f:phase":{},"f:podIP":{}}}`
	replicasFields   = `{"f:spec":{"f:replicas":{}}}`
	imageFields      = `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}}`
	dataFields       = `{"f:data":{"f:mode":{}}}`
)

// AttributedEvents are events whose managers are known, one per way attribution
// decides: a creator, a binding (no entry), a status writer, the scale subresource (an
// entry without a time), versions missed (each change its own manager), two appliers of
// one field in one second (ambiguous), and a deletion (nobody).
func AttributedEvents() []*event.Event {
	created := Entry("kube-controller-manager", "Update", "", 0, podCreatorFields)
	pods := &Versions{GVR: Pods, Kind: "Pod"}
	withEntries := func(p *corev1.Pod, entries ...metav1.ManagedFieldsEntry) *corev1.Pod {
		p.UID, p.ManagedFields = "pod-uid", entries
		return p
	}
	pending := withEntries(WebPod(corev1.PodPending, false, "", "8801"), created)
	bound := withEntries(WebPod(corev1.PodPending, false, "worker-1", "8802"), created)
	bound.Status.PodIP = ""
	running := withEntries(WebPod(corev1.PodRunning, true, "worker-1", "8812"), created, Entry("kwok", "Update", "status", 2, kubeletFields))
	gone := WebPod(corev1.PodRunning, true, "worker-1", "8812")

	deployments := &Versions{GVR: Deployments, Kind: "Deployment"}
	deployment := func(rv string, replicas int32, image string, entries ...metav1.ManagedFieldsEntry) *appsv1.Deployment {
		d := webDeployment(replicas, appsv1.DeploymentStatus{})
		d.UID, d.ResourceVersion, d.ManagedFields = "deployment-uid", rv, entries
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: image}}
		return d
	}
	creator := Entry("kubectl-create", "Update", "", -48*3600, imageFields)
	scale := Entry("kubectl", "Update", "scale", NoTime, replicasFields)

	configMaps := &Versions{GVR: ConfigMaps, Kind: "ConfigMap"}
	configMap := func(rv, mode string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default", UID: "cm-uid", ResourceVersion: rv,
				CreationTimestamp: metav1.NewTime(T0), ManagedFields: []metav1.ManagedFieldsEntry{
					Entry("team-a", "Apply", "", 0, dataFields), Entry("team-b", "Apply", "", 0, dataFields)}},
			Data: map[string]string{"mode": mode}}
	}

	return []*event.Event{
		pods.Next(1, pending),
		pods.Next(2, bound),
		pods.Next(3, running),
		pods.Next(4, gone, event.Deleted),
		deployments.Next(5, deployment("100", 1, "web:1", creator)),
		deployments.Next(6, deployment("101", 3, "web:1", creator, scale)),
		deployments.Next(7, deployment("109", 5, "web:2", Entry("hpa", "Update", "", 8, replicasFields),
			Entry("kubectl-set", "Update", "", 9, imageFields))),
		configMaps.Next(8, configMap("300", "fast"), event.Added),
		configMaps.Next(9, configMap("301", "safe")),
	}
}
