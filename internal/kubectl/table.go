package kubectl

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
)

// Table computes the columns `kubectl get` prints after NAME, for an object of any kind:
// a built-in type's printer (kubectlTable), a custom resource's additionalPrinterColumns,
// else AGE alone, as the API server's default table shows any other type. Like a
// Printer, it is used by one goroutine at a time: a custom resource's JSONPaths keep
// state while they run.
type Table struct {
	wide bool // kubectl get -o wide's columns
	crds map[schema.GroupKind]*crdTable
}

// NewTable returns the Table of -o wide (wide) or not, for custom resources with the
// given columns; an error names a column whose JSONPath does not parse.
func NewTable(columns PrinterColumns, wide bool) (*Table, error) {
	t := &Table{wide: wide, crds: map[schema.GroupKind]*crdTable{}}
	for gk, defs := range columns {
		if len(defs) == 0 {
			continue
		}
		crd, err := newCRDTable(defs)
		if err != nil {
			return nil, fmt.Errorf("printer columns of %s: %w", gk, err)
		}
		t.crds[gk] = crd
	}
	return t, nil
}

// Row fills c with the cells of ev's object, as of ev.Time (its AGE), escaped for a
// terminal, and returns their headers (upper-case, as kubectl prints them). m is the
// object's metadata (ev.Meta()).
func (t *Table) Row(c *Cells, ev *event.Event, m metav1.Object) (headers []string) {
	c.reset()
	if pod, ok := ev.Object.(*corev1.Pod); ok {
		appendPodCells(c, pod, ev.Time, t.wide)
		if t.wide {
			return podWideHeaders
		}
		return podHeaders
	}
	headers, cells, ok := kubectlTable(ev.Object, ev.Time, t.wide)
	if u, isCR := ev.Object.(*unstructured.Unstructured); !ok && isCR {
		if crd := t.crds[schema.GroupKind{Group: ev.Resource.Group, Kind: ev.Kind}]; crd != nil {
			headers, cells = crd.table(u.Object, ev.Time, t.wide)
			ok = true
		}
	}
	if !ok {
		c.buf = appendSince(c.buf, ev.Time, m.GetCreationTimestamp())
		c.end()
		return ageHeaders
	}
	for _, cell := range cells {
		c.add(cell)
	}
	return headers
}

var ageHeaders = []string{"AGE"}

// Cells are a line's cells, one after the other in one buffer that is reused from line
// to line, so that a row costs no allocation.
type Cells struct {
	buf  []byte
	ends []int
}

// Len is the number of cells.
func (c *Cells) Len() int { return len(c.ends) }

// Cell is cell i, escaped; it is overwritten by the next Row.
func (c *Cells) Cell(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.buf[start:c.ends[i]]
}

func (c *Cells) reset()       { c.buf, c.ends = c.buf[:0], c.ends[:0] }
func (c *Cells) end()         { c.ends = append(c.ends, len(c.buf)) }
func (c *Cells) add(s string) { c.buf = escape.Append(c.buf, s); c.end() } // escaped once, here
