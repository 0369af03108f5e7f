// Package notifytest checks requests as the receivers of package notify's formats take
// them, field by field, from each service's own documentation (the source of each rule is
// named beside it). It serves the tests: the shipped formats' unit tests, and the
// end-to-end tests' HTTP servers that play the receivers.
package notifytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Request is what a receiver got: its path, content type and body; for the receivers
// that tell methods, queries and tokens apart (slack-api, discord), also those ("" and
// nil are POST and no query).
type Request struct {
	Path        string
	ContentType string
	Body        []byte
	Method      string
	Query       url.Values
	// Authorization is the request's Authorization header.
	Authorization string
}

// Check checks req as the receiver of the named format would take it, and returns every
// rule it breaks (nil: none). A Path of "" is not checked. A request over the service's
// size limit breaks a rule that is a *TooLargeError when the service answers it 413
// Payload Too Large (IsTooLarge), and another error when it answers 400 or cuts or
// splits the message (the events past its limit would be lost or torn).
func Check(format string, req Request) []error {
	c := &checker{}
	switch format {
	case "slack":
		c.slack(req)
	case "slack-api":
		c.slackAPI(req)
	case "mattermost":
		c.mattermost(req)
	case "teams":
		c.teams(req)
	case "discord":
		c.discord(req)
	case "alertmanager":
		c.alertmanager(req)
	case "loki":
		c.loki(req)
	case "elasticsearch":
		c.elasticsearch(req)
	case "otlp":
		c.otlp(req)
	case "cloudevents":
		c.cloudevents(req)
	default:
		c.errorf("no receiver known for format %q", format)
	}
	return c.errs
}

type checker struct {
	errs []error
}

func (c *checker) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// TooLargeError is a request over a service's size limit that the service answers 413
// Payload Too Large.
type TooLargeError struct{ msg string }

func (e *TooLargeError) Error() string { return e.msg }

// IsTooLarge reports whether err is a *TooLargeError.
func IsTooLarge(err error) bool {
	_, ok := err.(*TooLargeError)
	return ok
}

// maxBytes says a body of more than limit bytes, which the service answers 413.
func (c *checker) maxBytes(body []byte, limit int, what string) {
	if len(body) > limit {
		c.errs = append(c.errs, &TooLargeError{fmt.Sprintf("%s: %d bytes, more than the %d the service takes", what, len(body), limit)})
	}
}

// mediaType checks the request's Content-Type's media type.
func (c *checker) mediaType(req Request, want ...string) {
	mt, _, err := mime.ParseMediaType(req.ContentType)
	if err != nil || !slices.Contains(want, mt) {
		c.errorf("Content-Type %q, want %s", req.ContentType, strings.Join(want, " or "))
	}
}

// decode decodes one JSON value, numbers as json.Number; nil (and an error said) if the
// body is not exactly one JSON value.
func (c *checker) decode(body []byte) any {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		c.errorf("body is not JSON: %v", err)
		return nil
	}
	if dec.More() {
		c.errorf("body holds more than one JSON value")
		return nil
	}
	return v
}

// object is v as a JSON object, said if it is not one.
func (c *checker) object(v any, what string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		c.errorf("%s: want an object, got %s", what, kind(v))
	}
	return m
}

func (c *checker) array(v any, what string) []any {
	a, ok := v.([]any)
	if !ok {
		c.errorf("%s: want an array, got %s", what, kind(v))
	}
	return a
}

// str is m[key] as a string; required says its absence is an error.
func (c *checker) str(m map[string]any, key, what string, required bool) (string, bool) {
	v, ok := m[key]
	if !ok {
		if required {
			c.errorf("%s: %q is required", what, key)
		}
		return "", false
	}
	s, isString := v.(string)
	if !isString {
		c.errorf("%s.%s: want a string, got %s", what, key, kind(v))
		return "", false
	}
	return s, true
}

// maxRunes says a string longer than limit characters.
func (c *checker) maxRunes(s string, limit int, what string) {
	if n := utf8.RuneCountInString(s); n > limit {
		c.errorf("%s: %d characters, at most %d", what, n, limit)
	}
}

// onlyKeys says the keys of m not among known.
func (c *checker) onlyKeys(m map[string]any, what string, known ...string) {
	for k := range m {
		if !slices.Contains(known, k) {
			c.errorf("%s: unknown field %q (the documented ones are %s)", what, k, strings.Join(known, ", "))
		}
	}
}

func (c *checker) oneOf(s string, what string, allowed ...string) {
	if !slices.Contains(allowed, s) {
		c.errorf("%s: %q is not one of %s", what, s, strings.Join(allowed, ", "))
	}
}

