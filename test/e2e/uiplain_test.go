package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// With TERM=dumb and NO_COLOR the view writes no SGR sequence at all (no bold, no
// reverse video), and still shows which row is selected, with a marker; a filter that
// matches nothing says so.
func TestUIPlainWithoutColour(t *testing.T) {
	ns := newNamespace(t)
	for _, name := range []string{"plain-a", "plain-b", "plain-c"} {
		createConfigMap(t, ns, name)
	}
	u := kubeevents(t).Env("TERM=dumb", "NO_COLOR=1").Screen(100, 20).Start("watch", "configmaps", "-n", ns, "--ui").screen
	marked := func(marker, name string) func() bool {
		return func() bool {
			for _, l := range u.lines() {
				if strings.HasPrefix(l, marker+name+" ") {
					return true
				}
			}
			return false
		}
	}
	sgr := regexp.MustCompile(`\x1b\[[0-9;:]*m`)
	u.waitScreen(eventWait, "the rows", func() bool { return u.has("plain-c") })
	if m := sgr.Find(u.written()); m != nil {
		t.Errorf("with TERM=dumb and NO_COLOR, the view wrote the SGR sequence %q", m)
	}
	// The namespace's kube-root-ca.crt comes first.
	u.waitScreen(uiWait, "the four rows, the first one selected", func() bool {
		return marked(">  ", "kube-root-ca.crt")() && marked("   ", "plain-a")() && marked("   ", "plain-b")() && marked("   ", "plain-c")()
	})
	if l, _ := u.line("NAME"); !strings.HasPrefix(l, "   NAME ") {
		t.Errorf("the header %q is not aligned with the rows after the marker column", l)
	}
	u.send("j")
	u.waitScreen(uiWait, "the selection on the second row", func() bool {
		return marked(">  ", "plain-a")() && marked("   ", "kube-root-ca.crt")()
	})

	u.send("/no-such-thing" + keyEnter)
	u.waitScreen(uiWait, "the filter said to match nothing", func() bool {
		return u.has("the filter matches none of the 4 objects (Esc clears it)")
	})
	if u.has("no objects yet") {
		t.Errorf("a filter matching nothing says there are no objects:\n%s", u)
	}
	u.send(keyEsc)
	u.waitScreen(uiWait, "the rows back", func() bool { return marked("   ", "plain-c")() })

	u.send("q")
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("q: exit code %d, want 0", code)
	}
	u.checkRestored()
	if m := sgr.Find(u.written()); m != nil {
		t.Errorf("with TERM=dumb and NO_COLOR, the view (or what it left) wrote the SGR sequence %q", m)
	}
}

// --ui with --no-screen is refused with advice that works: dropping --no-screen gives
// the view, the sink recording beside it.
func TestUINoScreenAdvice(t *testing.T) {
	ns := newNamespace(t)
	createConfigMap(t, ns, "seen")
	archive := filepath.Join(t.TempDir(), "events.jsonl")
	const advice = "kubeevents: --ui shows the standard output stream, which --no-screen turns off; drop --no-screen (the sinks go on writing beside the view)"
	for _, extra := range [][]string{nil, {"--sink", "file=" + archive}} {
		args := append([]string{"watch", "configmaps", "-n", ns, "--ui", "--no-screen"}, extra...)
		r := runKubeevents(t, eventWait, args...)
		if r.code != 2 || r.stdout != "" {
			t.Errorf("%v: exit code %d, stdout %q; want 2 and nothing", extra, r.code, r.stdout)
		}
		checkOneLine(t, r.stderr, literal(advice))
	}

	// The advice taken.
	u := kubeevents(t).Screen(100, 20).Start("watch", "configmaps", "-n", ns, "--ui", "--sink", "file="+archive).screen
	u.waitScreen(eventWait, "the ConfigMap's row", func() bool { return u.has("seen") })
	u.send("q")
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("q: exit code %d, want 0", code)
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"name":"seen"`) {
		t.Errorf("the sink beside the view did not record the ConfigMap:\n%s", data)
	}
}
