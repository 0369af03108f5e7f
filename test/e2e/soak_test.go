package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestSoak (make soak) runs kubeevents for KUBEEVENTS_SOAK_DURATION against a
// living cluster of its own while it changes steadily (ConfigMaps patched, created and
// deleted; a Deployment rolled out again and again by the controllers, its pods run by
// kwok), with a fault every 1 to 3 minutes, chosen at random: kube-apiserver killed and
// started again, etcd compacted, the network path silently cut for a while (a proxy that
// stops carrying bytes), and kubeevents itself killed with SIGKILL and started again with
// --resume (in the first half only, so that the memory of one process can be followed
// for the second half). At the end:
//
//   - every object's final state in the output has the resourceVersion `kubectl get`
//     reports, and no object is missing or extra;
//   - between two kills of kubeevents no change is printed twice (across a kill the
//     guarantee is at-least-once);
//   - the RSS of the last process at the end is within 10% of its RSS 5 minutes after it
//     started.
func TestSoak(t *testing.T) {
	durationText := os.Getenv("KUBEEVENTS_SOAK_DURATION")
	if durationText == "" {
		t.Skip("KUBEEVENTS_SOAK_DURATION is not set: run make soak")
	}
	duration, err := time.ParseDuration(durationText)
	if err != nil {
		t.Fatalf("KUBEEVENTS_SOAK_DURATION=%q: %v", durationText, err)
	}
	fc := faultsCluster(t)
	nodes, err := fc.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("the soak needs a living cluster (simulated nodes): %v, %d nodes", err, len(nodes.Items))
	}
	ns := fc.newNamespace(t)
	ctx, stopChurn := context.WithCancel(context.Background())
	defer stopChurn()

	// The workload: 50 ConfigMaps and a Deployment of 10 pods.
	var cms []string
	for i := range 50 {
		name := fmt.Sprintf("cm-%03d", i)
		cms = append(cms, name)
		if _, err := fc.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "0"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"app": "soak"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](10),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/web:1"}}},
			},
		},
	}
	if _, err := fc.client.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// kubeevents reaches the server through a proxy that can cut the path silently.
	server, err := url.Parse(fc.config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startPausableProxy(t, server.Host)
	kubeconfig := kubeconfigVia(t, fc.kubeconfig, "https://"+proxy.addr())
	dir := t.TempDir()
	out := filepath.Join(dir, "events.jsonl")
	checkpoint := filepath.Join(dir, "checkpoint")
	resumable := supportsResume(t)
	args := []string{"watch", "pods,configmaps", "-n", ns, "-o", "json", "--kubeconfig", kubeconfig}
	if resumable {
		args = append(args, "--resume", checkpoint)
	}
	outFile, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	start := func() (*proc, time.Time) { return startProc(t, outFile, nil, args...), time.Now() }
	p, started := start()
	waitLines(t, p, eventWait, 60, out)

	// Steady churn: ConfigMap patches (about 10 a second), one ConfigMap created and one
	// deleted every 5 s, a rollout of the Deployment every 45 s.
	var churnWG sync.WaitGroup
	churnWG.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			patch := fmt.Sprintf(`{"data":{"v":"%d"}}`, i)
			_, _ = fc.client.CoreV1().ConfigMaps(ns).Patch(ctx, cms[i%len(cms)], types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			if i%50 == 0 {
				name := fmt.Sprintf("extra-%05d", i)
				_, _ = fc.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
				if i >= 100 {
					_ = fc.client.CoreV1().ConfigMaps(ns).Delete(ctx, fmt.Sprintf("extra-%05d", i-100), metav1.DeleteOptions{})
				}
			}
			if i%450 == 0 && i > 0 {
				patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"soak/rollout":"%d"}}}}}`, i)
				_, _ = fc.client.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			}
		}
	})

	// Faults, every 1 to 3 minutes, until the end.
	var faults []faultRecord
	var segments []int // line counts of the output at each kill: where at-least-once applies
	soakStart := time.Now()
	end := soakStart.Add(duration)
	lineCount := &lineCounter{path: out}
	for {
		wait := time.Minute + rand.N(2*time.Minute)
		if time.Now().Add(wait).After(end) {
			break
		}
		time.Sleep(wait)
		if !p.Alive() {
			t.Fatalf("kubeevents exited (code %d); stderr:\n%s", p.ExitCode(), p.Stderr())
		}
		// The first fault kills kubeevents (the one kind with a deadline: the first half),
		// the second and third are the other kinds not yet seen; then any, at random.
		kinds := []string{"restart-apiserver", "compact", "partition"}
		if resumable && time.Since(soakStart) < duration/2 {
			kinds = append(kinds, "kill-kubeevents")
		}
		kind := kinds[rand.N(len(kinds))]
		if unseen := unseenKinds(faults, kinds); len(unseen) > 0 {
			kind = unseen[0]
			if slices.Contains(unseen, "kill-kubeevents") {
				kind = "kill-kubeevents"
			}
		}
		at := time.Since(soakStart).Round(time.Second)
		switch kind {
		case "restart-apiserver":
			down := time.Duration(2+rand.N(9)) * time.Second
			if err := <-fc.restartAPIServer(t, down); err != nil {
				t.Fatal(err)
			}
			kind += " " + down.String()
		case "compact":
			fc.compact(t)
		case "partition":
			cut := time.Duration(5+rand.N(36)) * time.Second
			proxy.pause()
			time.Sleep(cut)
			proxy.resume()
			kind += " " + cut.String()
		case "kill-kubeevents":
			// Lines written before the kill: after it, at-least-once.
			p.signal(syscall.SIGKILL)
			p.wait(10 * time.Second)
			segments = append(segments, lineCount.count())
			p, started = start()
		}
		faults = append(faults, faultRecord{at: at, what: kind})
		t.Logf("fault at %s: %s", at, kind)
	}

	// RSS: 5 minutes after the last start, and at the end.
	var baseline, final int64
	if wait := time.Until(started.Add(5 * time.Minute)); wait < time.Until(end) {
		time.Sleep(max(wait, 0))
		baseline = rssKiB(t, p)
	}
	time.Sleep(max(time.Until(end), 0))
	final = rssKiB(t, p)
	stopChurn()
	churnWG.Wait()

	// Every final state equals kubectl's, once the rollout has settled.
	settle := time.Now().Add(2 * time.Minute)
	for time.Now().Before(settle) {
		d, err := fc.client.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
		if err == nil && d.Status.UpdatedReplicas == 10 && d.Status.ReadyReplicas == 10 && d.Status.Replicas == 10 {
			break
		}
		time.Sleep(time.Second)
	}
	evs := fc.converge(t, p, out, ns, "pods,configmaps", 2*time.Minute)
	t.Log("soak: every final state equals kubectl get's")

	// No change printed twice within a segment between kills.
	bounds := append(append([]int{0}, segments...), len(evs))
	reprints := 0
	for i := 1; i < len(bounds); i++ {
		from, to := bounds[i-1], min(bounds[i], len(evs))
		seen := map[string]bool{}
		for _, ev := range evs[from:to] {
			m := ev.meta()
			if ev.Type != "ADDED" && ev.Type != "MODIFIED" {
				continue
			}
			key := m.Kind + "/" + m.Metadata.Name + "@" + m.Metadata.ResourceVersion
			if seen[key] {
				reprints++
				if reprints <= 10 {
					t.Errorf("%s printed twice between two kills (%s)", key, ev.Type)
				}
			}
			seen[key] = true
		}
	}

	t.Logf("soak figures: %s, %d faults (%s), %d events, %d kills of kubeevents, %d changes printed twice between kills",
		duration, len(faults), faultSummary(faults), len(evs), len(segments), reprints)
	if baseline > 0 {
		ratio := float64(final) / float64(baseline)
		t.Logf("soak figures: RSS 5 min after the last start %d KiB, at the end %d KiB (ratio %.3f, target <= 1.10)", baseline, final, ratio)
		if ratio > 1.10 {
			t.Errorf("RSS grew from %d KiB to %d KiB (%.1f%%), want within 10%%", baseline, final, (ratio-1)*100)
		}
	} else {
		t.Logf("soak figures: the run was too short to compare RSS 5 min after the last start with the end (final %d KiB)", final)
	}
	if !resumable {
		t.Log("soak: this kubeevents has no --resume: kubeevents itself was not killed")
	}
	t.Logf("stderr of the last kubeevents:\n%s", p.Stderr())
}

// faultRecord is one fault of the soak: when, and what.
type faultRecord struct {
	at   time.Duration
	what string
}

// unseenKinds are the kinds no fault was of yet, in a random order.
func unseenKinds(faults []faultRecord, kinds []string) []string {
	var unseen []string
	for _, k := range kinds {
		if !slices.ContainsFunc(faults, func(f faultRecord) bool { return strings.Fields(f.what)[0] == k }) {
			unseen = append(unseen, k)
		}
	}
	rand.Shuffle(len(unseen), func(i, j int) { unseen[i], unseen[j] = unseen[j], unseen[i] })
	return unseen
}

// faultSummary counts the faults by kind.
func faultSummary(faults []faultRecord) string {
	counts := map[string]int{}
	for _, f := range faults {
		counts[strings.Fields(f.what)[0]]++
	}
	var parts []string
	for k, v := range counts {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, v))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// supportsResume tells whether the kubeevents under test has --resume.
func supportsResume(t *testing.T) bool {
	t.Helper()
	r := runKubeevents(t, 30*time.Second, "watch", "--help")
	return strings.Contains(r.stdout, "--resume")
}

// rssKiB is the resident set size of a running kubeevents.
func rssKiB(t *testing.T, p *proc) int64 {
	t.Helper()
	status, err := p.Status()
	if err != nil || status["VmRSS"] == 0 {
		t.Fatalf("reading kubeevents' RSS: %v (status %v)", err, status)
	}
	return status["VmRSS"]
}