func (c *checker) rfc3339(s, what string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		c.errorf("%s: %q is not an RFC 3339 time", what, s)
	}
	return t
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// Slack, incoming webhooks:
// https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks/ (the
// payload: text, blocks; text is the notifications' fallback when blocks are given),
// https://docs.slack.dev/reference/block-kit/blocks/ (at most 50 blocks a message),
// https://docs.slack.dev/reference/block-kit/blocks/section-block/ (type "section"; text,
// a text object, at most 3000 characters; or fields),
// https://docs.slack.dev/reference/block-kit/composition-objects/text-object/ (type
// plain_text or mrkdwn; text 1 to 3000 characters),
// https://docs.slack.dev/messaging/formatting-message-text/#escaping (&, < and > escaped
// as &amp;, &lt; and &gt;),
// https://api.slack.com/changelog/2018-04-truncating-really-long-messages (text past
// 40,000 characters is cut, incoming webhooks' too).
func (c *checker) slack(req Request) {
	c.mediaType(req, "application/json")
	m := c.object(c.decode(req.Body), "message")
	if m == nil {
		return
	}
	c.onlyKeys(m, "message", "text", "blocks", "attachments", "thread_ts", "mrkdwn")
	c.slackMessage(m)
}

// slackMessage checks a message's text and blocks, as a webhook or the Web API takes
// them.
func (c *checker) slackMessage(m map[string]any) {
	text, hasText := c.str(m, "text", "message", false)
	blocks, hasBlocks := m["blocks"]
	if !hasText && !hasBlocks {
		c.errorf("message: text or blocks is required")
	}
	if hasBlocks && !hasText {
		c.errorf("message: blocks without text, the notifications' fallback")
	}
	c.slackEscaped(text, "message.text")
	c.maxRunes(text, 40000, "message.text")
	if !hasBlocks {
		return
	}
	list := c.array(blocks, "message.blocks")
	if len(list) > 50 {
		c.errorf("message.blocks: %d blocks, at most 50", len(list))
	}
	for i, b := range list {
		what := fmt.Sprintf("message.blocks[%d]", i)
		block := c.object(b, what)
		if block == nil {
			continue
		}
		typ, _ := c.str(block, "type", what, true)
		c.oneOf(typ, what+".type", "section")
		c.onlyKeys(block, what, "type", "text", "block_id", "fields", "accessory", "expand")
		t := c.object(block["text"], what+".text")
		if t == nil {
			continue
		}
		ttype, _ := c.str(t, "type", what+".text", true)
		c.oneOf(ttype, what+".text.type", "plain_text", "mrkdwn")
		s, _ := c.str(t, "text", what+".text", true)
		if s == "" {
			c.errorf("%s.text.text: empty, at least 1 character", what)
		}
		c.maxRunes(s, 3000, what+".text.text")
		if ttype == "mrkdwn" {
			c.slackEscaped(s, what+".text.text")
		}
	}
}

var slackEntities = regexp.MustCompile(`&(amp|lt|gt);`)

func (c *checker) slackEscaped(s, what string) {
	if strings.ContainsAny(slackEntities.ReplaceAllString(s, ""), "&<>") {
		c.errorf("%s: & < > must be escaped as &amp; &lt; &gt;: %q", what, s)
	}
}

// Mattermost, incoming webhooks:
// https://developers.mattermost.com/integrate/webhooks/incoming/#parameters (text,
// channel, username, icon_url, icon_emoji, attachments, type, props, priority; text is
// required unless attachments are given; text of at most 16383 characters, longer text
// being split into several posts wherever the limit falls).
func (c *checker) mattermost(req Request) {
	c.mediaType(req, "application/json")
	m := c.object(c.decode(req.Body), "post")
	if m == nil {
		return
	}
	c.onlyKeys(m, "post", "text", "channel", "username", "icon_url", "icon_emoji", "attachments", "type", "props", "priority")
	text, hasText := c.str(m, "text", "post", false)
	if _, attachments := m["attachments"]; !hasText && !attachments {
		c.errorf("post: text is required unless attachments are given")
	}
	if hasText && text == "" {
		c.errorf("post.text: empty")
	}
	c.maxRunes(text, 16383, "post.text")
	c.str(m, "username", "post", false)
}

