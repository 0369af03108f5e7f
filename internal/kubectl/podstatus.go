package kubectl

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// podRow is what `kubectl get pods` shows about a pod: STATUS, READY and RESTARTS.
type podRow struct {
	status       string
	ready, total int
	restarts     int
}

// nodeUnreachablePodReason is the status.reason the node lifecycle controller sets on the
// pods of a node that stopped answering (k8s.io/kubernetes/pkg/util/node).
const nodeUnreachablePodReason = "NodeLost"

// kubectlPodRow computes STATUS, READY and RESTARTS exactly as `kubectl get pods` does:
// the API server's table printer (printPod in k8s.io/kubernetes/pkg/printers/
// internalversion), which kubectl shows as it is. That package cannot be imported from
// outside the kubernetes repository, so its logic is followed here line for line, on the
// v1 types: a waiting or terminated container's reason (CrashLoopBackOff,
// ImagePullBackOff, OOMKilled, Error, Completed), init progress (Init:0/2,
// Init:CrashLoopBackOff), SchedulingGated, Terminating and Unknown win over the phase.
// Only the uncommon reasons cost an allocation, so a Running pod's line stays free of
// them.
func kubectlPodRow(pod *corev1.Pod) podRow {
	row := podRow{total: len(pod.Spec.Containers)}
	phase := pod.Status.Phase
	row.status = string(phase)
	if pod.Status.Reason != "" {
		row.status = pod.Status.Reason
	}
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodScheduled && condition.Reason == corev1.PodReasonSchedulingGated {
			row.status = corev1.PodReasonSchedulingGated
		}
	}

	for i := range pod.Spec.InitContainers {
		if isRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			row.total++
		}
	}

	restarts, sidecarRestarts := 0, 0
	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		container := &pod.Status.InitContainerStatuses[i]
		restarts += int(container.RestartCount)
		sidecar := isRestartableInitContainer(initContainer(pod, container.Name))
		if sidecar {
			sidecarRestarts += int(container.RestartCount)
		}
		switch {
		case container.State.Terminated != nil && container.State.Terminated.ExitCode == 0:
			continue
		case sidecar && container.Started != nil && *container.Started:
			if container.Ready {
				row.ready++
			}
			continue
		case container.State.Terminated != nil:
			// Initialization failed.
			terminated := container.State.Terminated
			switch {
			case terminated.Reason != "":
				row.status = "Init:" + terminated.Reason
			case terminated.Signal != 0:
				row.status = "Init:Signal:" + strconv.Itoa(int(terminated.Signal))
			default:
				row.status = "Init:ExitCode:" + strconv.Itoa(int(terminated.ExitCode))
			}
		case container.State.Waiting != nil && container.State.Waiting.Reason != "" && container.State.Waiting.Reason != "PodInitializing":
			row.status = "Init:" + container.State.Waiting.Reason
		default:
			row.status = "Init:" + strconv.Itoa(i) + "/" + strconv.Itoa(len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podInitialized(&pod.Status) {
		restarts = sidecarRestarts
		hasRunning := false
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			container := &pod.Status.ContainerStatuses[i]
			restarts += int(container.RestartCount)
			switch {
			case container.State.Waiting != nil && container.State.Waiting.Reason != "":
				row.status = container.State.Waiting.Reason
			case container.State.Terminated != nil:
				terminated := container.State.Terminated
				switch {
				case terminated.Reason != "":
					row.status = terminated.Reason
				case terminated.Signal != 0:
					row.status = "Signal:" + strconv.Itoa(int(terminated.Signal))
				default:
					row.status = "ExitCode:" + strconv.Itoa(int(terminated.ExitCode))
				}
				if terminated.ExitCode != 0 {
					errorReason = row.status
				}
			case container.Ready && container.State.Running != nil:
				hasRunning = true
				row.ready++
			}
		}
		// Back to Running when a container is still running beside one that completed.
		if row.status == "Completed" {
			switch {
			case hasRunning && podReady(pod.Status.Conditions):
				row.status = string(corev1.PodRunning)
			case errorReason != "":
				row.status = errorReason
			case hasRunning:
				row.status = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		row.status = "Unknown"
	} else if pod.DeletionTimestamp != nil && phase != corev1.PodSucceeded && phase != corev1.PodFailed {
		row.status = "Terminating"
	}
	row.restarts = restarts
	return row
}

// isRestartableInitContainer reports whether an init container is a sidecar: one that
// keeps running beside the app containers (restartPolicy: Always).
func isRestartableInitContainer(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// initContainer is the spec of the init container with that name, or nil.
func initContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

func podInitialized(status *corev1.PodStatus) bool {
	for _, condition := range status.Conditions {
		if condition.Type == corev1.PodInitialized {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podReady(conditions []corev1.PodCondition) bool {
	for _, condition := range conditions {
		if condition.Type == corev1.PodReady && condition.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
