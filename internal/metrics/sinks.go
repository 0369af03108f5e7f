package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeevents/kubeevents/internal/listener"
)

// sinkCollector reads every listener's Stats and queue when scraped: the counts the
// exit summary prints, at the time of the scrape.
type sinkCollector struct {
	mu        sync.Mutex
	listeners []*listener.Listener
}

var (
	sinkLabels = []string{"sink"}
	sinkDescs  = struct {
		received, delivered, filtered, dropped, coalesced, failed, queued, held, capacity *prometheus.Desc
	}{
		received:  prometheus.NewDesc("kubeevents_sink_received_total", "Events given to the sink's buffer.", sinkLabels, nil),
		delivered: prometheus.NewDesc("kubeevents_sink_delivered_total", "Events the sink delivered (written, run with exit status 0, answered 2xx).", sinkLabels, nil),
		filtered:  prometheus.NewDesc("kubeevents_sink_filtered_total", "Events the sink left out on purpose (a jq expression that yields nothing).", sinkLabels, nil),
		dropped:   prometheus.NewDesc("kubeevents_sink_dropped_total", "Events dropped by the on-full policy, or held when the shutdown grace time ran out.", sinkLabels, nil),
		coalesced: prometheus.NewDesc("kubeevents_sink_coalesced_total", "Events merged into a queued event for the same object (on-full=coalesce).", sinkLabels, nil),
		failed:    prometheus.NewDesc("kubeevents_sink_failed_total", "Events the sink failed to deliver (a run or request that failed after its retries, a sink that stopped).", sinkLabels, nil),
		queued:    prometheus.NewDesc("kubeevents_sink_queue_length", "Events waiting in the sink's buffer.", sinkLabels, nil),
		held:      prometheus.NewDesc("kubeevents_sink_in_flight", "Events an exec or http sink took from its buffer and has not settled yet (a batch being built, sent or retried).", sinkLabels, nil),
		capacity:  prometheus.NewDesc("kubeevents_sink_queue_capacity", "The sink's buffer size (buffer=N).", sinkLabels, nil),
	}
)

func (c *sinkCollector) set(ls []*listener.Listener) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listeners = ls
}

func (c *sinkCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sinkDescs.received, sinkDescs.delivered, sinkDescs.filtered, sinkDescs.dropped,
		sinkDescs.coalesced, sinkDescs.failed, sinkDescs.queued, sinkDescs.held, sinkDescs.capacity} {
		ch <- d
	}
}

func (c *sinkCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	ls := c.listeners
	c.mu.Unlock()
	for _, l := range ls {
		name := l.Name()
		st := l.Stats()
		queued, held := l.Queue()
		counter := func(d *prometheus.Desc, n uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(n), name)
		}
		gauge := func(d *prometheus.Desc, n int) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(n), name)
		}
		counter(sinkDescs.received, st.Received)
		counter(sinkDescs.delivered, st.Delivered)
		counter(sinkDescs.filtered, st.Filtered)
		counter(sinkDescs.dropped, st.Dropped)
		counter(sinkDescs.coalesced, st.Coalesced)
		counter(sinkDescs.failed, st.Failed)
		gauge(sinkDescs.queued, queued)
		gauge(sinkDescs.held, held)
		gauge(sinkDescs.capacity, l.Config().Buffer)
	}
}
