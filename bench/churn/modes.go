package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// change makes the round's change to one object, as the mode says, and returns the
// resourceVersion it produced. index is the object's place in its worker's share: in
// mixed mode, objects of one round take different kinds of change.
func (e *env) change(ctx context.Context, name string, round, index int, value string, k *kubelet) (string, error) {
	switch e.mode {
	case "status":
		return e.reportStatus(ctx, name, k)
	case "mixed":
		switch (round + index) % 3 {
		case 1:
			return e.reportStatus(ctx, name, k)
		case 2:
			return e.setImage(ctx, name, "nginx:1.27-r"+strconv.Itoa(round))
		}
	}
	return e.patch(ctx, name, value)
}

// kubelet is what a kubelet knows of one pod's container between two reports.
type kubelet struct {
	reports  int       // reports sent so far
	first    time.Time // when the first report was sent: the pod's start
	restarts int32     // restartCount
	started  time.Time // the running container's startedAt
	lastExit *corev1.ContainerStateTerminated
}

// next is the pod status of the kubelet's next report. Reports alternate between not
// ready and ready, so each differs from the one before even within one second (the
// timestamps' resolution); every third not-ready report is a crash: the container
// terminated (exit code 1), waiting in CrashLoopBackOff, restartCount one higher. Like a
// kubelet it sends every condition (a strategic merge patch merges them by type) and
// the whole containerStatuses list.
func (k *kubelet) next(now time.Time) corev1.PodStatus {
	k.reports++
	t := metav1.NewTime(now)
	if k.first.IsZero() {
		k.first = now
	}
	if k.started.IsZero() {
		k.started = now
	}
	ready := k.reports%2 == 0
	crash := !ready && k.reports%6 == 5
	cs := corev1.ContainerStatus{
		Name: "app", Image: "docker.io/library/nginx:1.27",
		ImageID:     "docker.io/library/nginx@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
		ContainerID: "containerd://" + strconv.FormatInt(k.started.UnixNano(), 16),
	}
	switch {
	case crash:
		k.restarts++
		k.lastExit = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
			StartedAt: metav1.NewTime(k.started), FinishedAt: t, ContainerID: cs.ContainerID}
		k.started = time.Time{} // started again at the next report
		f := false
		cs.Started = &f
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: "back-off 10s restarting failed container=app"}
	default:
		tr := true
		cs.Started = &tr
		cs.Ready = ready
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(k.started)}
	}
	cs.RestartCount = k.restarts
	if k.lastExit != nil {
		cs.LastTerminationState.Terminated = k.lastExit
	}
	readyStatus, reason, message := corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [app]"
	if ready {
		readyStatus, reason, message = corev1.ConditionTrue, "", ""
	}
	first := metav1.NewTime(k.first) // scheduled, initialised, started: once
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: first},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: first},
			{Type: corev1.PodReady, Status: readyStatus, Reason: reason, Message: message, LastTransitionTime: t, LastProbeTime: t},
			{Type: corev1.ContainersReady, Status: readyStatus, Reason: reason, Message: message, LastTransitionTime: t},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: first},
		},
		// The living cluster's simulated nodes' IP (hack/cluster.sh, kwok's --node-ip).
		HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}},
		PodIP: "10.244.0.7", PodIPs: []corev1.PodIP{{IP: "10.244.0.7"}},
		StartTime:         &first,
		ContainerStatuses: []corev1.ContainerStatus{cs},
	}
}

// reportStatus patches the pod's status subresource as a kubelet does (strategic merge
// patch of the status) and returns the resourceVersion it produced.
func (e *env) reportStatus(ctx context.Context, name string, k *kubelet) (string, error) {
	body, err := json.Marshal(map[string]any{"status": k.next(time.Now().UTC())})
	if err != nil {
		return "", err
	}
	p, err := e.cs.CoreV1().Pods(e.ns).Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
	if err != nil {
		return "", err
	}
	return p.ResourceVersion, nil
}

// setImage changes the image of the pod's container in place.
func (e *env) setImage(ctx context.Context, name, image string) (string, error) {
	body := []byte(`{"spec":{"containers":[{"name":"app","image":"` + image + `"}]}}`)
	p, err := e.cs.CoreV1().Pods(e.ns).Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{})
	if err != nil {
		return "", err
	}
	return p.ResourceVersion, nil
}

