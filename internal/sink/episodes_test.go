package sink

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/notify/notifytest"
)

// episodeSink is an http sink posting in the shipped format to url, a batch of one at
// a time, with header (NAME=REF; "" for none).
func episodeSink(t *testing.T, format, url, header string) (*HTTP, *settled) {
	t.Helper()
	f, err := notify.Shipped().Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckEditURL(f, url); err != nil {
		t.Fatal(err)
	}
	compiled, err := f.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var headers *Headers
	if header != "" {
		if headers, err = ParseHeaders(header); err != nil {
			t.Fatal(err)
		}
	}
	s := NewHTTP(HTTPOptions{Name: "hook", URL: url, Batching: Batching{Size: 10}, Timeout: 5 * time.Second, Headers: headers,
		Format: compiled, Differ: diff.NewDiffer(nil), Warn: func(f string, a ...any) { t.Logf("warn: "+f, a...) }})
	rec := &settled{}
	s.Hold(rec.settle)
	return s, rec
}

// sharedRef gives the episode's events one handle of its first message, as the episodes
// step does.
func sharedRef(events []*event.Event) []*event.Event {
	ref := events[0].Episode.Episode.Ref
	for _, ev := range events[1:3] {
		ev.Episode.Episode.Ref = ref
	}
	return events
}

// Slack's Web API: an episode's first message is posted (its handle kept in the
// episode), its update and its resolution edit it (chat.update) and are replies in its
// thread, a digest is a message of its own; every request as Slack documents it.
func TestHTTPSinkEpisodeSlackAPI(t *testing.T) {
	slack := &notifytest.SlackAPI{}
	srv := httptest.NewServer(slack)
	defer srv.Close()
	t.Setenv("SLACK_TOKEN", "Bearer xoxb-1234-test")
	s, rec := episodeSink(t, "slack-api", srv.URL+"/api/chat.postMessage?channel=C0123456789", "Authorization=env:SLACK_TOKEN")
	events := sharedRef(eventtest.EpisodeEvents())
	ref := events[0].Episode.Episode.Ref
	for i, ev := range events[:2] {
		if err := s.Write(ev); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, i+1)
	}
	if ref.Get() == "" {
		t.Fatal("no handle of the first message kept")
	}
	for _, ev := range events[2:] {
		if err := s.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if delivered, failed := count(rec.wait(t, 4)); delivered != 4 || failed != 0 {
		t.Fatalf("%d delivered, %d failed", delivered, failed)
	}
	messages, errs := slack.Messages()
	if len(errs) > 0 {
		t.Fatalf("refused: %s", strings.Join(errs, "\n"))
	}
	if len(messages) != 2 {
		t.Fatalf("%d messages, want the episode's first and the digest", len(messages))
	}
	first := messages[0]
	var r slackRef
	if err := json.Unmarshal([]byte(ref.Get()), &r); err != nil || r.TS != first.TS || r.Channel != "C0123456789" {
		t.Errorf("handle %q, first message %s", ref.Get(), first.TS)
	}
	if !strings.Contains(first.Body, "connection refused") || len(first.Replies) != 2 || len(first.Updates) != 2 {
		t.Errorf("first message %+v: want the crash's last words, two replies and two updates", first)
	}
	if !strings.Contains(first.Replies[0], "14 times since") || !strings.Contains(first.Replies[1], "resolved crashloop") ||
		!strings.Contains(first.Text(), "resolved crashloop") {
		t.Errorf("replies %q, now %q", first.Replies, first.Text())
	}
	if !strings.Contains(messages[1].Body, "digest: 2 open episodes") {
		t.Errorf("digest %s", messages[1].Body)
	}
}

