package e2e

// Episodes end to end: a sink with on= transitions posts one message per episode, updates
// it where its receiver can edit, resolves it when the transition's opposite holds, and
// keeps its episodes across a restart with --resume (they are in the checkpoint).

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
