package render

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fatih/color"
	"go.yaml.in/yaml/v3"

	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
)

// What the episodes and the crash context add to an event (packages episode and
// crashcontext): the sink's episode ("episode": what it decided, and the episode as it
// stands), a digest's open episodes ("digest"), and what the crash the event tells of
// left behind ("context"). Each key is there only when it says something.

// appendEpisodeJSON appends the sink's episode, after "on":
//
//	,"episode":{"id":"3f2a9c1b7d4e","action":"update","transition":"crashloop",...}
func appendEpisodeJSON(dst []byte, ev *event.Event) []byte {
	if ev.Episode == nil {
		return dst
	}
	raw, err := json.Marshal(ev.Episode)
	if err != nil {
		return dst
	}
	return append(append(dst, `,"episode":`...), raw...)
}

// appendContextJSON appends the crash's context, after the diff (it waits for it, at
// most for its bound):
//
//	,"context":{"container":"app","log":{"previous":true,"lines":["…"]},"lastTermination":{…},"warnings":[…]}
func appendContextJSON(dst []byte, ev *event.Event) []byte {
	if !ev.ShowsContext() {
		return dst
	}
	raw, err := marshalNoEscape(ev.Context.Wait())
	if err != nil {
		return dst
	}
	return append(append(dst, `,"context":`...), raw...)
}

