package notifytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Slack's Web API, chat.postMessage and chat.update:
// https://docs.slack.dev/reference/methods/chat.postMessage (POST
// https://slack.com/api/chat.postMessage; the token in an Authorization header, "Bearer
// xoxb-..." for a bot token; application/json; channel required; text, blocks or
// attachments describe the message, text its notifications' fallback when blocks are
// given; thread_ts "another message's ts value to make this message a reply", the
// parent's, not a reply's), https://docs.slack.dev/reference/methods/chat.update
// (channel and ts required: the message to update; text, blocks, attachments), the
// limits of the message's text and blocks as for incoming webhooks, and
// https://docs.slack.dev/apis/web-api/#responses (HTTP 200 with {"ok": false, "error":
// "..."} for an error; HTTP 429 with Retry-After when rate limited).
func (c *checker) slackAPI(req Request) {
	c.mediaType(req, "application/json")
	if req.Method != "" && req.Method != http.MethodPost {
		c.errorf("method %s, want POST", req.Method)
	}
	method := req.Path[strings.LastIndex(req.Path, "/")+1:]
	if req.Path != "" && method != "chat.postMessage" && method != "chat.update" {
		c.errorf("path %q: want a Web API method, chat.postMessage or chat.update", req.Path)
	}
	if req.Path != "" && !slackToken.MatchString(req.Authorization) {
		c.errorf("Authorization %q: want a bot token, Bearer xoxb-...", redactToken(req.Authorization))
	}
	m := c.object(c.decode(req.Body), "message")
	if m == nil {
		return
	}
	known := []string{"channel", "text", "blocks", "attachments", "thread_ts", "mrkdwn", "reply_broadcast", "unfurl_links",
		"unfurl_media", "username", "icon_emoji", "icon_url", "metadata", "parse", "link_names", "as_user", "markdown_text"}
	if method == "chat.update" {
		known = []string{"channel", "ts", "text", "blocks", "attachments", "parse", "link_names", "as_user", "file_ids",
			"reply_broadcast", "metadata", "markdown_text"}
		if ts, _ := c.str(m, "ts", "message", true); ts != "" && !slackTS.MatchString(ts) {
			c.errorf("message.ts %q is not a message's timestamp (1405894322.002768)", ts)
		}
	}
	c.onlyKeys(m, "message", known...)
	if ch, _ := c.str(m, "channel", "message", true); ch == "" {
		c.errorf("message.channel: empty")
	}
	if ts, ok := c.str(m, "thread_ts", "message", false); ok && !slackTS.MatchString(ts) {
		c.errorf("message.thread_ts %q is not a message's timestamp", ts)
	}
	c.slackMessage(m)
}

var (
	slackToken = regexp.MustCompile(`^Bearer xox[a-z]-[A-Za-z0-9-]+$`)
	slackTS    = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
)

func redactToken(s string) string {
	if len(s) > 14 {
		return s[:14] + "..."
	}
	return s
}

// discordEdit checks an edit of a webhook's message:
// https://discord.com/developers/docs/resources/webhook#edit-webhook-message (PATCH
// /webhooks/{webhook.id}/{webhook.token}/messages/{message.id}; JSON params content,
// embeds, flags, allowed_mentions, components, files, payload_json, attachments, poll:
// not the username, avatar or thread name a message is posted with; query thread_id and
// with_components), with the embeds' limits of a posted message.
func (c *checker) discordEdit(req Request) {
	if req.Path != "" && !discordMessagePath.MatchString(req.Path) {
		c.errorf("path %q: want /webhooks/ID/TOKEN/messages/MESSAGE_ID", req.Path)
	}
	for k := range req.Query {
		c.oneOf(k, "query parameter", "thread_id", "with_components")
	}
	m := c.object(c.decode(req.Body), "message")
	if m == nil {
		return
	}
	c.onlyKeys(m, "edit", "content", "embeds", "flags", "allowed_mentions", "components", "files", "payload_json", "attachments", "poll")
	c.discordMessage(m)
}

var (
	discordMessagePath = regexp.MustCompile(`/webhooks/[0-9]+/[A-Za-z0-9_-]+/messages/[0-9]+$`)
	discordWebhookPath = regexp.MustCompile(`/webhooks/[0-9]+/[A-Za-z0-9_-]+$`)
)

// SlackAPI plays Slack's Web API for the tests: chat.postMessage and chat.update, each
// request checked as Check("slack-api") says and answered as Slack does ({"ok": true,
// "channel", "ts"}; an error {"ok": false, "error"}), and keeps the channel's messages,
// each with its replies and updates.
type SlackAPI struct {
	mu       sync.Mutex
	messages []*SlackMessage
	errs     []string
	next     int
}

// SlackMessage is a message of the channel as posted, with the replies in its thread and
// the updates it was given (their bodies, in order).
type SlackMessage struct {
	TS, Channel string
	Body        string
	Replies     []string
	Updates     []string
}

