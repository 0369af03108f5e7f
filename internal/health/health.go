// Package health tells how each object of a run is doing: Current, InProgress, Failed,
// Terminating, NotFound, or Unknown when that cannot be told. It asks kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus/status, the library Helm, Flux and kapp use), which
// knows the built-in kinds and, for custom resources, the standard conditions
// (Reconciling, Stalled, Ready) and observedGeneration; and before it, the health rules
// (rules.go): jq programs per group/kind, shipped for well-known custom resources whose
// controllers say they failed in ways kstatus does not read (a Ready condition False
// with a reason, a phase of their own), and added or replaced in the config file.
//
// The pipeline's health step (step.go) computes it once per event, for runs that ask
// for it (an output, filter or exit condition that reads it), remembers each object's
// last status for the next event (Health.Previous), and makes a STALLED event for an
// object InProgress for longer than the run's stall time without progress.
package health

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Kstatus is obj's health as kstatus computes it. A typed object (client-go's scheme,
// as informers of built-in types give them) is converted to its unstructured form
// first, which is what kstatus reads; an error of kstatus (a field of an unexpected
// type) is Unknown, with the error as message.
func Kstatus(obj runtime.Object) event.Health {
	var u *unstructured.Unstructured
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		u = o
	case *metav1.PartialObjectMetadata:
		// Only its metadata is watched (--metadata-only, or a type --owned found by
		// discovery): its status cannot be read, but its deletion can.
		if o.DeletionTimestamp != nil {
			return event.Health{Status: event.HealthTerminating, Message: "Resource scheduled for deletion"}
		}
		return event.Health{Status: event.HealthUnknown, Message: "only its metadata is watched"}
	case nil:
		return event.Health{Status: event.HealthUnknown, Message: "no object"}
	default:
		var err error
		if u, err = unstructuredOf(obj); err != nil {
			return event.Health{Status: event.HealthUnknown, Message: fmt.Sprintf("reading its status: %v", err)}
		}
	}
	res, err := status.Compute(u)
	if err != nil {
		return event.Health{Status: event.HealthUnknown, Message: err.Error()}
	}
	return event.Health{Status: event.HealthStatus(res.Status), Message: res.Message}
}

// Statuses are the statuses an object's health can have, as rules may give them.
var Statuses = []event.HealthStatus{event.HealthCurrent, event.HealthInProgress, event.HealthFailed,
	event.HealthTerminating, event.HealthNotFound, event.HealthUnknown}

// unstructuredOf is what kstatus reads of a typed object, in its unstructured form: its
// kind, the metadata it reads (generation, creation and deletion times), its status,
// and its spec but for a pod's (kstatus reads none of it, and it is most of a pod).
// Converting the whole object costs about as much again as writing it as JSON.
func unstructuredOf(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	metadata := map[string]any{"name": m.GetName(), "namespace": m.GetNamespace(), "generation": m.GetGeneration()}
	if t := m.GetCreationTimestamp(); !t.IsZero() {
		metadata["creationTimestamp"] = t.UTC().Format(time.RFC3339)
	}
	if t := m.GetDeletionTimestamp(); t != nil {
		metadata["deletionTimestamp"] = t.UTC().Format(time.RFC3339)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "metadata": metadata}}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%T is not an object kstatus can read", obj)
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		// Most events of a cluster are pods': their status is built by hand, with what
		// kstatus reads of it, rather than converted by reflection (half the step's cost).
		u.Object["status"] = podStatusOf(&pod.Status)
		return u, nil
	}
	for _, name := range []string{"Spec", "Status"} {
		f := v.Elem().FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Struct {
			continue
		}
		part, err := runtime.DefaultUnstructuredConverter.ToUnstructured(f.Addr().Interface())
		if err != nil {
			return nil, err
		}
		u.Object[strings.ToLower(name)] = part
	}
	return u, nil
}

// podStatusOf is what kstatus reads of a pod's status (its generic checks, and its pod
// rules: status.go's checkGenericProperties, core.go's podConditions): the phase, the
// observed generation, the conditions and the containers' waiting reasons, as
// runtime.DefaultUnstructuredConverter would give them (empty fields left out).
func podStatusOf(st *corev1.PodStatus) map[string]any {
	out := map[string]any{}
	if st.Phase != "" {
		out["phase"] = string(st.Phase)
	}
	if st.ObservedGeneration != 0 {
		out["observedGeneration"] = st.ObservedGeneration
	}
	if len(st.Conditions) > 0 {
		conditions := make([]any, len(st.Conditions))
		for i, c := range st.Conditions {
			cond := map[string]any{"type": string(c.Type), "status": string(c.Status)}
			if c.Reason != "" {
				cond["reason"] = c.Reason
			}
			if c.Message != "" {
				cond["message"] = c.Message
			}
			conditions[i] = cond
		}
		out["conditions"] = conditions
	}
	if len(st.ContainerStatuses) > 0 {
		statuses := make([]any, len(st.ContainerStatuses))
		for i, cs := range st.ContainerStatuses {
			state := map[string]any{}
			if w := cs.State.Waiting; w != nil {
				waiting := map[string]any{}
				if w.Reason != "" {
					waiting["reason"] = w.Reason
				}
				if w.Message != "" {
					waiting["message"] = w.Message
				}
				state["waiting"] = waiting
			}
			statuses[i] = map[string]any{"name": cs.Name, "state": state}
		}
		out["containerStatuses"] = statuses
	}
	return out
}
