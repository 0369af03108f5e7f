package metrics

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/prometheus/client_golang/prometheus"
)

// Election is what readiness asks of leader election (package leader's Elector).
type Election interface {
	Leading() bool
	// Healthy is nil while leading, and for a standby that hears about its Lease.
	Healthy() error
}

// health is what /healthz and /readyz say: a process that serves is alive; it is ready
// once its watch has the initial lists (Synced), or, under leader election, while it
// stands by healthy or leads with its lists in. A standby is ready: it is what takes
// over, and a Service or a PodDisruptionBudget should count it.
type health struct {
	synced atomic.Bool
	mu     sync.Mutex
	elect  Election
}

// Synced says that the watch has (true) or no longer has its initial lists.
func (m *Metrics) Synced(synced bool) { m.health.synced.Store(synced) }

// SetElection makes readiness follow e, and serves kubeevents_leader (1 while leading).
func (m *Metrics) SetElection(e Election) {
	m.health.mu.Lock()
	m.health.elect = e
	m.health.mu.Unlock()
	reg := prometheus.WrapRegistererWith(prometheus.Labels{"cluster": m.cluster}, m.registry)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kubeevents_leader",
		Help: "1 while this replica holds the --leader-elect lease and streams, 0 while it stands by.",
	}, func() float64 {
		if e.Leading() {
			return 1
		}
		return 0
	}))
}

// Ready is nil when the process is ready, else why not; /readyz serves it.
func (m *Metrics) Ready() (string, error) {
	m.health.mu.Lock()
	e := m.health.elect
	m.health.mu.Unlock()
	if e != nil {
		if err := e.Healthy(); err != nil {
			return "", err
		}
		if !e.Leading() {
			return "standing by", nil
		}
		if !m.health.synced.Load() {
			return "", fmt.Errorf("leading; the initial lists are not in yet")
		}
		return "leading", nil
	}
	if !m.health.synced.Load() {
		return "", fmt.Errorf("the initial lists are not in yet")
	}
	return "watching", nil
}

func (m *Metrics) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

func (m *Metrics) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	state, err := m.Ready()
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: %v\n", err)
		return
	}
	fmt.Fprintf(w, "ok: %s\n", state)
}

// Part is the metrics as a part of a run: ready (/readyz) once every informer has its
// initial list.
func (m *Metrics) Part() pipeline.Part { return metricsPart{m} }

type metricsPart struct{ m *Metrics }

func (metricsPart) Start(context.Context) error { return nil }
func (p metricsPart) Synced()                   { p.m.Synced(true) }
func (metricsPart) Stop() error                 { return nil }
