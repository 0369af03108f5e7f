package e2e

// How a test launches kubeevents: kubeevents(t), the options the process gets (its
// environment, stdin, stdout, directory, a terminal), then Start, which returns the
// running process (proc), or Run, which runs it to its end (result). Every launch of the
// binary under test goes through here, on internal/proctest. What tests create and wait
// for around it (namespaces, objects, receivers, the waits) is in fixtures_test.go.

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"github.com/kubeevents/kubeevents/internal/proctest"
)

// launcher is one kubeevents process to be started: kubeevents(t), then its options,
// each returning the launcher, then Start or Run. Unless told otherwise the process gets
// the clean environment (cleanEnv), the null device as stdin, its stdout read as lines,
// the local cluster's kubeconfig unless its arguments name one, and it is killed when
// the test ends.
type launcher struct {
	t            *testing.T
	spec         proctest.Spec // its Env is added to the clean environment, unless onlyEnv
	onlyEnv      bool
	noKubeconfig bool
	via          []string
	terminal     terminalKind
	cols, rows   int
}

type terminalKind int

const (
	noTerminal terminalKind = iota
	linesTerminal
	screenTerminal
)

// kubeevents starts describing a launch of the binary under test for t.
func kubeevents(t *testing.T) *launcher { return &launcher{t: t} }

// Env adds kv ("KEY=value") to the environment; a later value of a key replaces an
// earlier one.
func (l *launcher) Env(kv ...string) *launcher {
	l.spec.Env = append(l.spec.Env, kv...)
	return l
}

// OnlyEnv makes the environment kv and nothing else, not the clean environment: for
// kubeevents where this process's settings must not reach it (in a pod).
func (l *launcher) OnlyEnv(kv ...string) *launcher {
	l.onlyEnv = true
	return l.Env(kv...)
}

// Stdin is what kubeevents reads as its standard input.
func (l *launcher) Stdin(r io.Reader) *launcher {
	l.spec.Stdin = r
	return l
}

// Stdout is where kubeevents' standard output goes (a file, a pipe, a buffer the test
// reads) instead of the proc's lines.
func (l *launcher) Stdout(w io.Writer) *launcher {
	l.spec.Stdout = w
	return l
}

// Lines, with Stdout, reads r as the proc's lines: the other end of the pipe or socket
// given as Stdout, which the test closes once Start returned.
func (l *launcher) Lines(r io.Reader) *launcher {
	l.spec.Lines = r
	return l
}

// Dir is kubeevents' working directory.
func (l *launcher) Dir(dir string) *launcher {
	l.spec.Dir = dir
	return l
}

// NoKubeconfig passes no --kubeconfig: kubeevents finds its cluster by itself, as in a
// pod.
func (l *launcher) NoKubeconfig() *launcher {
	l.noKubeconfig = true
	return l
}

// Via starts kubeevents through another program: prog runs with args, then the path of
// kubeevents and its arguments, as in `bash -c '"$@" | head -1' bash kubeevents ...`.
// The proc is then prog's.
func (l *launcher) Via(prog string, args ...string) *launcher {
	l.via = append([]string{prog}, args...)
	return l
}

// Terminal puts kubeevents' stdin and stdout on a pseudo-terminal of cols × rows, with
// TERM=xterm unless Env sets another; what it prints there is the proc's lines, and its
// stderr stays apart (Stderr).
func (l *launcher) Terminal(cols, rows int) *launcher {
	l.terminal, l.cols, l.rows = linesTerminal, cols, rows
	return l
}

// Screen puts kubeevents wholly on a pseudo-terminal of cols × rows, as a shell does:
// stdin, stdout and stderr, and its controlling terminal, with TERM=xterm-256color unless
// Env sets another. A terminal emulator (charmbracelet/x/vt) turns what it writes into
// the screen the proc's screen reads, and answers its queries as a terminal would.
func (l *launcher) Screen(cols, rows int) *launcher {
	l.terminal, l.cols, l.rows = screenTerminal, cols, rows
	return l
}

