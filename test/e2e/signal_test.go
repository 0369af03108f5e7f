package e2e

// Tests of the noise reducers on the real binary: named transitions (--on, a sink's on=)
// caused for real by the living cluster, rollouts folded into ROLLOUT lines, and the http
// sink's formats posted to a server the test runs, which checks each request as the
// service's documentation says (package notifytest names the source of every rule).

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/proctest"
)

// The transitions happen for real: kwok's crash loop (hack/kwok/stages.yaml), kwok's own
// failure stage, and a Deployment past its progress deadline. --on prints only the events
// in which they happened, each naming its transition; an alertmanager sink with
// on=crashloop gets only the crash loop, in Alertmanager's v2 API shape.
func TestSignalTransitionsLiving(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	rcv := newFormatReceiver(t, map[string]string{"/api/v2/alerts": "alertmanager"})
	js := startKubeevents(t, "watch", "pods,deployments", "-n", ns, "-o", "json",
		"--on", "crashloop,failed,rollout-failed",
		"--sink", "http(format=alertmanager,on=crashloop,batch-interval=200ms)="+rcv.srv.URL+"/api/v2/alerts")

	ctx := context.Background()
	flaky := pod("flaky", map[string]string{"sim.kubeevents.dev/behavior": "crashloop"})
	flaky.Spec.SchedulerName = ""
	flaky.Annotations = map[string]string{"sim.kubeevents.dev/crash-after-ms": "500", "sim.kubeevents.dev/restart-after-ms": "3000"}
	doomed := pod("doomed", map[string]string{"pod-container-running-failed.stage.kwok.x-k8s.io": "true"})
	doomed.Spec.SchedulerName = ""
	for _, p := range []*corev1.Pod{flaky, doomed} {
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod: %v", err)
		}
	}
	// Its pods ask for a scheduler that does not exist, so none ever becomes available and
	// the controller marks the rollout failed once its second-long deadline is past.
	one, deadline := int32(1), int32(1)
	labels := map[string]string{"app": "stuck"}
	stuck := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "stuck"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one, ProgressDeadlineSeconds: &deadline,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod("x", nil).Spec,
			},
		},
	}
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, stuck, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}

	want := map[string]string{"flaky": "crashloop", "doomed": "failed", "stuck": "rollout-failed"}
	seen := map[string]bool{}
	_, err := proctest.WaitJSON(js.Process, livingWait, func(ev onEnvelope) bool {
		if len(ev.On) == 0 {
			t.Errorf("a line without a transition under --on: %s %s", ev.Type, ev.name())
		}
		for _, name := range ev.On {
			if !slices.Contains([]string{"crashloop", "failed", "rollout-failed"}, name) {
				t.Errorf("%s %s names %q, which --on did not ask for", ev.Type, ev.name(), name)
			}
		}
		if w, ok := want[ev.name()]; ok && slices.Contains(ev.On, w) {
			seen[ev.name()] = true
		}
		return len(seen) == len(want)
	})
	if err != nil {
		js.fail(err, fmt.Sprintf("the transitions %v (seen %v)", want, seen), livingWait)
	}

	rcv.waitBodies(js, "alertmanager", func(body string) bool { return strings.Contains(body, `"alertname":"crashloop"`) })
	for _, body := range rcv.got("alertmanager") {
		var alerts []struct {
			Labels map[string]string `json:"labels"`
		}
		if err := json.Unmarshal([]byte(body), &alerts); err != nil {
			t.Fatalf("alertmanager body: %v", err)
		}
		for _, a := range alerts {
			if a.Labels["alertname"] != "crashloop" || a.Labels["name"] != "flaky" || a.Labels["namespace"] != ns || a.Labels["severity"] != "warning" {
				t.Errorf("an alert the sink's on=crashloop should have left out, or mislabelled: %v", a.Labels)
			}
		}
	}
}