// marshalNoEscape is json.Marshal without HTML escaping: a log line's < and > stay as
// they were, as every other string of an event does.
func marshalNoEscape(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// appendDigestJSON appends a DIGEST event whole:
//
//	{"type":"DIGEST","time":"…","episode":{"action":"digest"},"digest":[{episode},…]}
func appendDigestJSON(dst []byte, ev *event.Event) ([]byte, error) {
	d := ev.Episode
	if d == nil {
		d = &event.EpisodeDecision{Action: event.EpisodeDigest}
	}
	raw, err := marshalNoEscape(struct {
		Type    event.EventType        `json:"type"`
		Time    time.Time              `json:"time"`
		Episode *event.EpisodeDecision `json:"episode"`
		Digest  []*event.Episode       `json:"digest"`
	}{ev.Type, ev.Time.UTC(), d, d.Digest})
	if err != nil {
		return dst, err
	}
	return append(dst, raw...), nil
}

// episodeYAML and contextYAML are appendEpisodeJSON and appendContextJSON for -o yaml.
func episodeYAML(ev *event.Event) []*yaml.Node {
	if ev.Episode == nil {
		return nil
	}
	raw, err := json.Marshal(ev.Episode)
	if err != nil {
		return nil
	}
	node, err := yamlNode(raw)
	if err != nil {
		return nil
	}
	return []*yaml.Node{str("episode"), node}
}

func contextYAML(ev *event.Event) []*yaml.Node {
	if !ev.ShowsContext() {
		return nil
	}
	raw, err := marshalNoEscape(ev.Context.Wait())
	if err != nil {
		return nil
	}
	node, err := yamlNode(raw)
	if err != nil {
		return nil
	}
	return []*yaml.Node{str("context"), node}
}

// digestYAML is appendDigestJSON for -o yaml.
func (p *Printer) digestYAML(dst []byte, ev *event.Event) ([]byte, error) {
	raw, err := appendDigestJSON(nil, ev)
	if err != nil {
		return dst, err
	}
	node, err := yamlNode(raw)
	if err != nil {
		return dst, err
	}
	p.yamlBuf.Reset()
	if err := encodeYAML(&p.yamlBuf, node); err != nil {
		return dst, err
	}
	return append(append(dst, "---\n"...), p.yamlBuf.Bytes()...), nil
}

var episodeTagStyle = []color.Attribute{color.FgYellow}

// appendEpisodeTag appends, at the end of a pretty line, what the sink's episode is at:
//
//	[episode 3f2a9c1b7d4e opened]  [episode 3f2a9c1b7d4e: 14 times since 15:01, 6 held]
func (p *Printer) appendEpisodeTag(dst []byte, ev *event.Event) []byte {
	d := ev.Episode
	if d == nil || d.Episode == nil || ev.Type == event.EpisodeStep {
		return dst
	}
	e := d.Episode
	tag := "[episode " + e.ID
	switch d.Action {
	case event.EpisodeOpen:
		tag += " opened]"
	default:
		tag += fmt.Sprintf(": %d times since %s", e.Count, e.Opened.In(p.location).Format(clockLayout))
		if e.Since > 1 {
			tag += fmt.Sprintf(", %d held", e.Since-1)
		}
		tag += "]"
	}
	dst = append(dst, columnGap...)
	return append(dst, paint(p.color, tag, episodeTagStyle...)...)
}

// episodeText is what an EPISODE line says after the object's name:
//
//	resolved: crashloop, by ready (14 times since 15:01:03; episode 3f2a9c1b7d4e)
func (p *Printer) episodeText(e *event.Episode) string {
	by := e.ResolvedBy
	switch by {
	case "quiet":
		by = "quiet (no news of it for its resolve-after)"
	case "deleted":
		by = "its objects deleted"
	}
	return fmt.Sprintf("%s: %s, by %s (%s since %s; episode %s)", e.State(), e.Transition, by,
		times(e.Count), e.Opened.In(p.location).Format(clockLayout), e.ID)
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}

// appendEpisodeLine renders an EPISODE line:
//
//	15:09:03  EPISODE   pod/flaky   resolved: crashloop, by ready (14 times since 15:01:03; episode 3f2a9c1b7d4e)
func (p *Printer) appendEpisodeLine(dst []byte, ev *event.Event, name, namespace string, line lineLayout) []byte {
	dst = p.appendType(dst, string(ev.Type))
	start := len(dst)
	dst = append(escape.Append(dst, ShortKind(ev.Kind)), '/')
	dst = p.appendNamespace(dst, namespace)
	dst = escape.Append(dst, name)
	dst = p.padName(dst, start, line)
	if ev.Episode != nil && ev.Episode.Episode != nil {
		dst = escape.Append(dst, p.episodeText(ev.Episode.Episode))
	}
	return append(dst, '\n')
}

// appendDigest renders a DIGEST line and a line per open episode under it:
//
//	15:10:00  DIGEST    2 open episodes
//	          crashloop  Deployment shop/web  14 times since 15:01:03, 6 since the last digest  (3f2a9c1b7d4e)
func (p *Printer) appendDigest(dst []byte, ev *event.Event, line lineLayout) []byte {
	dst = p.appendType(dst, string(ev.Type))
	var list []*event.Episode
	if ev.Episode != nil {
		list = ev.Episode.Digest
	}
	dst = append(dst, fmt.Sprintf("%d open episode%s", len(list), plural(len(list)))...)
	dst = append(dst, '\n')
	for _, e := range list {
		dst = appendSpaces(dst, line.timeWidth)
		dst = escape.Append(dst, e.Transition)
		dst = append(dst, "  "...)
		dst = escape.Append(dst, e.Controller.Kind+" ")
		if e.Namespace != "" {
			dst = escape.Append(dst, e.Namespace+"/")
		}
		dst = escape.Append(dst, e.Controller.Name)
		dst = append(dst, fmt.Sprintf("  %s since %s, %d since the last digest  (%s)\n", times(e.Count),
			e.Opened.In(p.location).Format(clockLayout), e.Since, e.ID)...)
	}
	return dst
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

var contextStyle = []color.Attribute{color.Faint}

// appendContext appends the crash's context under the line, indented past the time
// column, every string escaped as object names are (a log line is whatever the
// container wrote):
//
//	app exited 1 (Error) at 15:04:03: config missing
//	log of the previous instance (last 2 lines):
//	  connecting to the database
//	  panic: dial tcp 10.96.0.9:5432: connection refused
//	Warning BackOff (3 times, last 15:04:04): Back-off restarting failed container
func (p *Printer) appendContext(dst []byte, ev *event.Event, line lineLayout) []byte {
	if !ev.ShowsContext() {
		return dst
	}
	c := ev.Context.Wait()
	indent := line.timeWidth
	say := func(depth int, text string) {
		dst = appendSpaces(dst, indent+depth)
		dst = append(dst, paint(p.color, string(escape.Append(nil, text)), contextStyle...)...)
		dst = append(dst, '\n')
	}
	if t := c.LastTermination; t != nil {
		text := fmt.Sprintf("%s exited %d", c.Container, t.ExitCode)
		if t.Signal != 0 {
			text += fmt.Sprintf(" (signal %d)", t.Signal)
		}
		if t.Reason != "" {
			text += " (" + t.Reason + ")"
		}
		if !t.FinishedAt.IsZero() {
			text += " at " + t.FinishedAt.In(p.location).Format(clockLayout)
		}
		if t.Message != "" {
			text += ": " + t.Message
		}
		say(0, text)
	}
	if w := c.Waiting; w != nil && c.LastTermination == nil {
		text := c.Container + " waits: " + w.Reason
		if w.Message != "" {
			text += ": " + w.Message
		}
		say(0, text)
	}
	switch {
	case c.Log != nil:
		which := "current"
		if c.Log.Previous {
			which = "previous"
		}
		what := fmt.Sprintf("log of the %s instance (last %d line%s", which, len(c.Log.Lines), plural(len(c.Log.Lines)))
		if c.Log.Cut {
			what += ", the first cut"
		}
		say(0, what+"):")
		for _, l := range c.Log.Lines {
			say(2, l)
		}
	case c.LogError != "":
		say(0, "no log: "+c.LogError)
	}
	for _, w := range c.Warnings {
		text := "Warning " + w.Reason
		if w.Count > 1 {
			text += fmt.Sprintf(" (%d times, last %s)", w.Count, w.Last.In(p.location).Format(clockLayout))
		}
		say(0, text+": "+w.Message)
	}
	if c.WarningsError != "" {
		say(0, "no Warning Events: "+c.WarningsError)
	}
	return dst
}
