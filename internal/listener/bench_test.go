package listener

import (
	"strconv"
	"testing"

	"github.com/kubeevents/kubeevents/internal/informer"
)

// nopSink counts events; it is only called from the delivery goroutine.
type nopSink struct{ n int }

func (s *nopSink) Write(*informer.Event) error { s.n++; return nil }
func (s *nopSink) Close() error                { return nil }

// benchEvents is a pre-built cycle of MODIFIED events about `objects` pods, so that the
// benchmarks measure the listener, not event construction.
func benchEvents(n, objects int) []*informer.Event {
	evs := make([]*informer.Event, n)
	for i := range evs {
		evs[i] = newEv(informer.Modified, "pod-"+strconv.Itoa(i%objects), uint64(i+1))
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
		b.Run(string(p), func(b *testing.B) {
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
