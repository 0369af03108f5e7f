package top

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kubeevents/kubeevents/internal/escape"
)

// frame draws snapshots as text: on a terminal, redrawn in place (cursor home, each
// line cleared to its end, the rest of the screen cleared), as top does; elsewhere one
// block per snapshot after a blank line.
type frame struct {
	// what is watched, for the title ("pods in default").
	what     string
	color    bool
	terminal bool
	// size is the terminal's size (width, height), asked for every frame; nil or 0
	// when unknown.
	size func() (int, int)
	// rows is the rows per section when the terminal's height does not say.
	rows  int
	drawn bool
}

// limit is how many rows each section may show: what fits the terminal's height (three
// sections, a title and a blank line, each section a header and a blank line), or rows.
func (f *frame) limit() int {
	if f.terminal && f.size != nil {
		if _, h := f.size(); h > 0 {
			return max((h-3-3*2)/3, 1)
		}
	}
	return f.rows
}

func (f *frame) width() int {
	if f.terminal && f.size != nil {
		if w, _ := f.size(); w > 0 {
			return w
		}
	}
	return 0
}

const (
	bold  = "\x1b[1m"
	dim   = "\x1b[2m"
	reset = "\x1b[0m"
)

// draw appends s's frame to dst.
func (f *frame) draw(dst []byte, s Snapshot) []byte {
	var lines []string
	window := "window " + shortDuration(time.Duration(s.Window))
	if s.Span < s.Window {
		window += fmt.Sprintf(" (%s so far)", shortDuration(time.Duration(s.Span)))
	}
	width := f.width()
	count := plural(s.Changes, "change")
	if s.Episodes > 0 {
		count += " · " + plural(uint64(s.Episodes), "open episode")
	}
	title := fitTitle(width, "kubeevents top · "+f.what, window, s.Time.Local().Format("15:04:05"), count)
	lines = append(lines, f.paint(bold, title), "")

	objects := table{headers: []string{"OBJECT", "CHANGES/MIN", "TREND", "BY"}, right: []bool{false, true, false, false}, cutLast: true}
	for _, o := range s.Objects {
		var by []string
		for _, m := range o.Managers {
			by = append(by, m.Name)
		}
		name := objectName(o.ObjectID)
		if len(o.Episodes) > 0 {
			name += " [" + strings.Join(o.Episodes, ", ") + "]"
		}
		objects.add(name, strconv.FormatFloat(o.PerMinute, 'f', 1, 64), sparkline(o.Trend), strings.Join(by, ", "))
	}
	fields := table{headers: []string{"FIELD", "CHANGES", "TREND"}, right: []bool{false, true, false}}
	for _, r := range s.Fields {
		fields.add(r.Kind+" "+r.Path, strconv.FormatUint(r.Changes, 10), sparkline(r.Trend))
	}
	managers := table{headers: []string{"MANAGER", "WRITES", "TREND"}, right: []bool{false, true, false}}
	for _, m := range s.Managers {
		managers.add(Name(m.Manager, m.Subresource), strconv.FormatUint(m.Writes, 10), sparkline(m.Trend))
	}
	for i, t := range []*table{&objects, &fields, &managers} {
		if i > 0 {
			lines = append(lines, "")
		}
		for j, line := range t.lines(width) {
			if j == 0 {
				line = f.paint(bold, line)
			}
			lines = append(lines, line)
		}
		if len(t.rows) == 0 {
			lines = append(lines, f.paint(dim, "(none in the window)"))
		}
	}

	if !f.terminal {
		if f.drawn {
			dst = append(dst, '\n')
		}
		f.drawn = true
		for _, l := range lines {
			dst = append(append(dst, l...), '\n')
		}
		return dst
	}
	if !f.drawn {
		dst = append(dst, "\x1b[2J"...) // the first frame starts on a clear screen
		f.drawn = true
	}
	dst = append(dst, "\x1b[H"...)
	for _, l := range lines {
		dst = append(append(dst, l...), "\x1b[K\n"...)
	}
	return append(dst, "\x1b[J"...)
}

func (f *frame) paint(style, s string) string {
	if !f.color {
		return s
	}
	return style + s + reset
}

// Name is a manager as a row shows it: its name, with its subresource in brackets.
func Name(manager, subresource string) string {
	if subresource == "" {
		return manager
	}
	return manager + " (" + subresource + ")"
}