// Start starts kubeevents with args and returns it running.
func (l *launcher) Start(args ...string) *proc {
	t := l.t
	t.Helper()
	spec := l.spec
	if !l.noKubeconfig {
		args = withKubeconfig(args)
	}
	spec.Path, spec.Args = binary, args
	if l.via != nil {
		spec.Path, spec.Args = l.via[0], append(append(slices.Clone(l.via[1:]), binary), args...)
	}
	var env []string
	switch l.terminal {
	case linesTerminal:
		env = []string{"TERM=xterm"}
	case screenTerminal:
		env = []string{"TERM=xterm-256color"}
	}
	env = append(env, spec.Env...)
	if !l.onlyEnv {
		env = append(cleanEnv(), env...)
	}
	spec.Env = append([]string{}, env...) // never nil: nil would be this process's

	var scr *screen
	if l.terminal != noTerminal {
		if spec.Stdin != nil || spec.Stdout != nil || spec.Lines != nil {
			t.Fatal("kubeevents(t): a terminal is kubeevents' stdin and stdout; no Stdin, Stdout or Lines beside it")
		}
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatalf("opening a pseudo-terminal: %v", err)
		}
		t.Cleanup(func() { ptmx.Close() })
		defer tty.Close() // kubeevents' once started
		if err := pty.Setsize(ptmx, &pty.Winsize{Rows: uint16(l.rows), Cols: uint16(l.cols)}); err != nil {
			t.Fatal(err)
		}
		if l.terminal == linesTerminal {
			spec.Stdin, spec.Stdout, spec.Lines = tty, tty, ptmx
		} else {
			scr = &screen{t: t, ptmx: ptmx, emu: vt.NewSafeEmulator(l.cols, l.rows)}
			t.Cleanup(func() { _ = scr.emu.Close() })
			spec.Terminal, spec.Lines = tty, io.TeeReader(ptmx, scr)
		}
	}
	p, err := proctest.Start(spec)
	if err != nil {
		t.Fatalf("starting kubeevents: %v", err)
	}
	t.Cleanup(p.Kill)
	kp := &proc{Process: p, t: t}
	if scr != nil {
		scr.p, kp.screen = kp, scr
		go func() { _, _ = io.Copy(scr.ptmx, scr.emu) }() // the terminal's answers to its queries
	}
	return kp
}

// Run runs kubeevents with args to its end, which must come within timeout, and returns
// what it printed (stdout only when it was not sent elsewhere) and its exit code.
func (l *launcher) Run(timeout time.Duration, args ...string) result {
	l.t.Helper()
	var stdout bytes.Buffer
	if l.spec.Stdout == nil && l.terminal == noTerminal {
		l.spec.Stdout = &stdout
	}
	p := l.Start(args...)
	if _, _, err := p.Wait(timeout); err != nil {
		l.t.Fatalf("kubeevents %s did not end within %s; stderr:\n%s", strings.Join(args, " "), timeout, p.Stderr())
	}
	return result{stdout: stdout.String(), stderr: p.Stderr(), code: p.ExitCode()}
}

// result is a finished kubeevents run.
type result struct {
	stdout, stderr string
	code           int
}

// runKubeevents runs the binary to completion (it must end by itself within timeout).
func runKubeevents(t *testing.T, timeout time.Duration, args ...string) result {
	t.Helper()
	return kubeevents(t).Run(timeout, args...)
}

// startKubeevents starts kubeevents with args, its stdout read as lines.
func startKubeevents(t *testing.T, args ...string) *proc {
	t.Helper()
	return kubeevents(t).Start(args...)
}

// startProc starts kubeevents with its stdout going to stdout (a file, a pipe, a buffer
// the test reads) and env added to the clean environment.
func startProc(t *testing.T, stdout io.Writer, env []string, args ...string) *proc {
	t.Helper()
	return kubeevents(t).Stdout(stdout).Env(env...).Start(args...)
}

// withKubeconfig adds the local cluster's kubeconfig unless the test passes its own.
func withKubeconfig(args []string) []string {
	for _, a := range args {
		if a == "--kubeconfig" || strings.HasPrefix(a, "--kubeconfig=") {
			return args
		}
	}
	return append(append([]string{}, args...), "--kubeconfig", kubeconfig)
}

// cleanEnv is the environment without colour or config settings that would change output.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "NO_COLOR=") || strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_CONFIG_HOME="+os.TempDir()+"/kubeevents-e2e-noconfig")
}

