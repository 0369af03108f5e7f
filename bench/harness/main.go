// Command harness runs kubeevents' benchmarks against a real cluster and reports ratios
// measured in the same run (the machine is shared, so absolute times drift; ratios of
// clients that ran side by side on the same events do not).
//
//	harness e2e [flags]   `make bench`: kubeevents vs kubectl vs the decode floors on churn
//	harness mem [flags]   `make bench-mem`: memory and initial-sync CPU with many cached pods
//	harness replay [flags] `make bench-replay`: kubeevents replay against jq on a recording
//
// hack/bench.sh builds everything and passes the paths; see `harness e2e -h`.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// tools are the programs the harness runs.
type tools struct {
	kubeconfig string
	kubeevents string
	kubectl    string
	bindir     string // floor, churn, plaininformer
	outdir     string // raw outputs of this run
}

func (t *tools) flags(fs *flag.FlagSet) {
	fs.StringVar(&t.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (hack/cluster.sh kubeconfig)")
	fs.StringVar(&t.kubeevents, "kubeevents", "bin/kubeevents", "kubeevents binary")
	fs.StringVar(&t.kubectl, "kubectl", "", "kubectl binary (hack/cluster.sh bin)/kubectl")
	fs.StringVar(&t.bindir, "bindir", "bin/bench", "directory holding floor, churn and plaininformer")
	fs.StringVar(&t.outdir, "outdir", "", "directory for the raw outputs (default: a new directory under bench/out)")
}

func (t *tools) check() error {
	if t.kubeconfig == "" || t.kubectl == "" {
		return fmt.Errorf("-kubeconfig and -kubectl are required (hack/bench.sh passes them)")
	}
	for _, p := range []string{t.kubeevents, t.kubectl, t.bin("floor"), t.bin("churn"), t.bin("plaininformer")} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s: %w (hack/bench.sh builds it)", p, err)
		}
	}
	if t.outdir == "" {
		t.outdir = filepath.Join("bench", "out", time.Now().Format("20060102-150405"))
	}
	return os.MkdirAll(t.outdir, 0o755)
}

func (t *tools) bin(name string) string { return filepath.Join(t.bindir, name) }

// ownCopy copies the program at src to one that no other client runs, and returns its
// path. Two processes running the same file share its pages in the CPU's caches: a
// kubeevents run beside another kubeevents from the same file used 4–9% less CPU than
// beside one from an identical copy. So every client runs a file of its own, and none is
// helped by a sibling (kubeevents -o json by the three-sink run, one floor by the other).
func (t *tools) ownCopy(src, name string) (string, error) {
	dir := filepath.Join(t.bindir, "own")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, name)
	_ = os.Remove(dst) // it may be running still, from a run that was interrupted
	if err := os.WriteFile(dst, raw, 0o755); err != nil {
		return "", err
	}
	return dst, nil
}

// churn runs the generator to completion.
func (t *tools) churn(args ...string) (*os.ProcessState, error) {
	cmd := exec.Command(t.bin("churn"), append(args[:1:1], append([]string{"-kubeconfig", t.kubeconfig}, args[1:]...)...)...)
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	err := cmd.Run()
	if err != nil {
		return cmd.ProcessState, fmt.Errorf("churn %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState, nil
}

// cleanEnv is the environment for every client: no KUBECONFIG (the flag says which),
// no kubeevents config file, no colour or Go runtime settings that would favour one.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "KUBECONFIG", "XDG_CONFIG_HOME", "NO_COLOR", "GOGC", "GOMEMLIMIT", "GODEBUG", "GOMAXPROCS":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(os.TempDir(), "kubeevents-bench-noconfig"))
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// resultLine prints `RESULT key=value ...` in a stable order.
func resultLine(kv map[string]any) string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		switch v := kv[k].(type) {
		case float64:
			parts = append(parts, fmt.Sprintf("%s=%s", k, fmtNum(v)))
		default:
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return "RESULT " + strings.Join(parts, " ")
}

func fmtNum(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100 || v <= -100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10 || v <= -10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// round keeps results.json readable.
func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	if v < 0 {
		return -float64(int64(-v*p+0.5)) / p
	}
	return float64(int64(v*p+0.5)) / p
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round(a/b, 3)
}

// target is one goal of the benchmark, reported (never tuned for).
type target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Met   bool    `json:"met"`
}

func newTarget(name string, value, limit float64) target {
	return target{Name: name, Value: value, Limit: limit, Met: value <= limit}
}

// showTargets is -targets.
var showTargets = true

func printTargets(ts []target) {
	if !showTargets {
		return
	}
	fmt.Println()
	fmt.Println("targets (report only):")
	for _, t := range ts {
		verdict := "met"
		if !t.Met {
			verdict = "MISSED"
		}
		fmt.Printf("  %-44s %10s  <= %-6s  %s\n", t.Name, fmtNum(t.Value), fmtNum(t.Limit), verdict)
	}
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "e2e" && os.Args[1] != "mem" && os.Args[1] != "replay") {
		fmt.Fprintln(os.Stderr, "usage: harness e2e|mem|replay [flags]  (hack/bench.sh runs it; -h for the flags)")
		os.Exit(2)
	}
	// Ctrl-C or SIGTERM: stop the clients rather than leave them running.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		logf("%v: stopping the clients", sig)
		killAll()
		os.Exit(130)
	}()
	var err error
	switch os.Args[1] {
	case "e2e":
		err = runE2E(os.Args[2:])
	case "mem":
		err = runMem(os.Args[2:])
	case "replay":
		err = runReplay(os.Args[2:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
