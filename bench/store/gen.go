package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/render"
)

// genOpts shape the recording of a status churn: pods pods in namespaces namespaces,
// each created, reported on reports times by its kubelet, and deleted, at rate events a
// second from start.
type genOpts struct {
	pods, namespaces, reports int
	rate                      float64
	start                     time.Time
}

// generate writes the recording as a watch's file sink writes it: every event rendered
// by kubeevents' own renderer, with its diff and who made it (the managers), from
// realistic pods whose kubelet reports alternate between ready and not, with a crash
// every third not-ready report, as bench/churn's status mode does on a live cluster.
func generate(w io.Writer, o genOpts) (events int, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	d := diff.NewDiffer(nil)
	rng := rand.New(rand.NewPCG(1, 2))
	type pod struct {
		versions *eventtest.Versions
		obj      *corev1.Pod
		k        kubelet
	}
	pods := make([]*pod, o.pods)
	var seq uint64
	rv := 1000
	now := o.start
	step := time.Duration(float64(time.Second) / o.rate)
	var buf []byte
	emit := func(ev *event.Event) error {
		seq++
		rv++
		ev.Seq, ev.Time = seq, now
		now = now.Add(step)
		var err error
		if buf, err = render.AppendEnvelopeWithDiff(buf[:0], ev, d, false); err != nil {
			return err
		}
		buf = append(buf, '\n')
		_, err = bw.Write(buf)
		events++
		return err
	}
	for i := range pods {
		p := eventtest.RealisticPod()
		ns := fmt.Sprintf("team-%02d", i%o.namespaces)
		p.Namespace = ns
		p.Name = fmt.Sprintf("checkout-api-7d9f8b6c5-%05d", i)
		p.UID = newUID(rng)
		p.ResourceVersion = strconv.Itoa(rv)
		p.CreationTimestamp = metav1.NewTime(now.Truncate(time.Second))
		k := kubelet{}
		p.Status = k.next(now)
		p.ManagedFields = []metav1.ManagedFieldsEntry{eventtest.Entry("kube-controller-manager", "Update", "", 0, `{"f:metadata":{"f:labels":{}},"f:spec":{}}`)}
		pods[i] = &pod{versions: &eventtest.Versions{GVR: eventtest.Pods, Kind: "Pod"}, obj: p, k: k}
		if err := emit(pods[i].versions.Next(0, p.DeepCopy())); err != nil {
			return events, err
		}
	}
	for r := 0; r < o.reports; r++ {
		for _, p := range pods {
			next := p.obj.DeepCopy()
			next.ResourceVersion = strconv.Itoa(rv)
			next.Status = p.k.next(now)
			ts := metav1.NewTime(now.Truncate(time.Second))
			next.ManagedFields = []metav1.ManagedFieldsEntry{
				eventtest.Entry("kube-controller-manager", "Update", "", 0, `{"f:metadata":{"f:labels":{}},"f:spec":{}}`),
				{Manager: "kubelet", Operation: "Update", APIVersion: "v1", Subresource: "status", Time: &ts, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{},"f:containerStatuses":{}}}`)},
			}
			p.obj = next
			if err := emit(p.versions.Next(0, next.DeepCopy())); err != nil {
				return events, err
			}
		}
	}
	for _, p := range pods {
		if err := emit(p.versions.Next(0, p.obj.DeepCopy(), event.Deleted)); err != nil {
			return events, err
		}
	}
	return events, bw.Flush()
}

func newUID(rng *rand.Rand) k8stypes.UID {
	return k8stypes.UID(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff))
}

// kubelet makes a pod's status reports, as bench/churn's status mode does.
type kubelet struct {
	reports  int
	first    time.Time
	restarts int32
	started  time.Time
	lastExit *corev1.ContainerStateTerminated
}

func (k *kubelet) next(now time.Time) corev1.PodStatus {
	k.reports++
	t := metav1.NewTime(now.Truncate(time.Second))
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
			StartedAt: metav1.NewTime(k.started.Truncate(time.Second)), FinishedAt: t, ContainerID: cs.ContainerID}
		k.started = time.Time{}
		f := false
		cs.Started = &f
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=app"}
	default:
		tr := true
		cs.Started = &tr
		cs.Ready = ready
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(k.started.Truncate(time.Second))}
	}
	cs.RestartCount = k.restarts
	if k.lastExit != nil {
		cs.LastTerminationState.Terminated = k.lastExit
	}
	readyStatus, reason, message := corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [app]"
	if ready {
		readyStatus, reason, message = corev1.ConditionTrue, "", ""
	}
	first := metav1.NewTime(k.first.Truncate(time.Second))
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: first},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: first},
			{Type: corev1.PodReady, Status: readyStatus, Reason: reason, Message: message, LastTransitionTime: t, LastProbeTime: t},
			{Type: corev1.ContainersReady, Status: readyStatus, Reason: reason, Message: message, LastTransitionTime: t},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: first},
		},
		HostIP: "10.240.0.1", HostIPs: []corev1.HostIP{{IP: "10.240.0.1"}},
		PodIP: "10.244.0.7", PodIPs: []corev1.PodIP{{IP: "10.244.0.7"}},
		StartTime:         &first,
		QOSClass:          corev1.PodQOSBurstable,
		ContainerStatuses: []corev1.ContainerStatus{cs},
	}
}
