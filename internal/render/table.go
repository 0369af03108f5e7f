package render

import (
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// maxCellColumn limits how wide one of kubectl's columns grows: a longer cell (a list
// of images) is printed whole and leaves the column as it was, like a long name.
const maxCellColumn = 60

// kindTable is what a Printer remembers of one kind's columns: their headers (for the
// header line) and their widths so far.
type kindTable struct {
	headers []string
	widths  []int
	headed  bool // the header line was printed (since the last re-sync notice)
}

// appendCells appends the kubectl columns of ev's object, each padded to its column but
// the last, and remembers their headers for the header line.
func (p *Printer) appendCells(dst []byte, ev *event.Event, m metav1.Object) []byte {
	headers := p.table.Row(&p.cells, ev, m)
	n := p.cells.Len()
	// -o wide adds the object's health, when the run computes it, as the last column.
	health := p.format == FormatWide && ev.Health != nil
	if health {
		headers = append(headers[:len(headers):len(headers)], "HEALTH")
		n++
	}
	gk := schema.GroupKind{Group: ev.Resource.Group, Kind: ev.Kind}
	t := p.tables[gk]
	if t == nil || len(t.widths) != n {
		t = &kindTable{headers: headers, widths: make([]int, n)}
		if p.headers {
			// On a terminal the header line is part of the table, as in kubectl.
			for i, h := range headers {
				t.widths[i] = len(h)
			}
		}
		p.tables[gk] = t
	}
	p.lastTable = t
	lastEnd := len(dst)
	for i := range n {
		start := len(dst)
		if health && i == n-1 {
			dst = append(dst, ev.Health.Status...)
		} else {
			dst = append(dst, p.cells.Cell(i)...)
		}
		if len(dst) > start {
			lastEnd = len(dst)
		}
		if i < n-1 {
			w := utf8.RuneCount(dst[start:])
			dst = appendPadding(dst, w, growColumn(&t.widths[i], w, maxCellColumn))
		}
	}
	// Empty cells at the end (a job not started yet has no DURATION... ) leave no
	// trailing spaces.
	return dst[:lastEnd]
}

// appendHeader appends the header line of the table t, aligned with the line just
// rendered: TIME, EVENT and NAME (kubeevents' columns), then kubectl's.
func (p *Printer) appendHeader(dst []byte, t *kindTable, line lineLayout) []byte {
	dst = append(dst, "TIME"...)
	if p.clusters != nil {
		dst = appendSpaces(dst, max(line.clockWidth-len("TIME"), 1))
		dst = append(dst, "CLUSTER"...)
		dst = appendSpaces(dst, max(line.timeWidth-line.clockWidth-len("CLUSTER"), 1))
	} else {
		dst = appendSpaces(dst, max(line.timeWidth-len("TIME"), 1))
	}
	dst = append(dst, "EVENT"...)
	dst = appendPadding(dst, len("EVENT"), p.typeColumn)
	dst = append(dst, "NAME"...)
	dst = appendPadding(dst, len("NAME"), p.nameColumn)
	if t != nil {
		for i, h := range t.headers {
			dst = append(dst, h...)
			if i < len(t.headers)-1 {
				dst = appendPadding(dst, len(h), t.widths[i])
			}
		}
	}
	for len(dst) > 0 && dst[len(dst)-1] == ' ' {
		dst = dst[:len(dst)-1]
	}
	return append(dst, '\n')
}

// HeadersAgain makes the next line of every kind print its header line again: after a
// re-sync notice on stderr has scrolled the last one away. Safe from any goroutine.
func (p *Printer) HeadersAgain() { p.headersAgain.Add(1) }

// headerDue reports whether the header line of t is to be printed before its next line.
func (p *Printer) headerDue(t *kindTable) bool {
	if !p.headers || t == nil {
		return false
	}
	if epoch := p.headersAgain.Load(); epoch != p.headerEpoch {
		p.headerEpoch = epoch
		for _, other := range p.tables {
			other.headed = false
		}
	}
	return !t.headed
}
