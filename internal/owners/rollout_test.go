package owners

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/event"
)

func deployment(replicas int32, status appsv1.DeploymentStatus) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas}, Status: status}
}

// The cases of kubectl's DeploymentStatusViewer, in its order.
func TestDeploymentRollout(t *testing.T) {
	deadline := []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	for _, tc := range []struct {
		d     *appsv1.Deployment
		state event.RolloutState
		says  string
	}{
		{deployment(3, appsv1.DeploymentStatus{ObservedGeneration: 1, Conditions: deadline}), event.RolloutProgressing, "spec update to be observed"},
		{deployment(3, appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 1, Conditions: deadline}), event.RolloutFailed, "exceeded its progress deadline"},
		{deployment(3, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1}), event.RolloutProgressing, "1 out of 3 new replicas have been updated"},
		{deployment(3, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 3}), event.RolloutProgressing, "1 old replicas are pending termination"},
		{deployment(3, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 2}), event.RolloutProgressing, "2 of 3 updated replicas are available"},
		{deployment(3, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}), event.RolloutComplete, `deployment "web" successfully rolled out`},
	} {
		got := Rollout(tc.d)
		if got.State != tc.state || !strings.Contains(got.Message, tc.says) {
			t.Errorf("status %+v: %s %q, want %s %q", tc.d.Status, got.State, got.Message, tc.state, tc.says)
		}
	}
}

func TestJobRollout(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "once"}}
	if r := Rollout(job); r.State != event.RolloutProgressing || r.Done() {
		t.Errorf("a Job without conditions: %+v", r)
	}
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionFalse}}
	if r := Rollout(job); r.Done() {
		t.Errorf("a Job whose Complete condition is False: %+v", r)
	}
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
	if r := Rollout(job); r.State != event.RolloutFailed || !strings.Contains(r.Message, "BackoffLimitExceeded") {
		t.Errorf("a failed Job: %+v", r)
	}
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	if r := Rollout(job); r.State != event.RolloutComplete {
		t.Errorf("a complete Job: %+v", r)
	}
	if Rollout(&appsv1.ReplicaSet{}) != nil || Rollout(&metav1.PartialObjectMetadata{}) != nil {
		t.Error("a ReplicaSet, or metadata only, has a rollout")
	}
}

func TestStatefulSetAndDaemonSetRollout(t *testing.T) {
	three, one := int32(3), int32(1)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 1},
		Spec:   appsv1.StatefulSetSpec{Replicas: &three, UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 3, UpdateRevision: "r2", CurrentRevision: "r1"}}
	if r := Rollout(sts); r.State != event.RolloutProgressing {
		t.Errorf("revisions differ: %+v", r)
	}
	sts.Status.CurrentRevision = "r2"
	if r := Rollout(sts); r.State != event.RolloutComplete {
		t.Errorf("all at the update revision: %+v", r)
	}
	sts.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: &one}
	sts.Status.UpdatedReplicas = 1
	if r := Rollout(sts); r.State != event.RolloutProgressing || !strings.Contains(r.Message, "1 out of 2 new pods") {
		t.Errorf("partitioned, 1 of 2 updated: %+v", r)
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 1},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 2}}
	if r := Rollout(ds); r.State != event.RolloutProgressing || !strings.Contains(r.Message, "2 of 3 updated pods are available") {
		t.Errorf("daemon set: %+v", r)
	}
	ds.Status.NumberAvailable = 3
	if r := Rollout(ds); r.State != event.RolloutComplete {
		t.Errorf("daemon set: %+v", r)
	}
}
