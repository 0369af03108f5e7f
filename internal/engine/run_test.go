package engine

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// fakeTerminals says every stream in tty is a terminal of the given width.
type fakeTerminals struct {
	tty   map[io.Writer]bool
	width int
}

func (f fakeTerminals) IsTerminal(w io.Writer) bool { return f.tty[w] }
func (f fakeTerminals) Width(w io.Writer) func() int {
	if !f.tty[w] {
		return nil
	}
	return func() int { return f.width }
}

// When the objects that exist at start-up are kept from every sink (--watch-only, or
// --event-types without ADDED), stderr says when they are listed: from then on a change is
// an event. When they are shown, their ADDED events say it.
func TestSyncedSaysWhenTheHiddenListIsIn(t *testing.T) {
	pods := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	cases := []struct {
		name       string
		watchOnly  bool
		eventTypes []event.EventType
		want       string // "" for no line
	}{
		{"list shown", false, nil, ""},
		{"watch-only", true, nil, "kubeevents: pods in web listed (not shown: --watch-only); changes from here on are shown\n"},
		{"no ADDED", false, []event.EventType{event.Deleted, event.Modified}, "kubeevents: pods in web listed (not shown: --event-types DELETED,MODIFIED); changes from here on are shown\n"},
		{"ADDED among the types", false, []event.EventType{event.Modified, event.Added}, ""},
	}
	for _, tc := range cases {
		var errOut bytes.Buffer
		w := &session{sys: System{Out: io.Discard, ErrOut: &errOut, Verbosity: 1, Terminals: fakeTerminals{}},
			cfg:  &Config{Events: Events{WatchOnly: tc.watchOnly, Types: tc.eventTypes}},
			plan: &plan.Plan{Clusters: []*plan.Cluster{{Resources: []resource.Resource{pods}, Namespaces: []string{"web"}}}}}
		w.synced()()
		if errOut.String() != tc.want {
			t.Errorf("%s: stderr %q, want %q", tc.name, errOut.String(), tc.want)
		}
	}
}

// Colour follows --color, NO_COLOR, TERM=dumb and whether the stream is a terminal, for
// each stream on its own; the start line and summary show on a terminal or with -v.
func TestColorAndDiagnosticsFollowTheStreams(t *testing.T) {
	var out, errOut bytes.Buffer
	env := func(kv ...string) func(string) (string, bool) {
		return func(key string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == key {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	cases := []struct {
		color     string
		stdoutTTY bool
		env       func(string) (string, bool)
		wantColor bool
	}{
		{"auto", true, env(), true},
		{"auto", false, env(), false},
		{"auto", true, env("NO_COLOR", ""), false},
		{"auto", true, env("TERM", "dumb"), false},
		{"always", false, env("NO_COLOR", "1"), true},
		{"never", true, env(), false},
	}
	for _, tc := range cases {
		w := &session{cfg: &Config{Output: Output{Color: tc.color}}, sys: System{LookupEnv: tc.env,
			Terminals: fakeTerminals{tty: map[io.Writer]bool{&out: tc.stdoutTTY}}}}
		if got := w.colorFor(&out); got != tc.wantColor {
			t.Errorf("--color %s, stdout a terminal %v: colour %v, want %v", tc.color, tc.stdoutTTY, got, tc.wantColor)
		}
	}
	for _, tc := range []struct {
		stderrTTY bool
		verbosity int
		want      bool
	}{{false, 0, false}, {true, 0, true}, {false, 1, true}} {
		errOut.Reset()
		w := &session{cfg: &Config{}, sys: System{Out: &out, ErrOut: &errOut, Verbosity: tc.verbosity,
			Terminals: fakeTerminals{tty: map[io.Writer]bool{&errOut: tc.stderrTTY}}}}
		w.infof("watching pods")
		if shown := errOut.Len() > 0; shown != tc.want {
			t.Errorf("stderr a terminal %v, -v=%d: start line shown %v, want %v", tc.stderrTTY, tc.verbosity, shown, tc.want)
		}
	}
}

// The terminal's header line is printed again after a "re-synced" notice, and not after
// other notices.
func TestHeadersAgainAfterResync(t *testing.T) {
	p, err := render.NewPrinter(render.Options{Headers: true, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	w := &session{sys: System{ErrOut: io.Discard}, headers: &sinkkind.HeaderPrinters{}}
	w.headers.Add(p)
	ev := &event.Event{Type: event.Added, Time: time.Now(), Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind: "ConfigMap", Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}}}
	headers := func() int {
		out, err := p.Append(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(out), "TIME")
	}
	if n := headers(); n != 1 {
		t.Fatalf("first line: %d header lines, want 1", n)
	}
	w.warn("watch of %s lost (%s); retrying…")
	if n := headers(); n != 0 {
		t.Errorf("after a lost notice: %d header lines, want 0", n)
	}
	w.warn(plan.ClusterNotice + "re-synced %s %s (%d changed, %d created, %d deleted while disconnected)")
	if n := headers(); n != 1 {
		t.Errorf("after a re-sync notice of one of several clusters: %d header lines, want 1", n)
	}
}
