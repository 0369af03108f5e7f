// Package proctest runs a program under test and reads it as it runs: the kubeevents
// binary in the end-to-end tests (test/e2e), kubeevents and the clients it is measured
// against in the benchmark harness (bench/harness). A Process keeps its stdout as lines
// and its stderr whole, as they come; its waits are on what is awaited (a line, a JSON
// value, a stderr message, the exit), each with a deadline, never a sleep.
//
// # Contract
//
//   - Start starts the program as Spec says and returns at once; the process is its own
//     until it exits. Nothing kills it but Stop, Kill or a signal the caller sends: a
//     test registers Kill as its cleanup.
//   - stdout, when Spec.Stdout is nil (or the reader Spec.Lines when it is set), is split
//     into lines ("\n", a "\r" before it dropped, the last line kept even without one),
//     kept in order for the life of the Process: a process never blocks on a Process
//     that is not read.
//   - The line waits (Next, WaitLine, WaitJSON, Wait) take lines from one read position,
//     shared: each line is taken once. Seen is what they took; Lines is everything. Use
//     them from one goroutine at a time; everything else is safe from any goroutine.
//   - A wait that gives up says why with an error that is ErrTimeout (the deadline
//     passed), ErrOutputEnded (stdout ended first: no line can come) or ErrExited (the
//     process ended first: its stderr cannot change).
//   - The exit is observed once stdout and stderr, when the Process reads them, are
//     closed too, or pipeGrace after the process ended, if a child it left behind holds
//     them: Stderr and Lines are then complete.
package proctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec is how to start a process.
type Spec struct {
	Path string   // the program; a name without a slash is looked up in PATH
	Args []string // its arguments, without the program's name
	Env  []string // its whole environment; nil gives it this process's
	Dir  string   // its working directory; "" is this process's
	// Stdin is its standard input; nil is the null device.
	Stdin io.Reader
	// Stdout is where its standard output goes: nil to the Process, which reads it as
	// lines; else a file, a pipe or terminal the caller reads (or sets as Lines), any
	// writer.
	Stdout io.Writer
	// Lines, with Stdout set, is read as the lines instead: the other end of the pipe,
	// socket or pseudo-terminal given as Stdout. The caller closes its own copy of
	// Stdout once Start returned, so that Lines ends when the process does.
	Lines io.Reader
	// Stderr, when set, also receives its standard error (a file a run keeps); Stderr()
	// has it all the same. A failing write here never reaches the process.
	Stderr io.Writer
	// Terminal, when set, is the process's terminal, as a shell gives one to a command
	// (a pseudo-terminal's tty side): its stdin, stdout and stderr, and its controlling
	// terminal, in a session of its own. Stdin, Stdout and Stderr must then be nil; Lines,
	// when set, is the terminal's other side, read as the lines (stderr's among them, and
	// Stderr() stays empty). The caller closes its own copy of Terminal once Start
	// returned, so that Lines ends when the process does.
	Terminal *os.File
}

// The reasons a wait gives up.
var (
	ErrTimeout     = errors.New("timed out")
	ErrOutputEnded = errors.New("stdout ended")
	ErrExited      = errors.New("the process exited")
)

// pipeGrace is how long the exit waits, after the process ended, for stdout and stderr
// to be closed: a child the process started may hold them open.
const pipeGrace = 5 * time.Second

// Process is a started program. See the package comment for the contract.
type Process struct {
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{} // closed once the process ended and its output was read

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced whenever anything below changes
	lines      []string
	partial    []byte // the start of a line not yet ended
	taken      int    // lines the waits took
	linesEnded bool
	stderr     bytes.Buffer
	err        error // cmd.Wait's, once exited
}

// Start starts the program spec describes.
func Start(spec Spec) (*Process, error) {
	if spec.Lines != nil && spec.Stdout == nil && spec.Terminal == nil {
		return nil, errors.New("proctest: Spec.Lines without Spec.Stdout: give the other end of Lines as Stdout")
	}
	if spec.Terminal != nil && (spec.Stdin != nil || spec.Stdout != nil || spec.Stderr != nil) {
		return nil, errors.New("proctest: Spec.Terminal is stdin, stdout and stderr: leave Stdin, Stdout and Stderr unset")
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env, cmd.Dir, cmd.Stdin = spec.Env, spec.Dir, spec.Stdin
	cmd.WaitDelay = pipeGrace
	p := &Process{cmd: cmd, exited: make(chan struct{}), changed: make(chan struct{})}
	cmd.Stderr = &stderrWriter{p: p, tee: spec.Stderr}
	cmd.Stdout = spec.Stdout
	readsStdout := spec.Stdout == nil && spec.Terminal == nil
	if readsStdout {
		cmd.Stdout = lineWriter{p}
	}
	if spec.Terminal != nil {
		attr, err := sessionAttr()
		if err != nil {
			return nil, err
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Terminal, spec.Terminal, spec.Terminal
		cmd.SysProcAttr = attr
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.started = time.Now()
	switch {
	case spec.Lines != nil:
		go func() {
			_, _ = io.Copy(lineWriter{p}, spec.Lines)
			p.endLines()
		}()
	case !readsStdout:
		p.endLines() // no lines to wait for
	}
	go func() {
		err := cmd.Wait()
		if readsStdout {
			p.endLines() // cmd.Wait has copied all of stdout
		}
		p.mu.Lock()
		p.err = err
		close(p.exited)
		p.notifyLocked()
		p.mu.Unlock()
	}()
	return p, nil
}

func (p *Process) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// lineWriter splits what it is given into the Process's lines.
type lineWriter struct{ p *Process }

func (w lineWriter) Write(b []byte) (int, error) {
	p := w.p
	p.mu.Lock()
	defer p.mu.Unlock()
	rest := b
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := rest[:i]
		if len(p.partial) > 0 {
			line = append(p.partial, line...)
			p.partial = nil
		}
		p.lines = append(p.lines, string(bytes.TrimSuffix(line, []byte{'\r'})))
		rest = rest[i+1:]
	}
	p.partial = append(p.partial, rest...)
	p.notifyLocked()
	return len(b), nil
}

// endLines marks the end of stdout, keeping a last line that has no newline.
func (p *Process) endLines() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.partial) > 0 {
		p.lines = append(p.lines, string(bytes.TrimSuffix(p.partial, []byte{'\r'})))
		p.partial = nil
	}
	p.linesEnded = true
	p.notifyLocked()
}

