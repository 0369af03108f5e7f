package health

import (
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeevents/kubeevents/internal/event"
)

// podMemo keeps the health kstatus gave each pod state it was asked about, by what
// kstatus reads of a pod (podKey: what podStatusOf gives it, and the metadata it reads).
// A cluster's pods go through few such states (running and ready, not ready, crash
// looping, pending) however often the kubelet reports, so most events of a pod are a
// lookup rather than a conversion and kstatus's own (its conditions converted by
// reflection): the health step costs a fifth as much (BenchmarkHealthStep). It assumes
// that kstatus (sigs.k8s.io/cli-utils v0.37.2) reads of a pod only what podStatusOf
// gives it (TestPodStatusAsConverted fails otherwise), and that only an unschedulable
// pod's health depends on the time (core.go's podConditions).
type podMemo struct {
	mu     sync.Mutex
	health map[string]event.Health
}

// podMemoSize bounds the states kept; a memo that fills is emptied and starts again.
const podMemoSize = 4096

// of is pod's health, as Kstatus gives it.
func (m *podMemo) of(pod *corev1.Pod) event.Health {
	var buf [512]byte
	key, ok := podKey(buf[:0], pod)
	if !ok {
		return Kstatus(pod)
	}
	m.mu.Lock()
	h, found := m.health[string(key)]
	m.mu.Unlock()
	if found {
		return h
	}
	h = Kstatus(pod)
	m.mu.Lock()
	if m.health == nil || len(m.health) >= podMemoSize {
		m.health = make(map[string]event.Health, 64)
	}
	m.health[string(key)] = h
	m.mu.Unlock()
	return h
}

// podKey appends to b what kstatus reads of pod, each field as podStatusOf and
// unstructuredOf give it, framed so that two different states never give one key; false
// for a state whose health depends on the time too (a pod unschedulable is InProgress for
// its first 15 seconds, then Failed), which is not kept.
func podKey(b []byte, pod *corev1.Pod) ([]byte, bool) {
	st := &pod.Status
	if st.Phase == corev1.PodPending {
		for _, c := range st.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return nil, false
			}
		}
	}
	field := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	if pod.DeletionTimestamp != nil {
		b = append(b, 'D')
	}
	b = strconv.AppendInt(b, pod.Generation, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, st.ObservedGeneration, 10)
	field(string(st.Phase))
	b = strconv.AppendInt(b, int64(len(st.Conditions)), 10)
	for _, c := range st.Conditions {
		field(string(c.Type))
		field(string(c.Status))
		field(c.Reason)
		field(c.Message)
	}
	b = strconv.AppendInt(b, int64(len(st.ContainerStatuses)), 10)
	for _, cs := range st.ContainerStatuses {
		field(cs.Name)
		if w := cs.State.Waiting; w != nil {
			b = append(b, 'W')
			field(w.Reason)
			field(w.Message)
		} else {
			b = append(b, '-')
		}
	}
	return b, true
}
