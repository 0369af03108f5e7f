package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestRecoveryAB measures what each of the informer's recovery pieces gains
// (internal/informer/reflector.go; docs/development.md, "client-go's recovery"): for
// kubeevents with every piece on, and with each turned off by its environment variable,
// KUBEEVENTS_RECOVERY_AB outages in a row of each kind, a few seconds apart, each followed,
// as soon as the server is back, by a change to a ConfigMap; the figure is the time from
// the server being back to that change printed. It runs only when KUBEEVENTS_RECOVERY_AB is set (the number
// of outages of each kind), on the fault tests' cluster, and fails only if, with every
// piece on, a change is printed more than recoveryBound after the server is back.
//
//	make test-faults FAULTS_RUN=TestRecoveryAB with KUBEEVENTS_RECOVERY_AB=5 in the environment
func TestRecoveryAB(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("KUBEEVENTS_RECOVERY_AB"))
	if runs <= 0 {
		t.Skip("KUBEEVENTS_RECOVERY_AB (outages of each kind) is not set")
	}
	fc := faultsCluster(t)
	readyz := readyzProbe(t, fc.config)
	const recoveryBound = 3 * time.Second
	outages := []struct {
		name string
		// cause makes the outage, given what changes an object behind the server's back,
		// and returns when the server answered again.
		cause func(t *testing.T, behind func()) time.Time
	}{
		{"restart", func(t *testing.T, _ func()) time.Time {
			restarted := fc.restartAPIServer(t, 2*time.Second)
			ready := waitReady(t, readyz, 60*time.Second)
			if err := <-restarted; err != nil {
				t.Fatal(err)
			}
			return ready
		}},
		// As TestFaultCompaction: while the server is down, an object is deleted behind it
		// and etcd compacted past what kubeevents saw, so that its next watch is answered
		// 410 Gone.
		{"compact", func(t *testing.T, behind func()) time.Time {
			restarted := fc.restartAPIServer(t, 2*time.Second)
			behind()
			fc.compact(t)
			ready := waitReady(t, readyz, 60*time.Second)
			if err := <-restarted; err != nil {
				t.Fatal(err)
			}
			return ready
		}},
	}
	configs := []struct{ name, env string }{
		{"all on", ""},
		{"re-list in place off", "KUBEEVENTS_RELIST_IN_PLACE=off"},
		{"ended-early BOOKMARK off", "KUBEEVENTS_ENDED_EARLY_BOOKMARK=off"},
		{"readiness probes off", "KUBEEVENTS_READINESS_PROBE=off"},
	}
	var report []string
	for _, outage := range outages {
		t.Run(outage.name, func(t *testing.T) {
			for _, config := range configs {
				ns := fc.newNamespace(t)
				marker := "initial-" + randomHex(4)
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"marker": marker}}
				if _, err := fc.client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				var env []string
				if config.env != "" {
					env = []string{config.env}
				}
				stdout := &timedLines{}
				p := startProc(t, stdout, env, "watch", "configmaps", "-n", ns, "-o", "json", "--kubeconfig", fc.kubeconfig)
				if _, ok := stdout.wait(eventWait, marker); !ok {
					t.Fatalf("%s: the ConfigMap's initial state was not printed; stderr:\n%s", config.name, p.Stderr())
				}
				change := func(marker string, since time.Time) {
					patch := fmt.Sprintf(`{"data":{"marker":%q}}`, marker)
					for {
						_, err := fc.client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "cm", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
						if err == nil {
							return
						}
						if time.Since(since) > 10*time.Second {
							t.Fatalf("changing the ConfigMap after the server was ready: %v", err)
						}
						time.Sleep(10 * time.Millisecond)
					}
				}
				outageOver := regexp.MustCompile(`watch of configmaps resumed; no events were missed|re-synced [\d,]+ configmaps`)
				var latencies []time.Duration
				for run := range runs {
					filler := fmt.Sprintf("filler-%d", run+1)
					if _, err := fc.client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: filler}}, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					if _, ok := stdout.wait(eventWait, filler); !ok {
						t.Fatalf("%s was not printed", filler)
					}
					ready := outage.cause(t, func() { fc.etcdDelete(t, "/registry/configmaps/"+ns+"/"+filler) })
					marker = fmt.Sprintf("run-%d-%s", run+1, randomHex(4))
					change(marker, ready)
					printed, ok := stdout.wait(time.Until(ready.Add(90*time.Second)), marker)
					if !ok {
						t.Fatalf("%s, %s, run %d: the change was not printed within 90 s; stderr:\n%s", outage.name, config.name, run+1, p.Stderr())
					}
					latency := printed.Sub(ready)
					latencies = append(latencies, latency)
					if config.env == "" && latency > recoveryBound {
						t.Errorf("%s, all on, run %d: the change was printed %s after the server was back, want within %s", outage.name, run+1, latency, recoveryBound)
					}
					// Outages a few seconds apart, as in TestFaultCatchUpAfterOutage: the next
					// begins once this one is said to be over (or after 10 s).
					for deadline := time.Now().Add(10 * time.Second); len(outageOver.FindAllString(p.Stderr(), -1)) < run+1 && time.Now().Before(deadline); {
						time.Sleep(50 * time.Millisecond)
					}
				}
				p.signal(os.Interrupt)
				p.wait(15 * time.Second)
				line := fmt.Sprintf("%s | %s | %s", outage.name, config.name, figures(latencies))
				report = append(report, line)
				t.Log(line)
				t.Logf("stderr:\n%s", p.Stderr())
			}
		})
	}
	t.Logf("outage | configuration | from the server back to the change printed, per run; median, max\n%s", strings.Join(report, "\n"))
}

// figures lists latencies in order, then their median and maximum, to 10 ms.
func figures(ds []time.Duration) string {
	var each []string
	for _, d := range ds {
		each = append(each, fmt.Sprintf("%.2f", d.Seconds()))
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return fmt.Sprintf("%s | %.2f | %.2f", strings.Join(each, " "), sorted[len(sorted)/2].Seconds(), sorted[len(sorted)-1].Seconds())
}
