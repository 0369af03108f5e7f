package e2e

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
)

// TestFaultSilentPartition: kubeevents reaches kube-apiserver through a TCP
// proxy that the test makes stop carrying bytes, without closing anything: what a network
// path that silently drops packets looks like to both ends (a half-open connection).
//
//   - A partition healed before it is noticed: the change made meanwhile is printed
//     within a second of the path coming back.
//   - A long one: it is said on stderr within 45 s (HTTP/2 health checks), and the change
//     made meanwhile is printed within a second of the path coming back.
func TestFaultSilentPartition(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	proxy, kubeconfig := fc.viaProxy(t)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"marker": "initial-" + randomHex(4)}}
	if _, err := fc.client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stdout := &timedLines{}
	p := startProc(t, stdout, nil, "watch", "configmaps", "-n", ns, "-o", "json", "--kubeconfig", kubeconfig)
	if _, ok := stdout.wait(eventWait, cm.Data["marker"]); !ok {
		t.Fatalf("the ConfigMap's initial state was not printed within %s; stderr:\n%s", eventWait, p.Stderr())
	}
	change := func(marker string) {
		t.Helper()
		patch := fmt.Sprintf(`{"data":{"marker":%q}}`, marker)
		if _, err := fc.client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "cm", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A stall detector, not a benchmark: the target is 1 s, the figures are logged.
	const catchUpBound = 3 * time.Second
	lost := regexp.MustCompile(`watch of configmaps lost`)
	// heal brings the path back and returns how long after that the change made during
	// the partition (marker) was printed.
	heal := func(partition, marker string) time.Duration {
		t.Helper()
		healed := proxy.resume()
		printed, ok := stdout.wait(30*time.Second, marker)
		if !ok {
			t.Fatalf("the change made during a %s was not printed within 30 s of the path coming back; stderr:\n%s", partition, p.Stderr())
		}
		latency := printed.Sub(healed)
		t.Logf("%s: the change made during it printed %s after the path came back", partition, latency.Round(time.Millisecond))
		if latency > catchUpBound {
			t.Errorf("the change made during a %s was printed %s after the path came back, want within %s", partition, latency.Round(time.Millisecond), catchUpBound)
		}
		return latency
	}

	// A short partition, right after an event: healed long before a health check.
	before := "before-short-" + randomHex(4)
	change(before)
	if _, ok := stdout.wait(eventWait, before); !ok {
		t.Fatalf("the change before the short partition was not printed within %s; stderr:\n%s", eventWait, p.Stderr())
	}
	proxy.pause()
	marker := "short-" + randomHex(4)
	change(marker)
	time.Sleep(5 * time.Second)
	shortLatency := heal("5 s partition", marker)

	// A long partition: noticed, said, and caught up once the path is back.
	time.Sleep(2 * time.Second)
	partitioned := proxy.pause()
	marker = "long-" + randomHex(4)
	change(marker)
	p.waitStderr(60*time.Second, lost)
	detection := time.Since(partitioned)
	t.Logf("long partition: said on stderr %s after the path stopped carrying packets", detection.Round(time.Millisecond))
	if detection > 45*time.Second {
		t.Errorf("the lost watch was said %s after the partition began, want within 45 s", detection.Round(time.Millisecond))
	}
	if _, early := stdout.wait(0, marker); early {
		t.Fatalf("the change made during the partition was printed while the path carried nothing: the proxy does not partition")
	}
	time.Sleep(5 * time.Second) // the path is still down: the probes and the next watch hang
	longLatency := heal("long partition", marker)
	p.waitStderr(15*time.Second, regexp.MustCompile(`watch of configmaps resumed; no events were missed|re-synced [\d,]+ configmaps`))
	if n := len(lost.FindAllString(p.Stderr(), -1)); n != 1 {
		t.Errorf("stderr says %d times that the watch was lost, want once:\n%s", n, p.Stderr())
	}
	t.Logf("partition figures: detection %s; catch-up after healing %s (5 s partition), %s (long partition)",
		detection.Round(time.Millisecond), shortLatency.Round(time.Millisecond), longLatency.Round(time.Millisecond))
	t.Logf("stderr:\n%s", p.Stderr())
}

// pausableProxy forwards TCP connections to an upstream address, and can be made to stop
// carrying bytes in both directions, on every connection and on new ones, without closing
// any: the connections stay open and silent until it resumes.
type pausableProxy struct {
	ln       net.Listener
	upstream string

	mu      sync.Mutex
	resumed chan struct{} // nil while forwarding; closed when a pause ends
	conns   []net.Conn
}

func startPausableProxy(t *testing.T, upstream string) *pausableProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pausableProxy{ln: ln, upstream: upstream}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *pausableProxy) addr() string { return p.ln.Addr().String() }

// pause stops carrying bytes, and returns when.
func (p *pausableProxy) pause() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resumed == nil {
		p.resumed = make(chan struct{})
	}
	return time.Now()
}

// resume carries bytes again, and returns when.
func (p *pausableProxy) resume() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resumed != nil {
		close(p.resumed)
		p.resumed = nil
	}
	return time.Now()
}

// gate returns once the proxy carries bytes.
func (p *pausableProxy) gate() {
	p.mu.Lock()
	resumed := p.resumed
	p.mu.Unlock()
	if resumed != nil {
		<-resumed
	}
}

func (p *pausableProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *pausableProxy) serve(c net.Conn) {
	p.gate()
	u, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, u)
	p.mu.Unlock()
	go p.pipe(u, c)
	go p.pipe(c, u)
}

// pipe copies src to dst, holding what it read while the proxy is paused.
func (p *pausableProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// dropAll closes every connection it carries, as a proxy restarting would: both ends see
// them closed, and new ones are carried as before.
func (p *pausableProxy) dropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *pausableProxy) close() {
	p.resume()
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// viaProxy starts a pausableProxy in front of the fault cluster's kube-apiserver and
// returns it with a kubeconfig that reaches the cluster through it.
func (fc *faultCluster) viaProxy(t *testing.T) (*pausableProxy, string) {
	t.Helper()
	server, err := url.Parse(fc.config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startPausableProxy(t, server.Host)
	return proxy, kubeconfigVia(t, fc.kubeconfig, "https://"+proxy.addr())
}

// kubeconfigVia writes a copy of the kubeconfig at path whose clusters are reached at
// server instead, and returns its path.
func kubeconfigVia(t *testing.T, path, server string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = server
	}
	out := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(out, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}
