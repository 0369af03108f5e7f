package proctest

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// The processes under test are this test binary again, in a child mode (childEnv).
const childEnv = "PROCTEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child is what the test binary does as a child process.
func child(mode string) int {
	switch mode {
	case "lines": // three lines, the last without a newline, one with a CR
		fmt.Print("one\ntwo\r\nthree")
		return 0
	case "serve": // JSON lines, then "ready" on stderr; on SIGINT "bye" and exit 3
		ints := make(chan os.Signal, 1)
		signal.Notify(ints, syscall.SIGINT)
		fmt.Println(`{"n":1}`)
		fmt.Println(`{"n":2}`)
		fmt.Fprintln(os.Stderr, "ready")
		<-ints
		fmt.Println("bye")
		fmt.Fprintln(os.Stderr, "stopping")
		return 3
	case "deaf": // ignores SIGINT
		signal.Ignore(syscall.SIGINT)
		fmt.Println("up")
		time.Sleep(time.Hour) // until killed
		return 0
	case "quiet": // prints nothing until killed
		time.Sleep(time.Hour)
		return 0
	case "flood": // many lines nobody reads while it writes
		for i := range 200000 {
			fmt.Printf("line %d\n", i)
		}
		fmt.Fprintln(os.Stderr, "done")
		return 4
	case "terminal": // a line on stdout, one on stderr, one on its controlling terminal
		fmt.Println("out")
		fmt.Fprintln(os.Stderr, "err")
		tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
		if err != nil {
			fmt.Println("no controlling terminal:", err)
			return 5
		}
		fmt.Fprintln(tty, "tty")
		tty.Close()
		return 0
	case "fail": // a few words on stderr, exit 1
		fmt.Fprintln(os.Stderr, "bad input")
		return 1
	}
	fmt.Fprintln(os.Stderr, "unknown mode", mode)
	return 99
}

func start(t *testing.T, mode string, spec Spec) *Process {
	t.Helper()
	spec.Path = os.Args[0]
	spec.Env = append(os.Environ(), childEnv+"="+mode)
	p, err := Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

func TestLinesInOrderToTheEnd(t *testing.T) {
	p := start(t, "lines", Spec{})
	var got []string
	for {
		line, err := p.Next(10 * time.Second)
		if errors.Is(err, ErrOutputEnded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line)
	}
	if want := []string{"one", "two", "three"}; !slices.Equal(got, want) || !slices.Equal(p.Seen(), want) {
		t.Errorf("lines %q, seen %q; want %q", got, p.Seen(), want)
	}
	rest, code, err := p.Wait(10 * time.Second)
	if err != nil || code != 0 || len(rest) != 0 {
		t.Errorf("Wait: rest %q, code %d, %v; want nothing, 0", rest, code, err)
	}
}

func TestWaitsAndInterrupt(t *testing.T) {
	p := start(t, "serve", Spec{})
	type value struct{ N int }
	v, err := WaitJSON(p, 10*time.Second, func(v value) bool { return v.N == 2 })
	if err != nil || v.N != 2 {
		t.Fatalf("WaitJSON: %+v, %v", v, err)
	}
	if err := p.WaitStderr(10*time.Second, func(s string) bool { return s == "ready\n" }); err != nil {
		t.Fatalf("WaitStderr: %v; stderr %q", err, p.Stderr())
	}
	if !p.Alive() || p.ExitCode() != -1 || p.State() != nil {
		t.Errorf("running: alive %v, code %d, state %v", p.Alive(), p.ExitCode(), p.State())
	}
	rest, code, err := p.Interrupt(10 * time.Second)
	if err != nil || code != 3 || !slices.Equal(rest, []string{"bye"}) {
		t.Errorf("Interrupt: rest %q, code %d, %v; want [bye], 3", rest, code, err)
	}
	if p.Stderr() != "ready\nstopping\n" || p.Alive() || p.State() == nil {
		t.Errorf("after the exit: stderr %q, alive %v", p.Stderr(), p.Alive())
	}
	if want := []string{`{"n":1}`, `{"n":2}`, "bye"}; !slices.Equal(p.Seen(), want) {
		t.Errorf("seen %q, want %q", p.Seen(), want)
	}
}

func TestWaitJSONRefusesOtherLines(t *testing.T) {
	p := start(t, "lines", Spec{})
	if _, err := WaitJSON(p, 10*time.Second, func(any) bool { return true }); err == nil || !strings.Contains(err.Error(), `"one"`) {
		t.Errorf("WaitJSON on %q: %v, want an error naming the line", "one", err)
	}
}

func TestWaitsGiveUp(t *testing.T) {
	quiet := start(t, "quiet", Spec{})
	began := time.Now()
	if _, err := quiet.WaitLine(200*time.Millisecond, func(string) bool { return true }); !errors.Is(err, ErrTimeout) {
		t.Errorf("WaitLine on a quiet process: %v, want ErrTimeout", err)
	}
	if took := time.Since(began); took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("WaitLine with a 200ms timeout returned after %s", took)
	}
	if err := quiet.WaitStderr(100*time.Millisecond, func(s string) bool { return s != "" }); !errors.Is(err, ErrTimeout) {
		t.Errorf("WaitStderr on a quiet process: %v, want ErrTimeout", err)
	}
	if _, _, err := quiet.Wait(100 * time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Errorf("Wait on a running process: %v, want ErrTimeout", err)
	}

	lines := start(t, "lines", Spec{})
	if _, err := lines.WaitLine(10*time.Second, func(l string) bool { return l == "four" }); !errors.Is(err, ErrOutputEnded) {
		t.Errorf("WaitLine for a line that never comes: %v, want ErrOutputEnded", err)
	}
	fail := start(t, "fail", Spec{})
	if err := fail.WaitStderr(10*time.Second, func(s string) bool { return strings.Contains(s, "never said") }); !errors.Is(err, ErrExited) {
		t.Errorf("WaitStderr for words never said: %v, want ErrExited", err)
	}
	if _, code, err := fail.Wait(10 * time.Second); code != 1 || err != nil || fail.Err() == nil {
		t.Errorf("exit %d, %v, Err %v; want 1", code, err, fail.Err())
	}
}

