package ui

import (
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
// colours, 16, or none with --color never).
type styles struct {
	bar, header, selected, dim, hint lipgloss.Style
	struck                           lipgloss.Style
	outage, info                     lipgloss.Style
	rollout                          map[event.RolloutState]lipgloss.Style
	// added and modified are the highlights of a row changed fadeFor ago or less,
	// strongest first.
	added, modified [fadeSteps]lipgloss.Style
}

func newStyles(dark bool) styles {
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
	return s
}

// rowStyle is how a row looks at now: struck while deleted, highlighted (fading) for a
// while after a change, plain otherwise; ok is false for plain.
func (s *styles) rowStyle(r *rowState, now time.Time) (lipgloss.Style, bool) {
	if !r.deleted.IsZero() {
		return s.struck, true
	}
	since := now.Sub(r.changed)
	if r.changed.IsZero() || since >= fadeFor || since < 0 && -since > time.Second {
		return lipgloss.Style{}, false
	}
	step := max(int(since*fadeSteps/fadeFor), 0)
	switch r.change {
	case event.Added:
		return s.added[step], true
	case event.Modified:
		return s.modified[step], true
	}
	return lipgloss.Style{}, false
}