// objectName is kind/namespace/name, and the cluster first when there is one; escaped:
// names come from the cluster.
func objectName(o ObjectID) string {
	var b []byte
	if o.Cluster != "" {
		b = append(escape.Append(b, o.Cluster), ": "...)
	}
	b = append(escape.Append(b, o.Kind), '/')
	if o.Namespace != "" {
		b = append(escape.Append(b, o.Namespace), '/')
	}
	return string(escape.Append(b, o.Name))
}

// table lays rows out in aligned columns.
type table struct {
	headers []string
	right   []bool // right-aligned columns: numbers
	cutLast bool   // the last column may be cut (a list of names)
	rows    [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// lines are the header and the rows, each column as wide as its widest cell, each line
// cut to width (0: no limit). A number is never cut: the first column (a name) is
// shortened to make room, down to 12 characters while the columns after the numbers
// (trends, managers) give way instead, and further, down to one character, to keep the
// numbers whole. A column that does not fit whole is left out, but for a last one of
// names (cutLast), which is cut.
func (t *table) lines(width int) []string {
	widths := make([]int, len(t.headers))
	for i, h := range t.headers {
		widths[i] = len(h)
	}
	for _, row := range t.rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if width > 0 {
		// through is the width of the columns after the first, up to column n.
		through := func(n int) int {
			w := 0
			for _, cw := range widths[1 : n+1] {
				w += cw + 2
			}
			return w
		}
		name := min(widths[0], width-through(len(widths)-1))
		name = max(name, min(widths[0], 12))
		for i := len(t.right) - 1; i > 0; i-- {
			if t.right[i] {
				name = min(name, width-through(i))
				break
			}
		}
		widths[0] = max(name, 1)
	}
	out := make([]string, 0, len(t.rows)+1)
	for _, row := range append([][]string{t.headers}, t.rows...) {
		var b strings.Builder
		at := 0 // the characters written
		for i, c := range row {
			c = shorten(c, widths[i])
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				if width > 0 && at+2+widths[i] > width && !(i == len(row)-1 && t.cutLast) {
					break // a number cut would read as another number, a trend as another trend
				}
				b.WriteString("  ")
				at += 2
			}
			if t.right[i] {
				b.WriteString(pad + c)
			} else if i < len(row)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
			at += widths[i]
		}
		out = append(out, clip(strings.TrimRight(b.String(), " "), width))
	}
	return out
}

// fitTitle joins the title's parts with " · " within width (0: no limit), cutting no
// number: whole parts are left out, the time first, then the window; then what is
// watched (first) is shortened, down to minTitle characters, to keep the change count;
// then the count is left out too.
func fitTitle(width int, first, window, clock, count string) string {
	join := func(parts ...string) string { return strings.Join(parts, " · ") }
	if width <= 0 {
		return join(first, window, clock, count)
	}
	for _, title := range []string{join(first, window, clock, count), join(first, window, count), join(first, count)} {
		if utf8.RuneCountInString(title) <= width {
			return title
		}
	}
	rest := " · " + count
	if room := width - utf8.RuneCountInString(rest); room >= minTitle {
		return string([]rune(first)[:room-1]) + "…" + rest
	}
	return clip(first, width)
}

// minTitle is how short what is watched may be made in the title ("kubeevents top · c…")
// to keep the change count beside it.
const minTitle = 20

// clip cuts s to width characters (0: no limit).
func clip(s string, width int) string {
	if width > 0 && utf8.RuneCountInString(s) > width {
		return string([]rune(s)[:width])
	}
	return s
}

// shorten cuts s to n characters, with "…" in the middle (at the end when n < 3).
func shorten(s string, n int) string {
	r := []rune(s)
	switch {
	case len(r) <= n:
		return s
	case n < 1:
		return ""
	case n < 3:
		return string(r[:n-1]) + "…"
	}
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}

// sparkline draws counts as bars, the highest full; a slice with none is a space.
func sparkline(counts []uint32) string {
	bars := []rune("▁▂▃▄▅▆▇█")
	var highest uint32
	for _, c := range counts {
		highest = max(highest, c)
	}
	out := make([]rune, len(counts))
	for i, c := range counts {
		switch {
		case c == 0:
			out[i] = ' '
		default:
			out[i] = bars[(uint64(c)*uint64(len(bars))-1)/uint64(highest)]
		}
	}
	return string(out)
}

func plural(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatUint(n, 10) + " " + noun + "s"
}

// shortDuration writes d to the second, without trailing zero units: 1m, 90s → 1m30s, 1h.
func shortDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