// proc is a running kubeevents (internal/proctest): its stdout read as lines, unless it
// goes elsewhere, and its stderr kept. Its waits fail the test, with what kubeevents
// printed so far, where proctest's return an error; it is killed when the test ends.
type proc struct {
	*proctest.Process
	t      *testing.T
	screen *screen // its terminal, when started with Screen
}

// fail ends the test for err, a wait's for what, with the output so far.
func (p *proc) fail(err error, what string, timeout time.Duration) {
	p.t.Helper()
	switch {
	case errors.Is(err, proctest.ErrTimeout):
		p.t.Fatalf("no %s within %s; output so far:\n%s\nstderr:\n%s", what, timeout, strings.Join(p.Lines(), "\n"), p.Stderr())
	case errors.Is(err, proctest.ErrOutputEnded), errors.Is(err, proctest.ErrExited):
		p.t.Fatalf("kubeevents ended (%v) before %s; output so far:\n%s\nstderr:\n%s", p.Err(), what, strings.Join(p.Lines(), "\n"), p.Stderr())
	default:
		p.t.Fatalf("waiting for %s: %v; stderr:\n%s", what, err, p.Stderr())
	}
}

// waitFor reads lines until match returns true, failing after timeout.
func (p *proc) waitFor(timeout time.Duration, what string, match func(line string) bool) string {
	p.t.Helper()
	line, err := p.WaitLine(timeout, match)
	if err != nil {
		p.fail(err, what, timeout)
	}
	return line
}

// tryFor reads lines until match returns true (the line, true) or timeout passes ("",
// false); it fails only if kubeevents ends.
func (p *proc) tryFor(timeout time.Duration, what string, match func(line string) bool) (string, bool) {
	p.t.Helper()
	line, err := p.WaitLine(timeout, match)
	if errors.Is(err, proctest.ErrTimeout) {
		return "", false
	}
	if err != nil {
		p.fail(err, what, timeout)
	}
	return line, true
}

// waitJSON reads JSON lines until match returns true.
func (p *proc) waitJSON(timeout time.Duration, what string, match func(ev envelope) bool) envelope {
	p.t.Helper()
	ev, err := proctest.WaitJSON(p.Process, timeout, match)
	if err != nil {
		p.fail(err, what, timeout)
	}
	return ev
}