// Every shipped format, posted by one run to its receiver: each request passes the
// service's documented checks and carries the pod's events.
func TestSignalFormatsToReceivers(t *testing.T) {
	ns := newNamespace(t)
	paths := map[string]string{
		"/slack/hook":        "slack",
		"/mattermost/hook":   "mattermost",
		"/teams/hook":        "teams",
		"/discord/hook":      "discord",
		"/api/v2/alerts":     "alertmanager",
		"/loki/api/v1/push":  "loki",
		"/kubeevents/_bulk":  "elasticsearch",
		"/v1/logs":           "otlp",
		"/cloudevents/event": "cloudevents",
	}
	rcv := newFormatReceiver(t, paths)
	args := []string{"watch", "pods", "-n", ns, "--no-screen"}
	for path, format := range paths {
		args = append(args, "--sink", fmt.Sprintf("http(format=%s,batch-interval=200ms)=%s%s", format, rcv.srv.URL, path))
	}
	// The pod is there first, so that its ADDED, from the first list, says the run watches.
	name := "notified-" + randomHex(3)
	createPod(t, ns, name, nil)
	p := startKubeevents(t, args...)
	for _, format := range paths {
		rcv.waitBodies(p, format, func(body string) bool { return strings.Contains(body, name) })
	}
	deletePod(t, ns, name)
	for _, format := range paths {
		rcv.waitBodies(p, format, func(body string) bool {
			return strings.Contains(body, name) && strings.Contains(strings.ToLower(body), "deleted")
		})
	}
}