// stderrWriter keeps stderr, and copies it to tee.
type stderrWriter struct {
	p   *Process
	tee io.Writer
}

func (w *stderrWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	w.p.stderr.Write(b)
	w.p.notifyLocked()
	w.p.mu.Unlock()
	if w.tee != nil {
		_, _ = w.tee.Write(b)
	}
	return len(b), nil
}

// Pid is the process's ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Started is when Start started it.
func (p *Process) Started() time.Time { return p.started }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Exited is closed once the process ended (and its output was read).
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Alive reports whether the process has not yet been seen to end.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// ExitCode is the process's exit status once it ended; -1 while it runs, or if a
// signal ended it.
func (p *Process) ExitCode() int {
	if p.Alive() {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Err is how the process ended, for messages ("exit status 1", "signal: killed"); nil
// while it runs, or when it exited with status 0.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// State is the ended process's state (its CPU times, its peak RSS); nil while it runs.
func (p *Process) State() *os.ProcessState {
	if p.Alive() {
		return nil
	}
	return p.cmd.ProcessState
}

// Stderr is everything the process wrote to stderr so far.
func (p *Process) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// Lines is every line of stdout so far, taken by a wait or not.
func (p *Process) Lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// Seen is the lines the waits took, in order: the last is the one the last wait
// returned, or the last of those Wait returned.
func (p *Process) Seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines[:p.taken]...)
}

// Next takes the next line of stdout, waiting for it at most timeout.
func (p *Process) Next(timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	return p.next(timer.C)
}

func (p *Process) next(deadline <-chan time.Time) (string, error) {
	for {
		p.mu.Lock()
		if p.taken < len(p.lines) {
			line := p.lines[p.taken]
			p.taken++
			p.mu.Unlock()
			return line, nil
		}
		ended, changed := p.linesEnded, p.changed
		p.mu.Unlock()
		if ended {
			return "", ErrOutputEnded
		}
		select {
		case <-changed:
		case <-deadline:
			return "", ErrTimeout
		}
	}
}

// WaitLine takes lines until match returns true for one, and returns it; it gives up
// after timeout, or when stdout ends. match runs on the caller's goroutine.
func (p *Process) WaitLine(timeout time.Duration, match func(line string) bool) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		line, err := p.next(timer.C)
		if err != nil {
			return "", err
		}
		if match(line) {
			return line, nil
		}
	}
}

// WaitJSON is WaitLine for a stdout of JSON lines: each is decoded into a T, and a line
// that is not one is an error.
func WaitJSON[T any](p *Process, timeout time.Duration, match func(v T) bool) (T, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		var v T
		line, err := p.next(timer.C)
		if err != nil {
			return v, err
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return v, fmt.Errorf("not a JSON line: %q: %w", line, err)
		}
		if match(v) {
			return v, nil
		}
	}
}

// WaitStderr waits until match returns true for all of stderr so far; it gives up after
// timeout, or when the process has ended without a match. match runs on the caller's
// goroutine.
func (p *Process) WaitStderr(timeout time.Duration, match func(stderr string) bool) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		stderr, changed := p.stderr.String(), p.changed
		p.mu.Unlock()
		if match(stderr) {
			return nil
		}
		select {
		case <-p.exited:
			if match(p.Stderr()) {
				return nil
			}
			return ErrExited
		case <-changed:
		case <-timer.C:
			return ErrTimeout
		}
	}
}

// Wait waits at most timeout for the process to end by itself and its stdout to end,
// and returns the lines no wait took and the exit code.
func (p *Process) Wait(timeout time.Duration) (rest []string, code int, err error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		ended, changed := p.linesEnded, p.changed
		if ended && !p.Alive() {
			rest = append(rest, p.lines[p.taken:]...)
			p.taken = len(p.lines)
			p.mu.Unlock()
			return rest, p.ExitCode(), nil
		}
		p.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return nil, -1, ErrTimeout
		}
	}
}

// Interrupt sends SIGINT, as Ctrl-C does, and waits as Wait does.
func (p *Process) Interrupt(timeout time.Duration) (rest []string, code int, err error) {
	if err := p.Signal(syscall.SIGINT); err != nil && p.Alive() {
		return nil, -1, err
	}
	return p.Wait(timeout)
}

// Stop ends the process as a user would: SIGINT, and SIGKILL if it has not ended after
// grace. It returns once the process ended.
func (p *Process) Stop(grace time.Duration) {
	if !p.Alive() {
		return
	}
	_ = p.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.Kill()
	}
}

// Kill ends the process at once (SIGKILL; a stopped one too) and returns once it ended.
// It is a test's cleanup.
func (p *Process) Kill() {
	if p.Alive() {
		_ = p.cmd.Process.Kill()
	}
	<-p.exited
}

// Status is the running process's /proc/PID/status: the value of every "Key: N kB" line
// (VmRSS, VmHWM, RssAnon, RssFile...), in KiB.
func (p *Process) Status() (map[string]int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(p.Pid()) + "/status")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(v)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
			m[k] = kb
		}
	}
	return m, sc.Err()
}
