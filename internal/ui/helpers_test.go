package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
)

var (
	t0       = time.Date(2026, 11, 27, 10, 0, 0, 0, time.Local)
	podsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	podsKind = schema.GroupKind{Kind: "Pod"}
)

// clock is the view's clock in a test: it moves when the test says.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time       { return c.now }
func (c *clock) at(d time.Duration)   { c.now = t0.Add(d) }
func (c *clock) add(d time.Duration)  { c.now = c.now.Add(d) }
func (c *clock) since() time.Duration { return c.now.Sub(t0) }

func testPod(name string, labels map[string]string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: labels, CreationTimestamp: metav1.NewTime(t0.Add(-time.Minute))},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

// harness is a View and its model, driven by hand: events written as the listener
// would, frames and keys as bubbletea would deliver them, at the test's clock.
type harness struct {
	t     *testing.T
	v     *View
	m     *model
	clock *clock
	last  map[string]runtime.Object // the last object written, by name, for Old
}

func newHarness(t *testing.T, o Options) *harness {
	t.Helper()
	c := &clock{now: t0}
	o.Now = c.Now
	if o.Kinds == nil {
		o.Kinds = []schema.GroupKind{podsKind}
	}
	if o.Differ == nil {
		o.Differ = diff.NewDiffer(nil)
	}
	o.Namespace = "shop"
	v, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, v: v, m: newModel(v), clock: c, last: map[string]runtime.Object{}}
	h.m.Update(tea.WindowSizeMsg{Width: 100, Height: 20})
	return h
}

// write hands the view one event about obj at the clock's time.
func (h *harness) write(typ event.EventType, obj runtime.Object, listed bool) *event.Event {
	h.t.Helper()
	ev := &event.Event{Type: typ, Time: h.clock.now, Resource: podsGVR, Kind: "Pod", Object: obj, InInitialList: listed}
	name := obj.(metav1.Object).GetName()
	if typ == event.Modified || typ == event.Sync {
		ev.Old = h.last[name]
	}
	h.last[name] = obj
	if err := h.v.Write(ev); err != nil {
		h.t.Fatal(err)
	}
	return ev
}

// frame is a frame at the clock's time, drawn as the first tick after the frame
// interval draws it (the tests of the interval use tick).
func (h *harness) frame() {
	h.m.drawnAt = time.Time{}
	h.tick()
}

// tick is the tick of a frame at the clock's time: drawn if the interval has passed.
func (h *harness) tick() { h.m.Update(frameMsg(h.clock.now)) }

// keys types keys: "enter", "esc", "down", "up", "ctrl+c", "backspace", or text.
func (h *harness) keys(keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		case "up":
			msg = tea.KeyPressMsg{Code: tea.KeyUp}
		case "backspace":
			msg = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case "ctrl+c":
			msg = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
		default:
			for _, r := range k {
				h.m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
			continue
		}
		h.m.Update(msg)
	}
}

// screen is the last frame as a terminal shows it.
type screen struct{ e *vt.Emulator }

func (h *harness) screen() screen {
	e := vt.NewEmulator(h.m.width, h.m.height)
	content := strings.ReplaceAll(h.m.content, "\n", "\r\n")
	if !h.v.opts.Color {
		// What bubbletea's renderer does without colour: no styles at all.
		var b strings.Builder
		w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.NoTTY}
		_, _ = w.WriteString(content)
		content = b.String()
	}
	_, _ = e.WriteString(content)
	return screen{e}
}

func teaSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

func (s screen) lines() []string {
	var out []string
	for y := range s.e.Height() {
		var b strings.Builder
		for x := 0; x < s.e.Width(); x++ {
			if c := s.e.CellAt(x, y); c != nil {
				b.WriteString(c.Content)
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

func (s screen) String() string { return strings.Join(s.lines(), "\n") }

// line is the first line that holds text, and its number; -1 when none does.
func (s screen) line(text string) (string, int) {
	for i, l := range s.lines() {
		if strings.Contains(l, text) {
			return l, i
		}
	}
	return "", -1
}

// style is the style of the first cell of the line that holds text.
func (s screen) style(t *testing.T, text string) uv.Style {
	t.Helper()
	_, y := s.line(text)
	if y < 0 {
		t.Fatalf("no line holds %q; the screen:\n%s", text, s)
	}
	return s.e.CellAt(0, y).Style
}
