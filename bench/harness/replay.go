package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// replayOpts are the flags of `harness replay` (make bench-replay): a recording made by
// kubeevents itself on a status churn, then kubeevents replay against jq on it.
type replayOpts struct {
	tools
	n, m, workers, runs int
	recording           string
	out                 string
	jq                  string
}

// replayClient is one command measured on the recording.
type replayClient struct {
	Name    string    `json:"name"`
	Command []string  `json:"command"`
	Wall    []float64 `json:"wall_seconds"`
	CPU     []float64 `json:"cpu_seconds"`
	output  string    // where its stdout goes
}

func runReplay(args []string) error {
	o := &replayOpts{}
	fs := flag.NewFlagSet("replay", flag.ExitOnError)
	o.tools.flags(fs)
	fs.IntVar(&o.n, "n", 1000, "pods of the status churn")
	fs.IntVar(&o.m, "m", 200, "status reports per pod (the recording holds about n*(m+2) events)")
	fs.IntVar(&o.workers, "workers", 8, "churn workers")
	fs.IntVar(&o.runs, "runs", 3, "runs of each client, side by side in turn; the figures are their medians")
	fs.StringVar(&o.recording, "recording", "", "replay this recording rather than make one (no cluster needed)")
	fs.StringVar(&o.out, "out", "bench/results-replay.json", "results file")
	fs.StringVar(&o.jq, "jq", "jq", "jq binary")
	fs.BoolVar(&showTargets, "targets", true, "print the targets")
	_ = fs.Parse(args)
	if o.outdir == "" {
		o.outdir = filepath.Join("bench", "out", time.Now().Format("20060102-150405")+"-replay")
	}
	if err := os.MkdirAll(o.outdir, 0o755); err != nil {
		return err
	}
	if o.recording == "" {
		if err := o.tools.check(); err != nil {
			return err
		}
		var err error
		if o.recording, err = o.record(); err != nil {
			return err
		}
	}
	return o.measure()
}

// record makes the recording: kubeevents watches n pods with a file sink while churn
// patches their status m times each, then deletes them.
func (o *replayOpts) record() (string, error) {
	ns := "kubeevents-bench-replay-" + randomSuffix()
	if _, err := o.churn("ns", "-n", ns); err != nil {
		return "", err
	}
	if _, err := o.churn("create", "-n", ns, "-count", fmt.Sprint(o.n), "-workers", fmt.Sprint(o.workers)); err != nil {
		return "", err
	}
	path := filepath.Join(o.outdir, "recording.jsonl")
	watch := exec.Command(o.kubeevents, "watch", "pods", "-n", ns, "--kubeconfig", o.kubeconfig, "--no-screen", "--sink", "file="+path)
	watch.Env = cleanEnv()
	stderr, err := os.Create(filepath.Join(o.outdir, "recorder.stderr"))
	if err != nil {
		return "", err
	}
	defer stderr.Close()
	watch.Stderr = stderr
	if err := watch.Start(); err != nil {
		return "", err
	}
	defer func() { _ = watch.Process.Kill() }()
	if err := waitLines(path, o.n, time.Minute); err != nil {
		return "", fmt.Errorf("the recorder's initial list: %w", err)
	}
	logf("recording %d pods x %d status reports in %s", o.n, o.m, ns)
	if _, err := o.churn("run", "-n", ns, "-count", fmt.Sprint(o.n), "-patches", fmt.Sprint(o.m), "-mode", "status",
		"-workers", fmt.Sprint(o.workers), "-record", filepath.Join(o.outdir, "churn.rec")); err != nil {
		return "", err
	}
	if err := waitLines(path, o.n*(o.m+2), 5*time.Minute); err != nil {
		return "", fmt.Errorf("the recording: %w", err)
	}
	_ = watch.Process.Signal(os.Interrupt)
	if err := watch.Wait(); err != nil {
		return "", fmt.Errorf("the recorder: %v", err)
	}
	return path, nil
}

