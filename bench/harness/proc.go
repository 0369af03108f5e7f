package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kubeevents/kubeevents/internal/proctest"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat (100 on Linux).
const clockTicks = 100

// proc is one client process under measurement, run by internal/proctest.
type proc struct {
	name    string
	run     *proctest.Process
	started time.Time
	sources []*source
	ready   string // procSpec.ready
}

// fileOutput is a file a client writes (a kubeevents file or jq sink) that is tailed.
type fileOutput struct {
	name, path, format string
}

type procSpec struct {
	name         string
	argv         []string
	stdoutFormat string // "" sends stdout to /dev/null
	files        []fileOutput
	env          []string // added to the harness's environment for every client
	// tty runs the client on a pseudo-terminal (stdin and stdout) that the harness reads
	// and throws away; ready is then what its stderr says once it watches.
	tty   bool
	ready string
}

// evictFromPageCache drops an executable's pages from the page cache (those no running
// process maps), so that every client starts by reading its program from disk the same
// way. Without it, peak RSS compares page-cache histories rather than programs: on this
// kernel (6.18, ext4 with large folios) a binary the compiler just wrote sits in the page
// cache in large folios, and each fault maps a whole folio, so kubeevents, built seconds
// before the run, had 59 MB of its file resident against 41 MB once read from disk, while
// kubectl, written hours before, had 36 MB (bench/journal.md).
func evictFromPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// Dirty pages are not dropped: write them first.
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise %s: %w", path, err)
	}
	return nil
}

// startProc starts a client with its stdout on a pipe the harness reads (or /dev/null),
// its stderr in a file, and its file outputs tailed. Raw outputs go to outdir.
func startProc(spec procSpec, outdir, sentinel string, env []string) (*proc, error) {
	path, err := exec.LookPath(spec.argv[0])
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	for _, f := range spec.files {
		_ = os.Remove(f.path) // sinks append
	}
	if err := evictFromPageCache(path); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	// stdout reaches the harness straight from the client's pipe, read in chunks as they
	// come (source.readFrom).
	var stdout, pr, stdin *os.File
	switch {
	case spec.tty:
		stdout, err = openTTY()
		stdin = stdout
	case spec.stdoutFormat != "":
		pr, stdout, err = os.Pipe()
	default:
		stdout, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	if err != nil {
		return nil, err
	}
	defer stdout.Close() // the client's once it started
	errf, err := os.Create(filepath.Join(outdir, spec.name+".stderr"))
	if err != nil {
		return nil, err
	}
	ps := proctest.Spec{Path: path, Args: spec.argv[1:], Env: append(slices.Clip(env), spec.env...), Stdout: stdout, Stderr: errf}
	if stdin != nil {
		ps.Stdin = stdin
	}
	run, err := proctest.Start(ps)
	if err != nil {
		errf.Close()
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	go func() {
		<-run.Exited() // proctest copies stderr into errf until then
		errf.Close()
	}()
	p := &proc{name: spec.name, run: run, started: run.Started(), ready: spec.ready}
	running.Lock()
	running.procs = append(running.procs, p)
	running.Unlock()
	if pr != nil {
		s := newSource(spec.name, spec.stdoutFormat, sentinel)
		tee, err := os.Create(filepath.Join(outdir, spec.name+".out"))
		if err != nil {
			return nil, err
		}
		s.readFrom(pr, tee)
		p.sources = append(p.sources, s)
	}
	for _, f := range spec.files {
		s := newSource(spec.name+"/"+f.name, f.format, sentinel)
		s.tail(f.path, nil)
		p.sources = append(p.sources, s)
	}
	return p, nil
}

// cpu is the process's CPU time so far (user + system), in seconds; for a process that
// has ended, its total.
func (p *proc) cpu() (float64, error) {
	if st := p.run.State(); st != nil {
		return (st.UserTime() + st.SystemTime()).Seconds(), nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.run.Pid()))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p.name, err)
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s: malformed /proc/PID/stat", p.name)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("%s: short /proc/PID/stat", p.name)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64) // field 14
	stime, err2 := strconv.ParseFloat(f[12], 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%s: malformed utime/stime", p.name)
	}
	return (utime + stime) / clockTicks, nil
}

// rssSplit is RssAnon and RssFile in MiB (0, 0 for a process that has ended): what the
// program allocated, and the pages of files it maps (mostly its executable) that are
// resident.
func (p *proc) rssSplit() (anon, file float64, err error) {
	if !p.alive() {
		return 0, 0, nil
	}
	m, err := p.statusMiB()
	return m["RssAnon"], m["RssFile"], err
}

// memory is VmRSS and VmHWM (peak) in MiB; for a process that has ended, 0 and its
// peak (ru_maxrss).
func (p *proc) memory() (rss, hwm float64, err error) {
	if st := p.run.State(); st != nil {
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			return 0, float64(ru.Maxrss) / 1024, nil
		}
		return 0, 0, nil
	}
	m, err := p.statusMiB()
	return m["VmRSS"], m["VmHWM"], err
}

// statusMiB is the process's /proc/PID/status figures in MiB.
func (p *proc) statusMiB() (map[string]float64, error) {
	kib, err := p.run.Status()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	m := make(map[string]float64, len(kib))
	for k, v := range kib {
		m[k] = float64(v) / 1024
	}
	return m, nil
}

func (p *proc) alive() bool { return p.run.Alive() }

// exitErr is how the process ended ("exit status 1", "signal: killed"), for messages.
func (p *proc) exitErr() error { return p.run.Err() }

// stop interrupts the process (as Ctrl-C), kills it after timeout, then lets its tailed
// outputs reach their end and waits until every output is decoded.
func (p *proc) stop(timeout time.Duration) {
	p.run.Stop(timeout)
	for _, s := range p.sources {
		s.stopTail()
	}
	for _, s := range p.sources {
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			s.setErr(fmt.Errorf("output not fully read 30s after the process ended"))
		}
	}
}

// stopAll stops every process of procs side by side.
func stopAll(procs []*proc) {
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { p.stop(15 * time.Second) })
	}
	wg.Wait()
}

// stderrTail is the last lines of the process's stderr, for error messages.
func (p *proc) stderrTail() string {
	lines := strings.Split(strings.TrimSpace(p.run.Stderr()), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.Join(lines, "\n")
}

// running are the clients started, for killAll.
var running struct {
	sync.Mutex
	procs []*proc
}

// killAll kills every client still running (the harness is being interrupted).
func killAll() {
	running.Lock()
	defer running.Unlock()
	for _, p := range running.procs {
		p.run.Kill()
	}
}