// Microsoft Teams, a workflow's incoming webhook with an Adaptive Card:
// https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using#send-adaptive-cards-using-an-incoming-webhook
// (a message whose attachments hold the card: contentType
// application/vnd.microsoft.card.adaptive, content the card; about 28 KB at most),
// https://adaptivecards.io/explorer/AdaptiveCard.html (type AdaptiveCard and version
// required; body, the elements; Teams renders versions up to 1.5),
// https://adaptivecards.io/explorer/TextBlock.html (text required; wrap; weight Default,
// Lighter or Bolder; color Default, Dark, Light, Accent, Good, Warning or Attention),
// https://adaptivecards.io/explorer/FactSet.html (facts required, each a title and a
// value, both strings).
func (c *checker) teams(req Request) {
	c.mediaType(req, "application/json")
	// https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook:
	// "The message size limit is 28 KB"; a larger one is answered 413.
	c.maxBytes(req.Body, 28*1024, "message")
	m := c.object(c.decode(req.Body), "message")
	if m == nil {
		return
	}
	typ, _ := c.str(m, "type", "message", true)
	c.oneOf(typ, "message.type", "message")
	attachments := c.array(m["attachments"], "message.attachments")
	if len(attachments) == 0 {
		c.errorf("message.attachments: no card")
	}
	for i, a := range attachments {
		what := fmt.Sprintf("message.attachments[%d]", i)
		att := c.object(a, what)
		if att == nil {
			continue
		}
		ct, _ := c.str(att, "contentType", what, true)
		c.oneOf(ct, what+".contentType", "application/vnd.microsoft.card.adaptive")
		card := c.object(att["content"], what+".content")
		if card == nil {
			continue
		}
		what += ".content"
		ctype, _ := c.str(card, "type", what, true)
		c.oneOf(ctype, what+".type", "AdaptiveCard")
		version, _ := c.str(card, "version", what, true)
		c.oneOf(version, what+".version", "1.0", "1.1", "1.2", "1.3", "1.4", "1.5")
		for j, e := range c.array(card["body"], what+".body") {
			c.cardElement(e, fmt.Sprintf("%s.body[%d]", what, j))
		}
	}
}

func (c *checker) cardElement(v any, what string) {
	e := c.object(v, what)
	if e == nil {
		return
	}
	typ, _ := c.str(e, "type", what, true)
	switch typ {
	case "TextBlock":
		c.onlyKeys(e, what, "type", "text", "wrap", "weight", "size", "color", "isSubtle", "maxLines", "horizontalAlignment", "fontType", "spacing", "separator", "id", "isVisible")
		if s, _ := c.str(e, "text", what, true); s == "" {
			c.errorf("%s.text: empty", what)
		}
		if w, ok := c.str(e, "weight", what, false); ok {
			c.oneOf(w, what+".weight", "Default", "Lighter", "Bolder")
		}
		if col, ok := c.str(e, "color", what, false); ok {
			c.oneOf(col, what+".color", "Default", "Dark", "Light", "Accent", "Good", "Warning", "Attention")
		}
		if wrap, ok := e["wrap"]; ok {
			if _, isBool := wrap.(bool); !isBool {
				c.errorf("%s.wrap: want a boolean", what)
			}
		}
	case "FactSet":
		c.onlyKeys(e, what, "type", "facts", "spacing", "separator", "id", "isVisible")
		facts := c.array(e["facts"], what+".facts")
		if len(facts) == 0 {
			c.errorf("%s.facts: none", what)
		}
		for k, f := range facts {
			fw := fmt.Sprintf("%s.facts[%d]", what, k)
			fact := c.object(f, fw)
			if fact == nil {
				continue
			}
			c.onlyKeys(fact, fw, "title", "value")
			c.str(fact, "title", fw, true)
			c.str(fact, "value", fw, true)
		}
	default:
		c.errorf("%s.type: %q, want TextBlock or FactSet (the elements the format sends)", what, typ)
	}
}

// Discord, Execute Webhook:
// https://discord.com/developers/docs/resources/webhook#execute-webhook (content, at most
// 2000 characters; username; embeds, at most 10; one of content, embeds, components,
// files or poll is required),
// https://discord.com/developers/docs/resources/user#usernames-and-nicknames (usernames
// of 1 to 80 characters for webhooks, without "discord" or "clyde"),
// https://discord.com/developers/docs/resources/message#embed-object (title, description,
// url, timestamp ISO 8601, color an integer, fields),
// https://discord.com/developers/docs/resources/message#embed-object-embed-limits (title
// 256, description 4096, 25 fields of name 256 and value 1024, footer 2048, author name
// 256; all embeds of a message together at most 6000 characters).
func (c *checker) discord(req Request) {
	c.mediaType(req, "application/json")
	switch req.Method {
	case "", http.MethodPost:
	case http.MethodPatch:
		c.discordEdit(req)
		return
	default:
		c.errorf("method %s, want POST (or PATCH, an edit)", req.Method)
	}
	if req.Path != "" && !discordWebhookPath.MatchString(req.Path) {
		c.errorf("path %q: want /webhooks/ID/TOKEN", req.Path)
	}
	for k, v := range req.Query {
		c.oneOf(k, "query parameter", "wait", "thread_id", "with_components")
		if k == "wait" && (len(v) != 1 || v[0] != "true" && v[0] != "false") {
			c.errorf("query wait=%q: a boolean", v)
		}
	}
	m := c.object(c.decode(req.Body), "message")
	if m == nil {
		return
	}
	c.onlyKeys(m, "message", "content", "username", "avatar_url", "tts", "embeds", "allowed_mentions", "components", "files",
		"payload_json", "attachments", "flags", "thread_name", "applied_tags", "poll")
	if u, ok := c.str(m, "username", "message", false); ok {
		if n := utf8.RuneCountInString(u); n < 1 || n > 80 {
			c.errorf("message.username: %d characters, want 1 to 80", n)
		}
		if l := strings.ToLower(u); strings.Contains(l, "discord") || strings.Contains(l, "clyde") {
			c.errorf("message.username %q: Discord refuses names with discord or clyde", u)
		}
	}
	c.discordMessage(m)
}

