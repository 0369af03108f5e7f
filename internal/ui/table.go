package ui

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/render"
)

// columnGap separates columns, as kubectl's tables do.
const columnGap = "   "

// row is one object as the view shows it: the store's state, and its cells as of the
// second they were computed for.
type row struct {
	rowState
	cells   []string // kubectl's columns after NAME, escaped
	widths  []int    // the cells' widths on screen
	headers []string
	cellsAt int64  // the Unix second the cells are for (AGE moves)
	cellsOf uint64 // the version of the object they are for
	label   string // the NAME cell: name, kind/name (several types), kind/name in the tree
	// rank and kindName place the row's kind among the tables (table.kindRank).
	rank     int
	kindName string
	search   string // what the filter's substring is looked for in, lower case

	// drawn is the row's last line on screen, styled, for drawnFor: a frame draws
	// again only the rows whose object, AGE, look or layout changed.
	drawn    string
	drawnFor drawnKey
}

// drawnKey is what a row's drawn line depends on.
type drawnKey struct {
	layout  uint64 // table.generation
	cellsAt int64
	cellsOf uint64
	prefix  string
	width   int
	paint   int
}

// sortKey is the order of the rows (of siblings in the owner tree).
type sortKey int

const (
	sortName    sortKey = iota // namespace, then name, as kubectl get
	sortAge                    // newest object first
	sortChanged                // most recently changed first
	sortKeys
)

var sortNames = [sortKeys]string{"name", "age", "last change"}

func (s sortKey) String() string { return sortNames[s] }

// filter is what `/` typed: a label selector when it reads as one (app=web,
// tier!=db, env in (a,b)), else a substring of the row's name or cells.
type filter struct {
	text     string
	lower    string
	selector labels.Selector
}

func newFilter(text string) filter {
	f := filter{text: text, lower: strings.ToLower(strings.TrimSpace(text))}
	if strings.ContainsAny(text, "=!") || strings.Contains(text, " in ") || strings.Contains(text, " notin ") {
		if sel, err := labels.Parse(text); err == nil {
			f.selector = sel
		}
	}
	return f
}

func (f filter) active() bool { return f.lower != "" }

func (f filter) match(r *row) bool {
	if !f.active() {
		return true
	}
	if f.selector != nil {
		m, err := meta.Accessor(r.obj)
		return err == nil && f.selector.Matches(labels.Set(m.GetLabels()))
	}
	return strings.Contains(r.searchText(), f.lower)
}

// group is the rows of one kind: their header and column widths (kubectl prints one
// table per kind; so does the view, one under the other).
type group struct {
	kind    schema.GroupKind
	headers []string
	widths  []int // each cell column's width, its header included
}

// line is one line of the table: a row, a group's header, or a blank line between
// groups (neither).
type line struct {
	r      *row
	header *group
	prefix string // the owner tree's branches before the name
	depth  int
}

// table is the view's copy of the objects, laid out as lines: sorted, filtered, grouped
// by kind or drawn as the owner tree. Used by the terminal's goroutine only.
type table struct {
	kubectl *kubectl.Table
	cells   kubectl.Cells
	rows    map[objectKey]*row
	// order places the kinds watched (the order of the type arguments); kinds not
	// among them (children, with --owned) come after, by name.
	order map[schema.GroupKind]int

	showKind      bool // several kinds: the name says the kind (pod/web-1), as kubectl get pods,deploy
	showNamespace bool // several namespaces: a NAMESPACE column, as kubectl get -A
	showCluster   bool // several clusters: a CLUSTER column
	tree          bool // --owned: the owner tree
	sortBy        sortKey
	filter        filter

	lines  []line
	groups map[schema.GroupKind]*group
	// widths of the CLUSTER, NAMESPACE and NAME columns (the name with its tree branches)
	clusterWidth, namespaceWidth, nameWidth int
	// generation counts the layouts whose column widths differ from the one before:
	// a row's line drawn for the same generation is still good.
	generation uint64
	allWidths  []int // this layout's column widths, every group's, to compare with the next
	lastWidths []int

	// reorder: rows came or went, or changed while the order depends on their changes,
	// since the last layout; the lines are sorted again only then (or when the filter or
	// the sort key changed, or in the tree), else the last layout's lines are kept.
	reorder    bool
	laidFilter string
	laidSort   sortKey
}