// A Discord webhook: the first message is posted with ?wait=true, its id kept; the
// update and the resolution edit it in place, with what an edit takes.
func TestHTTPSinkEpisodeDiscord(t *testing.T) {
	discord := &notifytest.DiscordWebhook{}
	srv := httptest.NewServer(discord)
	defer srv.Close()
	s, rec := episodeSink(t, "discord", srv.URL+"/api/webhooks/1234567890/hook-token", "")
	events := sharedRef(eventtest.EpisodeEvents())
	ref := events[0].Episode.Episode.Ref
	for i, ev := range events[:3] {
		if err := s.Write(ev); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, i+1)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	messages, errs := discord.Messages()
	if len(errs) > 0 {
		t.Fatalf("refused: %s", strings.Join(errs, "\n"))
	}
	if len(messages) != 1 || messages[0].ID != ref.Get() || len(messages[0].Edits) != 2 {
		t.Fatalf("messages %+v, handle %q: want one, edited twice", messages, ref.Get())
	}
	if !strings.Contains(messages[0].Edits[1], "resolved crashloop") || strings.Contains(messages[0].Edits[0], "username") {
		t.Errorf("edits %q", messages[0].Edits)
	}
}

// A receiver that cannot edit gets each of the episode's messages as one of its own,
// which names the first.
func TestHTTPSinkEpisodeFollowUps(t *testing.T) {
	rcv := startServiceReceiver(t, "mattermost", 0)
	s, rec := episodeSink(t, "mattermost", rcv.url, "")
	for i, ev := range sharedRef(eventtest.EpisodeEvents())[:3] {
		if err := s.Write(ev); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, i+1) // one at a time: each a message of its own
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	took, refused := rcv.bodies()
	if len(refused) > 0 || len(took) != 3 {
		t.Fatalf("took %d, refused %q", len(took), refused)
	}
	if !strings.Contains(took[1], "first alerted 15:04:45 UTC") || !strings.Contains(took[2], "resolved crashloop") {
		t.Errorf("follow-ups %q", took[1:])
	}
}

// A crash's context that came past its bound: the first message goes without the log,
// and, where the receiver edits, the log follows as an edit of it.
func TestHTTPSinkEpisodeLateContext(t *testing.T) {
	slack := &notifytest.SlackAPI{}
	srv := httptest.NewServer(slack)
	defer srv.Close()
	t.Setenv("SLACK_TOKEN", "Bearer xoxb-1234-test")
	s, rec := episodeSink(t, "slack-api", srv.URL+"/api/chat.postMessage?channel=C0123456789", "Authorization=env:SLACK_TOKEN")
	open := eventtest.EpisodeEvents()[0]
	full := open.Context.Wait()
	early := *full
	early.Log, early.LogError = nil, "no answer within 1s"
	pending := event.NewPendingContext(time.Now(), &early) // its bound has passed
	open.Context = pending
	if err := s.Write(open); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, 1)
	pending.Done(full)
	deadline := time.Now().Add(5 * time.Second)
	for {
		messages, errs := slack.Messages()
		if len(errs) > 0 {
			t.Fatalf("refused: %s", strings.Join(errs, "\n"))
		}
		if len(messages) == 1 && len(messages[0].Updates) == 1 {
			m := messages[0]
			if strings.Contains(m.Body, "connection refused") || !strings.Contains(m.Body, "no log: no answer within 1s") ||
				!strings.Contains(m.Updates[0], "connection refused") || len(m.Replies) != 0 {
				t.Errorf("first %s, update %s, replies %q", m.Body, m.Updates[0], m.Replies)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no edit with the late log: %+v", messages)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Slack's refusal, said in a 200 answer, fails the event with Slack's own words.
func TestHTTPSinkSlackAPIRefusal(t *testing.T) {
	slack := &notifytest.SlackAPI{}
	srv := httptest.NewServer(slack)
	defer srv.Close()
	s, rec := episodeSink(t, "slack-api", srv.URL+"/api/chat.postMessage?channel=C0123456789", "") // no token
	if err := s.Write(eventtest.EpisodeEvents()[0]); err != nil {
		t.Fatal(err)
	}
	if errs := rec.wait(t, 1); errs[0] == nil || !strings.Contains(errs[0].Error(), "chat.postMessage: invalid_arguments") {
		t.Errorf("settled with %v", errs[0])
	}
	_ = s.Close()
	if err := CheckEditURL(notify.Format{Name: "slack-api", Edit: notify.EditSlack}, "https://slack.com/api/chat.postMessage"); err == nil ||
		!strings.Contains(err.Error(), "give its id in the URL, https://slack.com/api/chat.postMessage?channel=C0123456789") {
		t.Errorf("a URL without a channel: %v", err)
	}
}
