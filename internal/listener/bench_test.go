package listener

import (
	"encoding/json"
	"runtime"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeevents/kubeevents/internal/event"
)

// nopSink counts events; it is only called from the delivery goroutine.
type nopSink struct{ n int }

func (s *nopSink) Write(*event.Event) error { s.n++; return nil }
func (s *nopSink) Close() error             { return nil }

// benchEvents is a pre-built cycle of MODIFIED events about `objects` pods, so that the
// benchmarks measure the listener, not event construction.
func benchEvents(n, objects int) []*event.Event {
	evs := make([]*event.Event, n)
	for i := range evs {
		evs[i] = newEv(event.Modified, "pod-"+strconv.Itoa(i%objects), uint64(i+1))
		evs[i].Old = evs[i].Object
	}
	return evs
}

// BenchmarkListener measures one event through a listener: Add on the benchmark
// goroutine, delivery to a no-op sink on the listener's own goroutine (the consumer).
// The timed region ends once Run has delivered everything, so ns/op covers enqueue and
// dequeue. The per-op metrics say what the policy did with the events.
func BenchmarkListener(b *testing.B) {
	cases := []struct {
		name    string
		policy  Policy
		objects int
	}{
		{"block", Block, 1024},
		{"drop-oldest", DropOldest, 1024},
		{"drop-newest", DropNewest, 1024},
		{"coalesce/64-objects", Coalesce, 64},            // many updates to few objects: mostly merged
		{"coalesce/distinct-objects", Coalesce, 1 << 20}, // no merging: map insert and delete per event
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			evs := benchEvents(4096, c.objects)
			sink := &nopSink{}
			l := New(Config{Name: "bench", Buffer: 1024, OnFull: c.policy}, sink, nil)
			go l.Run()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				l.Add(evs[i%len(evs)])
			}
			l.Close()
			<-l.Done()
			b.StopTimer()
			st := l.Stats()
			if st.Delivered != uint64(sink.n) || st.Received != uint64(b.N) {
				b.Fatalf("stats %+v, sink wrote %d", st, sink.n)
			}
			if sum := st.Delivered + st.Dropped + st.Coalesced + st.Failed + st.Filtered; sum != st.Received {
				b.Fatalf("stats do not balance: %+v", st)
			}
			b.ReportMetric(float64(st.Delivered)/float64(b.N), "delivered/op")
			b.ReportMetric(float64(st.Dropped)/float64(b.N), "dropped/op")
			b.ReportMetric(float64(st.Coalesced)/float64(b.N), "coalesced/op")
		})
	}
}

// BenchmarkRing measures the bare queue, put then pop on one goroutine, with the ring
// kept half full.
func BenchmarkRing(b *testing.B) {
	for _, p := range policies {
		b.Run(p.String(), func(b *testing.B) {
			evs := benchEvents(4096, 4096)
			r := newRing(1024, p)
			for _, ev := range evs[:512] {
				r.put(ev)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				r.put(evs[(512+i)%len(evs)])
				r.pop()
			}
		})
	}
}

// workSink stands for a working sink: per event it encodes a pod of about 3 KB as JSON,
// roughly what a real sink pays to render an event, on the listener's goroutine only.
type workSink struct {
	n   int
	pod *corev1.Pod
	buf []byte
}

func newWorkSink() *workSink {
	pod := podObj("web-7d9f8b6c5-abc12", "1")
	pod.Labels = map[string]string{"app.kubernetes.io/name": "web", "pod-template-hash": "7d9f8b6c5", "tier": "frontend"}
	pod.Annotations = map[string]string{"prometheus.io/scrape": "true", "kubectl.kubernetes.io/restartedAt": "2026-11-20T09:12:44Z"}
	for i := range 3 {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: "c" + strconv.Itoa(i), Image: "registry.example.com/web:2.14.1",
			Env:          []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "PORT", Value: "8080"}},
			Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			VolumeMounts: []corev1.VolumeMount{{Name: "token", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
		})
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: "c" + strconv.Itoa(i), Image: "registry.example.com/web:2.14.1", Ready: true,
			ImageID: "registry.example.com/web@sha256:3f2a9c1d5e7b8a0f4c6d2e1b9a8f7e6d5c4b3a29180f7e6d5c4b3a2918079c1d",
		})
	}
	return &workSink{pod: pod}
}

func (s *workSink) Write(*event.Event) error {
	line, err := json.Marshal(s.pod)
	s.buf = append(s.buf[:0], line...)
	s.n++
	return err
}
func (s *workSink) Close() error { return nil }