func newTable(t *kubectl.Table, order map[schema.GroupKind]int) *table {
	return &table{kubectl: t, rows: map[objectKey]*row{}, order: order, groups: map[schema.GroupKind]*group{}}
}

// set takes one object's new state from the store (nil: it is gone).
func (t *table) set(key objectKey, s *rowState) {
	if s == nil {
		delete(t.rows, key)
		t.reorder = true
		return
	}
	r := t.rows[key]
	if r == nil {
		r = &row{}
		t.rows[key] = r
		r.label = t.labelOf(key)
		r.rank, r.kindName = t.kindRank(schema.GroupKind{Group: key.group, Kind: key.kind})
		t.reorder = true
	}
	if t.sortBy != sortName {
		t.reorder = true
	}
	r.rowState = *s
}

func (t *table) labelOf(key objectKey) string {
	name := string(escape.Append(nil, key.name))
	switch {
	case t.tree:
		return string(escape.Append(nil, render.ShortKind(key.kind))) + "/" + name
	case t.showKind:
		kind := strings.ToLower(key.kind)
		if key.group != "" {
			kind += "." + key.group
		}
		return string(escape.Append(nil, kind)) + "/" + name
	}
	return name
}

// refreshCells computes the cells of r for now, unless they are already for its version
// and this second. A deleted object's AGE stops at its deletion.
func (t *table) refreshCells(r *row, now time.Time) {
	at := now
	if !r.deleted.IsZero() {
		at = r.deleted
	}
	sec := at.Unix()
	if r.cells != nil && r.cellsAt == sec && r.cellsOf == r.version {
		return
	}
	ev := &event.Event{Time: at, Resource: r.resource, Kind: r.key.kind, Object: r.obj, Cluster: r.key.cluster}
	m := ev.Meta()
	if m == nil {
		return
	}
	r.headers = t.kubectl.Row(&t.cells, ev, m)
	r.cells, r.widths = r.cells[:0], r.widths[:0]
	for i := range t.cells.Len() {
		cell := string(t.cells.Cell(i))
		r.cells = append(r.cells, cell)
		r.widths = append(r.widths, textWidth(cell))
	}
	if r.health != nil {
		// The object's health, where the run computes it (it does for the view), after
		// kubectl's columns.
		r.headers = append(r.headers[:len(r.headers):len(r.headers)], "HEALTH")
		r.cells = append(r.cells, string(r.health.Status))
		r.widths = append(r.widths, len(r.health.Status))
	}
	r.search = "" // made again when a filter asks (searchText)
	r.cellsAt, r.cellsOf = sec, r.version
}

// searchText is what a filter's substring is looked for in, made when first asked
// after the cells changed: only a filter needs it.
func (r *row) searchText() string {
	if r.search == "" {
		var search strings.Builder
		search.WriteString(strings.ToLower(r.key.namespace + "/" + r.label))
		for _, cell := range r.cells {
			search.WriteByte(' ')
			search.WriteString(strings.ToLower(cell))
		}
		r.search = search.String()
	}
	return r.search
}

