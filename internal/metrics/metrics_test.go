package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/resource"
)

type discard struct{}

func (discard) Write(*event.Event) error { return nil }
func (discard) Close() error             { return nil }

func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parsing:\n%s\n%v", rec.Body.String(), err)
	}
	return mf
}

func get(t *testing.T, mf map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	for _, m := range mf[name].GetMetric() {
		ok := true
		for k, v := range labels {
			found := false
			for _, l := range m.GetLabel() {
				found = found || (l.GetName() == k && l.GetValue() == v)
			}
			ok = ok && found
		}
		if ok {
			return m
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return nil
}

// The sinks' counters are the listeners' Stats at the time of the scrape; events,
// outages and lag are counted as they are told.
func TestMetricsReadTheListeners(t *testing.T) {
	m := New("https://cluster.example:6443")
	l := listener.New(listener.Config{Name: "archive", Buffer: 2, OnFull: listener.DropNewest, Delivered: m.Lag("archive")}, discard{}, nil)
	m.Sinks([]*listener.Listener{l})
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	for i := range 5 {
		ev := &event.Event{Type: event.Added, Seq: uint64(i + 1), Time: time.Now(), Resource: pods, Kind: "Pod",
			Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}}
		m.Made(ev)
		l.Add(ev) // the buffer holds 2: 3 are dropped
	}
	mf := scrape(t, m)
	if v := get(t, mf, "kubeevents_sink_dropped_total", map[string]string{"sink": "archive", "cluster": "https://cluster.example:6443"}).GetCounter().GetValue(); v != 3 {
		t.Errorf("dropped = %v, want 3", v)
	}
	if v := get(t, mf, "kubeevents_sink_queue_length", map[string]string{"sink": "archive"}).GetGauge().GetValue(); v != 2 {
		t.Errorf("queue length = %v, want 2", v)
	}
	go l.Run()
	l.Close()
	<-l.Done()
	mf = scrape(t, m)
	st := l.Stats()
	if v := get(t, mf, "kubeevents_sink_delivered_total", map[string]string{"sink": "archive"}).GetCounter().GetValue(); v != float64(st.Delivered) || v != 2 {
		t.Errorf("delivered = %v, stats say %d", v, st.Delivered)
	}
	if n := get(t, mf, "kubeevents_delivery_lag_seconds", map[string]string{"sink": "archive"}).GetHistogram().GetSampleCount(); n != 2 {
		t.Errorf("lag samples = %d, want 2", n)
	}
	if v := get(t, mf, "kubeevents_events_total", map[string]string{"resource": "pods", "type": "ADDED"}).GetCounter().GetValue(); v != 5 {
		t.Errorf("events = %v, want 5", v)
	}
	cms := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}
	m.WatchLost(cms)
	m.WatchBack(cms, 3*time.Second, true)
	mf = scrape(t, m)
	if v := get(t, mf, "kubeevents_watch_outages_total", map[string]string{"resource": "configmaps"}).GetCounter().GetValue(); v != 1 {
		t.Errorf("outages = %v", v)
	}
	if v := get(t, mf, "kubeevents_watch_relists_total", map[string]string{"resource": "configmaps"}).GetCounter().GetValue(); v != 1 {
		t.Errorf("relists = %v", v)
	}
	if h := get(t, mf, "kubeevents_watch_reconnect_seconds", map[string]string{"resource": "configmaps"}).GetHistogram(); h.GetSampleSum() != 3 {
		t.Errorf("reconnect sum = %v", h.GetSampleSum())
	}
}

// Every metric has help text, as the exposition format shows it.
func TestMetricsHaveHelp(t *testing.T) {
	m := New("c")
	m.Sinks([]*listener.Listener{listener.New(listener.Config{Name: "s"}, discard{}, nil)})
	cms := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}
	m.WatchBack(cms, time.Second, true)
	m.WatchLost(cms)
	m.Made(&event.Event{Type: event.Added})
	m.Lag("s")(&event.Event{Time: time.Now()})
	for name, f := range scrape(t, m) {
		if f.GetHelp() == "" || !strings.HasPrefix(name, "kubeevents_") {
			t.Errorf("%s: help %q", name, f.GetHelp())
		}
	}
}
