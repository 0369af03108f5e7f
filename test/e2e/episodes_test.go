package e2e

// Episodes end to end: a sink with on= transitions posts one message per episode, updates
// it where its receiver can edit, resolves it when the transition's opposite holds, and
// keeps its episodes across a restart with --resume (they are in the checkpoint).

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
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

	"github.com/kubeevents/kubeevents/internal/notify/notifytest"
)

// slackChannel is one channel's messages on the test's Slack Web API.
func slackChannel(api *notifytest.SlackAPI, channel string) []notifytest.SlackMessage {
	all, _ := api.Messages()
	var out []notifytest.SlackMessage
	for _, m := range all {
		if m.Channel == channel {
			out = append(out, m)
		}
	}
	return out
}

// slackText is a message body's text and blocks' text, as a reader sees them.
func slackText(t *testing.T, body string) string {
	t.Helper()
	var m struct {
		Text   string `json:"text"`
		Blocks []struct {
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("a Slack message that is not JSON: %v\n%s", err, body)
	}
	parts := []string{m.Text}
	for _, b := range m.Blocks {
		parts = append(parts, b.Text.Text)
	}
	return strings.Join(parts, "\n")
}

// recoverCrashLoop has kwok stop crashing the pod: once its container runs again it
// stays running and ready.
func recoverCrashLoop(t *testing.T, ns, name string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"sim.kubeevents.dev/crash-after-ms":"1000h"}}}`)
	if _, err := client.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching pod %s: %v", name, err)
	}
}

// The "done when": watch pods,deployments with
// http(format=slack-api,on=crashloop,rollout-failed,cooldown=10m) against Slack's Web API
// (played by notifytest.SlackAPI, which checks each request against its documentation)
// posts one message per crash-looping pod, with its last log line; a clean restart with
// --resume in the middle of the episodes posts no new message; when the pods recover the
// first messages are updated in place and the resolution is a reply in their threads.
// A second sink with a short cooldown shows an episode's updates threaded too.
func TestEpisodesSlackAcrossResumeLiving(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	api := &notifytest.SlackAPI{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	token := filepath.Join(t.TempDir(), "slack-token")
	if err := os.WriteFile(token, []byte("Bearer xoxb-e2e-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	auth := `header="Authorization=file:` + token + `"`
	args := []string{"watch", "pods,deployments", "-n", ns, "--no-screen", "--resume", ckpt,
		"--sink", "http(format=slack-api,on=crashloop,rollout-failed,cooldown=10m," + auth + ")=" + srv.URL + "/api/chat.postMessage?channel=C0DONE",
		"--sink", "http(format=slack-api,on=crashloop,rollout-failed,cooldown=5s," + auth + ")=" + srv.URL + "/api/chat.postMessage?channel=C0SHORT"}

	lastWords := map[string]string{}
	for _, name := range []string{"flaky-a", "flaky-b"} {
		lastWords[name] = "panic: e2e " + name + " " + randomHex(4) + ": connection refused"
		createLoggingCrashLoop(t, ns, name, "starting", lastWords[name])
	}
	first := startKubeevents(t, args...)

	// One message per pod, its last log line in it (in the first message, or in the
	// edit that brings a context that came late).
	byPod := func(msgs []notifytest.SlackMessage) map[string]notifytest.SlackMessage {
		out := map[string]notifytest.SlackMessage{}
		for _, m := range msgs {
			for name := range lastWords {
				if strings.Contains(m.Body, "Pod "+ns+"/"+name) {
					out[name] = m
				}
			}
		}
		return out
	}
	for _, ch := range []string{"C0DONE", "C0SHORT"} {
		waitUntil(t, first, livingWait, "one message per crash-looping pod in "+ch+", with its last log line", func() bool {
			got := byPod(slackChannel(api, ch))
			for name, words := range lastWords {
				m, ok := got[name]
				if !ok || !strings.Contains(slackText(t, m.Text()), words) {
					return false
				}
			}
			return true
		})
	}
	opened := slackChannel(api, "C0DONE")
	for _, m := range opened {
		if !strings.Contains(slackText(t, m.Body), "crashloop: Pod "+ns+"/") {
			t.Errorf("first message %q does not say crashloop", slackText(t, m.Body))
		}
	}

	// A clean stop in the middle of the episodes, and a restart from the checkpoint
	// while the pods go on crashing.
	if _, code := first.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("first run: exit %d; stderr:\n%s", code, first.Stderr())
	}
	restarts := func(name string) int32 {
		p, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("getting pod %s: %v", name, err)
		}
		if len(p.Status.ContainerStatuses) == 0 {
			return 0
		}
		return p.Status.ContainerStatuses[0].RestartCount
	}
	before := restarts("flaky-a")
	second := startKubeevents(t, args...)
	second.waitStderr(30*time.Second, literal("resumed"))
	waitUntil(t, second, livingWait, "flaky-a crashed twice more", func() bool { return restarts("flaky-a") >= before+2 })
	// The short cooldown's episodes go on after the restart: an update in the thread.
	waitUntil(t, second, livingWait, "an update of each short-cooldown episode in its thread after the restart", func() bool {
		for _, m := range slackChannel(api, "C0SHORT") {
			if len(m.Replies) == 0 {
				return false
			}
		}
		return true
	})
	for _, m := range slackChannel(api, "C0SHORT") {
		if text := slackText(t, m.Replies[0]); !strings.Contains(text, "crashloop goes on") || !strings.Contains(text, "first alerted") {
			t.Errorf("C0SHORT: an update reads %q, want the episode going on, naming its first message", text)
		}
	}

	// Recovery: once the pods stay ready, each episode is resolved, in place and in its
	// thread.
	for name := range lastWords {
		recoverCrashLoop(t, ns, name)
	}
	resolved := func(m notifytest.SlackMessage) bool {
		if len(m.Updates) == 0 || len(m.Replies) == 0 {
			return false
		}
		return strings.Contains(slackText(t, m.Text()), "resolved crashloop") &&
			strings.Contains(slackText(t, m.Replies[len(m.Replies)-1]), "resolved crashloop")
	}
	for _, ch := range []string{"C0DONE", "C0SHORT"} {
		waitUntil(t, second, livingWait+2*time.Minute, "every episode of "+ch+" resolved", func() bool {
			msgs := slackChannel(api, ch)
			for _, m := range msgs {
				if !resolved(m) {
					return false
				}
			}
			return len(msgs) > 0
		})
	}
	if _, code := second.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", code, second.Stderr())
	}

	// Across both runs: one message per pod, no other; with the 10m cooldown nothing
	// but its resolution (and a context that came late) in its thread.
	msgs, errs := api.Messages()
	for _, e := range errs {
		t.Errorf("Slack refused a request: %s", e)
	}
	for _, ch := range []string{"C0DONE", "C0SHORT"} {
		got := slackChannel(api, ch)
		if len(got) != len(lastWords) || len(byPod(got)) != len(lastWords) {
			var texts []string
			for _, m := range got {
				texts = append(texts, slackText(t, m.Body))
			}
			t.Errorf("%s: %d messages, want one per pod (%d):\n%s", ch, len(got), len(lastWords), strings.Join(texts, "\n---\n"))
		}
	}
	for _, m := range slackChannel(api, "C0DONE") {
		if len(m.Replies) != 1 {
			var texts []string
			for _, r := range m.Replies {
				texts = append(texts, slackText(t, r))
			}
			t.Errorf("C0DONE: a thread of %d replies, want its resolution alone:\n%s", len(m.Replies), strings.Join(texts, "\n---\n"))
		}
	}
	t.Logf("%d messages in all; stderr of the second run:\n%s", len(msgs), second.Stderr())
}

// failingDeployment is a Deployment whose pods ask for a scheduler that does not exist,
// so its rollout fails once its second-long progress deadline is past.
func failingDeployment(name string) *appsv1.Deployment {
	one, deadline := int32(1), int32(1)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one, ProgressDeadlineSeconds: &deadline,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod("x", nil).Spec},
		},
	}
}

// amAlert is what the test reads of an alert posted to Alertmanager.
type amAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
}

// Episodes against the receivers that edit and those that cannot, through a crash loop
// that recovers and a rollout that fails then succeeds: Alertmanager gets one alert per
// episode, the same labels and start in every post, ended (endsAt) by its resolution;
// Discord one message per episode, posted with ?wait=true and edited in place up to its
// resolution; Slack's incoming webhook, which cannot edit, the first message and short
// follow-ups naming it, at most one per cooldown.
func TestEpisodesReceiversLiving(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	rcv := newFormatReceiver(t, map[string]string{"/api/v2/alerts": "alertmanager", "/slack/hook": "slack"})
	discord := &notifytest.DiscordWebhook{}
	var firstMu sync.Mutex
	var firstAt time.Time // when the first Discord message came
	dsrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		firstMu.Lock()
		if firstAt.IsZero() && r.Method == http.MethodPost {
			firstAt = time.Now()
		}
		firstMu.Unlock()
		discord.ServeHTTP(w, r)
	}))
	t.Cleanup(dsrv.Close)
	const opts = "on=crashloop,rollout-failed,cooldown=3s,resolve-after=30s,batch-interval=200ms"
	lastWords := "panic: e2e " + randomHex(4) + ": out of patience"
	createLoggingCrashLoop(t, ns, "flaky", "starting", lastWords)
	start := time.Now()
	p := startKubeevents(t, "watch", "pods,deployments", "-n", ns, "--no-screen",
		"--sink", "http(format=alertmanager,"+opts+")="+rcv.srv.URL+"/api/v2/alerts",
		"--sink", "http(format=discord,"+opts+")="+dsrv.URL+"/api/webhooks/1234567890/e2e-token",
		"--sink", "http(format=slack,"+opts+")="+rcv.srv.URL+"/slack/hook")
	if _, err := client.AppsV1().Deployments(ns).Create(context.Background(), failingDeployment("stuck"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}

	// Both episodes open; the rollout then succeeds and the pod recovers.
	alerts := func() []amAlert {
		var out []amAlert
		for _, body := range rcv.got("alertmanager") {
			var as []amAlert
			if err := json.Unmarshal([]byte(body), &as); err != nil {
				t.Fatalf("alertmanager body: %v", err)
			}
			out = append(out, as...)
		}
		return out
	}
	of := func(as []amAlert, name string) []amAlert {
		var out []amAlert
		for _, a := range as {
			if a.Labels["name"] == name {
				out = append(out, a)
			}
		}
		return out
	}
	waitUntil(t, p, livingWait, "alerts of the crash loop and of the failed rollout", func() bool {
		as := alerts()
		return len(of(as, "flaky")) > 0 && len(of(as, "stuck")) > 0
	})
	fix := []byte(`{"spec":{"template":{"spec":{"schedulerName":"default-scheduler"}}}}`)
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "stuck", types.StrategicMergePatchType, fix, metav1.PatchOptions{}); err != nil {
		t.Fatalf("fixing deployment: %v", err)
	}
	waitUntil(t, p, livingWait, "an update of the crash loop's episode", func() bool { return len(of(alerts(), "flaky")) > 1 })
	recoverCrashLoop(t, ns, "flaky")

	// An alert fires until its episode would be resolved as quiet (resolve-after), and its
	// resolution ends it.
	ended := func(as []amAlert) bool {
		return len(as) > 0 && strings.Contains(as[len(as)-1].Annotations["summary"], "resolved ") && !as[len(as)-1].EndsAt.After(time.Now())
	}
	waitUntil(t, p, livingWait+time.Minute, "both alerts ended by their resolution", func() bool {
		as := alerts()
		return ended(of(as, "flaky")) && ended(of(as, "stuck"))
	})
	for name, want := range map[string]map[string]string{
		"flaky": {"alertname": "crashloop", "severity": "warning", "namespace": ns, "kind": "Pod", "name": "flaky"},
		"stuck": {"alertname": "rollout-failed", "severity": "warning", "namespace": ns, "kind": "Deployment", "name": "stuck"},
	} {
		as := of(alerts(), name)
		for i, a := range as {
			if !maps.Equal(a.Labels, want) || !a.StartsAt.Equal(as[0].StartsAt) {
				t.Errorf("%s: alert %d labels %v starts %s, want %v from %s: one alert per episode", name, i, a.Labels, a.StartsAt, want, as[0].StartsAt)
			}
			if i < len(as)-1 && !a.EndsAt.After(a.StartsAt.Add(25*time.Second)) {
				t.Errorf("%s: alert %d of %d ends at %s, before its episode would be resolved as quiet", name, i, len(as), a.EndsAt)
			}
		}
		last := as[len(as)-1]
		if !strings.Contains(last.Annotations["summary"], "resolved "+want["alertname"]) {
			t.Errorf("%s: the last alert's summary %q does not say it is resolved", name, last.Annotations["summary"])
		}
	}
	if s := of(alerts(), "stuck"); !strings.Contains(s[len(s)-1].Annotations["summary"], "by rollout-complete") {
		t.Errorf("the rollout's episode: %q, want it resolved by rollout-complete", s[len(s)-1].Annotations["summary"])
	}
	if s := of(alerts(), "flaky"); !strings.Contains(s[len(s)-1].Annotations["summary"], "by ready") {
		t.Errorf("the crash loop's episode: %q, want it resolved by ready", s[len(s)-1].Annotations["summary"])
	}
	if s := of(alerts(), "flaky"); !strings.Contains(s[0].Annotations["context"], lastWords) {
		t.Errorf("the crash loop's first alert has no last log line: %q", s[0].Annotations["context"])
	}

	// Discord: one message per episode, edited up to its resolution.
	waitUntil(t, p, livingWait, "both Discord messages edited to their resolution", func() bool {
		msgs, _ := discord.Messages()
		done := 0
		for _, m := range msgs {
			if n := len(m.Edits); n > 0 && strings.Contains(m.Edits[n-1], "resolved ") {
				done++
			}
		}
		return done == 2
	})
	msgs, errs := discord.Messages()
	for _, e := range errs {
		t.Errorf("Discord refused a request: %s", e)
	}
	// The first occurrence reaches the receiver within the batch interval (200ms) and
	// the log request's bound (1s) of when kubeevents got the event (its embed's
	// timestamp), with a second to spare on a busy machine.
	var first struct {
		Embeds []struct {
			Timestamp time.Time `json:"timestamp"`
		} `json:"embeds"`
	}
	if err := json.Unmarshal([]byte(msgs[0].Body), &first); err != nil || len(first.Embeds) == 0 {
		t.Fatalf("Discord's first message %s: %v", msgs[0].Body, err)
	}
	firstMu.Lock()
	took := firstAt.Sub(first.Embeds[0].Timestamp)
	firstMu.Unlock()
	if took > 2200*time.Millisecond {
		t.Errorf("the first message came %s after its event, more than the batch interval and the log's bound (1.2s) and a second", took)
	}
	t.Logf("the first message came %s after its event", took.Round(time.Millisecond))
	for _, name := range []string{"crashloop: Pod " + ns + "/flaky", "rollout-failed: Deployment " + ns + "/stuck"} {
		n := 0
		for _, m := range msgs {
			if strings.Contains(m.Body, name) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("Discord: %d messages titled %q, want one, edited", n, name)
		}
	}
	if len(msgs) != 2 {
		t.Errorf("Discord: %d messages, want 2 (one per episode)", len(msgs))
	}

	// Slack's webhook: the first message, then follow-ups naming it, at most one per
	// cooldown (3s) besides the resolution.
	elapsed := time.Since(start)
	var flaky []string
	waitUntil(t, p, livingWait, "the crash loop's resolution on Slack", func() bool {
		flaky = nil
		for _, body := range rcv.got("slack") {
			if strings.Contains(body, "Pod "+ns+"/flaky") {
				flaky = append(flaky, body)
			}
		}
		return len(flaky) > 0 && strings.Contains(flaky[len(flaky)-1], "resolved crashloop")
	})
	if !strings.Contains(flaky[0], "crashloop: Pod "+ns+"/flaky") || !strings.Contains(flaky[0], lastWords) {
		t.Errorf("Slack's first message %s: want the crash loop and its last log line", flaky[0])
	}
	for _, body := range flaky[1:] {
		if !strings.Contains(body, "first alerted") {
			t.Errorf("a Slack follow-up that does not name the first message: %s", body)
		}
	}
	if limit := 2 + int(elapsed/(3*time.Second)); len(flaky) > limit {
		t.Errorf("Slack: %d messages of the crash loop in %s, want at most %d (one per 3s cooldown)", len(flaky), elapsed, limit)
	}
	t.Logf("in %s: %d alerts, %d Discord messages, %d Slack messages of the crash loop", elapsed.Round(time.Second), len(alerts()), len(msgs), len(flaky))
}

// An HA hand-over in the middle of an episode, as the chart runs kubeevents (its RBAC,
// --leader-elect, the checkpoint in a Secret): the leader posts the crash loop's message
// with its last log line (the chart's role may read pods/log), is stopped (SIGTERM), and
// the standby that takes over neither alerts again nor forgets the episode: it resolves
// it in the first message's thread when the pod recovers.
func TestEpisodesHAHandOverLiving(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	r := applyChartRBAC(t, ns)
	api := &notifytest.SlackAPI{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	token := filepath.Join(t.TempDir(), "slack-token")
	if err := os.WriteFile(token, []byte("Bearer xoxb-e2e-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lastWords := "panic: e2e " + randomHex(4) + ": handed over"
	createLoggingCrashLoop(t, ns, "flaky", "starting", lastWords)
	args := []string{"watch", "pods", "-n", ns, "--no-screen", "-v=1", "--kubeconfig", r.kubeconfig,
		"--sink", `http(format=slack-api,on=crashloop,cooldown=10m,header="Authorization=file:` + token + `")=` + srv.URL + "/api/chat.postMessage?channel=C0HA",
		"--leader-elect", "--leader-elect-namespace", r.ns, "--leader-elect-name", r.lease,
		"--leader-elect-lease-duration", haLease.String(), "--leader-elect-renew-deadline", haRenew.String(),
		"--leader-elect-retry-period", haRetry.String(),
		"--resume", "secret:" + r.ns + "/" + r.checkpoint}
	one := startProc(t, nil, nil, args...)
	one.waitStderr(30*time.Second, leadingRe)
	two := startProc(t, nil, nil, args...)
	two.waitStderr(30*time.Second, standingByRe)

	waitUntil(t, one, livingWait, "the crash loop's message with its last log line", func() bool {
		msgs := slackChannel(api, "C0HA")
		return len(msgs) == 1 && strings.Contains(slackText(t, msgs[0].Text()), lastWords)
	})
	one.signal(syscall.SIGTERM)
	if _, code := one.wait(30 * time.Second); code != 0 {
		t.Fatalf("the leader stopped with SIGTERM exited %d; stderr:\n%s", code, one.Stderr())
	}
	two.waitStderr(10*time.Second, leadingRe)
	two.waitStderr(30*time.Second, regexp.MustCompile(`resumed pods from secret:`))
	p, err := client.CoreV1().Pods(ns).Get(context.Background(), "flaky", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := p.Status.ContainerStatuses[0].RestartCount
	waitUntil(t, two, livingWait, "flaky crashed twice more under the new leader", func() bool {
		p, err := client.CoreV1().Pods(ns).Get(context.Background(), "flaky", metav1.GetOptions{})
		return err == nil && p.Status.ContainerStatuses[0].RestartCount >= before+2
	})
	recoverCrashLoop(t, ns, "flaky")
	waitUntil(t, two, livingWait+2*time.Minute, "the episode resolved in place and in its thread", func() bool {
		msgs := slackChannel(api, "C0HA")
		return len(msgs) > 0 && len(msgs[0].Replies) > 0 && len(msgs[0].Updates) > 0 &&
			strings.Contains(slackText(t, msgs[0].Text()), "resolved crashloop")
	})
	msgs, errs := api.Messages()
	for _, e := range errs {
		t.Errorf("Slack refused a request: %s", e)
	}
	if len(msgs) != 1 || len(msgs[0].Replies) != 1 {
		var texts []string
		for _, m := range msgs {
			texts = append(texts, slackText(t, m.Body))
			for _, r := range m.Replies {
				texts = append(texts, "  reply: "+slackText(t, r))
			}
		}
		t.Errorf("%d messages, want one, with its resolution alone in its thread:\n%s", len(msgs), strings.Join(texts, "\n"))
	}
}

// Open episodes where a person looks: the live view marks the row of a crash-looping pod
// with its episode (a sink's on=crashloop) and counts the open ones in its top line;
// top, with its own --on, does the same.
func TestEpisodesMarkedInUIAndTopLiving(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), crashLooping("flaky", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod: %v", err)
	}
	createPod(t, ns, "calm", nil)
	u := kubeevents(t).Screen(150, 20).Start("watch", "pods", "-n", ns, "--ui", "--sink", "jq(on=crashloop,output="+filepath.Join(t.TempDir(), "crashes.jsonl")+")=.").screen
	tty := kubeevents(t).Terminal(150, 50).Start("top", "pods", "-n", ns, "--interval", "500ms", "--color", "never")

	u.waitScreen(livingWait, "the crash-looping pod's row marked, one open episode in the top line", func() bool {
		row, _ := u.line("flaky")
		return strings.Contains(row, "[episode: crashloop]") && u.has("1 open episode")
	})
	if row, _ := u.line("calm"); strings.Contains(row, "episode") {
		t.Errorf("a pod in no episode is marked: %q", row)
	}
	tty.waitFor(livingWait, "top's row of the crash-looping pod marked, its title counting it", func(l string) bool {
		return strings.Contains(l, "pod/"+ns+"/flaky [crashloop]")
	})
	if !slices.ContainsFunc(tty.Seen(), func(l string) bool { return strings.Contains(l, "1 open episode") }) {
		t.Errorf("top's title does not count the open episode:\n%s", strings.Join(tty.Seen(), "\n"))
	}
}
