package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/render"
)

// frameEvery is the least time between two frames: the view is drawn at most 20 times
// a second however many events come, and only when something changed (or a highlight
// fades, or AGE moves on). That is the pace while the objects are quiet, so that the
// first change shows at once; while changes keep coming, the time between frames
// doubles at each frame that brings some, up to frameEveryBusy, and goes back to
// frameEvery at the first look that finds none. A table is read by a person, a few
// times a second is enough for that (k9s redraws every 2 s), and every frame costs the
// same whatever it brings; highlights fade by the clock, so they look the same.
const (
	frameEvery     = 50 * time.Millisecond
	frameEveryBusy = 250 * time.Millisecond
)

// mode is what the screen shows.
type mode int

const (
	modeTable   mode = iota
	modeHistory      // one object's recent changes
	modeYAML         // one object as it is now
	modeHelp
)

// frameMsg asks for a frame: the terminal's goroutine looks at the store.
type frameMsg time.Time

// model is the view as bubbletea runs it, on the terminal's goroutine: the table (its
// copy of the store's objects), what is selected, the mode, and the last frame drawn.
// The store is read at each frame (pull), never written.
type model struct {
	v      *View
	st     styles
	t      *table
	width  int
	height int

	mode, back mode // back: where Esc goes from YAML
	selected   objectKey
	offset     int // the first table line on screen

	editing bool   // `/` is being typed
	input   string // what was typed

	paused       bool
	pausedEvents uint64 // the store's event count when paused

	rate   rate
	detail detail

	content  string        // the last frame
	drawnAt  time.Time     // when it was drawn
	interval time.Duration // the least time until the next frame not forced
	frames   int           // frames drawn, for the tests of the frame rate
	quitting bool
}

// detail is the history or YAML of one object, as lines to scroll through.
type detail struct {
	key     objectKey
	lines   []string
	offset  int
	follow  bool   // keep the newest lines in sight (history)
	version uint64 // the object's version the lines are for
	width   int    // the terminal's width they are for (YAML: long lines wrapped)
	seen    int    // history entries ever (history)
	gone    bool   // the object is no longer there
}

func newModel(v *View) *model {
	t := newTable(v.kubectlTable, v.kindOrder)
	t.showKind = v.opts.showKind()
	t.showNamespace = v.opts.Namespace == "" && !v.opts.Owned
	t.showCluster = len(v.opts.Clusters) > 1
	t.tree = v.opts.Owned
	return &model{v: v, st: newStyles(true, !v.opts.Color), t: t, width: 80, height: 24, interval: frameEvery}
}

func tick(after time.Duration) tea.Cmd {
	return tea.Tick(after, func(t time.Time) tea.Msg { return frameMsg(t) })
}

// nextTick is when to look at the store again: once the interval since the last frame
// has passed, frameEvery at the soonest.
func (m *model) nextTick(now time.Time) time.Duration {
	return max(m.drawnAt.Add(m.interval).Sub(now), frameEvery)
}

func (m *model) Init() tea.Cmd {
	return tea.Batch(tea.RequestBackgroundColor, tick(frameEvery))
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	now := m.v.now()
	switch msg := msg.(type) {
	case frameMsg:
		if m.quitting {
			return m, nil
		}
		m.frame(now, false)
		return m, tick(m.nextTick(now))
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.v.width.Store(int64(msg.Width))
		m.frame(now, true)
	case tea.BackgroundColorMsg:
		m.st = newStyles(msg.IsDark(), !m.v.opts.Color)
		m.t.generation++ // every row's line is to be drawn in the new looks
		m.frame(now, true)
	case tea.KeyPressMsg:
		if cmd := m.key(msg, now); cmd != nil {
			return m, cmd
		}
		m.frame(now, true)
	}
	return m, nil
}

// frame draws the screen anew if anything it shows changed: objects (unless paused),
// the second (AGE, the rate), a fading highlight, or forced (a key, a resize).
//
// Unless forced, it draws only when m.interval has passed since the last frame; the
// changes wait in the store meanwhile.
func (m *model) frame(now time.Time, force bool) {
	if !force && now.Sub(m.drawnAt) < m.interval {
		return
	}
	changed := force
	if !m.paused && m.v.store.pull(now, m.t.set) {
		changed = true
		m.interval = min(2*m.interval, frameEveryBusy)
	} else if !force {
		m.interval = frameEvery
	}
	// Half-second steps: highlights fade and AGE moves on without any event.
	if now.Truncate(time.Second/2) != m.drawnAt.Truncate(time.Second/2) {
		changed = true
	}
	if !changed {
		return
	}
	m.rate.sample(now, m.v.store.eventCount())
	m.drawnAt = now
	m.frames++
	m.content = m.draw(now)
}