// discordMessage checks a message's content and embeds, posted or edited.
func (c *checker) discordMessage(m map[string]any) {
	content, hasContent := c.str(m, "content", "message", false)
	c.maxRunes(content, 2000, "message.content")
	embeds, hasEmbeds := m["embeds"]
	if !hasContent && !hasEmbeds {
		c.errorf("message: one of content, embeds, components, files or poll is required")
	}
	if !hasEmbeds {
		return
	}
	list := c.array(embeds, "message.embeds")
	if len(list) > 10 {
		c.errorf("message.embeds: %d, at most 10", len(list))
	}
	total := 0
	for i, e := range list {
		what := fmt.Sprintf("message.embeds[%d]", i)
		embed := c.object(e, what)
		if embed == nil {
			continue
		}
		c.onlyKeys(embed, what, "title", "type", "description", "url", "timestamp", "color", "footer", "image", "thumbnail", "video", "provider", "author", "fields")
		title, _ := c.str(embed, "title", what, false)
		c.maxRunes(title, 256, what+".title")
		desc, _ := c.str(embed, "description", what, false)
		c.maxRunes(desc, 4096, what+".description")
		total += utf8.RuneCountInString(title) + utf8.RuneCountInString(desc)
		if ts, ok := c.str(embed, "timestamp", what, false); ok {
			c.rfc3339(ts, what+".timestamp")
		}
		if col, ok := embed["color"]; ok {
			n, isNumber := col.(json.Number)
			if v, err := strconv.ParseInt(string(n), 10, 64); !isNumber || err != nil || v < 0 || v > 0xFFFFFF {
				c.errorf("%s.color: %v, want an integer RGB colour", what, col)
			}
		}
		if fields, ok := embed["fields"]; ok {
			fl := c.array(fields, what+".fields")
			if len(fl) > 25 {
				c.errorf("%s.fields: %d, at most 25", what, len(fl))
			}
			for j, f := range fl {
				fw := fmt.Sprintf("%s.fields[%d]", what, j)
				field := c.object(f, fw)
				if field == nil {
					continue
				}
				name, _ := c.str(field, "name", fw, true)
				value, _ := c.str(field, "value", fw, true)
				c.maxRunes(name, 256, fw+".name")
				c.maxRunes(value, 1024, fw+".value")
				total += utf8.RuneCountInString(name) + utf8.RuneCountInString(value)
			}
		}
	}
	if total > 6000 {
		c.errorf("message.embeds: %d characters in all, at most 6000", total)
	}
}

// labelName is a Prometheus label name (Alertmanager's and Loki's labels):
// https://prometheus.io/docs/concepts/data_model/#metric-names-and-labels.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func (c *checker) labelSet(v any, what string, required bool) map[string]any {
	m := c.object(v, what)
	if m == nil {
		return nil
	}
	if required && len(m) == 0 {
		c.errorf("%s: no label", what)
	}
	for k, val := range m {
		if !labelName.MatchString(k) {
			c.errorf("%s: %q is not a label name", what, k)
		}
		s, ok := val.(string)
		switch {
		case !ok:
			c.errorf("%s.%s: want a string, got %s", what, k, kind(val))
		case !utf8.ValidString(s):
			c.errorf("%s.%s: not UTF-8", what, k)
		}
	}
	return m
}

