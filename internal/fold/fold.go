// Package fold folds rollouts (--fold-rollouts): while a Deployment, StatefulSet or
// DaemonSet rolls out, the events of the pods it moves (and of a Deployment's
// ReplicaSets, and its own status updates) are expected, and a folding sink leaves them
// out; instead it gets one ROLLOUT line per step of the rollout ("rollout 3/5 updated, 4
// available, 2 old"), and a last one when the rollout completes or fails. A rollout that
// fails unfolds what led to it: the events folded since it began (the last Keep of them)
// are handed to the folding sinks, as they were, before the line that says it failed.
//
// The Folder learns where each workload's rollout stands from informers of its own on
// the workload types (Observer), whatever the watch shows, and is asked about every event
// the run makes, once, before any sink has it (Made): an event it folds is marked
// (event.Event.Folded), so that every folding sink leaves out the same ones, and sinks
// that do not fold (fold=false) get the whole stream.
//
// A pod is tied to its workload by its controller's ownerReference: a StatefulSet or a
// DaemonSet directly, a Deployment through the ReplicaSet named after it and the pod's
// pod-template-hash label (the Deployment controller names its ReplicaSets
// DEPLOYMENT-HASH), so that no ReplicaSet needs watching. An event in which a named
// transition happened (event.Event.On) is never folded: it is news, rollout or not.
package fold

import (
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Workloads are the types whose rollouts fold: the Folder is told of theirs by informers
// of its own, one per type and namespace watched.
var Workloads = []resource.Resource{
	{GVR: appsv1.SchemeGroupVersion.WithResource("deployments"), GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespaced: true},
	{GVR: appsv1.SchemeGroupVersion.WithResource("statefulsets"), GVK: appsv1.SchemeGroupVersion.WithKind("StatefulSet"), Namespaced: true},
	{GVR: appsv1.SchemeGroupVersion.WithResource("daemonsets"), GVK: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), Namespaced: true},
}

// DefaultKeep is how many folded events of one rollout are kept, to be unfolded if it
// fails: the last ones, which led to the failure.
const DefaultKeep = 200

// Options configure a Folder.
type Options struct {
	// Deliver hands one event to every folding sink: a ROLLOUT line or an unfolded event.
	// It is called from the workload informers' goroutines, in order for each workload,
	// and may wait for room (a sink's on-full policy).
	Deliver func(ev *event.Event)
	// Keep is how many folded events of one rollout are kept to be unfolded; 0:
	// DefaultKeep.
	Keep int
	// Now is the clock of ROLLOUT lines; nil: time.Now.
	Now func() time.Time
}

// Folder decides which events a folding sink leaves out. Safe for concurrent use.
type Folder struct {
	opts Options

	mu sync.Mutex
	// workloads are those rolling out, or with pods still terminating since their last
	// rollout ended; the others are not kept.
	workloads map[key]*workload
}

// key names a workload in one cluster.
type key struct{ cluster, namespace, kind, name string }

type workload struct {
	rollout *rollout // nil when it is not rolling out
	// draining are the pods that were terminating when its last rollout ended: their
	// events are folded until they are deleted, as the rollout's tail.
	draining map[types.UID]bool
}

// rollout is one rollout in progress.
type rollout struct {
	step   string         // the message of its last ROLLOUT line
	folded int            // events folded since that line
	kept   []*event.Event // the last Keep events folded, oldest first
	lost   int            // events folded before those
	// terminating are its pods seen terminating and not yet deleted.
	terminating map[types.UID]bool
}

