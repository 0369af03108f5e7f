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
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat (100 on Linux).
const clockTicks = 100

// proc is one client process under measurement.
type proc struct {
	name    string
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{}
	waitErr error
	stderr  string // path of its stderr file
	sources []*source
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
}

// evictFromPageCache drops an executable's pages from the page cache (those no running
// process maps), so that every client starts by reading its program from disk the same
// way. Without it, peak RSS compares page-cache histories rather than programs: on this
// kernel (6.18, ext4 with large folios) a binary the compiler just wrote sits in the page
// cache in large folios, and each fault maps a whole folio, so kubeevents, built seconds
// before the run, had 59 MB of its file resident against 41 MB once read from disk, while
// kubectl, written hours before, had 36 MB (2026-11-23, bench/README.md).
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
	p := &proc{name: spec.name, exited: make(chan struct{}), stderr: filepath.Join(outdir, spec.name+".stderr")}
	cmd := exec.Command(spec.argv[0], spec.argv[1:]...)
	cmd.Env = append(slices.Clip(env), spec.env...)
	errf, err := os.Create(p.stderr)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = errf
	var pr, pw *os.File
	if spec.stdoutFormat != "" {
		if pr, pw, err = os.Pipe(); err != nil {
			return nil, err
		}
		cmd.Stdout = pw
	} else {
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		cmd.Stdout = devnull
	}
	for _, f := range spec.files {
		_ = os.Remove(f.path) // sinks append
	}
	if err := evictFromPageCache(cmd.Path); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.name, err)
	}
	p.cmd, p.started = cmd, time.Now()
	running.Lock()
	running.procs = append(running.procs, p)
	running.Unlock()
	errf.Close()
	if pw != nil {
		pw.Close()
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
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// cpu is the process's CPU time so far (user + system), in seconds; for a process that
// has ended, its total.
func (p *proc) cpu() (float64, error) {
	if !p.alive() {
		st := p.cmd.ProcessState
		return (st.UserTime() + st.SystemTime()).Seconds(), nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
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
	if !p.alive() {
		if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			return 0, float64(ru.Maxrss) / 1024, nil
		}
		return 0, 0, nil
	}
	m, err := p.statusMiB()
	return m["VmRSS"], m["VmHWM"], err
}

// statusMiB reads the process's /proc/PID/status: every "Key: N kB" line, in MiB.
func (p *proc) statusMiB() (map[string]float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.name, err)
	}
	m := map[string]float64{}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		fields := strings.Fields(v)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		if kb, err := strconv.ParseFloat(fields[0], 64); err == nil {
			m[k] = kb / 1024
		}
	}
	return m, nil
}

func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop interrupts the process (as Ctrl-C), kills it after timeout, then lets its tailed
// outputs reach their end and waits until every output is decoded.
func (p *proc) stop(timeout time.Duration) {
	if p.alive() {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-p.exited:
		case <-time.After(timeout):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
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

// stderrTail is the last lines of the process's stderr, for error messages.
func (p *proc) stderrTail() string {
	b, _ := os.ReadFile(p.stderr)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
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
		if p.alive() {
			_ = p.cmd.Process.Kill()
		}
	}
}
