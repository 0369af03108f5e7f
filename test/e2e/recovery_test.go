package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// TestFaultCatchUpAfterOutage: kube-apiserver is killed and started again,
// eight times in a row, for outages of 2 s to 2 minutes; each time, as soon as its
// /readyz answers, one ConfigMap is changed, and the change must reach kubeevents' stdout
// within a second rather than after client-go's backoff (up to 30 s). Timed tests are
// stall detectors, not benchmarks: the test fails above recoveryBound, and logs every
// figure and how many runs met the 1 s target (on a loaded 2-core CI machine one run in
// eight has taken 1.5 s: the server itself answers slowly right after its restart).
//
// The order of the outages matters: each restart ends the watch with 410 Gone, and
// client-go's reflector would wait before it re-lists (0.8 to 1.6 s, doubled for every
// re-list up to 30 s, and back to 0.8 s only every two minutes: internal/informer's
// reflector.go). Short outages in a row are what made that wait longest (the fourth 2 s outage within 2 minutes was printed 4 s after
// /readyz, the fifth 9.6 s, before the informer re-listed in place of the reflector).
func TestFaultCatchUpAfterOutage(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	const target, recoveryBound = time.Second, 3 * time.Second
	met := 0
	outages := []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second, 5 * time.Second, 2 * time.Second,
		10 * time.Second, 30 * time.Second, 2 * time.Minute}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"marker": "initial-" + randomHex(4)}}
	if _, err := fc.client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stdout := &timedLines{}
	p := startProc(t, stdout, nil, "watch", "configmaps", "-n", ns, "-o", "json", "--kubeconfig", fc.kubeconfig)
	if _, ok := stdout.wait(eventWait, cm.Data["marker"]); !ok {
		t.Fatalf("the ConfigMap's initial state was not printed within %s; stderr:\n%s", eventWait, p.Stderr())
	}
	readyz := readyzProbe(t, fc.config)
	outageOver := regexp.MustCompile(`watch of configmaps resumed; no events were missed|re-synced [\d,]+ configmaps`)

	var latencies []string
	for run, down := range outages {
		restarted := fc.restartAPIServer(t, down)
		ready := waitReady(t, readyz, down+60*time.Second)
		marker := fmt.Sprintf("run-%d-%s", run+1, randomHex(4))
		patch := fmt.Sprintf(`{"data":{"marker":%q}}`, marker)
		for {
			_, err := fc.client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "cm", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			if err == nil {
				break
			}
			if time.Since(ready) > 10*time.Second {
				t.Fatalf("run %d: changing the ConfigMap after the server was ready: %v", run+1, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		written := time.Since(ready)
		printed, ok := stdout.wait(time.Until(ready.Add(60*time.Second)), marker)
		if !ok {
			t.Fatalf("run %d (outage %s): the change made after the server was ready was not printed within 60 s; stderr:\n%s", run+1, down, p.Stderr())
		}
		latency := printed.Sub(ready)
		latencies = append(latencies, fmt.Sprintf("%s→%s", down, latency.Round(time.Millisecond)))
		t.Logf("run %d: outage %s, change written %s and printed %s after /readyz answered", run+1, down, written.Round(time.Millisecond), latency.Round(time.Millisecond))
		if latency <= target {
			met++
		}
		if latency > recoveryBound {
			t.Errorf("run %d (outage %s): the first change after the server was ready was printed %s later, want within %s (target 1 s)", run+1, down, latency.Round(time.Millisecond), recoveryBound)
		}
		if err := <-restarted; err != nil {
			t.Fatal(err)
		}
		// Each outage is said, and said to be over, before the next begins.
		deadline := time.Now().Add(15 * time.Second)
		for len(outageOver.FindAllString(p.Stderr(), -1)) < run+1 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		stderr := p.Stderr()
		if lost, over := strings.Count(stderr, "watch of configmaps lost"), len(outageOver.FindAllString(stderr, -1)); lost != run+1 || over != run+1 {
			t.Fatalf("after outage %d, stderr says %d outages began and %d ended, want %d:\n%s", run+1, lost, over, run+1, stderr)
		}
	}
	t.Logf("recovery latency per run (outage→first change printed after /readyz): %s; within the 1 s target: %d of %d", strings.Join(latencies, ", "), met, len(outages))
	t.Logf("stderr:\n%s", p.Stderr())
}

// readyzProbe returns a function that asks the server's /readyz once.
func readyzProbe(t *testing.T, config *rest.Config) func() bool {
	t.Helper()
	hc, err := rest.HTTPClientFor(config)
	if err != nil {
		t.Fatal(err)
	}
	hc.Timeout = 500 * time.Millisecond
	url := strings.TrimSuffix(config.Host, "/") + "/readyz"
	return func() bool {
		resp, err := hc.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// waitReady polls /readyz every 10 ms until it answers OK, and returns when it did.
func waitReady(t *testing.T, ready func() bool, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ready() {
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver's /readyz did not answer OK within %s", timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Now()
}
