package render

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
)

// terminating is shown instead of MODIFIED once an object has a deletionTimestamp: the
// change that matters to the reader is that the object is going away.
const terminating = "TERMINATING"

const (
	columnGap = "  "
	// spaces is sliced for padding; longer padding is appended in pieces (appendSpaces).
	spaces = "                                                  "
)

// Columns are sized as kubectl's tabwriter sizes them in `kubectl get -w`
// (liggitt/tabwriter with RememberWidths): each as wide as the widest value seen so far,
// never narrower, so a stream stays aligned without a fixed width that is too narrow for
// long names and too wide for an 80-column terminal. A value wider than its column's
// limit is printed whole, followed by one space, and leaves the column as it was: one
// odd name does not push every later line to the right.
const (
	// minTypeColumn fits ADDED, MODIFIED and DELETED; the column grows to TERMINATING's
	// width once one is shown.
	minTypeColumn = len("MODIFIED")
	maxTypeColumn = len(terminating)
	// maxNameColumn limits the name column when the terminal's width is unknown (a pipe,
	// a file): long enough for namespace/name of most generated names.
	maxNameColumn = 60
	// minNameColumn and minSummaryColumns set the name column's limit on a terminal: as
	// wide as leaves minSummaryColumns for the summary, and never less than minNameColumn.
	minNameColumn     = 20
	minSummaryColumns = 30
)

const (
	clockLayout     = "15:04:05"
	timestampLayout = "2006-01-02T15:04:05.000Z07:00"
)

// newTypeLabels builds the label of every known type, coloured if enabled, unpadded: the
// column's width changes as wider labels are seen (see appendType).
func newTypeLabels(enabled bool) map[string]string {
	styles := map[string][]color.Attribute{
		string(event.Added):       {color.FgGreen},
		string(event.Modified):    {color.FgYellow},
		string(event.Deleted):     {color.FgRed},
		string(event.Sync):        {color.Faint},
		string(event.RolloutStep): {color.FgBlue},
		string(event.Stalled):     {color.FgMagenta},
		terminating:               {color.FgRed},
		relatedEvent:              {color.FgCyan},
		relatedWarning:            {color.FgRed, color.Bold},
	}
	labels := make(map[string]string, len(styles))
	for label, style := range styles {
		labels[label] = paint(enabled, label, style...)
	}
	return labels
}

// paint is text in the style of attributes if enabled, else text as it is. Colours are
// switched on each color.Color instance so the package-global NoColor, which reflects
// stdout only, never decides for a stream it does not describe.
func paint(enabled bool, text string, attributes ...color.Attribute) string {
	style := color.New(attributes...)
	if enabled {
		style.EnableColor()
	} else {
		style.DisableColor()
	}
	return style.Sprint(text)
}

// appendLine renders ev in the pretty or wide format, with its changes below when
// diffs are on:
//
//	15:04:05  ADDED     web-7d9f8-abc12  ContainerCreating  0/1  restarts 0
//	15:04:07  MODIFIED  web-7d9f8-abc12  Running            1/1  restarts 0
//	          ~ status.phase: Pending → Running
func (p *Printer) appendLine(dst []byte, ev *event.Event) ([]byte, error) {
	m, err := eventMeta(ev)
	if err != nil {
		return dst, err
	}
	layout := clockLayout
	if p.timestamps {
		layout = timestampLayout
	}
	line := lineLayout{terminalWidth: p.terminalWidth()}
	lineStart := len(dst)
	dst = ev.Time.In(p.location).AppendFormat(dst, layout)
	dst = append(dst, columnGap...)
	line.timeWidth = len(dst) - lineStart // times are ASCII
	if p.clusters != nil {
		// Part of the time column for what comes after: changes are indented past it.
		line.clockWidth = line.timeWidth
		dst = p.clusters.append(dst, ev.Cluster)
		line.timeWidth += p.clusters.width + len(columnGap)
	}

	if related, ok := ev.Object.(*corev1.Event); ok && ev.Related {
		return p.appendRelatedEvent(dst, related, ev.Owners, ev.Past, line), nil
	}
	if ev.Type == event.RolloutStep {
		return p.appendRolloutStep(dst, ev, m.GetName(), m.GetNamespace(), line), nil
	}
	label := string(ev.Type)
	isTerminating := ev.Type == event.Modified && m.GetDeletionTimestamp() != nil
	if isTerminating {
		label = terminating
	}
	dst = p.appendType(dst, label)

	start := len(dst)
	switch {
	case ev.Owners != nil:
		// Short kinds, like the chain before it: deploy/web › rs/web-5d9f › pod/web-5d9f-x2k
		dst = appendOwnersPrefix(dst, ev.Owners)
		dst = append(escape.Append(dst, ShortKind(ev.Kind)), '/')
	case p.showKind:
		dst = append(dst, p.kindPrefix(ev)...)
		dst = append(dst, '/')
	}
	dst = p.appendNamespace(dst, m.GetNamespace())
	dst = escape.Append(dst, m.GetName())
	dst = p.padName(dst, start, line)
	line.summaryColumn = line.timeWidth + p.typeColumn + len(columnGap) + utf8.RuneCount(dst[start:])

	p.lastTable = nil
	dst = p.appendSummary(dst, ev, m, isTerminating, line)
	dst = appendRollout(dst, ev.Rollout)
	dst = p.appendHealth(dst, ev)
	dst = p.appendTags(dst, ev)
	dst = p.appendBy(dst, ev, lineStart, line)
	dst = append(dst, '\n')
	if t := p.lastTable; p.headerDue(t) {
		t.headed = true
		row := append([]byte(nil), dst[lineStart:]...)
		dst = append(p.appendHeader(dst[:lineStart], t, line), row...)
	}
	if p.differ.Diffs(ev) {
		return p.appendChanges(dst, ev, line)
	}
	return dst, nil
}

