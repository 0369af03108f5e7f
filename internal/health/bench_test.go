//go:build linux

package health

import (
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/render"
)

// What the health step costs an event of make bench's kind (a typed pod's kubelet
// report), beside what writing it as a JSON line costs (-o json, the bench's client):
// the step runs only when something reads health (docs/health.md), so this is its cost
// when asked for; unasked, the pipeline has no health step at all. cpu-ns/op is the
// process's CPU time per event, which a busy machine does not inflate as it does ns/op.
//
//	go test -run '^$' -bench . -benchmem ./internal/health/
func BenchmarkHealthStep(b *testing.B) {
	rules, err := mustCatalogB(b).Compile()
	if err != nil {
		b.Fatal(err)
	}
	step := New(Config{Rules: rules})
	old := eventtest.WebPod(corev1.PodRunning, false, "worker-1", "8812")
	pod := eventtest.WebPod(corev1.PodRunning, true, "worker-1", "8813")
	b.Run("pod", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			ev := &event.Event{Type: event.Modified, Time: time.Now(), Resource: eventtest.Pods, Kind: "Pod", Object: pod, Old: old}
			step.Process(ev)
		}
	})
	b.Run("pod-json-line", func(b *testing.B) {
		d := diff.NewDiffer(nil)
		var buf []byte
		defer cpuPerOp(b)()
		for b.Loop() {
			ev := &event.Event{Type: event.Modified, Time: time.Now(), Resource: eventtest.Pods, Kind: "Pod", Object: pod, Old: old}
			buf, _ = render.AppendEnvelopeWithDiff(buf[:0], ev, d, false)
		}
	})
	b.Run("custom-resource", func(b *testing.B) {
		u := custom(b, `{apiVersion: example.com/v1, kind: MyApp, metadata: {name: web, namespace: shop, generation: 3},
			status: {observedGeneration: 3, conditions: [{type: Ready, status: "True", reason: Succeeded, message: ready}]}}`)
		defer cpuPerOp(b)()
		for b.Loop() {
			step.Process(eventOf(u))
		}
	})
}

func mustCatalogB(b *testing.B) *Catalog {
	c, err := NewCatalog(nil)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// cpuPerOp reports the process's CPU time (user and system) per op, from now to the call
// of what it returns.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