// New makes a Folder.
func New(o Options) *Folder {
	if o.Keep <= 0 {
		o.Keep = DefaultKeep
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Folder{opts: o, workloads: map[key]*workload{}}
}

// Observe takes the events of the workload informers (the Workloads types, in every
// cluster and namespace watched): they are the Folder's alone, no part of the stream.
// It always reports true (a source goes on).
func (f *Folder) Observe(ev *event.Event) bool {
	f.observe(ev)
	return true
}

// observe follows a workload's rollout from its informer's events, and says each step,
// its end, and for a failed one what led to it.
func (f *Folder) observe(ev *event.Event) {
	if ev.Type == event.Sync {
		return
	}
	obj := typed(ev.Object)
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	k := key{cluster: ev.Cluster, namespace: m.GetNamespace(), kind: ev.Kind, name: m.GetName()}
	var out []*event.Event
	f.mu.Lock()
	w := f.workloads[k]
	r := owners.Rollout(obj)
	switch {
	case ev.Type == event.Deleted:
		if w != nil && w.rollout != nil {
			out = append(out, f.line(ev, &event.Rollout{State: event.RolloutDeleted,
				Message: fmt.Sprintf("%s %q was deleted", strings.ToLower(ev.Kind), m.GetName())}, w.rollout.folded))
		}
		delete(f.workloads, k)
	case r == nil:
	case r.State == event.RolloutProgressing:
		if w == nil {
			w = &workload{}
			f.workloads[k] = w
		}
		if w.rollout == nil {
			// Pods still going from the last rollout are this one's now.
			w.rollout = &rollout{terminating: w.draining}
			if w.rollout.terminating == nil {
				w.rollout.terminating = map[types.UID]bool{}
			}
			w.draining = nil
		}
		if step := Step(obj); step != w.rollout.step {
			out = append(out, f.line(ev, &event.Rollout{State: event.RolloutProgressing, Message: step}, w.rollout.folded))
			w.rollout.step, w.rollout.folded = step, 0
		}
	case w != nil && w.rollout != nil: // it ended
		ro := w.rollout
		end := *r
		if r.State == event.RolloutFailed {
			for _, folded := range ro.kept {
				out = append(out, folded.Unfold())
			}
			if ro.lost > 0 {
				end.Message += fmt.Sprintf(" (unfolded the last %d of its %d folded events)", len(ro.kept), len(ro.kept)+ro.lost)
			}
		}
		out = append(out, f.line(ev, &end, ro.folded))
		w.rollout = nil
		if len(ro.terminating) > 0 {
			w.draining = ro.terminating
		} else {
			delete(f.workloads, k)
		}
	}
	f.mu.Unlock()
	for _, e := range out {
		f.opts.Deliver(e)
	}
}

// line is a ROLLOUT line about the workload ev is about.
func (f *Folder) line(ev *event.Event, r *event.Rollout, folded int) *event.Event {
	return &event.Event{Type: event.RolloutStep, Time: f.opts.Now(), Cluster: ev.Cluster, Resource: ev.Resource,
		Kind: ev.Kind, Object: ev.Object, Rollout: r, FoldedEvents: folded}
}

// Made decides whether the folding sinks leave ev out, before any sink has it: the
// run's informers call it with every numbered event (informer.Options.Made).
func (f *Folder) Made(ev *event.Event) {
	if len(ev.On) > 0 || ev.Related || ev.Type == event.Sync {
		return
	}
	m := ev.Meta()
	if m == nil {
		return
	}
	switch {
	case ev.Resource.Group == "" && ev.Kind == "Pod":
		f.pod(ev, m)
	case ev.Resource.Group == "apps" && ev.Kind == "ReplicaSet":
		if ref := metav1.GetControllerOfNoCopy(m); ref != nil && ref.Kind == "Deployment" {
			f.replicaSet(ev, key{cluster: ev.Cluster, namespace: m.GetNamespace(), kind: "Deployment", name: ref.Name})
		}
	case ev.Resource.Group == "apps" && (ev.Kind == "Deployment" || ev.Kind == "StatefulSet" || ev.Kind == "DaemonSet"):
		// Its own updates while it rolls out, up to the one that ends the rollout: the
		// ROLLOUT lines say them. The change that starts a rollout is shown.
		if ev.Type != event.Modified {
			return
		}
		if r := owners.Rollout(typed(ev.Old)); r == nil || r.State != event.RolloutProgressing {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if w := f.workloads[key{cluster: ev.Cluster, namespace: m.GetNamespace(), kind: ev.Kind, name: m.GetName()}]; w != nil && w.rollout != nil {
			f.fold(w.rollout, ev)
			return
		}
		ev.Folded = true
	}
}

// pod folds the events of a pod whose workload rolls out, and of one still terminating
// after its workload's rollout ended.
func (f *Folder) pod(ev *event.Event, m metav1.Object) {
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil {
		return
	}
	k := key{cluster: ev.Cluster, namespace: m.GetNamespace(), kind: ref.Kind, name: ref.Name}
	switch ref.Kind {
	case "ReplicaSet":
		hash := m.GetLabels()[appsv1.DefaultDeploymentUniqueLabelKey]
		name, ok := strings.CutSuffix(ref.Name, "-"+hash)
		if hash == "" || !ok {
			return
		}
		k.kind, k.name = "Deployment", name
	case "StatefulSet", "DaemonSet":
	default:
		return
	}
	uid := m.GetUID()
	deleted := ev.Type == event.Deleted
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.workloads[k]
	switch {
	case w == nil:
	case w.rollout != nil:
		f.fold(w.rollout, ev)
		if deleted {
			delete(w.rollout.terminating, uid)
		} else if m.GetDeletionTimestamp() != nil {
			w.rollout.terminating[uid] = true
		}
	case w.draining[uid]:
		ev.Folded = true
		if deleted {
			delete(w.draining, uid)
			if len(w.draining) == 0 {
				delete(f.workloads, k)
			}
		}
	}
}

// replicaSet folds a Deployment's ReplicaSets' events while it rolls out, and until its
// last rollout's pods are gone (the old ReplicaSet's status follows them).
func (f *Folder) replicaSet(ev *event.Event, k key) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch w := f.workloads[k]; {
	case w == nil:
	case w.rollout != nil:
		f.fold(w.rollout, ev)
	case len(w.draining) > 0:
		ev.Folded = true
	}
}

// fold marks ev folded, counts it for the next ROLLOUT line and keeps it to be unfolded.
func (f *Folder) fold(r *rollout, ev *event.Event) {
	ev.Folded = true
	r.folded++
	if len(r.kept) == f.opts.Keep {
		r.kept[0] = nil
		r.kept = r.kept[1:]
		r.lost++
	}
	r.kept = append(r.kept, ev)
}

// Step says how far a workload's rollout got, in a few words: "3/5 updated, 4 available,
// 2 old" (a Deployment), "2/3 updated, 3/3 ready" (a StatefulSet), "2/3 updated, 3/3
// available" (a DaemonSet).
func Step(obj runtime.Object) string {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		if o.Generation > o.Status.ObservedGeneration {
			return "update not yet seen by the controller"
		}
		s := o.Status
		msg := fmt.Sprintf("%d/%d updated, %d available", s.UpdatedReplicas, replicas(o.Spec.Replicas), s.AvailableReplicas)
		if old := s.Replicas - s.UpdatedReplicas; old > 0 {
			msg += fmt.Sprintf(", %d old", old)
		}
		return msg
	case *appsv1.StatefulSet:
		if o.Generation > o.Status.ObservedGeneration {
			return "update not yet seen by the controller"
		}
		want := replicas(o.Spec.Replicas)
		return fmt.Sprintf("%d/%d updated, %d/%d ready", o.Status.UpdatedReplicas, want, o.Status.ReadyReplicas, want)
	case *appsv1.DaemonSet:
		if o.Generation > o.Status.ObservedGeneration {
			return "update not yet seen by the controller"
		}
		s := o.Status
		return fmt.Sprintf("%d/%d updated, %d/%d available", s.UpdatedNumberScheduled, s.DesiredNumberScheduled, s.NumberAvailable, s.DesiredNumberScheduled)
	}
	return ""
}

// replicas is spec.replicas, whose default is 1.
func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

// typed is obj as client-go's typed object where it is an unstructured one of a kind the
// scheme knows (a dynamic informer's), so that the rollout rules can read it; else obj.
func typed(obj runtime.Object) runtime.Object {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj
	}
	out, err := scheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return obj
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return obj
	}
	return out
}
