package sink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/listener"
)

// ExecOptions configure an exec sink.
type ExecOptions struct {
	Name        string   // the sink's name: the prefix of the child's output lines
	Argv        []string // the command and its arguments; no shell
	Batching    Batching
	Concurrency int           // runs at once at most (1 if 0)
	Timeout     time.Duration // time limit per run
	Retries     int           // runs again after a failed run, at most; RetryForever for no limit
	Backoff     wait.Backoff  // between attempts; zero means NewBackoff()
	Encoder     *Encoder
	// Warn prints one diagnostic line: the child's output (escaped), prefixed with the
	// sink's name, and the sink's failures.
	Warn func(format string, args ...any)
}

// Exec runs a command per event, or per batch of events, with their JSON lines on its
// standard input. It implements listener.Holder: an event is settled once the run that
// got it exits 0 (delivered), or its last retry failed or timed out (failed).
//
// Each run is a process group of its own, and a run that times out or is aborted is
// killed with its whole group: a script's own children (a sleep, a curl) go with it
// rather than living on under init. Being a group of its own, a run is not sent the
// terminal's Ctrl-C either: kubeevents gives it --grace to finish, then kills it.
type Exec struct {
	*pool
	opts   ExecOptions
	path   string // Argv[0], looked up in PATH once
	notice struct {
		sync.Mutex
		listener.Throttle
		failed int
	}
	// running are the runs' processes, for Abort, which kills them at once: the
	// process may exit right after it.
	running struct {
		sync.Mutex
		procs map[*os.Process]bool
	}
}

// NewExec checks that the command can be run and makes the sink; an error says why it
// cannot (not found, not executable).
func NewExec(o ExecOptions) (*Exec, error) {
	path, err := exec.LookPath(o.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("command %q: %w", o.Argv[0], unwrapExecError(err))
	}
	if o.Backoff == (wait.Backoff{}) {
		o.Backoff = NewBackoff()
	}
	s := &Exec{opts: o, path: path}
	s.running.procs = map[*os.Process]bool{}
	s.notice.Period = listener.NoticeEvery
	s.pool = newPool(o.Concurrency, o.Batching, o.Encoder.Encode, whole(s.send))
	return s, nil
}

// unwrapExecError keeps what LookPath found wrong ("executable file not found in
// $PATH", "permission denied"), without the name it repeats.
func unwrapExecError(err error) error {
	var e *exec.Error
	if errors.As(err, &e) {
		return e.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// send runs the command for one batch, with retries.
func (s *Exec) send(ctx context.Context, batch []item) error {
	var stdin bytes.Buffer
	for _, it := range batch {
		stdin.Write(it.data)
	}
	attempt := 0
	err := withRetries(ctx, s.opts.Retries, s.opts.Backoff, s.fenced(func(ctx context.Context) error {
		attempt++
		return s.run(ctx, batch, stdin.Bytes(), attempt)
	}), nil)
	if err != nil && ctx.Err() == nil && !errors.Is(err, listener.ErrFenced) {
		s.failed(len(batch), err)
	}
	return err
}

// failed reports a batch whose last run failed, at most once per NoticeEvery.
func (s *Exec) failed(n int, err error) {
	s.notice.Lock()
	defer s.notice.Unlock()
	s.notice.failed += n
	if !s.notice.Allow(time.Now()) {
		return
	}
	what := "event"
	if n > 1 {
		what = diag.Events(uint64(n))
	}
	s.opts.Warn("exec sink %q: %s failed%s: %v (%s failed so far)", s.opts.Name, what, afterRetries(s.opts.Retries), err, diag.Count(s.notice.failed))
}

// run runs the command once. Its stdout and stderr lines go to Warn with the sink's name.
func (s *Exec) run(ctx context.Context, batch []item, stdin []byte, attempt int) error {
	if s.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, s.path, s.opts.Argv[1:]...)
	cmd.Args[0] = s.opts.Argv[0]
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), s.env(batch, attempt)...)
	// A child that leaves a grandchild holding its output open must not hold up the sink.
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	// What a child prints is escaped as object names are: it may echo an object's
	// fields, and control characters from them must not reach the terminal.
	out := &lineWriter{emit: func(line string) {
		s.opts.Warn("[%s] %s", s.opts.Name, escape.Append(nil, line))
	}}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Start()
	if err == nil {
		s.track(cmd.Process, true)
		err = cmd.Wait()
		s.track(cmd.Process, false)
	}
	out.flush()
	switch {
	case err == nil:
		return nil
	case ctx.Err() == context.DeadlineExceeded:
		return fmt.Errorf("timed out after %s", s.opts.Timeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%s", exit.ProcessState) // "exit status 3", "signal: killed"
	}
	return unwrapExecError(err)
}

// track notes a run's process as running, or as ended.
func (s *Exec) track(p *os.Process, running bool) {
	s.running.Lock()
	defer s.running.Unlock()
	if running {
		s.running.procs[p] = true
	} else {
		delete(s.running.procs, p)
	}
}

// Abort ends the runs in flight, with their process groups, and gives up on what the
// sink holds (counted as dropped). The runs are killed here, not only through their
// contexts, so that none outlives a kubeevents that exits right after.
func (s *Exec) Abort() {
	s.pool.Abort()
	s.running.Lock()
	defer s.running.Unlock()
	for p := range s.running.procs {
		_ = killGroup(p)
	}
}

// afterRetries is " after 1 retry", " after 3 retries", or "" without retries.
func afterRetries(n int) string {
	if n <= 0 {
		return ""
	}
	return " after " + diag.Noun(n, "retry", "retries")
}

// env is what the child gets on top of kubeevents' own environment.
func (s *Exec) env(batch []item, attempt int) []string {
	env := []string{
		"KUBEEVENTS_SINK=" + s.opts.Name,
		"KUBEEVENTS_EVENTS=" + strconv.Itoa(len(batch)),
		"KUBEEVENTS_ATTEMPT=" + strconv.Itoa(attempt),
	}
	if len(batch) == 1 {
		ev := batch[0].ev
		env = append(env,
			"KUBEEVENTS_TYPE="+string(ev.Type),
			"KUBEEVENTS_KIND="+ev.Kind,
			"KUBEEVENTS_SEQ="+strconv.FormatUint(ev.Seq, 10),
		)
		if m := ev.Meta(); m != nil {
			env = append(env,
				"KUBEEVENTS_NAMESPACE="+m.GetNamespace(),
				"KUBEEVENTS_NAME="+m.GetName(),
				"KUBEEVENTS_UID="+string(m.GetUID()),
			)
		}
	}
	return env
}

// lineWriter passes what a child writes on, one line at a time.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	emit func(line string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(string(bytes.TrimRight(w.buf[:i], "\r")))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a child that writes no newline: pass it on in pieces
		w.emit(string(w.buf))
		w.buf = nil
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(string(w.buf))
		w.buf = nil
	}
}

var _ io.Writer = (*lineWriter)(nil)
