// Package metrics serves a watch's Prometheus metrics (--metrics-addr): events made,
// what became of them in each sink, watch outages, and how late events reach the sinks;
// and, on the same address, /healthz and /readyz for a pod's probes (health.go).
//
// The sinks' counts are not kept twice: a collector reads each listener's Stats when
// scraped, so the metrics and the exit summary say the same. Everything is registered
// on a registry of its own, never on the client library's global one.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// Metrics are one watch's metrics. It is the informers' Observer, and each listener's
// Delivered hook (Lag).
type Metrics struct {
	registry  *prometheus.Registry
	events    *prometheus.CounterVec
	outages   *prometheus.CounterVec
	relists   *prometheus.CounterVec
	reconnect *prometheus.HistogramVec
	lag       *prometheus.HistogramVec
	sinks     *sinkCollector
	cluster   string
	health    health
}

// New makes the metrics of a watch of cluster (its API server's address, a label on
// every metric).
func New(cluster string) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubeevents_events_total",
			Help: "Events made (each handed to every sink), by resource and type.",
		}, []string{"resource", "type"}),
		outages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubeevents_watch_outages_total",
			Help: "Watches lost (server gone, connection dropped, watch expired), by resource.",
		}, []string{"resource"}),
		relists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubeevents_watch_relists_total",
			Help: "Outages that ended with a re-list (rather than the watch resuming), by resource.",
		}, []string{"resource"}),
		reconnect: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kubeevents_watch_reconnect_seconds",
			Help:    "How long watches were lost, from the outage to the watch resuming or the re-list done, by resource.",
			Buckets: []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600},
		}, []string{"resource"}),
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kubeevents_delivery_lag_seconds",
			Help:    "Time from an event being made to its sink delivering it (a file written, a command exited 0, a request answered 2xx), by sink.",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 2, 5, 10, 30, 60, 300},
		}, []string{"sink"}),
		sinks:   &sinkCollector{},
		cluster: cluster,
	}
	reg := prometheus.WrapRegistererWith(prometheus.Labels{"cluster": cluster}, m.registry)
	reg.MustRegister(m.events, m.outages, m.relists, m.reconnect, m.lag, m.sinks)
	return m
}

// Made counts an event (informer.Observer).
func (m *Metrics) Made(ev *event.Event) {
	m.events.WithLabelValues(resourceName(ev.Resource.Resource, ev.Resource.Group), string(ev.Type)).Inc()
}

// WatchLost counts an outage (informer.Observer).
func (m *Metrics) WatchLost(res resource.Resource) {
	m.outages.WithLabelValues(res.String()).Inc()
	// The re-list count is there from the first outage on, 0 when the watch resumed
	// without one: a series that appears only at its first re-list reads as absent.
	m.relists.WithLabelValues(res.String())
}

// WatchBack records how long an outage lasted (informer.Observer).
func (m *Metrics) WatchBack(res resource.Resource, after time.Duration, relisted bool) {
	if relisted {
		m.relists.WithLabelValues(res.String()).Inc()
	}
	m.reconnect.WithLabelValues(res.String()).Observe(after.Seconds())
}

// Lag returns the listener.Config.Delivered hook of the sink called name.
func (m *Metrics) Lag(name string) func(ev *event.Event) {
	h := m.lag.WithLabelValues(name)
	return func(ev *event.Event) { h.Observe(time.Since(ev.Time).Seconds()) }
}

// Sinks sets the listeners whose counts are served.
func (m *Metrics) Sinks(ls []*listener.Listener) { m.sinks.set(ls) }

func resourceName(res, group string) string {
	if group == "" {
		return res
	}
	return res + "." + group
}

// Handler serves the metrics in Prometheus' formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Server serves /metrics on one address.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Serve listens on addr (HOST:PORT) and serves the metrics on /metrics, and /healthz
// and /readyz (what a pod's probes ask), until Close.
// An address that cannot be listened on is an error now, before the watch starts.
func (m *Metrics) Serve(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/healthz", m.serveHealthz)
	mux.HandleFunc("/readyz", m.serveReadyz)
	s := &Server{ln: ln, done: make(chan struct{}),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return
		}
	}()
	return s, nil
}

// Addr is the address served on (with the port the system picked for port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving, letting scrapes in progress finish for a moment.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}