// rolloutLabel marks the benchmark's Deployments and their pods.
const rolloutLabel = "bench-rollout"

// benchDeployment is a small web Deployment whose pods kube-scheduler places on kwok's
// simulated nodes (unlike the other benchmark pods, no schedulerName of its own), with a
// one-second grace period so that old pods go soon after a rollout replaced them.
func benchDeployment(name string, replicas int) *appsv1.Deployment {
	r := int32(replicas)
	grace := int64(1)
	labels := map[string]string{"app": name, rolloutLabel: "true"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &r,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{
					Name: "app", Image: "nginx:1.27",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
					},
				}}},
			},
		},
	}
}

// deploy creates the Deployments (those missing) and waits until every one is complete.
func (e *env) deploy(ctx context.Context, names []string, replicas int) error {
	err := e.each(names, func(n string) error {
		_, err := e.cs.AppsV1().Deployments(e.ns).Create(ctx, benchDeployment(n, replicas), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return e.waitRolledOut(ctx, len(names), replicas, "nginx:1.27", 5*time.Minute)
}

// rollout sets a new image on every Deployment, waits until every rollout is complete
// (all replicas updated, available, and no old pod left), rounds times; then deletes the
// Deployments and waits until their pods are gone.
func (e *env) rollout(ctx context.Context, names []string, replicas, rounds int, record string) error {
	if record == "" {
		return fmt.Errorf("rollout needs -record FILE")
	}
	out, err := os.Create(record)
	if err != nil {
		return err
	}
	defer out.Close()
	fmt.Fprintf(out, "START %d\n", time.Now().UnixNano())
	for r := 1; r <= rounds; r++ {
		image := "nginx:1.27-r" + strconv.Itoa(r)
		body := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"` + image + `"}]}}}}`)
		if err := e.each(names, func(n string) error {
			_, err := e.cs.AppsV1().Deployments(e.ns).Patch(ctx, n, types.StrategicMergePatchType, body, metav1.PatchOptions{})
			return err
		}); err != nil {
			return err
		}
		if err := e.waitRolledOut(ctx, len(names), replicas, image, 10*time.Minute); err != nil {
			return err
		}
		fmt.Fprintf(out, "R %d - %d\n", r, time.Now().UnixNano())
	}
	bg := metav1.DeletePropagationBackground
	if err := e.each(names, func(n string) error {
		err := e.cs.AppsV1().Deployments(e.ns).Delete(ctx, n, metav1.DeleteOptions{PropagationPolicy: &bg})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}); err != nil {
		return err
	}
	if err := e.waitPodsGone(ctx, 10*time.Minute); err != nil {
		return err
	}
	fmt.Fprintf(out, "END %d\n", time.Now().UnixNano())
	return out.Close()
}

// waitRolledOut waits until want Deployments run image on replicas ready pods, with no
// pod of an older template left.
func (e *env) waitRolledOut(ctx context.Context, want, replicas int, image string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	sel := metav1.ListOptions{LabelSelector: rolloutLabel + "=true"}
	for {
		done, status := 0, ""
		l, err := e.cs.AppsV1().Deployments(e.ns).List(ctx, sel)
		if err == nil {
			for _, d := range l.Items {
				s := d.Status
				if d.Spec.Template.Spec.Containers[0].Image == image && s.ObservedGeneration == d.Generation &&
					int(s.UpdatedReplicas) == replicas && int(s.Replicas) == replicas && int(s.AvailableReplicas) == replicas {
					done++
				} else if status == "" {
					status = fmt.Sprintf("%s: updated %d, replicas %d, available %d", d.Name, s.UpdatedReplicas, s.Replicas, s.AvailableReplicas)
				}
			}
		}
		if err == nil && done == want {
			// Old pods that are terminating are no longer counted in status.replicas:
			// wait for them too, so that a round's events end before the next begins.
			pods, err := e.cs.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: rolloutLabel + "=true"})
			if err == nil && len(pods.Items) == want*replicas {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d Deployments rolled out to %s within %s (%s; last error: %v)", done, want, image, timeout, status, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitPodsGone waits until no pod of the benchmark's Deployments is left.
func (e *env) waitPodsGone(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := e.cs.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: rolloutLabel + "=true"})
		if err == nil && len(pods.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			n := -1
			if pods != nil {
				n = len(pods.Items)
			}
			return fmt.Errorf("%d pods of the Deployments still there after %s (last error: %v)", n, timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
