package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/notify"
)

// An http sink's episodes (package episode): each message of an episode (its opening,
// update, resolution; a digest) is a request of its own. A receiver whose format says it
// edits messages (notify.Format.Edit) is given the episode's first message and then its
// edits (Slack's Web API: chat.update, and a reply in the message's thread; a Discord
// webhook: the message edited in place); the receiver's handle of the first message is
// kept in the episode (event.EpisodeRef), and so in the checkpoint. A receiver that
// cannot edit gets each as a message of its own, which names the first (the format's
// title says so). A crash's context that came after its bound (event.PendingContext)
// follows, where the receiver edits, as an edit of the first message.

// editor is how a receiver that edits messages is posted to.
type editor interface {
	// post posts a body that is no episode's (a batch of events), as the receiver takes
	// a message.
	post(ctx context.Context, data []byte, contentType string) error
	// open posts an episode's first message and returns the receiver's handle of it.
	open(ctx context.Context, data []byte, contentType string) (ref string, err error)
	// update edits the message ref names to say data, and says so where the receiver
	// keeps a thread of the message; late says data only adds what came late (the
	// crash's context) to it, and the thread is told nothing.
	update(ctx context.Context, ref string, data []byte, contentType string, late bool) error
}

// CheckEditURL checks an http sink's URL for its format's editing: Slack's Web API needs
// its channel (https://slack.com/api/chat.postMessage?channel=C0123).
func CheckEditURL(f notify.Format, rawURL string) error {
	if f.Edit == "" {
		return nil
	}
	_, err := newEditor(nil, f.Edit, rawURL)
	return err
}

func newEditor(s *HTTP, kind, rawURL string) (editor, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	switch kind {
	case notify.EditSlack:
		q := u.Query()
		channel := q.Get("channel")
		if channel == "" {
			return nil, fmt.Errorf("format %s posts to Slack's Web API, which needs a channel: give its id in the URL, https://slack.com/api/chat.postMessage?channel=C0123456789", kind)
		}
		q.Del("channel")
		u.RawQuery = q.Encode()
		switch {
		case strings.HasSuffix(u.Path, "/chat.postMessage"):
			u.Path = strings.TrimSuffix(u.Path, "chat.postMessage")
		case strings.HasSuffix(u.Path, "/"):
		default:
			return nil, fmt.Errorf("format %s posts to Slack's Web API: give the URL of its chat.postMessage method, https://slack.com/api/chat.postMessage?channel=%s", kind, channel)
		}
		return &slackEditor{s: s, base: *u, channel: channel}, nil
	case notify.EditDiscord:
		return &discordEditor{s: s, webhook: *u}, nil
	}
	return nil, fmt.Errorf("format edits %q messages, which kubeevents cannot", kind)
}

// slackEditor posts to Slack's Web API: chat.postMessage for a message (a reply, with
// thread_ts), chat.update for an edit. Slack answers 200 with {"ok": false, "error"} when
// it refuses a request.
type slackEditor struct {
	s       *HTTP
	base    url.URL // the API's URL, ending in /
	channel string
}

// slackRef is the handle of a Slack message.
type slackRef struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

func (e *slackEditor) method(name string) string {
	u := e.base
	u.Path += name
	return u.String()
}

// with is the body with Slack's arguments added (a format's body is the message alone).
func (e *slackEditor) with(data []byte, args map[string]string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the format's body is no JSON object, as Slack's Web API takes: %w", err)
	}
	for k, v := range args {
		m[k] = v
	}
	return json.Marshal(m)
}

func (e *slackEditor) call(ctx context.Context, method string, data []byte, contentType string, args map[string]string) (slackRef, error) {
	body, err := e.with(data, args)
	if err != nil {
		return slackRef{}, err
	}
	var ref slackRef
	err = e.s.do(ctx, call{method: http.MethodPost, url: e.method(method), data: body, contentType: contentType,
		answer: func(answer []byte) error {
			var r struct {
				OK      bool   `json:"ok"`
				Error   string `json:"error"`
				Channel string `json:"channel"`
				TS      string `json:"ts"`
			}
			if err := json.Unmarshal(answer, &r); err != nil {
				return &attemptError{err: fmt.Errorf("%s: an answer that is not Slack's: %.100s", method, answer)}
			}
			if !r.OK {
				// Slack's own words; those that say to try again are tried again.
				return &attemptError{err: fmt.Errorf("%s: %s", method, firstLine(r.Error)),
					retry: r.Error == "ratelimited" || r.Error == "internal_error" || r.Error == "fatal_error" || r.Error == "service_unavailable"}
			}
			ref = slackRef{Channel: r.Channel, TS: r.TS}
			return nil
		}})
	return ref, err
}