// collect reads JSON events for d and returns them: for a test that must see that
// nothing more comes.
func (p *proc) collect(d time.Duration) []envelope {
	p.t.Helper()
	var evs []envelope
	end := time.Now().Add(d)
	for {
		ev, err := proctest.WaitJSON(p.Process, time.Until(end), func(envelope) bool { return true })
		if errors.Is(err, proctest.ErrTimeout) || errors.Is(err, proctest.ErrOutputEnded) {
			return evs
		}
		if err != nil {
			p.t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// waitStderr waits until stderr matches re, failing after timeout or once kubeevents
// has ended without it.
func (p *proc) waitStderr(timeout time.Duration, re *regexp.Regexp) {
	p.t.Helper()
	if err := p.WaitStderr(timeout, re.MatchString); err != nil {
		p.fail(err, "stderr matching "+re.String(), timeout)
	}
}

// signal sends sig to kubeevents.
func (p *proc) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// interrupt sends SIGINT and waits for the process to end, returning the remaining
// output lines and the exit code.
func (p *proc) interrupt(timeout time.Duration) ([]string, int) {
	p.t.Helper()
	rest, code, err := p.Interrupt(timeout)
	if err != nil {
		p.t.Fatalf("kubeevents did not exit within %s of SIGINT (%v); stderr:\n%s", timeout, err, p.Stderr())
	}
	return rest, code
}

// wait waits for the process to end by itself, returning the remaining output lines
// and the exit code.
func (p *proc) wait(timeout time.Duration) ([]string, int) {
	p.t.Helper()
	rest, code, err := p.Wait(timeout)
	if err != nil {
		p.t.Fatalf("kubeevents did not exit within %s; stderr:\n%s", timeout, p.Stderr())
	}
	return rest, code
}

// screen is the terminal of a kubeevents started with Screen, read through a terminal
// emulator: its cells, text and styles, as a person sees them; keys typed into it.
type screen struct {
	t    *testing.T
	p    *proc
	ptmx *os.File
	emu  *vt.SafeEmulator

	rawMu sync.Mutex
	raw   []byte // every byte kubeevents wrote to the terminal
}

// Write takes what kubeevents wrote to the terminal.
func (s *screen) Write(b []byte) (int, error) {
	_, _ = s.emu.Write(b)
	s.rawMu.Lock()
	s.raw = append(s.raw, b...)
	s.rawMu.Unlock()
	return len(b), nil
}

// written is every byte kubeevents wrote to the terminal so far.
func (s *screen) written() []byte {
	s.rawMu.Lock()
	defer s.rawMu.Unlock()
	return slices.Clone(s.raw)
}

// lines is the screen, one string per row, trailing blanks cut.
func (s *screen) lines() []string {
	var out []string
	for y := range s.emu.Height() {
		var b strings.Builder
		for x := 0; x < s.emu.Width(); x++ {
			if c := s.emu.CellAt(x, y); c != nil {
				b.WriteString(c.Content)
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

func (s *screen) String() string { return strings.Join(s.lines(), "\n") }

// line is the first row holding text, and its number (-1: none).
func (s *screen) line(text string) (string, int) {
	for i, l := range s.lines() {
		if strings.Contains(l, text) {
			return l, i
		}
	}
	return "", -1
}

// styleOf is the style of the first cell of the row holding text (ok false: none does).
func (s *screen) styleOf(text string) (uv.Style, bool) {
	_, y := s.line(text)
	if y < 0 {
		return uv.Style{}, false
	}
	c := s.emu.CellAt(0, y)
	if c == nil {
		return uv.Style{}, false
	}
	return c.Style, true
}

// waitScreen polls the screen until cond holds, failing the test with the screen after
// timeout or if kubeevents exits first.
func (s *screen) waitScreen(timeout time.Duration, what string, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		select {
		case <-s.p.Exited():
			s.t.Fatalf("kubeevents exited (%v) before %s; the screen:\n%s", s.p.Err(), what, s)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("not %s within %s; the screen:\n%s", what, timeout, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// has reports whether a row holds every one of texts.
func (s *screen) has(texts ...string) bool {
	for _, l := range s.lines() {
		all := true
		for _, t := range texts {
			all = all && strings.Contains(l, t)
		}
		if all {
			return true
		}
	}
	return false
}

// send types keys.
func (s *screen) send(keys string) {
	s.t.Helper()
	if _, err := s.ptmx.WriteString(keys); err != nil {
		s.t.Fatalf("typing %q: %v", keys, err)
	}
}

func (s *screen) resize(cols, rows int) {
	s.t.Helper()
	s.emu.Resize(cols, rows)
	if err := pty.Setsize(s.ptmx, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		s.t.Fatal(err)
	}
}

// waitExit waits for kubeevents to end and returns its exit code.
func (s *screen) waitExit(timeout time.Duration) int {
	s.t.Helper()
	select {
	case <-s.p.Exited():
	case <-time.After(timeout):
		s.t.Fatalf("kubeevents did not exit within %s; the screen:\n%s", timeout, s)
	}
	return s.p.ExitCode()
}

// checkRestored checks that the terminal is as kubeevents found it (main screen, cursor
// shown) and shows the run's summary.
func (s *screen) checkRestored() {
	s.t.Helper()
	// The last bytes may still be on their way from the pseudo-terminal.
	deadline := time.Now().Add(uiWait)
	for {
		if _, y := s.line("kubeevents: stopped after "); y >= 0 && !s.emu.IsAltScreen() {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the main screen is not back with the summary within %s (alternate screen: %v); the screen:\n%s", uiWait, s.emu.IsAltScreen(), s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s.emu.CursorHidden() {
		s.t.Errorf("the cursor is left hidden; the screen:\n%s", s)
	}
}

// uiWait bounds what the view itself does (a frame, a key): it draws within 50 ms.
const uiWait = 10 * time.Second

// Keys as a terminal sends them.
const (
	keyEnter = "\r"
	keyEsc   = "\x1b"
	keyCtrlC = "\x03"
)