// textWidth is how many columns s takes on the terminal: ansi.StringWidth, without its
// cost for the usual printable ASCII (one column a byte).
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= utf8.RuneSelf-1 { // control, DEL, or not ASCII
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// layout lays the rows out as lines for now: cells refreshed, filtered, sorted,
// grouped by kind (or as the owner tree).
//
// Only the rows whose object changed get their cells again here: AGE moves on every
// second for every row, but only the rows on screen need it, and measure (after
// refreshCells of those) takes the widths.
func (t *table) layout(now time.Time) {
	for _, r := range t.rows {
		if r.cells == nil || r.cellsOf != r.version {
			t.refreshCells(r, now)
		}
	}
	if t.reorder || t.tree || t.filter.active() || t.filter.text != t.laidFilter || t.sortBy != t.laidSort {
		var shown []*row
		for _, r := range t.rows {
			if t.filter.match(r) {
				shown = append(shown, r)
			}
		}
		t.lines = t.lines[:0]
		clear(t.groups)
		if t.tree {
			t.layoutTree(shown)
		} else {
			t.layoutGroups(shown)
		}
		t.reorder, t.laidFilter, t.laidSort = false, t.filter.text, t.sortBy
	}
}

// measure takes the columns' widths from the rows laid out. A row off screen may have
// an AGE a few seconds old: its width (rarely different) is caught up once it shows.
func (t *table) measure() {
	t.clusterWidth, t.namespaceWidth, t.nameWidth = len("CLUSTER"), len("NAMESPACE"), len("NAME")
	for _, g := range t.groups {
		for i, h := range g.headers {
			g.widths[i] = len(h)
		}
	}
	for _, l := range t.lines {
		if l.r == nil {
			continue
		}
		g := t.groupOf(l.r)
		for i, w := range l.r.widths {
			if i < len(g.widths) {
				g.widths[i] = max(g.widths[i], w)
			}
		}
		if t.showCluster {
			t.clusterWidth = max(t.clusterWidth, textWidth(l.r.key.cluster))
		}
		if t.showNamespace {
			t.namespaceWidth = max(t.namespaceWidth, textWidth(l.r.key.namespace))
		}
		t.nameWidth = max(t.nameWidth, textWidth(l.prefix)+textWidth(l.r.label))
	}
	t.allWidths = append(t.allWidths[:0], t.clusterWidth, t.namespaceWidth, t.nameWidth)
	kinds := slices.SortedFunc(maps.Keys(t.groups), t.compareKinds)
	for _, gk := range kinds {
		t.allWidths = append(t.allWidths, -1)
		t.allWidths = append(t.allWidths, t.groups[gk].widths...)
	}
	if !slices.Equal(t.allWidths, t.lastWidths) {
		t.generation++
		t.allWidths, t.lastWidths = t.lastWidths, t.allWidths
	}
}

func (t *table) groupOf(r *row) *group {
	gk := schema.GroupKind{Group: r.key.group, Kind: r.key.kind}
	g := t.groups[gk]
	if g == nil {
		g = &group{kind: gk, headers: r.headers, widths: make([]int, len(r.headers))}
		for i, h := range r.headers {
			g.widths[i] = len(h)
		}
		t.groups[gk] = g
	}
	return g
}

// less orders two rows by the sort key, then by cluster, namespace and name.
func (t *table) less(a, b *row) int {
	switch t.sortBy {
	case sortAge:
		if c := creation(b).Compare(creation(a)); c != 0 {
			return c
		}
	case sortChanged:
		if c := b.changed.Compare(a.changed); c != 0 {
			return c
		}
	}
	return cmp.Or(cmp.Compare(a.key.cluster, b.key.cluster), cmp.Compare(a.key.namespace, b.key.namespace),
		cmp.Compare(a.key.name, b.key.name))
}

func creation(r *row) time.Time {
	m, err := meta.Accessor(r.obj)
	if err != nil {
		return time.Time{}
	}
	return m.GetCreationTimestamp().Time
}

func (t *table) kindRank(gk schema.GroupKind) (int, string) {
	if i, ok := t.order[gk]; ok {
		return i, ""
	}
	return len(t.order), gk.String()
}

func (t *table) compareKinds(a, b schema.GroupKind) int {
	ai, an := t.kindRank(a)
	bi, bn := t.kindRank(b)
	return cmp.Or(cmp.Compare(ai, bi), cmp.Compare(an, bn))
}

// layoutGroups makes one table per kind, each with its header, a blank line between.
func (t *table) layoutGroups(shown []*row) {
	slices.SortFunc(shown, func(a, b *row) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.kindName, b.kindName), t.less(a, b))
	})
	var last *group
	for _, r := range shown {
		if len(r.cells) == 0 && r.headers == nil {
			continue // no metadata to show
		}
		g := t.groupOf(r)
		if g != last {
			if last != nil {
				t.lines = append(t.lines, line{})
			}
			t.lines = append(t.lines, line{header: g})
			last = g
		}
		t.lines = append(t.lines, line{r: r})
	}
}

