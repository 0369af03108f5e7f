package render

import (
	"bytes"
	"strings"
	"unicode/utf8"

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
// (scale)", "  by a or b" when it is ambiguous; nothing when nobody is known. On a
// terminal, a mark that does not fit on what is left of the line (which starts at
// lineStart in dst) goes on a line of its own under it, indented as the changes are and
// shortened to the width: never a line wider than the terminal.
func (p *Printer) appendBy(dst []byte, ev *event.Event, lineStart int, line lineLayout) []byte {
	a := attribution.Of(ev, p.differ)
	if a == nil || len(a.By) == 0 {
		return dst
	}
	mark := attribution.Mark(a.By, a.Ambiguous)
	if width := line.terminalWidth; width > 0 {
		need := len(columnGap) + len("by ") + utf8.RuneCountInString(mark)
		if visibleWidth(dst[lineStart:])+need > width {
			indent := min(line.timeWidth, len(spaces))
			dst = append(append(dst, '\n'), spaces[:indent]...)
			return p.appendByText(dst, shortenMiddle(mark, max(width-indent-len("by "), 1)))
		}
	}
	return p.appendByText(append(dst, columnGap...), mark)
}

func (p *Printer) appendByMark(dst []byte, entries []attribution.Entry, ambiguous bool) []byte {
	return p.appendByText(dst, attribution.Mark(entries, ambiguous))
}

func (p *Printer) appendByText(dst []byte, mark string) []byte {
	dst = append(dst, p.byMarks.start...)
	dst = append(dst, "by "...)
	dst = escape.Append(dst, mark)
	return append(dst, p.byMarks.end...)
}

// visibleWidth is the columns line takes on a terminal: its runes, but for the colour
// sequences (ESC [ ... m) this package writes. What comes from the cluster is escaped
// (package escape), so every ESC in line starts one of them.
func visibleWidth(line []byte) int {
	n := 0
	for i := 0; i < len(line); {
		if line[i] == 0x1b {
			end := bytes.IndexByte(line[i:], 'm')
			if end < 0 {
				break
			}
			i += end + 1
			continue
		}
		_, size := utf8.DecodeRune(line[i:])
		i += size
		n++
	}
	return n
}

// byValue is who made ev as the templates see it (the envelope's "by"), nil for nobody.
func (p *Printer) byValue(ev *event.Event) []any {
	if a := attribution.Of(ev, p.differ); a != nil && len(a.By) > 0 {
		return attribution.Value(a.By)
	}
	return nil
}