// Alertmanager, API v2, POST /api/v2/alerts:
// https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml (postableAlerts:
// an array of postableAlert: labels, a labelSet of strings, required; annotations, a
// labelSet; startsAt and endsAt, date-time; generatorURL, a URI),
// https://prometheus.io/docs/alerting/latest/clients/ (an alert that has ended has
// endsAt; labels identify it; alertname names it).
func (c *checker) alertmanager(req Request) {
	c.mediaType(req, "application/json")
	if req.Path != "" && req.Path != "/api/v2/alerts" {
		c.errorf("path %q, want /api/v2/alerts", req.Path)
	}
	alerts := c.array(c.decode(req.Body), "alerts")
	if len(alerts) == 0 {
		c.errorf("alerts: none")
	}
	for i, a := range alerts {
		what := fmt.Sprintf("alerts[%d]", i)
		alert := c.object(a, what)
		if alert == nil {
			continue
		}
		c.onlyKeys(alert, what, "labels", "annotations", "startsAt", "endsAt", "generatorURL")
		c.labelSet(alert["labels"], what+".labels", true)
		if ann, ok := alert["annotations"]; ok {
			m := c.object(ann, what+".annotations")
			for k, v := range m {
				if _, isString := v.(string); !isString {
					c.errorf("%s.annotations.%s: want a string", what, k)
				}
			}
		}
		var starts, ends time.Time
		if s, ok := c.str(alert, "startsAt", what, false); ok {
			starts = c.rfc3339(s, what+".startsAt")
		}
		if s, ok := c.str(alert, "endsAt", what, false); ok {
			ends = c.rfc3339(s, what+".endsAt")
		}
		if !starts.IsZero() && !ends.IsZero() && !ends.After(starts) {
			c.errorf("%s: endsAt %s is not after startsAt %s", what, ends, starts)
		}
		if u, ok := c.str(alert, "generatorURL", what, false); ok {
			if _, err := url.ParseRequestURI(u); err != nil {
				c.errorf("%s.generatorURL: %q is not a URI", what, u)
			}
		}
	}
}

// Grafana Loki, the push API, POST /loki/api/v1/push:
// https://grafana.com/docs/loki/latest/reference/loki-http-api/#ingest-logs (JSON: streams,
// each a stream of labels and values, each value [timestamp in nanoseconds since the
// epoch, as a string, log line] with an optional object of structured metadata),
// https://grafana.com/docs/loki/latest/get-started/labels/ (label names as Prometheus',
// at least one label),
// https://grafana.com/docs/loki/latest/configure/#limits_config (max_line_size: a line
// longer than 256KB is refused, 400).
func (c *checker) loki(req Request) {
	c.mediaType(req, "application/json")
	if req.Path != "" && req.Path != "/loki/api/v1/push" {
		c.errorf("path %q, want /loki/api/v1/push", req.Path)
	}
	m := c.object(c.decode(req.Body), "push")
	if m == nil {
		return
	}
	c.onlyKeys(m, "push", "streams")
	streams := c.array(m["streams"], "push.streams")
	if len(streams) == 0 {
		c.errorf("push.streams: none")
	}
	for i, s := range streams {
		what := fmt.Sprintf("push.streams[%d]", i)
		stream := c.object(s, what)
		if stream == nil {
			continue
		}
		c.onlyKeys(stream, what, "stream", "values")
		c.labelSet(stream["stream"], what+".stream", true)
		values := c.array(stream["values"], what+".values")
		if len(values) == 0 {
			c.errorf("%s.values: none", what)
		}
		for j, v := range values {
			vw := fmt.Sprintf("%s.values[%d]", what, j)
			entry := c.array(v, vw)
			if entry == nil {
				continue
			}
			if len(entry) != 2 && len(entry) != 3 {
				c.errorf("%s: %d elements, want a timestamp, a line and maybe structured metadata", vw, len(entry))
				continue
			}
			ts, ok := entry[0].(string)
			if _, err := strconv.ParseInt(ts, 10, 64); !ok || err != nil || len(ts) < 19 {
				c.errorf("%s[0]: %v is not nanoseconds since the epoch in a string", vw, entry[0])
			}
			line, ok := entry[1].(string)
			if !ok {
				c.errorf("%s[1]: want the log line, a string", vw)
			}
			if len(line) > 256000 {
				c.errorf("%s[1]: a line of %d bytes, more than max_line_size's 256KB", vw, len(line))
			}
			if len(entry) == 3 {
				c.object(entry[2], vw+"[2]")
			}
		}
	}
}