func (m *model) View() tea.View {
	v := tea.NewView(m.content)
	v.AltScreen = true
	v.WindowTitle = "kubeevents"
	if m.quitting {
		v.SetContent("")
	}
	return v
}

// quit leaves the screen and stops the run as Ctrl-C stops a stream.
func (m *model) quit() tea.Cmd {
	m.quitting = true
	if m.v.opts.Quit != nil {
		m.v.opts.Quit()
	}
	return tea.Quit
}

// key acts on one key; a command to return (quit) or nil.
func (m *model) key(k tea.KeyPressMsg, now time.Time) tea.Cmd {
	s := k.String()
	if s == "ctrl+c" {
		return m.quit()
	}
	if m.editing {
		m.editKey(k)
		return nil
	}
	if s == "q" {
		return m.quit()
	}
	switch m.mode {
	case modeHelp:
		m.mode = m.back
		return nil
	case modeHistory, modeYAML:
		m.detailKey(s, now)
		return nil
	}
	switch s {
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "pgup", "ctrl+b":
		m.move(-m.tableHeight())
	case "pgdown", "ctrl+f", "space":
		m.move(m.tableHeight())
	case "home", "g":
		m.move(-len(m.t.lines))
	case "end", "G":
		m.move(len(m.t.lines))
	case "enter":
		m.open(modeHistory, now)
	case "y":
		m.open(modeYAML, now)
	case "/":
		m.editing, m.input = true, m.t.filter.text
	case "esc":
		m.t.filter = newFilter("")
	case "s":
		m.t.sortBy = (m.t.sortBy + 1) % sortKeys
	case "p":
		m.togglePause()
	case "?":
		m.mode, m.back = modeHelp, modeTable
	}
	return nil
}

func (m *model) togglePause() {
	m.paused = !m.paused
	if m.paused {
		m.pausedEvents = m.v.store.eventCount()
	}
}

func (m *model) editKey(k tea.KeyPressMsg) {
	switch k.String() {
	case "enter":
		m.editing = false
	case "esc":
		m.editing, m.input = false, ""
	case "backspace":
		if r := []rune(m.input); len(r) > 0 {
			m.input = string(r[:len(r)-1])
		}
	default:
		if k.Text != "" {
			m.input += k.Text
		}
	}
	m.t.filter = newFilter(m.input)
}

func (m *model) detailKey(s string, now time.Time) {
	d := &m.detail
	h := m.detailHeight()
	switch s {
	case "esc", "backspace", "left", "h":
		if m.mode == modeYAML && m.back == modeHistory {
			m.open(modeHistory, now)
			return
		}
		m.mode = modeTable
	case "y":
		if m.mode == modeHistory {
			m.open(modeYAML, now)
		}
	case "up", "k":
		d.offset--
	case "down", "j":
		d.offset++
	case "pgup", "ctrl+b":
		d.offset -= h
	case "pgdown", "ctrl+f", "space":
		d.offset += h
	case "home", "g":
		d.offset = 0
	case "end", "G":
		d.offset = len(d.lines)
	case "?":
		m.mode, m.back = modeHelp, m.mode
		return
	}
	d.offset = max(min(d.offset, len(d.lines)-h), 0)
	d.follow = d.offset >= len(d.lines)-h
}

// move moves the selection by n rows.
func (m *model) move(n int) {
	lines := m.t.lines
	at := m.selectedLine()
	if at < 0 {
		at = 0
	}
	step := 1
	if n < 0 {
		step, n = -1, -n
	}
	for i := at; n > 0; {
		i += step
		if i < 0 || i >= len(lines) {
			break
		}
		if lines[i].r != nil {
			m.selected = lines[i].r.key
			n--
		}
	}
}

