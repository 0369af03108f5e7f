package metrics

import (
	"errors"
	"io"
	"net/http"
	"testing"
)

type fakeElection struct {
	leading bool
	healthy error
}

func (f *fakeElection) Leading() bool  { return f.leading }
func (f *fakeElection) Healthy() error { return f.healthy }

// /healthz and /readyz on the metrics address, as a pod's probes ask them: alive while
// serving; ready once synced, or under leader election while standing by healthy or
// leading and synced. kubeevents_leader says which.
func TestHealthAndReadiness(t *testing.T) {
	m := New("https://cluster.example:6443")
	srv, err := m.Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	probe := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + srv.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	check := func(what, path string, wantCode int, wantBody string) {
		t.Helper()
		if code, body := probe(path); code != wantCode || body != wantBody {
			t.Errorf("%s: %s = %d %q, want %d %q", what, path, code, body, wantCode, wantBody)
		}
	}
	check("starting", "/healthz", 200, "ok\n")
	check("starting", "/readyz", 503, "not ready: the initial lists are not in yet\n")
	m.Synced(true)
	check("synced", "/readyz", 200, "ok: watching\n")

	e := &fakeElection{healthy: errors.New("no answer about the lease kubeevents/kubeevents yet")}
	m.Synced(false)
	m.SetElection(e)
	check("a standby without an answer", "/readyz", 503, "not ready: no answer about the lease kubeevents/kubeevents yet\n")
	e.healthy = nil
	check("a standby", "/readyz", 200, "ok: standing by\n")
	if g := get(t, scrape(t, m), "kubeevents_leader", nil).GetGauge().GetValue(); g != 0 {
		t.Errorf("kubeevents_leader %v on a standby", g)
	}
	e.leading = true
	check("a leader listing", "/readyz", 503, "not ready: leading; the initial lists are not in yet\n")
	m.Synced(true)
	check("a leader", "/readyz", 200, "ok: leading\n")
	if g := get(t, scrape(t, m), "kubeevents_leader", map[string]string{"cluster": "https://cluster.example:6443"}).GetGauge().GetValue(); g != 1 {
		t.Errorf("kubeevents_leader %v on the leader", g)
	}
	check("a leader", "/healthz", 200, "ok\n")
}