// Text is the message's text as it reads now (its last update's, if any).
func (m *SlackMessage) Text() string {
	body := m.Body
	if len(m.Updates) > 0 {
		body = m.Updates[len(m.Updates)-1]
	}
	return body
}

func (s *SlackAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: body, Method: r.Method,
		Query: r.URL.Query(), Authorization: r.Header.Get("Authorization")}
	errs := Check("slack-api", req)
	s.mu.Lock()
	defer s.mu.Unlock()
	answer := func(v any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(v)
	}
	if len(errs) > 0 {
		for _, err := range errs {
			s.errs = append(s.errs, fmt.Sprintf("slack-api %s: %v\nbody: %s", r.URL.Path, err, body))
		}
		answer(map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	var m struct {
		Channel  string `json:"channel"`
		TS       string `json:"ts"`
		ThreadTS string `json:"thread_ts"`
	}
	_ = json.Unmarshal(body, &m)
	find := func(ts string) *SlackMessage {
		i := slices.IndexFunc(s.messages, func(x *SlackMessage) bool { return x.TS == ts && x.Channel == m.Channel })
		if i < 0 {
			return nil
		}
		return s.messages[i]
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat.update"):
		msg := find(m.TS)
		if msg == nil {
			answer(map[string]any{"ok": false, "error": "message_not_found"})
			return
		}
		msg.Updates = append(msg.Updates, string(body))
		answer(map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS})
	case m.ThreadTS != "":
		parent := find(m.ThreadTS)
		if parent == nil {
			answer(map[string]any{"ok": false, "error": "thread_not_found"})
			return
		}
		parent.Replies = append(parent.Replies, string(body))
		s.next++
		answer(map[string]any{"ok": true, "channel": m.Channel, "ts": s.ts()})
	default:
		s.next++
		msg := &SlackMessage{TS: s.ts(), Channel: m.Channel, Body: string(body)}
		s.messages = append(s.messages, msg)
		answer(map[string]any{"ok": true, "channel": m.Channel, "ts": msg.TS, "message": map[string]any{"ts": msg.TS}})
	}
}

func (s *SlackAPI) ts() string { return "1700000000." + fmt.Sprintf("%06d", s.next) }

// Messages are the channel's messages so far (copies); errs the requests refused.
func (s *SlackAPI) Messages() (messages []SlackMessage, errs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.messages {
		c := *m
		c.Replies, c.Updates = slices.Clone(m.Replies), slices.Clone(m.Updates)
		messages = append(messages, c)
	}
	return messages, slices.Clone(s.errs)
}

// DiscordWebhook plays a Discord webhook for the tests: it takes messages (POST, with
// ?wait=true answered with the message and its id, else 204) and their edits (PATCH
// .../messages/ID), each checked as Check("discord") says, and keeps every message
// with its edits.
type DiscordWebhook struct {
	mu       sync.Mutex
	messages []*DiscordMessage
	errs     []string
}

// DiscordMessage is a message as posted, and its edits' bodies, in order.
type DiscordMessage struct {
	ID    string
	Body  string
	Edits []string
}

func (d *DiscordWebhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: body, Method: r.Method, Query: r.URL.Query()}
	errs := Check("discord", req)
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(errs) > 0 {
		for _, err := range errs {
			d.errs = append(d.errs, fmt.Sprintf("discord %s %s: %v\nbody: %s", r.Method, r.URL.Path, err, body))
		}
		http.Error(w, `{"message": "Invalid Form Body", "code": 50035}`, http.StatusBadRequest)
		return
	}
	answer := func(m *DiscordMessage, text string) {
		w.Header().Set("Content-Type", "application/json")
		var v map[string]any
		_ = json.Unmarshal([]byte(text), &v)
		if v == nil {
			v = map[string]any{}
		}
		v["id"], v["type"] = m.ID, 0
		_ = json.NewEncoder(w).Encode(v)
	}
	if r.Method == http.MethodPatch {
		id := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		i := slices.IndexFunc(d.messages, func(m *DiscordMessage) bool { return m.ID == id })
		if i < 0 {
			http.Error(w, `{"message": "Unknown Message", "code": 10008}`, http.StatusNotFound)
			return
		}
		d.messages[i].Edits = append(d.messages[i].Edits, string(body))
		answer(d.messages[i], string(body))
		return
	}
	m := &DiscordMessage{ID: strconv.Itoa(1_100_000_000_000_000_000 + len(d.messages)), Body: string(body)}
	d.messages = append(d.messages, m)
	if r.URL.Query().Get("wait") != "true" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	answer(m, string(body))
}

// Messages are the messages so far (copies), errs the requests refused.
func (d *DiscordWebhook) Messages() (messages []DiscordMessage, errs []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.messages {
		c := *m
		c.Edits = slices.Clone(m.Edits)
		messages = append(messages, c)
	}
	return messages, slices.Clone(d.errs)
}
