package render

import (
	"strings"

	"github.com/fatih/color"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
)

// byMarks are the dim style around the managers' marks, empty without colour.
type byMarks struct{ start, end string }

func newByMarks(enabled bool) byMarks {
	start, end, _ := strings.Cut(paint(enabled, "|", color.Faint), "|")
	return byMarks{start: start, end: end}
}

// appendBy appends who made ev to its line, dim, after two spaces: "  by kubectl-scale
// (scale)", "  by a or b" when it is ambiguous; nothing when nobody is known.
func (p *Printer) appendBy(dst []byte, ev *event.Event) []byte {
	a := attribution.Of(ev, p.differ)
	if a == nil || len(a.By) == 0 {
		return dst
	}
	return p.appendByMark(append(dst, columnGap...), a.By, a.Ambiguous)
}

func (p *Printer) appendByMark(dst []byte, entries []attribution.Entry, ambiguous bool) []byte {
	dst = append(dst, p.byMarks.start...)
	dst = append(dst, "by "...)
	dst = escape.Append(dst, attribution.Mark(entries, ambiguous))
	return append(dst, p.byMarks.end...)
}

// byValue is who made ev as the templates see it (the envelope's "by"), nil for nobody.
func (p *Printer) byValue(ev *event.Event) []any {
	if a := attribution.Of(ev, p.differ); a != nil && len(a.By) > 0 {
		return attribution.Value(a.By)
	}
	return nil
}