func TestStopKillsWhatIgnoresSIGINT(t *testing.T) {
	p := start(t, "deaf", Spec{})
	if _, err := p.WaitLine(10*time.Second, func(l string) bool { return l == "up" }); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	p.Stop(300 * time.Millisecond)
	if took := time.Since(began); took < 300*time.Millisecond || p.Alive() {
		t.Errorf("Stop returned after %s, alive %v; want it killed after the grace", took, p.Alive())
	}
	if p.ExitCode() != -1 || p.Err() == nil || !strings.Contains(p.Err().Error(), "killed") {
		t.Errorf("exit code %d, Err %v; want -1, killed", p.ExitCode(), p.Err())
	}
}

// A process that writes more than any pipe holds, read by nobody, runs to its end.
func TestUnreadOutputNeverBlocks(t *testing.T) {
	p := start(t, "flood", Spec{})
	rest, code, err := p.Wait(60 * time.Second)
	if err != nil || code != 4 {
		t.Fatalf("Wait: code %d, %v", code, err)
	}
	if len(rest) != 200000 || rest[199999] != "line 199999" || len(p.Lines()) != 200000 || p.Stderr() != "done\n" {
		t.Errorf("%d lines (last %q), stderr %q", len(rest), rest[len(rest)-1], p.Stderr())
	}
}

// Stdout elsewhere: in a file, or on a pipe whose other end is read as the lines; stderr
// copied to a writer that fails, which the process never sees.
func TestStdoutElsewhere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stdout")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := start(t, "serve", Spec{Stdout: f, Stderr: failingWriter{}})
	if err := p.WaitStderr(10*time.Second, func(s string) bool { return s == "ready\n" }); err != nil {
		t.Fatal(err)
	}
	if _, code, err := p.Interrupt(10 * time.Second); code != 3 || err != nil {
		t.Fatalf("Interrupt: %d, %v", code, err)
	}
	if data, _ := os.ReadFile(path); string(data) != "{\"n\":1}\n{\"n\":2}\nbye\n" || len(p.Lines()) != 0 {
		t.Errorf("file %q, lines %q", data, p.Lines())
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p = start(t, "lines", Spec{Stdout: w, Lines: r})
	w.Close()
	rest, code, err := p.Wait(10 * time.Second)
	if err != nil || code != 0 || !slices.Equal(rest, []string{"one", "two", "three"}) {
		t.Errorf("lines through a pipe: %q, code %d, %v", rest, code, err)
	}
}

// On a terminal the process has its stdin, stdout and stderr there, and it is its
// controlling terminal (/dev/tty); the terminal's other side is read as the lines.
func TestTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	p := start(t, "terminal", Spec{Terminal: tty, Lines: ptmx})
	tty.Close()
	rest, code, err := p.Wait(10 * time.Second)
	if err != nil || code != 0 || !slices.Equal(rest, []string{"out", "err", "tty"}) || p.Stderr() != "" {
		t.Errorf("on a terminal: lines %q, code %d, %v, stderr %q; want out, err, tty, 0 and nothing", rest, code, err, p.Stderr())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no room") }

func TestStatus(t *testing.T) {
	p := start(t, "quiet", Spec{})
	st, err := p.Status()
	if err != nil || st["VmRSS"] <= 0 || st["VmHWM"] < st["VmRSS"] {
		t.Errorf("status %v, %v; want VmRSS > 0 and VmHWM >= VmRSS", st, err)
	}
}

func TestStartErrors(t *testing.T) {
	if _, err := Start(Spec{Path: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("starting a missing program: no error")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := Start(Spec{Path: os.Args[0], Lines: r}); err == nil {
		t.Error("Lines without Stdout: no error")
	}
	if _, err := Start(Spec{Path: os.Args[0], Terminal: w, Stdout: w}); err == nil {
		t.Error("Terminal with Stdout: no error")
	}
}