// waitLines waits until the file holds at least n lines, polling it.
func waitLines(path string, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		got, _ := countLines(path)
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s has %d lines after %s, want %d", path, got, limit, n)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// countLines counts the lines of path reading it in pieces: the harness must stay small,
// since a child's peak RSS (rusage's maxrss) includes the harness's own peak (Go starts
// children with vfork, so their memory is the harness's until they exec).
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, buf := 0, make([]byte, 1<<20)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte("\n"))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// measure runs jq and the replays on the recording in turn, runs times, then the
// replay's memory on the recording and on its first tenth.
func (o *replayOpts) measure() error {
	lines, err := countLines(o.recording)
	if err != nil {
		return err
	}
	info, _ := os.Stat(o.recording)
	logf("recording %s: %d events, %.0f MB", o.recording, lines, float64(info.Size())/1e6)
	tenth := filepath.Join(o.outdir, "recording-tenth.jsonl")
	if err := headLines(o.recording, tenth, lines/10); err != nil {
		return err
	}
	clients := []*replayClient{
		{Name: "jq", Command: []string{o.jq, "-c", ".", o.recording}, output: os.DevNull},
		{Name: "replay_json", Command: []string{o.kubeevents, "replay", o.recording, "-o", "json"}, output: filepath.Join(o.outdir, "replay.json")},
		{Name: "replay_pretty", Command: []string{o.kubeevents, "replay", o.recording, "-o", "pretty"}, output: filepath.Join(o.outdir, "replay.txt")},
	}
	// Once each first, unmeasured: the recording in the page cache for all alike.
	for _, c := range clients {
		if _, _, _, err := run(c.Command, c.output); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	for r := range o.runs {
		for i := range clients {
			c := clients[(i+r)%len(clients)] // each in every place of the order in turn
			wall, cpu, _, err := run(c.Command, c.output)
			if err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			c.Wall, c.CPU = append(c.Wall, wall), append(c.CPU, cpu)
			logf("run %d: %-14s %6.2f s, %6.2f s of CPU", r+1, c.Name, wall, cpu)
		}
	}
	if got, _ := countLines(clients[1].output); got != lines {
		return fmt.Errorf("replay -o json wrote %d events of %d", got, lines)
	}
	var rss, rssTenth float64
	for _, c := range []struct {
		path string
		rss  *float64
	}{{o.recording, &rss}, {tenth, &rssTenth}} {
		_, _, maxRSS, err := run([]string{o.kubeevents, "replay", c.path, "-o", "pretty"}, os.DevNull)
		if err != nil {
			return err
		}
		*c.rss = maxRSS
	}
	jq, js, pretty := clients[0], clients[1], clients[2]
	res := map[string]any{
		"events": lines, "recording_mb": round(float64(info.Size())/1e6, 1), "runs": o.runs,
		"jq_seconds": median(jq.Wall), "replay_json_seconds": median(js.Wall), "replay_pretty_seconds": median(pretty.Wall),
		"jq_cpu_seconds": median(jq.CPU), "replay_json_cpu_seconds": median(js.CPU), "replay_pretty_cpu_seconds": median(pretty.CPU),
		"json_time_vs_jq": ratio(median(js.Wall), median(jq.Wall)), "pretty_time_vs_jq": ratio(median(pretty.Wall), median(jq.Wall)),
		"json_cpu_vs_jq": ratio(median(js.CPU), median(jq.CPU)), "pretty_cpu_vs_jq": ratio(median(pretty.CPU), median(jq.CPU)),
		"rss_mib": round(rss, 1), "rss_tenth_mib": round(rssTenth, 1), "rss_10x_ratio": ratio(rss, rssTenth),
	}
	if err := writeJSON(o.out, map[string]any{"results": res, "clients": clients}); err != nil {
		return err
	}
	fmt.Println(resultLine(res))
	printTargets([]target{
		newTarget("replay -o json time / jq -c . time", res["json_time_vs_jq"].(float64), 1),
		newTarget("replay -o pretty (diffs) time / jq -c . time", res["pretty_time_vs_jq"].(float64), 2),
		newTarget("replay memory, recording 10x larger / smaller", res["rss_10x_ratio"].(float64), 1.2),
	})
	return nil
}

// run runs a command to its end with stdout to output, and says how long it took, the
// CPU it used and its peak resident memory (MiB).
func run(command []string, output string) (wall, cpu, maxRSS float64, err error) {
	out, err := os.Create(output)
	if err != nil {
		return 0, 0, 0, err
	}
	defer out.Close()
	// Each program read from disk, as make bench's clients are (evictFromPageCache):
	// otherwise its peak RSS counts how its file sits in the page cache.
	if path, err := exec.LookPath(command[0]); err == nil {
		if err := evictFromPageCache(path); err != nil {
			return 0, 0, 0, err
		}
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = cleanEnv()
	cmd.Stdout = out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	wall = time.Since(start).Seconds()
	state := cmd.ProcessState
	cpu = (state.UserTime() + state.SystemTime()).Seconds()
	if ru, ok := state.SysUsage().(*syscall.Rusage); ok {
		maxRSS = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	return round(wall, 3), round(cpu, 3), maxRSS, nil
}

// headLines copies the first n lines of src to dst.
func headLines(src, dst string, n int) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	r := bufio.NewReaderSize(in, 1<<20)
	for range n {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		_, _ = w.Write(line)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return out.Close()
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
