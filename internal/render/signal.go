package render

import (
	"strconv"

	"github.com/fatih/color"
	"go.yaml.in/yaml/v3"

	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jsonw"
)

// What the noise reducers add to an event (packages transition and fold): the transitions
// that happened in it ("on"), how many events a ROLLOUT line stands for ("folded"), and
// the sequence number an unfolded event had when it was folded ("unfolded"). Each key is
// there only when it says something.

// appendOnJSON appends "on" and "unfolded" after the envelope's numbering:
//
//	,"on":["crashloop","not-ready"],"unfolded":41
func appendOnJSON(dst []byte, ev *event.Event) []byte {
	if ev.On != nil {
		dst = append(dst, `,"on":[`...)
		for i, name := range ev.On {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonw.AppendJSONString(dst, name)
		}
		dst = append(dst, ']')
	}
	if ev.UnfoldedSeq != 0 {
		dst = append(dst, `,"unfolded":`...)
		dst = strconv.AppendUint(dst, ev.UnfoldedSeq, 10)
	}
	return dst
}

// appendFoldedJSON appends a ROLLOUT line's count of folded events after its rollout:
// ,"folded":6
func appendFoldedJSON(dst []byte, ev *event.Event) []byte {
	if ev.Type != event.RolloutStep {
		return dst
	}
	dst = append(dst, `,"folded":`...)
	return strconv.AppendInt(dst, int64(ev.FoldedEvents), 10)
}

// onYAML is appendOnJSON for -o yaml.
func onYAML(ev *event.Event) []*yaml.Node {
	var kv []*yaml.Node
	if ev.On != nil {
		names := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, name := range ev.On {
			names.Content = append(names.Content, str(name))
		}
		kv = append(kv, str("on"), names)
	}
	if ev.UnfoldedSeq != 0 {
		kv = append(kv, str("unfolded"), scalar("!!int", strconv.FormatUint(ev.UnfoldedSeq, 10)))
	}
	return kv
}

// foldedYAML is appendFoldedJSON for -o yaml.
func foldedYAML(ev *event.Event) []*yaml.Node {
	if ev.Type != event.RolloutStep {
		return nil
	}
	return []*yaml.Node{str("folded"), scalar("!!int", strconv.Itoa(ev.FoldedEvents))}
}

// tagStyles are the colours of the tags at the end of a pretty line.
var (
	onTagStyle       = []color.Attribute{color.FgMagenta, color.Bold}
	unfoldedTagStyle = []color.Attribute{color.Faint}
)

// appendTags appends, at the end of a pretty line, the transitions that happened and
// that the event was unfolded:
//
//	[crashloop, not-ready]  [unfolded #41]
func (p *Printer) appendTags(dst []byte, ev *event.Event) []byte {
	if ev.On != nil {
		var tag []byte
		tag = append(tag, '[')
		for i, name := range ev.On {
			if i > 0 {
				tag = append(tag, ", "...)
			}
			tag = escape.Append(tag, name)
		}
		tag = append(tag, ']')
		dst = append(dst, columnGap...)
		dst = append(dst, paint(p.color, string(tag), onTagStyle...)...)
	}
	if ev.UnfoldedSeq != 0 {
		dst = append(dst, columnGap...)
		dst = append(dst, paint(p.color, "[unfolded #"+strconv.FormatUint(ev.UnfoldedSeq, 10)+"]", unfoldedTagStyle...)...)
	}
	return p.appendEpisodeTag(dst, ev)
}

// appendRolloutStep renders a ROLLOUT line: the workload, how far its rollout got (or
// how it ended) and how many events the line stands for:
//
//	15:04:10  ROLLOUT   deploy/web   … 3/5 updated, 4 available, 2 old  (6 events folded)
//	15:04:14  ROLLOUT   deploy/web   ✓ deployment "web" successfully rolled out  (3 events folded)
func (p *Printer) appendRolloutStep(dst []byte, ev *event.Event, name, namespace string, line lineLayout) []byte {
	dst = p.appendType(dst, string(ev.Type))
	start := len(dst)
	dst = append(escape.Append(dst, ShortKind(ev.Kind)), '/')
	dst = p.appendNamespace(dst, namespace)
	dst = escape.Append(dst, name)
	dst = p.padName(dst, start, line)
	if ev.Rollout != nil {
		dst = appendRolloutText(dst, ev.Rollout)
	}
	if ev.FoldedEvents > 0 {
		dst = append(dst, "  ("...)
		dst = strconv.AppendInt(dst, int64(ev.FoldedEvents), 10)
		if ev.FoldedEvents == 1 {
			dst = append(dst, " event folded)"...)
		} else {
			dst = append(dst, " events folded)"...)
		}
	}
	return append(dst, '\n')
}
