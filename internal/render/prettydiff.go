package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
)

const (
	// maxChangeLines caps the lines of changes under one event, so that a rewritten
	// object does not push the rest of the stream off the screen.
	maxChangeLines = 20
	// maxValueRunes is how long a value may be before its middle is cut out when the
	// terminal's width is unknown: the ends of a digest, an image or a message tell
	// values apart better than their first part. On a terminal, values take what is left
	// of the line (see valueLimits), but never less than minValueRunes each.
	maxValueRunes = 60
	minValueRunes = 10
	changeArrow   = " → "
)

// changeMarks are the leading "+ ", "- " and "~ " of change lines, coloured when the
// Printer is, built once like the type labels.
type changeMarks struct{ add, remove, replace string }

func newChangeMarks(enabled bool) changeMarks {
	mark := func(sign string, attribute color.Attribute) string { return paint(enabled, sign, attribute) + " " }
	return changeMarks{add: mark("+", color.FgGreen), remove: mark("-", color.FgRed), replace: mark("~", color.FgYellow)}
}

// appendChanges appends one line per change of ev, indented under the event type (past
// the time):
//
//	~ spec.replicas: 1 → 3
//	+ metadata.labels.tier: web
//	- metadata.annotations.note: old-value
//	~ status.conditions[Ready]: position 2 → 0
//
// The last is an element of a keyed list that moved among the others: its index in the
// previous list and in the new one.
func (p *Printer) appendChanges(dst []byte, ev *event.Event, line lineLayout) ([]byte, error) {
	changes, paths, err := p.differ.ReadableChanges(ev)
	if err != nil {
		return dst, err
	}
	indent := min(line.timeWidth, len(spaces))
	// Each change's managers, when they are not all the same (else the event line says).
	by := attribution.Of(ev, p.differ)
	if !by.Differs() {
		by = nil
	}
	shown := len(changes)
	if shown > maxChangeLines {
		shown = maxChangeLines - 1 // the last line says how many are left out
	}
	for i, change := range changes[:shown] {
		dst = append(dst, spaces[:indent]...)
		switch change.Op {
		case diff.OpAdd:
			dst = append(dst, p.changeMarks.add...)
		case diff.OpRemove:
			dst = append(dst, p.changeMarks.remove...)
		default:
			dst = append(dst, p.changeMarks.replace...)
		}
		dst = escape.Append(dst, paths[i])
		dst = append(dst, ": "...)
		var mark []attribution.Entry // this change's managers, when they differ
		if by != nil {
			mark = by.ChangeBy(i)
		}
		// The room left on the line for the values, on a terminal.
		room := 0
		if line.terminalWidth > 0 {
			room = max(line.terminalWidth-indent-len("~ ")-utf8.RuneCountInString(paths[i])-len(": "), 1)
			if len(mark) > 0 {
				room = max(room-len(columnGap)-len("by ")-utf8.RuneCountInString(attribution.Mark(mark, by.Ambiguous)), 1)
			}
		}
		switch change.Op {
		case diff.OpAdd:
			text := p.changeValueText(change.Value)
			dst = escape.Append(dst, shortenMiddle(text, valueLimit(text, room)))
		case diff.OpRemove:
			text := p.changeValueText(change.Old)
			dst = escape.Append(dst, shortenMiddle(text, valueLimit(text, room)))
		case diff.OpMove:
			dst = append(dst, "position "...)
			dst = strconv.AppendInt(dst, int64(change.FromIndex), 10)
			dst = append(dst, changeArrow...)
			dst = strconv.AppendInt(dst, int64(change.ToIndex), 10)
		default:
			old, value := p.changeValueText(change.Old), p.changeValueText(change.Value)
			if room > 0 {
				room = max(room-utf8.RuneCountInString(changeArrow), 1)
			}
			oldLimit, valueLimit := valueLimits(old, value, room)
			dst = escape.Append(dst, shortenMiddle(old, oldLimit))
			dst = append(dst, changeArrow...)
			dst = escape.Append(dst, shortenMiddle(value, valueLimit))
		}
		if len(mark) > 0 {
			dst = p.appendByMark(append(dst, columnGap...), mark, by.Ambiguous)
		}
		dst = append(dst, '\n')
	}
	if hidden := len(changes) - shown; hidden > 0 {
		dst = append(dst, spaces[:indent]...)
		dst = append(dst, "… and "...)
		dst = strconv.AppendInt(dst, int64(hidden), 10)
		dst = append(dst, " more changes\n"...)
	}
	return dst, nil
}

// valueLimit is how many runes a lone value may take: the room left on the terminal's
// line, or maxValueRunes when the width is unknown (room 0).
func valueLimit(text string, room int) int {
	if room == 0 {
		return maxValueRunes
	}
	return max(room, minValueRunes)
}

// valueLimits shares the room left on a terminal's line between an old and a new value:
// a short value is shown whole and leaves the rest to the other one; two long ones get
// half each. maxValueRunes each when the width is unknown (room 0).
func valueLimits(old, value string, room int) (int, int) {
	if room == 0 {
		return maxValueRunes, maxValueRunes
	}
	oldRunes, valueRunes := utf8.RuneCountInString(old), utf8.RuneCountInString(value)
	half := room / 2
	switch {
	case oldRunes+valueRunes <= room:
		return oldRunes, valueRunes
	case oldRunes <= half:
		return oldRunes, max(room-oldRunes, minValueRunes)
	case valueRunes <= half:
		return max(room-valueRunes, minValueRunes), valueRunes
	}
	return max(half, minValueRunes), max(room-half, minValueRunes)
}

// changeValueText is v as a change line shows it: a string as it is unless it needs JSON
// quotes to be read right (see needsQuotes), other scalars as in JSON, maps and lists as
// compact JSON. The caller shortens and escapes it.
func (p *Printer) changeValueText(v any) string {
	var text string
	switch v := v.(type) {
	case string:
		text = v
		if needsQuotes(v) {
			text = p.compactJSON(v)
		}
	case json.Number:
		text = v.String()
	case bool:
		text = strconv.FormatBool(v)
	case nil:
		text = "null"
	default:
		text = p.compactJSON(v)
	}
	return text
}

// needsQuotes reports whether a string would be misread unquoted: empty, with spaces at
// either end, spelling another JSON value (true, 3, {…}), containing control characters
// (shown as JSON escapes inside quotes) or the arrow that separates old from new.
func needsQuotes(s string) bool {
	if s == "" || s == "true" || s == "false" || s == "null" {
		return true
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if unicode.IsSpace(first) || unicode.IsSpace(last) || strings.ContainsAny(s[:1], `"{[`) {
		return true
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return strings.Contains(s, changeArrow)
}

// compactJSON encodes v as one line of JSON, without encoding/json's escaping of <, >
// and &, which is for HTML and would garble "<redacted: …>" on a terminal.
func (p *Printer) compactJSON(v any) string {
	p.valueBuf.Reset()
	if err := p.valueEncoder.Encode(v); err != nil {
		return fmt.Sprint(v) // generic JSON values always encode
	}
	return string(bytes.TrimSuffix(p.valueBuf.Bytes(), []byte("\n")))
}

// shortenMiddle replaces the middle of s with "…" so that it has max runes.
func shortenMiddle(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	tail := (max - 1) / 2
	head := max - 1 - tail
	headEnd := 0
	for range head {
		_, size := utf8.DecodeRuneInString(s[headEnd:])
		headEnd += size
	}
	tailStart := len(s)
	for range tail {
		_, size := utf8.DecodeLastRuneInString(s[:tailStart])
		tailStart -= size
	}
	return s[:headEnd] + "…" + s[tailStart:]
}