// lineLayout is what the columns of one line are sized from.
type lineLayout struct {
	// terminalWidth is the terminal's width in columns, 0 when output is not a terminal.
	terminalWidth int
	// timeWidth is the width of the time column and its gap (and of the cluster column
	// and its gap, when there is one): where the type starts and changes are indented to.
	timeWidth int
	// clockWidth is the width of the time alone and its gap, when there is a cluster
	// column; 0 without one.
	clockWidth int
	// summaryColumn is where the summary after the name starts.
	summaryColumn int
}

// terminalWidth asks Options.TerminalWidth, every line, so a resized terminal is followed.
func (p *Printer) terminalWidth() int {
	if p.width == nil {
		return 0
	}
	return max(p.width(), 0)
}

// appendType appends an event type's label (coloured if enabled) padded to the type
// column, which widens to the widest label seen (TERMINATING).
func (p *Printer) appendType(dst []byte, label string) []byte {
	n := len(label)
	if styled, ok := p.typeLabels[label]; ok {
		dst = append(dst, styled...)
	} else {
		start := len(dst)
		dst = escape.Append(dst, label)
		n = utf8.RuneCount(dst[start:])
	}
	return appendPadding(dst, n, growColumn(&p.typeColumn, n, maxTypeColumn))
}

// appendNamespace appends "namespace/" unless the namespace is the one being watched,
// which -n (or the kubeconfig's context) has already said.
func (p *Printer) appendNamespace(dst []byte, namespace string) []byte {
	if namespace == "" || namespace == p.namespace {
		return dst
	}
	dst = escape.Append(dst, namespace)
	return append(dst, '/')
}

// padName pads the name written since start to the name column. On a terminal the
// column is limited so that a summary of minSummaryColumns still fits on the line.
func (p *Printer) padName(dst []byte, start int, line lineLayout) []byte {
	limit := maxNameColumn
	if line.terminalWidth > 0 {
		limit = max(line.terminalWidth-line.timeWidth-p.typeColumn-len(columnGap)-minSummaryColumns, minNameColumn)
	}
	n := utf8.RuneCount(dst[start:])
	return appendPadding(dst, n, growColumn(&p.nameColumn, n, limit))
}

// growColumn widens *column to fit a value of n runes, unless that is wider than limit,
// and returns the column's width.
func growColumn(column *int, n, limit int) int {
	if n > *column && n <= limit {
		*column = n
	}
	return *column
}

// appendPadding pads a value of n runes to a column of width runes plus the gap to the
// next column, or to one space if it is wider: values are never truncated, and never
// glued to the next column.
func appendPadding(dst []byte, n, width int) []byte {
	return appendSpaces(dst, max(width-n+len(columnGap), 1))
}

// appendSpaces appends n spaces.
func appendSpaces(dst []byte, n int) []byte {
	for n > len(spaces) {
		dst = append(dst, spaces...)
		n -= len(spaces)
	}
	return append(dst, spaces[:n]...)
}

// Labels of core Events interleaved with --with-events, in place of the event type.
const (
	relatedEvent   = "EVENT"
	relatedWarning = "WARNING"
)

// appendRelatedEvent renders a core Event about a watched object (--with-events) as a
// line of its own, marked EVENT, or WARNING for Warning events, and naming the object it
// is about rather than the Event itself:
//
//	15:04:09  WARNING   pod/web-1        BackOff: Back-off restarting failed container (x3)
//
// With --owned, owners is the chain down to that object, which the line starts with.
func (p *Printer) appendRelatedEvent(dst []byte, ev *corev1.Event, owners []event.Owner, past bool, line lineLayout) []byte {
	label := relatedEvent
	if ev.Type == corev1.EventTypeWarning {
		label = relatedWarning
	}
	dst = p.appendType(dst, label)
	start := len(dst)
	obj := ev.InvolvedObject
	if len(owners) > 0 {
		dst = appendOwnersPrefix(dst, owners[:len(owners)-1])
		dst = escape.Append(dst, ShortKind(obj.Kind))
	} else {
		dst = escape.Append(dst, strings.ToLower(obj.Kind))
	}
	dst = append(dst, '/')
	dst = p.appendNamespace(dst, obj.Namespace)
	dst = escape.Append(dst, obj.Name)
	dst = p.padName(dst, start, line)
	line.summaryColumn = line.timeWidth + p.typeColumn + len(columnGap) + utf8.RuneCount(dst[start:])
	dst = appendEventText(dst, ev.Reason, ev.Message, coreEventCount(ev), line.summaryColumn, line)
	if past {
		dst = appendNote(dst, start, "(past)")
	}
	return append(dst, '\n')
}