func (e *slackEditor) post(ctx context.Context, data []byte, contentType string) error {
	_, err := e.call(ctx, "chat.postMessage", data, contentType, map[string]string{"channel": e.channel})
	return err
}

func (e *slackEditor) open(ctx context.Context, data []byte, contentType string) (string, error) {
	ref, err := e.call(ctx, "chat.postMessage", data, contentType, map[string]string{"channel": e.channel})
	if err != nil {
		return "", err
	}
	if ref.Channel == "" {
		ref.Channel = e.channel
	}
	raw, _ := json.Marshal(ref)
	return string(raw), nil
}

func (e *slackEditor) update(ctx context.Context, refText string, data []byte, contentType string, late bool) error {
	var ref slackRef
	if err := json.Unmarshal([]byte(refText), &ref); err != nil || ref.TS == "" {
		return fmt.Errorf("the first message's handle %q is not Slack's", refText)
	}
	if _, err := e.call(ctx, "chat.update", data, contentType, map[string]string{"channel": ref.Channel, "ts": ref.TS}); err != nil {
		return err
	}
	if late {
		return nil
	}
	_, err := e.call(ctx, "chat.postMessage", data, contentType, map[string]string{"channel": ref.Channel, "thread_ts": ref.TS})
	return err
}

// discordEditor posts to a Discord webhook: a message with ?wait=true, which answers
// with it (and its id), and its edits with PATCH .../messages/ID.
type discordEditor struct {
	s       *HTTP
	webhook url.URL
}

func (e *discordEditor) post(ctx context.Context, data []byte, contentType string) error {
	return e.s.do(ctx, call{method: http.MethodPost, url: e.webhook.String(), data: data, contentType: contentType})
}

func (e *discordEditor) open(ctx context.Context, data []byte, contentType string) (string, error) {
	u := e.webhook
	q := u.Query()
	q.Set("wait", "true")
	u.RawQuery = q.Encode()
	var id string
	err := e.s.do(ctx, call{method: http.MethodPost, url: u.String(), data: data, contentType: contentType,
		answer: func(answer []byte) error {
			var m struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(answer, &m); err != nil || m.ID == "" {
				return &attemptError{err: fmt.Errorf("an answer to ?wait=true without the message's id: %.100s", answer)}
			}
			id = m.ID
			return nil
		}})
	return id, err
}

// editFields are what an edit of a webhook's message may say: not the name and avatar
// it was posted with.
var editFields = []string{"content", "embeds", "flags", "allowed_mentions", "components", "files", "payload_json", "attachments", "poll"}