// stuckSink is stalled in its first Write until release is closed.
type stuckSink struct{ release chan struct{} }

func (s *stuckSink) Write(*event.Event) error { <-s.release; return nil }
func (s *stuckSink) Close() error             { return nil }

// BenchmarkStalledSink is what a stalled sink costs the others (at most 10% of
// their throughput). In the same run, b.N events go through a working sink alone, then
// through the same working sink beside a sink stuck in Write, fed as the informer feeds
// them (Add on each listener in turn); throughput-ratio is working-sink throughput with
// the stalled neighbour / alone. The stalled sink's buffer fills after 1,024 events; from
// then on each of its Adds drops or coalesces. BenchmarkStalledSinkMemory shows that
// this does not grow memory.
//
// Coalesce runs with 512 objects: with more distinct objects than its buffer holds, a
// coalescing Add waits as under block (lossless for final states, by design), so it only
// shields the other sinks when the buffer covers the objects that change.
func BenchmarkStalledSink(b *testing.B) {
	for _, policy := range []Policy{DropOldest, DropNewest, Coalesce} {
		b.Run(policy.String(), func(b *testing.B) {
			objects := 4096
			if policy == Coalesce {
				objects = 512
			}
			evs := benchEvents(4096, objects)
			run := func(withStalled bool) time.Duration {
				work := newWorkSink()
				working := New(Config{Name: "working", Buffer: 1024}, work, nil)
				receivers := []*Listener{working}
				stuck := &stuckSink{release: make(chan struct{})}
				if withStalled {
					receivers = append(receivers, New(Config{Name: "stalled", Buffer: 1024, OnFull: policy}, stuck, nil))
				}
				for _, l := range receivers {
					go l.Run()
				}
				start := time.Now()
				for i := range b.N {
					for _, l := range receivers {
						l.Add(evs[i%len(evs)])
					}
				}
				working.Close()
				<-working.Done()
				elapsed := time.Since(start)
				if work.n != b.N {
					b.Fatalf("the working sink wrote %d of %d events", work.n, b.N)
				}
				if withStalled {
					stalled := receivers[1]
					if st := stalled.Stats(); b.N > 2048 && st.Dropped+st.Coalesced == 0 {
						b.Fatalf("the stalled sink neither dropped nor coalesced: %+v", st)
					}
					stalled.Abort()
					close(stuck.release)
					<-stalled.Done()
				}
				return elapsed
			}
			// Alternating rounds, so that drift of a shared machine hits both alike.
			b.ResetTimer()
			var alone, beside time.Duration
			for range 5 {
				alone += run(false)
				beside += run(true)
			}
			b.ReportMetric(float64(alone)/float64(beside), "throughput-ratio")
		})
	}
}

// BenchmarkStalledSinkMemory: a stalled sink under a drop policy or coalesce holds at most
// its buffer, however many events flow. Each op is one fresh event (a new pod object)
// added to the stalled listener; heap-growth-B/op is the live heap after b.N events minus
// the live heap once the buffer was full, per event: zero when memory is bounded. (For
// coalesce the events are about 512 objects, as in BenchmarkStalledSink.)
func BenchmarkStalledSinkMemory(b *testing.B) {
	for _, policy := range []Policy{DropOldest, DropNewest, Coalesce} {
		b.Run(policy.String(), func(b *testing.B) {
			name := func(i int) string { return "pod-" + strconv.Itoa(i) }
			if policy == Coalesce {
				name = func(i int) string { return "pod-" + strconv.Itoa(i%512) }
			}
			stuck := &stuckSink{release: make(chan struct{})}
			l := New(Config{Name: "stalled", Buffer: 1024, OnFull: policy}, stuck, nil)
			go l.Run()
			for i := range 2048 {
				l.Add(newEv(event.Modified, name(i), uint64(i+1)))
			}
			full := liveHeap()
			b.ResetTimer()
			i := 2048
			for b.Loop() {
				i++
				l.Add(newEv(event.Modified, name(i), uint64(i)))
			}
			b.StopTimer()
			grown := int64(liveHeap()) - int64(full)
			b.ReportMetric(float64(grown)/float64(b.N), "heap-growth-B/op")
			b.ReportMetric(float64(grown)/1024, "heap-growth-KiB")
			l.Abort()
			close(stuck.release)
			<-l.Done()
		})
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