// coreEventCount is how often a core Event happened, as `kubectl get events` counts it:
// series.count for Events written by the events.k8s.io API (whose deprecated count is
// then left alone), else count, and at least 1.
func coreEventCount(ev *corev1.Event) int32 {
	if ev.Series != nil {
		return ev.Series.Count
	}
	return max(ev.Count, 1)
}

// eventsV1Count is the same for an events.k8s.io Event: series.count, else the
// deprecated count that core v1 clients write, and at least 1.
func eventsV1Count(ev *eventsv1.Event) int32 {
	if ev.Series != nil {
		return ev.Series.Count
	}
	return max(ev.DeprecatedCount, 1)
}

// maxMessageRunes shortens an Event's message when the terminal's width is unknown.
const maxMessageRunes = 120

// appendEventText appends "Reason: message (xN)", the count only when the Event
// happened more than once. On a terminal the message is shortened in the middle to what
// is left of the line from column on, but never below minSummaryColumns.
func appendEventText(dst []byte, reason, message string, count int32, column int, line lineLayout) []byte {
	dst = escape.Append(dst, reason)
	dst = append(dst, ": "...)
	var suffix []byte
	if count > 1 {
		var buf [16]byte
		suffix = strconv.AppendInt(append(buf[:0], " (x"...), int64(count), 10)
		suffix = append(suffix, ')')
	}
	limit := maxMessageRunes
	if line.terminalWidth > 0 {
		used := column + utf8.RuneCountInString(reason) + len(": ") + len(suffix)
		limit = max(line.terminalWidth-used, minSummaryColumns)
	}
	dst = escape.Append(dst, shortenMiddle(strings.TrimSpace(message), limit))
	return append(dst, suffix...)
}

// appendSummary appends the columns after the name: those of `kubectl get` for the
// object's kind (see appendCells), then how the object's life ends.
func (p *Printer) appendSummary(dst []byte, ev *event.Event, m metav1.Object, isTerminating bool, line lineLayout) []byte {
	deleted := ev.Type == event.Deleted
	start := len(dst)
	switch o := ev.Object.(type) {
	case *corev1.Event:
		// The columns of `kubectl get events`: type, reason, object, message, and how
		// often it happened, which is what changes when an Event is updated.
		ref := o.InvolvedObject
		dst = p.appendEvent(dst, o.Type, ref.Kind, ref.Namespace, ref.Name, o.Reason, o.Message, coreEventCount(o), line)
	case *eventsv1.Event:
		ref := o.Regarding
		dst = p.appendEvent(dst, o.Type, ref.Kind, ref.Namespace, ref.Name, o.Reason, o.Note, eventsV1Count(o), line)
	default:
		dst = p.appendCells(dst, ev, m)
		if pod, ok := o.(*corev1.Pod); ok && isTerminating && pod.DeletionGracePeriodSeconds != nil {
			dst = append(dst, columnGap+"grace "...)
			dst = strconv.AppendInt(dst, *pod.DeletionGracePeriodSeconds, 10)
			dst = append(dst, 's')
		}
	}
	if deleted {
		switch {
		case ev.Reason == event.ReasonSelector:
			// Still alive: DELETED alone would mislead.
			dst = appendNote(dst, start, "no longer matches the selector")
		case ev.FinalStateUnknown:
			dst = appendNote(dst, start, "(final state unknown)")
		}
	}
	return dst
}

// appendNote appends a note after the columns written since start.
func appendNote(dst []byte, start int, note string) []byte {
	if len(dst) > start {
		dst = append(dst, columnGap...)
	}
	return append(dst, note...)
}

// appendEvent appends the summary of an Event watched as a type (core or events.k8s.io):
//
//	Warning  pod/web-1  BackOff: Back-off restarting failed container (x9)
func (p *Printer) appendEvent(dst []byte, typ, kind, namespace, name, reason, message string, count int32, line lineLayout) []byte {
	start := len(dst)
	dst = appendOrDash(dst, typ)
	dst = append(dst, columnGap...)
	dst = escape.Append(dst, strings.ToLower(kind))
	if name != "" {
		dst = append(dst, '/')
		dst = p.appendNamespace(dst, namespace)
		dst = escape.Append(dst, name)
	}
	dst = append(dst, columnGap...)
	column := line.summaryColumn + utf8.RuneCount(dst[start:])
	return appendEventText(dst, reason, message, count, column, line)
}

// appendOrDash appends s escaped, or "-" for an empty value so columns never vanish.
func appendOrDash(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, '-')
	}
	return escape.Append(dst, s)
}

// eventMeta is ev's object metadata; informers always deliver objects that have it.
func eventMeta(ev *event.Event) (metav1.Object, error) {
	if m := ev.Meta(); m != nil {
		return m, nil
	}
	return nil, fmt.Errorf("%s event for a %s has no object metadata", ev.Type, ev.Kind)
}