// layoutTree draws the owner tree: the followed object first, each object under its
// owner (the last link of its chain), siblings by kind and then the sort key. An object
// whose owner is not shown (gone, or filtered out with no match below it) hangs from
// the top.
func (t *table) layoutTree(shown []*row) {
	type ownerKey struct{ kind, namespace, name string }
	byOwner := map[ownerKey]*row{}
	for _, r := range t.rows {
		byOwner[ownerKey{r.key.kind, r.key.namespace, r.key.name}] = r
	}
	children := map[*row][]*row{}
	visible := map[*row]bool{}
	parentOf := func(r *row) *row {
		if len(r.owners) == 0 {
			return nil
		}
		o := r.owners[len(r.owners)-1]
		return byOwner[ownerKey{o.Kind, r.key.namespace, o.Name}]
	}
	// A shown row keeps its owners on screen, so that it stays in its place in the tree.
	for _, r := range shown {
		for p := r; p != nil && !visible[p]; p = parentOf(p) {
			visible[p] = true
		}
	}
	var tops []*row
	for r := range visible {
		if p := parentOf(r); p != nil && visible[p] && p != r {
			children[p] = append(children[p], r)
		} else {
			tops = append(tops, r)
		}
	}
	order := func(list []*row) {
		slices.SortFunc(list, func(a, b *row) int {
			ak := schema.GroupKind{Group: a.key.group, Kind: a.key.kind}
			bk := schema.GroupKind{Group: b.key.group, Kind: b.key.kind}
			// The followed object (no owners) first.
			return cmp.Or(cmp.Compare(len(a.owners), len(b.owners)), t.compareKinds(ak, bk), t.less(a, b))
		})
	}
	done := map[*row]bool{}
	var walk func(r *row, indent string, last bool, depth int)
	walk = func(r *row, indent string, last bool, depth int) {
		if done[r] {
			return // a cycle in ownerReferences: each object once
		}
		done[r] = true
		prefix, below := "", ""
		if depth > 0 {
			prefix, below = indent+"├─ ", indent+"│  "
			if last {
				prefix, below = indent+"└─ ", indent+"   "
			}
		}
		t.groupOf(r)
		t.lines = append(t.lines, line{r: r, prefix: prefix, depth: depth})
		kids := children[r]
		order(kids)
		for i, k := range kids {
			walk(k, below, i == len(kids)-1, depth+1)
		}
	}
	order(tops)
	for _, r := range tops {
		walk(r, "", true, 0)
	}
}

// root is the followed object's row (--owned), if the table has it.
func (t *table) root() *row {
	for _, r := range t.rows {
		if r.owners != nil && len(r.owners) == 0 {
			return r
		}
	}
	return nil
}

// text is a line as plain text, width columns at most; headers too.
func (t *table) text(l line, width int) string {
	var b strings.Builder
	padTo := func(s string, n, w int) {
		b.WriteString(s)
		for ; n < w; n++ {
			b.WriteByte(' ')
		}
		b.WriteString(columnGap)
	}
	pad := func(s string, w int) { padTo(s, textWidth(s), w) }
	switch {
	case l.header != nil:
		if t.showCluster {
			pad("CLUSTER", t.clusterWidth)
		}
		if t.showNamespace {
			pad("NAMESPACE", t.namespaceWidth)
		}
		pad("NAME", t.nameWidth)
		for i, h := range l.header.headers {
			pad(h, l.header.widths[i])
		}
	case l.r != nil:
		r := l.r
		if t.showCluster {
			pad(r.key.cluster, t.clusterWidth)
		}
		if t.showNamespace {
			pad(string(escape.Append(nil, r.key.namespace)), t.namespaceWidth)
		}
		pad(l.prefix+r.label, t.nameWidth)
		g := t.groupOf(r)
		for i, c := range r.cells {
			w := 0
			if i < len(g.widths) {
				w = g.widths[i]
			}
			padTo(c, r.widths[i], w)
		}
		if r.reason == event.ReasonSelector && !r.deleted.IsZero() {
			b.WriteString("(left the selector)")
		}
	}
	return cut(strings.TrimRight(b.String(), " "), width)
}

// cut cuts s to width columns (with an ellipsis). A line not painted needs no padding:
// each frame is drawn on a cleared screen, and trailing spaces cost the renderer as
// much as text.
func cut(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if textWidth(s) > width {
		return ansi.Truncate(s, width, "…")
	}
	return s
}

// fit cuts s to width columns (with an ellipsis) or pads it with spaces to width, so
// that a highlight covers the whole line.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if w := textWidth(s); w > width {
		return ansi.Truncate(s, width, "…")
	} else if w < width {
		return s + strings.Repeat(" ", width-w)
	}
	return s
}