// Elasticsearch, the bulk API, POST /_bulk or /TARGET/_bulk:
// https://www.elastic.co/docs/api/doc/elasticsearch/operation/operation-bulk (NDJSON,
// Content-Type application/x-ndjson; one action per line: index, create, update or
// delete, an object of its metadata such as _index; index and create followed by the
// document, update by its doc; the last line ends with a newline; without _index the
// path names the target),
// https://www.elastic.co/docs/reference/elasticsearch/configuration-reference/networking-settings
// (http.max_content_length: a body of at most 100mb, else 413),
// https://www.elastic.co/docs/reference/ecs/ecs-base (@timestamp, message),
// https://www.elastic.co/docs/reference/ecs/ecs-event (event.kind: alert, asset,
// enrichment, event, metric, state, pipeline_error or signal),
// https://www.elastic.co/docs/reference/ecs/ecs-orchestrator (orchestrator.type,
// cluster.name, namespace, api_version, resource.type and resource.name).
func (c *checker) elasticsearch(req Request) {
	c.mediaType(req, "application/x-ndjson", "application/json")
	c.maxBytes(req.Body, 100<<20, "body")
	target := strings.TrimSuffix(strings.TrimPrefix(req.Path, "/"), "_bulk")
	if !strings.HasSuffix(req.Path, "/_bulk") {
		c.errorf("path %q, want /_bulk or /TARGET/_bulk", req.Path)
	}
	if !bytes.HasSuffix(req.Body, []byte("\n")) {
		c.errorf("body: the last line does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(string(req.Body), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		what := fmt.Sprintf("line %d", i+1)
		action := c.object(c.decode([]byte(lines[i])), what)
		if len(action) != 1 {
			c.errorf("%s: want one action, got %d keys", what, len(action))
			continue
		}
		for op, meta := range action {
			c.oneOf(op, what, "index", "create", "update", "delete")
			md := c.object(meta, what+"."+op)
			if _, ok := md["_index"]; !ok && strings.Trim(target, "/") == "" {
				c.errorf("%s: no _index, and the path %q names no target", what, req.Path)
			}
			if op == "delete" {
				continue
			}
			i++
			if i == len(lines) {
				c.errorf("%s: %s without its document", what, op)
				return
			}
			doc := c.object(c.decode([]byte(lines[i])), fmt.Sprintf("line %d", i+1))
			if op == "update" || doc == nil {
				continue
			}
			c.ecsDocument(doc, fmt.Sprintf("line %d", i+1))
		}
	}
}

func (c *checker) ecsDocument(doc map[string]any, what string) {
	ts, _ := c.str(doc, "@timestamp", what, true)
	c.rfc3339(ts, what+".@timestamp")
	if msg, _ := c.str(doc, "message", what, true); msg == "" {
		c.errorf("%s.message: empty", what)
	}
	if ev, ok := doc["event"]; ok {
		e := c.object(ev, what+".event")
		if k, ok := c.str(e, "kind", what+".event", false); ok {
			c.oneOf(k, what+".event.kind", "alert", "asset", "enrichment", "event", "metric", "state", "pipeline_error", "signal")
		}
		c.str(e, "action", what+".event", false)
		c.str(e, "dataset", what+".event", false)
	}
	if o, ok := doc["orchestrator"]; ok {
		orch := c.object(o, what+".orchestrator")
		c.onlyKeys(orch, what+".orchestrator", "api_version", "cluster", "namespace", "organization", "resource", "type")
		c.str(orch, "type", what+".orchestrator", false)
		c.str(orch, "namespace", what+".orchestrator", false)
		c.str(orch, "api_version", what+".orchestrator", false)
		if r, ok := orch["resource"]; ok {
			res := c.object(r, what+".orchestrator.resource")
			c.onlyKeys(res, what+".orchestrator.resource", "annotation", "id", "ip", "label", "name", "parent", "type")
			c.str(res, "name", what+".orchestrator.resource", false)
			c.str(res, "type", what+".orchestrator.resource", false)
		}
		if cl, ok := orch["cluster"]; ok {
			cluster := c.object(cl, what+".orchestrator.cluster")
			c.onlyKeys(cluster, what+".orchestrator.cluster", "id", "name", "url", "version")
			c.str(cluster, "name", what+".orchestrator.cluster", false)
		}
	}
}

// OpenTelemetry, OTLP/HTTP with JSON, POST /v1/logs:
// https://opentelemetry.io/docs/specs/otlp/#otlphttp-request (Content-Type
// application/json; the body is ExportLogsServiceRequest in the Protobuf JSON mapping:
// lowerCamelCase field names, enums as integers, 64-bit integers as decimal strings or
// numbers, trace and span IDs in hex),
// https://github.com/open-telemetry/opentelemetry-proto/blob/main/opentelemetry/proto/logs/v1/logs.proto
// (resourceLogs: resource, scopeLogs: scope, logRecords: timeUnixNano,
// observedTimeUnixNano, severityNumber 0 to 24, severityText, body, attributes, ...),
// https://github.com/open-telemetry/opentelemetry-proto/blob/main/opentelemetry/proto/common/v1/common.proto
// (KeyValue: key, value; AnyValue: exactly one of stringValue, boolValue, intValue,
// doubleValue, arrayValue, kvlistValue, bytesValue),
// https://opentelemetry.io/docs/specs/semconv/resource/k8s/ (the Kubernetes resource
// attributes: k8s.cluster.name, k8s.namespace.name, k8s.pod.name, k8s.pod.uid, ...,
// strings),
// https://github.com/open-telemetry/opentelemetry-collector/blob/main/config/confighttp/README.md
// (the Collector's max_request_body_size, 20 MiB by default).
func (c *checker) otlp(req Request) {
	c.mediaType(req, "application/json")
	c.maxBytes(req.Body, 20<<20, "request")
	if req.Path != "" && req.Path != "/v1/logs" {
		c.errorf("path %q, want /v1/logs", req.Path)
	}
	m := c.object(c.decode(req.Body), "request")
	if m == nil {
		return
	}
	c.onlyKeys(m, "request", "resourceLogs")
	rls := c.array(m["resourceLogs"], "request.resourceLogs")
	if len(rls) == 0 {
		c.errorf("request.resourceLogs: none")
	}
	for i, rl := range rls {
		what := fmt.Sprintf("resourceLogs[%d]", i)
		r := c.object(rl, what)
		if r == nil {
			continue
		}
		c.onlyKeys(r, what, "resource", "scopeLogs", "schemaUrl")
		res := c.object(r["resource"], what+".resource")
		c.onlyKeys(res, what+".resource", "attributes", "droppedAttributesCount", "entityRefs")
		for j, kv := range c.keyValues(res["attributes"], what+".resource.attributes") {
			key, _ := kv["key"].(string)
			if !otelResourceKeys[key] {
				c.errorf("%s.resource.attributes[%d]: %q is not a Kubernetes resource attribute of the semantic conventions", what, j, key)
			}
			if v, _ := kv["value"].(map[string]any); v != nil {
				if _, isString := v["stringValue"]; !isString {
					c.errorf("%s.resource.attributes[%d] (%s): want a stringValue", what, j, key)
				}
			}
		}
		for j, sl := range c.array(r["scopeLogs"], what+".scopeLogs") {
			sw := fmt.Sprintf("%s.scopeLogs[%d]", what, j)
			s := c.object(sl, sw)
			if s == nil {
				continue
			}
			c.onlyKeys(s, sw, "scope", "logRecords", "schemaUrl")
			if sc, ok := s["scope"]; ok {
				scope := c.object(sc, sw+".scope")
				c.onlyKeys(scope, sw+".scope", "name", "version", "attributes", "droppedAttributesCount")
				c.str(scope, "name", sw+".scope", false)
			}
			records := c.array(s["logRecords"], sw+".logRecords")
			if len(records) == 0 {
				c.errorf("%s.logRecords: none", sw)
			}
			for k, lr := range records {
				c.logRecord(lr, fmt.Sprintf("%s.logRecords[%d]", sw, k))
			}
		}
	}
}

// otelResourceKeys are the resource attributes the otlp format may give: the service's
// name, and those of https://opentelemetry.io/docs/specs/semconv/resource/k8s/.
var otelResourceKeys = map[string]bool{"service.name": true}

func init() {
	otelResourceKeys["k8s.cluster.name"], otelResourceKeys["k8s.cluster.uid"] = true, true
	for _, kind := range []string{"node", "pod", "replicaset", "deployment", "statefulset", "daemonset", "job", "cronjob"} {
		otelResourceKeys["k8s."+kind+".name"], otelResourceKeys["k8s."+kind+".uid"] = true, true
	}
	otelResourceKeys["k8s.namespace.name"], otelResourceKeys["k8s.container.name"] = true, true
}

func (c *checker) logRecord(v any, what string) {
	lr := c.object(v, what)
	if lr == nil {
		return
	}
	c.onlyKeys(lr, what, "timeUnixNano", "observedTimeUnixNano", "severityNumber", "severityText", "body", "attributes",
		"droppedAttributesCount", "flags", "traceId", "spanId", "eventName")
	for _, key := range []string{"timeUnixNano", "observedTimeUnixNano"} {
		if t, ok := lr[key]; ok && !decimal64(t) {
			c.errorf("%s.%s: %v is not a 64-bit integer (a decimal string or number)", what, key, t)
		}
	}
	if sn, ok := lr["severityNumber"]; ok {
		n, isNumber := sn.(json.Number)
		if v, err := strconv.Atoi(string(n)); !isNumber || err != nil || v < 0 || v > 24 {
			c.errorf("%s.severityNumber: %v, want an integer from 0 to 24", what, sn)
		}
	}
	c.str(lr, "severityText", what, false)
	if body, ok := lr["body"]; ok {
		c.anyValue(body, what+".body")
	}
	c.keyValues(lr["attributes"], what+".attributes")
	for _, key := range []string{"traceId", "spanId"} {
		if id, ok := c.str(lr, key, what, false); ok && !regexp.MustCompile(`^([0-9a-f]{2})*$`).MatchString(id) {
			c.errorf("%s.%s: %q is not hex", what, key, id)
		}
	}
}

// decimal64 reports whether v is a 64-bit integer as the Protobuf JSON mapping writes
// one: a decimal string or a number.
func decimal64(v any) bool {
	switch n := v.(type) {
	case string:
		_, err := strconv.ParseUint(n, 10, 64)
		return err == nil
	case json.Number:
		_, err := strconv.ParseUint(string(n), 10, 64)
		return err == nil
	}
	return false
}

// keyValues checks a list of KeyValue and returns them.
func (c *checker) keyValues(v any, what string) []map[string]any {
	if v == nil {
		return nil
	}
	var out []map[string]any
	for i, e := range c.array(v, what) {
		ew := fmt.Sprintf("%s[%d]", what, i)
		kv := c.object(e, ew)
		if kv == nil {
			continue
		}
		c.onlyKeys(kv, ew, "key", "value")
		if key, _ := c.str(kv, "key", ew, true); key == "" {
			c.errorf("%s.key: empty", ew)
		}
		c.anyValue(kv["value"], ew+".value")
		out = append(out, kv)
	}
	return out
}

func (c *checker) anyValue(v any, what string) {
	m := c.object(v, what)
	if m == nil {
		return
	}
	if len(m) != 1 {
		c.errorf("%s: want exactly one of stringValue, boolValue, intValue, doubleValue, arrayValue, kvlistValue, bytesValue; got %d keys", what, len(m))
	}
	for k, val := range m {
		switch k {
		case "stringValue":
			if _, ok := val.(string); !ok {
				c.errorf("%s.stringValue: want a string", what)
			}
		case "boolValue":
			if _, ok := val.(bool); !ok {
				c.errorf("%s.boolValue: want a boolean", what)
			}
		case "intValue":
			if !decimal64(val) && !strings.HasPrefix(fmt.Sprint(val), "-") {
				c.errorf("%s.intValue: %v is not a 64-bit integer", what, val)
			}
		case "doubleValue":
			if _, ok := val.(json.Number); !ok {
				c.errorf("%s.doubleValue: want a number", what)
			}
		case "arrayValue":
			for i, e := range c.array(c.object(val, what+".arrayValue")["values"], what+".arrayValue.values") {
				c.anyValue(e, fmt.Sprintf("%s.arrayValue.values[%d]", what, i))
			}
		case "kvlistValue":
			c.keyValues(c.object(val, what+".kvlistValue")["values"], what+".kvlistValue.values")
		case "bytesValue":
			if _, ok := val.(string); !ok {
				c.errorf("%s.bytesValue: want base64 in a string", what)
			}
		default:
			c.errorf("%s: unknown field %q", what, k)
		}
	}
}

// CloudEvents 1.0, structured mode over HTTP, in JSON:
// https://github.com/cloudevents/spec/blob/main/cloudevents/bindings/http-protocol-binding.md#32-structured-content-mode
// (one event per request, Content-Type application/cloudevents+json),
// https://github.com/cloudevents/spec/blob/main/cloudevents/formats/json-format.md (the
// attributes as members of one JSON object; data as JSON when datacontenttype is JSON;
// data and data_base64 exclusive),
// https://github.com/cloudevents/spec/blob/main/cloudevents/spec.md (required: id,
// source (a URI-reference), specversion "1.0", type, all non-empty strings; optional:
// datacontenttype (RFC 2046), dataschema (a URI), subject (non-empty), time (RFC 3339);
// extension attribute names of lower-case letters and digits, at most 20 characters
// recommended; intermediaries must forward events of 64 KiB, headers included, and may
// refuse larger ones).
func (c *checker) cloudevents(req Request) {
	c.mediaType(req, "application/cloudevents+json")
	c.maxBytes(req.Body, 64<<10, "event")
	m := c.object(c.decode(req.Body), "event")
	if m == nil {
		return
	}
	for _, key := range []string{"id", "source", "specversion", "type"} {
		if s, _ := c.str(m, key, "event", true); s == "" {
			c.errorf("event.%s: empty", key)
		}
	}
	if v, _ := m["specversion"].(string); v != "1.0" {
		c.errorf("event.specversion: %q, want 1.0", v)
	}
	if s, _ := m["source"].(string); s != "" {
		if _, err := url.Parse(s); err != nil {
			c.errorf("event.source: %q is not a URI-reference", s)
		}
	}
	if s, ok := c.str(m, "subject", "event", false); ok && s == "" {
		c.errorf("event.subject: empty")
	}
	if s, ok := c.str(m, "time", "event", false); ok {
		c.rfc3339(s, "event.time")
	}
	if s, ok := c.str(m, "datacontenttype", "event", false); ok {
		if _, _, err := mime.ParseMediaType(s); err != nil {
			c.errorf("event.datacontenttype: %q is not a media type", s)
		}
	}
	_, hasData := m["data"]
	_, hasBase64 := m["data_base64"]
	if hasData && hasBase64 {
		c.errorf("event: data and data_base64 together")
	}
	context := []string{"id", "source", "specversion", "type", "datacontenttype", "dataschema", "subject", "time", "data", "data_base64"}
	for k, v := range m {
		if slices.Contains(context, k) {
			continue
		}
		if !regexp.MustCompile(`^[a-z0-9]{1,20}$`).MatchString(k) {
			c.errorf("event: extension attribute name %q is not lower-case letters and digits, at most 20", k)
		}
		switch v.(type) {
		case string, bool, json.Number:
		default:
			c.errorf("event.%s: an extension attribute is a string, a boolean or an integer, got %s", k, kind(v))
		}
	}
}
