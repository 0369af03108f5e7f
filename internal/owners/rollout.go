package owners

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// HasRollout reports whether objects of kind have a rollout that Rollout can judge.
func HasRollout(kind schema.GroupKind) bool {
	switch kind {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, schema.GroupKind{Group: "batch", Kind: "Job"}:
		return true
	}
	return false
}

// Rollout says where obj's rollout stands, by the rules of `kubectl rollout status`
// (k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go, whose messages it keeps),
// and for a Job by its Complete and Failed conditions, as `kubectl wait
// --for=condition=complete` would. Nil for other kinds and for metadata-only objects.
// kubectl is not imported for this: it would bring in most of kubectl's dependencies for
// some forty lines.
func Rollout(obj runtime.Object) *event.Rollout {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return deploymentRollout(o)
	case *appsv1.StatefulSet:
		return statefulSetRollout(o)
	case *appsv1.DaemonSet:
		return daemonSetRollout(o)
	case *batchv1.Job:
		return jobRollout(o)
	}
	return nil
}

func progressing(format string, args ...any) *event.Rollout {
	return &event.Rollout{State: event.RolloutProgressing, Message: fmt.Sprintf(format, args...)}
}

func complete(format string, args ...any) *event.Rollout {
	return &event.Rollout{State: event.RolloutComplete, Message: fmt.Sprintf(format, args...)}
}

func failed(format string, args ...any) *event.Rollout {
	return &event.Rollout{State: event.RolloutFailed, Message: fmt.Sprintf(format, args...)}
}

// timedOutReason is the Progressing condition's reason once a Deployment's progress
// deadline passed (k8s.io/kubectl/pkg/util/deployment.TimedOutReason).
const timedOutReason = "ProgressDeadlineExceeded"

// deploymentRollout is kubectl's DeploymentStatusViewer.Status.
func deploymentRollout(d *appsv1.Deployment) *event.Rollout {
	if d.Generation > d.Status.ObservedGeneration {
		return progressing("Waiting for deployment spec update to be observed...")
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == timedOutReason {
			return failed("deployment %q exceeded its progress deadline", d.Name)
		}
	}
	switch {
	case d.Spec.Replicas != nil && d.Status.UpdatedReplicas < *d.Spec.Replicas:
		return progressing("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...", d.Name, d.Status.UpdatedReplicas, *d.Spec.Replicas)
	case d.Status.Replicas > d.Status.UpdatedReplicas:
		return progressing("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...", d.Name, d.Status.Replicas-d.Status.UpdatedReplicas)
	case d.Status.AvailableReplicas < d.Status.UpdatedReplicas:
		return progressing("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...", d.Name, d.Status.AvailableReplicas, d.Status.UpdatedReplicas)
	}
	return complete("deployment %q successfully rolled out", d.Name)
}

// statefulSetRollout is kubectl's StatefulSetStatusViewer.Status. kubectl refuses
// OnDelete StatefulSets; here their rollout is complete once every pod is ready and at
// the update revision.
func statefulSetRollout(s *appsv1.StatefulSet) *event.Rollout {
	if s.Status.ObservedGeneration == 0 || s.Generation > s.Status.ObservedGeneration {
		return progressing("Waiting for statefulset spec update to be observed...")
	}
	if s.Spec.Replicas != nil && s.Status.ReadyReplicas < *s.Spec.Replicas {
		return progressing("Waiting for %d pods to be ready...", *s.Spec.Replicas-s.Status.ReadyReplicas)
	}
	if s.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.Spec.UpdateStrategy.RollingUpdate != nil {
		if s.Spec.Replicas != nil && s.Spec.UpdateStrategy.RollingUpdate.Partition != nil {
			if want := *s.Spec.Replicas - *s.Spec.UpdateStrategy.RollingUpdate.Partition; s.Status.UpdatedReplicas < want {
				return progressing("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", s.Status.UpdatedReplicas, want)
			}
		}
		return complete("partitioned roll out complete: %d new pods have been updated...", s.Status.UpdatedReplicas)
	}
	if s.Status.UpdateRevision != s.Status.CurrentRevision {
		return progressing("waiting for statefulset rolling update to complete %d pods at revision %s...", s.Status.UpdatedReplicas, s.Status.UpdateRevision)
	}
	return complete("statefulset rolling update complete %d pods at revision %s...", s.Status.CurrentReplicas, s.Status.CurrentRevision)
}

// daemonSetRollout is kubectl's DaemonSetStatusViewer.Status (see statefulSetRollout
// for OnDelete).
func daemonSetRollout(d *appsv1.DaemonSet) *event.Rollout {
	if d.Generation > d.Status.ObservedGeneration {
		return progressing("Waiting for daemon set spec update to be observed...")
	}
	if d.Status.UpdatedNumberScheduled < d.Status.DesiredNumberScheduled {
		return progressing("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", d.Name, d.Status.UpdatedNumberScheduled, d.Status.DesiredNumberScheduled)
	}
	if d.Status.NumberAvailable < d.Status.DesiredNumberScheduled {
		return progressing("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", d.Name, d.Status.NumberAvailable, d.Status.DesiredNumberScheduled)
	}
	return complete("daemon set %q successfully rolled out", d.Name)
}

// jobRollout ends with the Job's Complete or Failed condition.
func jobRollout(j *batchv1.Job) *event.Rollout {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return complete("job %q completed: %d succeeded", j.Name, j.Status.Succeeded)
		case batchv1.JobFailed:
			return failed("job %q failed: %s", j.Name, c.Reason)
		}
	}
	want := int32(1)
	if j.Spec.Completions != nil {
		want = *j.Spec.Completions
	}
	return progressing("Waiting for job %q to complete: %d of %d succeeded, %d active, %d failed...", j.Name, j.Status.Succeeded, want, j.Status.Active, j.Status.Failed)
}