// selectedLine is the index of the selected row's line, or of the first row when the
// selected object is not shown (gone, filtered out); -1 when there is no row.
func (m *model) selectedLine() int {
	first := -1
	for i, l := range m.t.lines {
		if l.r == nil {
			continue
		}
		if l.r.key == m.selected {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	if first >= 0 {
		m.selected = m.t.lines[first].r.key
	}
	return first
}

// open shows the selected object's history or YAML.
func (m *model) open(to mode, now time.Time) {
	key := m.detail.key
	if m.mode == modeTable {
		if m.selectedLine() < 0 {
			return
		}
		key = m.selected
	}
	if to == modeYAML {
		m.back = m.mode
	}
	m.mode = to
	m.detail = detail{key: key, follow: to == modeHistory}
	m.loadDetail(now)
}

// loadDetail reads the object's history or YAML from the store, when it changed.
func (m *model) loadDetail(now time.Time) {
	d := &m.detail
	cur, ok := m.v.store.current(d.key)
	if !ok {
		d.gone = true
		return
	}
	if d.lines != nil && cur.version == d.version && (m.mode != modeYAML || d.width == m.width) {
		return
	}
	d.version, d.width, d.gone = cur.version, m.width, false
	switch m.mode {
	case modeHistory:
		entries, seen, _ := m.v.store.history(d.key)
		d.seen = seen
		d.lines = d.lines[:0]
		for _, e := range entries {
			lines := strings.Split(strings.TrimRight(e.text, "\n"), "\n")
			if e.by != "" {
				lines[0] += "   by " + string(escape.Append(nil, e.by))
			}
			d.lines = append(d.lines, lines...)
		}
	case modeYAML:
		d.lines = wrapLines(yamlLines(cur.obj), m.width)
	}
	h := m.detailHeight()
	if d.follow {
		d.offset = max(len(d.lines)-h, 0)
	}
	d.offset = max(min(d.offset, len(d.lines)-h), 0)
}

// yamlLines is obj as `kubectl get -o yaml` prints it (keys sorted, without
// managedFields, as kubectl leaves them out), escaped for the terminal.
//
// The YAML is encoded from the object's decoded JSON: kubectl's way, its JSON read by
// the YAML parser, fails on a string holding DEL, a C1 control or U+FFFE (which the
// YAML encoder escapes, but the parser refuses unescaped), and the view would show
// nothing of such an object but the error.
func yamlLines(obj runtime.Object) []string {
	raw, err := json.Marshal(obj)
	if err != nil {
		return []string{"cannot show the object: " + err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // the digits as they are, not float64's
	var v any
	if err := dec.Decode(&v); err != nil {
		return []string{"cannot show the object: " + err.Error()}
	}
	if top, ok := v.(map[string]any); ok {
		if md, ok := top["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	enc.CompactSeqIndent() // "- item" under its key, as kubectl writes it
	if err := enc.Encode(yamlValue(v)); err != nil {
		return []string{"cannot show the object: " + err.Error()}
	}
	if err := enc.Close(); err != nil {
		return []string{"cannot show the object: " + err.Error()}
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = string(escape.Append(nil, l))
	}
	return lines
}

// wrapLines folds the lines wider than width, each further part indented two columns
// past its line's indentation: a long value (an annotation, a script in a ConfigMap) is
// read whole rather than cut at the terminal's edge.
func wrapLines(lines []string, width int) []string {
	var out []string
	for _, l := range lines {
		if width <= 0 || textWidth(l) <= width {
			out = append(out, l)
			continue
		}
		head := ansi.Truncate(l, width, "")
		out = append(out, head)
		indent := strings.Repeat(" ", min(len(l)-len(strings.TrimLeft(l, " "))+2, width/2))
		for part := range strings.SplitSeq(ansi.Hardwrap(l[len(head):], width-len(indent), true), "\n") {
			out = append(out, indent+part)
		}
	}
	return out
}

// yamlValue is a decoded JSON value for the YAML encoder: its numbers (json.Number,
// which it would quote as strings) plain scalars of their digits.
func yamlValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: string(v)}
	case map[string]any:
		for k, e := range v {
			v[k] = yamlValue(e)
		}
	case []any:
		for i, e := range v {
			v[i] = yamlValue(e)
		}
	}
	return v
}

// tableHeight is how many table lines fit between the top and bottom lines.
func (m *model) tableHeight() int {
	h := m.height - 2
	if m.t.tree {
		h-- // the rollout line
	}
	return max(h, 1)
}

func (m *model) detailHeight() int { return max(m.height-2, 1) }

// draw is the whole screen at now.
func (m *model) draw(now time.Time) string {
	var b strings.Builder
	b.WriteString(m.st.bar.Render(fit(m.statusText(now), m.width)))
	b.WriteByte('\n')
	switch m.mode {
	case modeTable:
		m.drawTable(&b, now)
	case modeHistory, modeYAML:
		m.loadDetail(now)
		m.drawDetail(&b)
	case modeHelp:
		m.drawHelp(&b)
	}
	b.WriteString(m.bottomLine(now))
	return b.String()
}

// statusText is the top line: what is watched, where, how much, how fast, and how the
// table is sorted, filtered or paused.
func (m *model) statusText(now time.Time) string {
	o := &m.v.opts
	left := " kubeevents · " + o.Watched
	live := m.liveObjects()
	var parts []string
	parts = append(parts, diag.Count(live)+" object"+diag.Plural(live))
	if m.t.filter.active() {
		shown := 0
		for _, l := range m.t.lines {
			if l.r != nil {
				shown++
			}
		}
		parts = append(parts, fmt.Sprintf("%s shown", diag.Count(shown)))
	}
	events := m.v.store.eventCount()
	parts = append(parts, diag.Count(events)+" event"+diag.Plural(events), fmt.Sprintf("%.1f/s", m.rate.perSecond()))
	if open := m.v.store.openEpisodes(); open > 0 {
		parts = append(parts, diag.Count(open)+" open episode"+diag.Plural(open))
	}
	parts = append(parts, "sort: "+m.t.sortBy.String())
	if m.paused {
		parts = append(parts, fmt.Sprintf("PAUSED (%s new)", diag.Count(events-m.pausedEvents)))
	}
	right := strings.Join(parts, " · ") + " "
	// What is watched gives way first: the counts matter more on a narrow terminal.
	if room := m.width - ansi.StringWidth(right) - 1; ansi.StringWidth(left) > room {
		left = ansi.Truncate(left, max(room, 0), "…")
	}
	gap := max(m.width-ansi.StringWidth(left)-ansi.StringWidth(right), 1)
	return left + strings.Repeat(" ", gap) + right
}

func (m *model) drawTable(b *strings.Builder, now time.Time) {
	if m.t.tree {
		b.WriteString(m.rolloutLine())
		b.WriteByte('\n')
	}
	m.t.layout(now)
	h := m.tableHeight()
	at := m.selectedLine()
	if at >= 0 {
		if at < m.offset {
			m.offset = at
		}
		if at >= m.offset+h {
			m.offset = at - h + 1
		}
	}
	m.offset = max(min(m.offset, len(m.t.lines)-h), 0)
	for n := m.offset; n < min(m.offset+h, len(m.t.lines)); n++ {
		if r := m.t.lines[n].r; r != nil {
			m.t.refreshCells(r, now) // AGE as of now
		}
	}
	m.t.measure()
	// Without looks, a marker column shows the selection and the changes.
	width, margin := m.width, ""
	if m.st.plain {
		width, margin = max(m.width-markerWidth, 0), strings.Repeat(" ", min(markerWidth, m.width))
	}
	for i := range h {
		n := m.offset + i
		if n >= len(m.t.lines) {
			if i == 0 && len(m.t.lines) == 0 {
				b.WriteString(m.st.dim.Render(fit(m.emptyText(), m.width)))
			}
			b.WriteByte('\n')
			continue
		}
		l := m.t.lines[n]
		switch {
		case l.header != nil:
			b.WriteString(margin)
			m.st.headerPaint.wrap(b, m.t.text(l, width))
		case l.r == nil:
			b.WriteString(m.t.text(l, width))
		default:
			r := l.r
			key := drawnKey{layout: m.t.generation, cellsAt: r.cellsAt, cellsOf: r.cellsOf, prefix: l.prefix,
				width: m.width, paint: m.st.rowPaint(&r.rowState, now, n == at)}
			if r.drawn == "" || r.drawnFor != key {
				text := m.t.text(l, width)
				switch {
				case m.st.plain:
					r.drawn = cut(plainMarker(key.paint), m.width) + text
				case key.paint != paintPlain:
					text = fit(text, m.width) // the highlight covers the whole line
					fallthrough
				default:
					p := m.st.paints[key.paint]
					r.drawn = p.prefix + text + p.suffix
				}
				r.drawnFor = key
			}
			b.WriteString(r.drawn)
		}
		b.WriteByte('\n')
	}
}

// emptyText is what the table says when it has no line: that nothing came yet, or
// that the filter left every object out.
func (m *model) emptyText() string {
	live := m.liveObjects()
	switch {
	case live == 0 || !m.t.filter.active():
		return " no objects yet"
	case live == 1:
		return " the filter does not match the one object (Esc clears it)"
	}
	return fmt.Sprintf(" the filter matches none of the %s objects (Esc clears it)", diag.Count(live))
}

// liveObjects is how many objects the table has, not counting the deleted ones still
// shown struck.
func (m *model) liveObjects() int {
	live := 0
	for _, r := range m.t.rows {
		if r.deleted.IsZero() {
			live++
		}
	}
	return live
}

// rolloutLine is where the followed object's rollout stands (--owned), in kubectl's
// words.
func (m *model) rolloutLine() string {
	r := m.t.root()
	if r == nil || r.rollout == nil {
		return fit("", m.width)
	}
	mark := "… "
	switch r.rollout.State {
	case event.RolloutComplete:
		mark = "✓ "
	case event.RolloutFailed, event.RolloutDeleted:
		mark = "✗ "
	}
	text := fit(" "+mark+string(escape.Append(nil, r.rollout.Message)), m.width)
	if style, ok := m.st.rollout[r.rollout.State]; ok {
		return style.Render(text)
	}
	return text
}

func (m *model) drawDetail(b *strings.Builder) {
	d := &m.detail
	h := m.detailHeight()
	for i := range h {
		n := d.offset + i
		if n < len(d.lines) {
			b.WriteString(cut(d.lines[n], m.width))
		}
		b.WriteByte('\n')
	}
}

var helpText = []string{
	"",
	"  ↑ ↓ k j  PgUp PgDn  Home End   select a row",
	"  Enter      its recent history: the changes, with their diffs (and its Events with --with-events)",
	"  y          its YAML as it is now",
	"  Esc        back; in the table, clear the filter",
	"  /          filter: a label selector (app=web, tier!=db, env in (a,b)) or any text in the row",
	"  s          sort by name, age or last change",
	"  p          pause the table (changes are counted, and applied on resume)",
	"  q  Ctrl-C  quit, as Ctrl-C ends the stream (the sinks write what they hold, then the summary)",
	"  ?          this help",
	"",
	"  Rows changed in the last seconds are highlighted (green: new, yellow: changed), fading;",
	"  deleted rows are struck through for a few seconds, then go.",
}

// plainHelp replaces the last lines of helpText in a view without colour.
var plainHelp = []string{
	"  The first column marks the selected row (>), rows new (+) or changed (~) in the last",
	"  seconds, and deleted rows (-), which go after a few seconds.",
}

func (m *model) drawHelp(b *strings.Builder) {
	text := helpText
	if m.st.plain {
		text = append(slices.Clone(helpText[:len(helpText)-len(plainHelp)]), plainHelp...)
	}
	h := m.detailHeight()
	for i := range h {
		if i < len(text) {
			b.WriteString(cut(text[i], m.width))
		}
		b.WriteByte('\n')
	}
}

// bottomLine is the filter being typed, else the latest notice (an outage until it is
// over), else what the keys do here.
func (m *model) bottomLine(now time.Time) string {
	if m.editing {
		return fit(" /"+m.input+"▏", m.width)
	}
	if n, ok := m.v.notices.current(); ok {
		style := m.st.info
		if n.outage {
			style = m.st.outage
		}
		return style.Render(fit(" "+n.at.Format("15:04:05")+"  "+n.text, m.width))
	}
	var hint string
	switch m.mode {
	case modeTable:
		hint = " ↑↓ select · Enter history · y YAML · / filter · s sort · p pause · ? help · q quit"
		if m.t.filter.active() {
			hint = " filter: " + m.t.filter.text + " (Esc clears) ·" + hint
		}
	case modeHistory:
		hint = m.detailTitle("history") + " · y YAML · Esc back"
	case modeYAML:
		hint = m.detailTitle("YAML") + " · Esc back"
	case modeHelp:
		hint = " any key: back"
	}
	return m.st.hint.Render(fit(hint, m.width))
}

func (m *model) detailTitle(what string) string {
	d := &m.detail
	k := d.key
	name := render.ShortKind(k.kind) + "/" + k.name
	if k.namespace != "" {
		name += " in " + k.namespace
	}
	if k.cluster != "" {
		name += " (" + k.cluster + ")"
	}
	title := " " + what + " of " + string(escape.Append(nil, name))
	if what == "history" {
		title += fmt.Sprintf(" (%d change%s seen, the last %d kept)", d.seen, diag.Plural(d.seen), min(d.seen, m.v.opts.History))
	}
	if d.gone {
		title += " · gone"
	}
	return title
}

// rate is the events per second over the last few seconds.
type rate struct {
	samples [8]struct {
		at    time.Time
		count uint64
	}
	n int
}

func (r *rate) sample(now time.Time, count uint64) {
	last := &r.samples[(r.n+len(r.samples)-1)%len(r.samples)]
	if r.n > 0 && now.Sub(last.at) < time.Second/2 {
		return
	}
	r.samples[r.n%len(r.samples)] = struct {
		at    time.Time
		count uint64
	}{now, count}
	r.n++
}

func (r *rate) perSecond() float64 {
	if r.n < 2 {
		return 0
	}
	last := r.samples[(r.n-1)%len(r.samples)]
	first := r.samples[max(r.n-len(r.samples), 0)%len(r.samples)]
	d := last.at.Sub(first.at).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(last.count-first.count) / d
}