func (e *discordEditor) update(ctx context.Context, id string, data []byte, contentType string, _ bool) error {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("the format's body is no JSON object, as a Discord webhook takes: %w", err)
	}
	for k := range m {
		if !containsString(editFields, k) {
			delete(m, k)
		}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	u := e.webhook
	u.Path = strings.TrimSuffix(u.Path, "/") + "/messages/" + url.PathEscape(id)
	q := url.Values{}
	if t := e.webhook.Query().Get("thread_id"); t != "" {
		q.Set("thread_id", t)
	}
	u.RawQuery = q.Encode()
	return e.s.do(ctx, call{method: http.MethodPatch, url: u.String(), data: body, contentType: contentType})
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isEpisodeMessage reports whether ev is a message of one of the sink's episodes.
func isEpisodeMessage(ev *event.Event) bool {
	return ev.Episode != nil && ev.Episode.Action != event.EpisodeNone && ev.Episode.Action != event.EpisodeHeld
}

// sendEpisodes sends a batch in which some events are episodes' messages, in order: the
// others as batches, each episode's message alone, to the editor.
func (s *HTTP) sendEpisodes(ctx context.Context, batch []item, envelopes []map[string]any, done func([]item, error)) {
	start := 0
	flush := func(end int) {
		if end > start {
			s.deliver(ctx, batch[start:end], envelopes[start:end], done)
		}
		start = end + 1
	}
	for i, it := range batch {
		if !isEpisodeMessage(it.ev) {
			continue
		}
		flush(i)
		done([]item{it}, s.episodeMessage(ctx, it.ev, envelopes[i]))
	}
	if start < len(batch) {
		s.deliver(ctx, batch[start:], envelopes[start:], done)
	}
}

// episodeMessage sends one message of an episode: its first, or an edit of it.
func (s *HTTP) episodeMessage(ctx context.Context, ev *event.Event, envelope map[string]any) error {
	body, err := s.oneBody(ctx, ev, envelope)
	if err != nil {
		return err
	}
	d := ev.Episode
	var ref *event.EpisodeRef
	if d.Episode != nil {
		ref = d.Episode.Ref
	}
	contentType := s.opts.Format.ContentType
	if d.Action == event.EpisodeDigest || ref == nil {
		return s.editor.post(ctx, body, contentType)
	}
	if first := ref.Get(); first != "" && d.Action != event.EpisodeOpen {
		s.edited(d.Episode.ID)
		return s.editor.update(ctx, first, body, contentType, false)
	}
	// Its first message, or one whose first was never posted (it failed): this one
	// takes its place, and the next ones edit it.
	first, err := s.editor.open(ctx, body, contentType)
	if err != nil {
		return err
	}
	ref.Set(first)
	if ev.Context != nil && ev.Context.Late() {
		s.lateContext(ev, d.Episode.ID, first)
	}
	return nil
}

// oneBody is the format's body for one event, cut to fit the receiver's limit.
func (s *HTTP) oneBody(ctx context.Context, ev *event.Event, envelope map[string]any) ([]byte, error) {
	limit := s.limit()
	body, cut, err := s.opts.Format.One(ctx, envelope, limit)
	if err != nil {
		if notify.IsTooLarge(err) {
			err = fmt.Errorf("format %s: %s %s %s is %w", s.opts.Format.Name, ev.Type, ev.Kind, ev.Key(), err)
		} else {
			err = fmt.Errorf("format %s: %w", s.opts.Format.Name, err)
		}
		s.formatFailed(1, err)
		return nil, err
	}
	if cut {
		s.cutNotice(ev, limit)
	}
	return body, nil
}

// edited notes that an episode's first message was edited since it was posted: what
// came late for it no longer goes there.
func (s *HTTP) edited(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.editedSince != nil {
		s.editedSince[id] = true
	}
}

// lateContext edits an episode's first message, posted without its crash's context
// (it came past its bound), once the context has come, unless the message was edited
// since: the first message then says what the first event had to say, whole.
func (s *HTTP) lateContext(ev *event.Event, id, first string) {
	s.mu.Lock()
	if s.editedSince == nil {
		s.editedSince = map[string]bool{}
	}
	s.editedSince[id] = false
	s.mu.Unlock()
	s.late.Add(1)
	go func() {
		defer s.late.Done()
		select {
		case <-ev.Context.Ended():
		case <-s.pool.ctx.Done():
			return
		}
		c := ev.Context.Fetched()
		s.mu.Lock()
		editedSince := s.editedSince[id]
		delete(s.editedSince, id)
		s.mu.Unlock()
		if editedSince || c == nil || c.Log == nil {
			return // nothing more to say, or the message says newer things now
		}
		envelope, err := jq.EnvelopeValue(ev.WithContext(event.ReadyContext(c)), s.opts.Differ, s.opts.ShowOld)
		if err != nil {
			return
		}
		body, err := s.oneBody(s.pool.ctx, ev, envelope)
		if err != nil {
			return
		}
		if err := s.editor.update(s.pool.ctx, first, body, s.opts.Format.ContentType, true); err != nil && !errors.Is(err, context.Canceled) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.failNotice.Allow(time.Now()) {
				s.opts.Warn("http sink %q: adding the crash's context that came late to an episode's first message: %v", s.opts.Name, err)
			}
		}
	}()
}
