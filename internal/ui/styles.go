package ui

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/kubeevents/kubeevents/internal/event"
)

// How long a change stays highlighted (fading in fadeSteps steps) and a deleted row
// stays, struck, before it goes.
const (
	fadeFor   = 3 * time.Second
	fadeSteps = 3
	strikeFor = 5 * time.Second
)

// styles are the view's looks, for a dark or a light terminal background. The colours
// are given in full; the renderer brings them down to what the terminal shows (256
// colours or 16). Without colour (--color never, NO_COLOR, TERM=dumb) the view is
// plain: no looks at all, and a marker column says what they would (plainMarker).
type styles struct {
	plain bool

	bar, header, selected, dim, hint lipgloss.Style
	struck                           lipgloss.Style
	outage, info                     lipgloss.Style
	rollout                          map[event.RolloutState]lipgloss.Style
	// added and modified are the highlights of a row changed fadeFor ago or less,
	// strongest first.
	added, modified [fadeSteps]lipgloss.Style

	// paints are the row looks as escape strings, computed once: a frame writes
	// prefix, text, suffix for each row instead of styling each line anew.
	paints [paintCount]paint
	// header is the groups' header look, as an escape string.
	headerPaint paint
}

// paint is a look as the escape sequences around a line's text.
type paint struct{ prefix, suffix string }

func (p paint) wrap(b *strings.Builder, text string) {
	b.WriteString(p.prefix)
	b.WriteString(text)
	b.WriteString(p.suffix)
}

// paintOf is what style writes before and after a line's text.
func paintOf(style lipgloss.Style) paint {
	const mark = "x"
	out := style.Render(mark)
	i := strings.Index(out, mark)
	if i < 0 {
		return paint{}
	}
	return paint{prefix: out[:i], suffix: out[i+len(mark):]}
}

// A row's look: plain, struck, or a highlight's fading step; each also selected
// (reversed, still struck or bold if it is). The index into styles.paints.
const (
	paintPlain    = 0
	paintStruck   = 1
	paintAdded    = 2                         // + step
	paintModified = paintAdded + fadeSteps    // + step
	paintKinds    = paintModified + fadeSteps // the looks unselected
	paintCount    = 2 * paintKinds            // and selected: + paintKinds
)

func newStyles(dark, plain bool) styles {
	if plain {
		// Zero styles render text as it is: no escape sequence, not even a reset.
		return styles{plain: true, rollout: map[event.RolloutState]lipgloss.Style{}}
	}
	pick := lipgloss.LightDark(dark)
	s := styles{
		bar:      lipgloss.NewStyle().Reverse(true),
		header:   lipgloss.NewStyle().Bold(true),
		selected: lipgloss.NewStyle().Reverse(true),
		dim:      lipgloss.NewStyle().Faint(true),
		hint:     lipgloss.NewStyle().Faint(true),
		struck:   lipgloss.NewStyle().Strikethrough(true).Foreground(pick(lipgloss.Color("#b00000"), lipgloss.Color("#e05050"))),
		outage:   lipgloss.NewStyle().Bold(true).Foreground(pick(lipgloss.Color("#9a5b00"), lipgloss.Color("#ffb000"))),
		info:     lipgloss.NewStyle(),
		rollout: map[event.RolloutState]lipgloss.Style{
			event.RolloutProgressing: lipgloss.NewStyle().Foreground(pick(lipgloss.Color("#8a6d00"), lipgloss.Color("#e5c07b"))),
			event.RolloutComplete:    lipgloss.NewStyle().Foreground(pick(lipgloss.Color("#107010"), lipgloss.Color("#70d070"))),
			event.RolloutFailed:      lipgloss.NewStyle().Bold(true).Foreground(pick(lipgloss.Color("#b00000"), lipgloss.Color("#ff6060"))),
			event.RolloutDeleted:     lipgloss.NewStyle().Foreground(pick(lipgloss.Color("#b00000"), lipgloss.Color("#ff6060"))),
		},
	}
	addedBg := [fadeSteps][2]string{{"#9be09b", "#1e7a1e"}, {"#c4eec4", "#155515"}, {"#e4f7e4", "#0f330f"}}
	modifiedBg := [fadeSteps][2]string{{"#f2d76b", "#8a7512"}, {"#f7e6a6", "#5e5014"}, {"#fbf3d6", "#36300f"}}
	for i := range fadeSteps {
		s.added[i] = lipgloss.NewStyle().Background(pick(lipgloss.Color(addedBg[i][0]), lipgloss.Color(addedBg[i][1])))
		s.modified[i] = lipgloss.NewStyle().Background(pick(lipgloss.Color(modifiedBg[i][0]), lipgloss.Color(modifiedBg[i][1])))
	}
	s.added[0] = s.added[0].Bold(true)
	s.modified[0] = s.modified[0].Bold(true)
	looks := [paintKinds]lipgloss.Style{paintPlain: {}, paintStruck: s.struck}
	for i := range fadeSteps {
		looks[paintAdded+i], looks[paintModified+i] = s.added[i], s.modified[i]
	}
	for i, look := range looks {
		s.paints[i] = paintOf(look)
		s.paints[paintKinds+i] = paintOf(look.Inherit(s.selected).Reverse(true))
	}
	s.headerPaint = paintOf(s.header)
	return s
}

// rowPaint is the index of a row's look at now (styles.paints): struck while deleted,
// highlighted (fading) for a while after a change, plain otherwise; reversed too when
// selected.
func (s *styles) rowPaint(r *rowState, now time.Time, selected bool) int {
	look := lookOf(r, now)
	if selected {
		look += paintKinds
	}
	return look
}

func lookOf(r *rowState, now time.Time) int {
	if !r.deleted.IsZero() {
		return paintStruck
	}
	since := now.Sub(r.changed)
	if r.changed.IsZero() || since >= fadeFor || since < 0 && -since > time.Second {
		return paintPlain
	}
	step := max(int(since*fadeSteps/fadeFor), 0)
	switch r.change {
	case event.Added:
		return paintAdded + step
	case event.Modified:
		return paintModified + step
	}
	return paintPlain
}

// markerWidth is the width of the marker column of a plain view.
const markerWidth = 3

// plainMarker is the marker column of a row in a plain view, for its look (the index
// into styles.paints): ">" on the selected row, then "+" for a row new in the last
// seconds, "~" for one changed, "-" for one deleted (where colours would highlight it
// or strike it through).
func plainMarker(look int) string {
	sel := byte(' ')
	if look >= paintKinds {
		sel, look = '>', look-paintKinds
	}
	state := byte(' ')
	switch {
	case look == paintStruck:
		state = '-'
	case look >= paintModified:
		state = '~'
	case look >= paintAdded:
		state = '+'
	}
	return string([]byte{sel, state, ' '})
}