// A rolling update under --fold-rollouts: the terminal gets ROLLOUT lines (at least one
// step and the end), not the pods' events, while a fold=false sink gets every event.
func TestSignalFoldRollouts(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	createLivingDeployment(t, ns, "web", "nginx:1.27", 2)
	all := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json")
	waitPodsReady(t, all, 2, func(podState) bool { return true })

	full := t.TempDir() + "/full.jsonl"
	js := startKubeevents(t, "watch", "pods,deployments", "-n", ns, "-o", "json", "--fold-rollouts",
		"--sink", "file(fold=false)="+full)
	js.waitJSON(livingWait, "the deployment listed", func(ev envelope) bool { return ev.name() == "web" })
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}`)
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", "application/strategic-merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("updating the deployment: %v", err)
	}

	var steps, podLines int
	_, err := proctest.WaitJSON(js.Process, livingWait, func(ev onEnvelope) bool {
		if ev.Type != "ROLLOUT" {
			if strings.Contains(string(ev.Object), `"kind":"Pod"`) && strings.Contains(string(ev.Object), `"image":"nginx:1.28"`) {
				podLines++
			}
			return false
		}
		if ev.meta().Metadata.Name != "web" || ev.Rollout == nil {
			t.Errorf("a ROLLOUT line of something else: %+v", ev)
			return false
		}
		steps++
		return ev.Rollout.State == "complete"
	})
	if err != nil {
		js.fail(err, "a ROLLOUT line saying the rollout completed", livingWait)
	}
	if steps < 2 {
		t.Errorf("%d ROLLOUT lines, want a step and the end", steps)
	}
	// The fold=false sink got the pods' events the screen did not.
	var fullPods int
	waitUntil(t, js, livingWait, "the unfolded sink wrote the new pods' events", func() bool {
		fullPods = 0
		for _, l := range readLines(t, full, true) {
			var ev onEnvelope
			if json.Unmarshal([]byte(l), &ev) == nil && ev.Type != "ROLLOUT" && strings.Contains(string(ev.Object), `"image":"nginx:1.28"`) {
				fullPods++
			}
		}
		return fullPods >= 4
	})
	if podLines >= fullPods {
		t.Errorf("the folded screen printed %d pod events during the rollout, the unfolded sink %d: nothing folded", podLines, fullPods)
	}
	t.Logf("rollout: %d ROLLOUT lines and %d new pods' lines on the folded screen, %d new pods' events in the unfolded sink", steps, podLines, fullPods)
}

// Each sink names only the transitions it asked for, though the run evaluates them once
// for all: beside a jq sink with on=not-ready, an alertmanager sink with on=crashloop
// posts crashloop alerts alone, titled "crashloop: ..."; the jq sink's events say
// not-ready alone; the screen, without --on, names none.
func TestSignalEachSinkNamesItsOwnTransitionsLiving(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	rcv := newFormatReceiver(t, map[string]string{"/api/v2/alerts": "alertmanager"})
	notReady := t.TempDir() + "/not-ready.jsonl"
	js := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json",
		"--sink", "http(format=alertmanager,on=crashloop,batch-interval=200ms)="+rcv.srv.URL+"/api/v2/alerts",
		"--sink", "jq(on=not-ready,output="+notReady+")={name: .object.metadata.name, on}")
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), crashLooping("flaky", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod: %v", err)
	}

	// The screen gets the crash (its container waits in CrashLoopBackOff) without a name.
	crashed := false
	_, err := proctest.WaitJSON(js.Process, livingWait, func(ev onEnvelope) bool {
		if ev.On != nil {
			t.Errorf("the screen, without --on, names %v in %s %s", ev.On, ev.Type, ev.name())
		}
		crashed = crashed || strings.Contains(string(ev.Object), `"reason":"CrashLoopBackOff"`)
		return crashed
	})
	if err != nil {
		js.fail(err, "the pod crash-looping", livingWait)
	}
	rcv.waitBodies(js, "alertmanager", func(body string) bool { return strings.Contains(body, `"alertname":"crashloop"`) })
	for _, body := range rcv.got("alertmanager") {
		var alerts []struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		}
		if err := json.Unmarshal([]byte(body), &alerts); err != nil {
			t.Fatalf("alertmanager body: %v", err)
		}
		for _, a := range alerts {
			if a.Labels["alertname"] != "crashloop" || !strings.HasPrefix(a.Annotations["summary"], "crashloop: Pod "+ns+"/flaky") {
				t.Errorf("the on=crashloop sink posted an alert of another sink's transition: %v %v", a.Labels, a.Annotations)
			}
		}
	}
	var lines []string
	waitUntil(t, js, livingWait, "the on=not-ready jq sink wrote the crash", func() bool {
		lines = readLines(t, notReady, true)
		return len(lines) > 0
	})
	for _, l := range lines {
		if l != `{"name":"flaky","on":["not-ready"]}` {
			t.Errorf("the on=not-ready jq sink wrote %s, want the pod's not-ready alone", l)
		}
	}
}

// Chat formats keep each request within their service's size: crash-looping pods of
// many long-named containers make events whose details are long, and the Teams and
// Mattermost sinks post them in as many requests as their limits need (Teams' 28 KB,
// Mattermost's 16383 characters), every event whole in one of them; the summary's
// delivered counts are the events the receivers took. Before, Teams refused the batches
// whole, and Mattermost's text was cut with the events past the cut counted delivered.
func TestSignalFormatsKeepToTheirLimitsLiving(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	rcv := newFormatReceiver(t, map[string]string{"/teams/hook": "teams", "/mattermost/hook": "mattermost"})
	all := t.TempDir() + "/all.jsonl"
	js := startKubeevents(t, "watch", "pods", "-n", ns, "--no-screen", "-v=1", "--watch-only",
		"--sink", "http(name=teams,format=teams,batch-interval=3s)="+rcv.srv.URL+"/teams/hook",
		"--sink", "http(name=mattermost,format=mattermost,batch-interval=3s)="+rcv.srv.URL+"/mattermost/hook",
		"--sink", "file(name=all)="+all)
	waitListed(js, "pods in "+ns)
	for i := range 3 {
		if _, err := client.CoreV1().Pods(ns).Create(context.Background(), crashLooping(fmt.Sprintf("crowded-%d", i), 60), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod: %v", err)
		}
	}
	// Enough crashes for several full batches.
	waitUntil(t, js, 2*livingWait, "30 crashes in the file sink", func() bool {
		n := 0
		for _, l := range readLines(t, all, true) {
			if strings.Contains(l, `"reason":"CrashLoopBackOff"`) {
				n++
			}
		}
		return n >= 30
	})
	js.interrupt(livingWait)
	sum := parseSummary(t, js.Stderr())
	teams, mattermost := rcv.got("teams"), rcv.got("mattermost")
	titles := func(bodies []string, title *regexp.Regexp) (n int) {
		for _, b := range bodies {
			n += len(title.FindAllString(b, -1))
		}
		return n
	}
	// Each event is one title: a TextBlock in Teams, a bold line in Mattermost.
	tn := titles(teams, regexp.MustCompile(`"text":"(added|modified|deleted): Pod `))
	mn := titles(mattermost, regexp.MustCompile(`\*\*(added|modified|deleted): Pod `))
	events := uint64(len(readLines(t, all, true)))
	for name, took := range map[string]int{"teams": tn, "mattermost": mn} {
		c := sum.sinks[name]
		if c["delivered"] != events || uint64(took) != events || len(c) != 1 {
			t.Errorf("%s: summary %v, its receiver took %d events, the file sink has %d: want all delivered and taken", name, c, took, events)
		}
	}
	if len(teams) < 2 || len(mattermost) < 2 {
		t.Errorf("Teams got %d requests, Mattermost %d: the batches were not split", len(teams), len(mattermost))
	}
	if strings.Contains(strings.Join(append(teams, mattermost...), ""), "[cut]") {
		t.Error("an event was cut, though each fits a request alone")
	}
}
