package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A variant is one more `kubeevents -o json` client, run beside the all-on one on the
// same events with one speed piece switched off by its environment variable
// (internal/switches), or a feature by its flag, from a copy of the binary of its own:
// its CPU per event and peak RSS against the all-on client's are the piece's gain (or
// the feature's cost), measured A/B in one run on every mode (bench/README.md, "The
// ledger").
type variant struct {
	name string
	envs []string // variables set to off
	args []string // flags that turn a feature off (or on, with on)
	// feature names the feature's figures, with/without: FEATURE_cpu_ratio, ... ("" for
	// a speed piece).
	feature string
	// on says args turn the feature on: the variant is the client with it, the all-on
	// client the one without (a feature computed only when asked for).
	on bool
}

// pieceVariants are the pieces -variants all runs, one client each, and "all" with every
// one of them off at once. The last three are internal/informer's recovery pieces
// (re-list in place, the ended-early BOOKMARK, the readiness probes): a churn without
// faults does not exercise them, so their figures are the cost of having them on, and a
// binary that does not know their variables ignores them. NAME=VAR on the command line
// adds any other switch.
var pieceVariants = []variant{
	{name: "fastpaths", envs: []string{"KUBEEVENTS_FAST_PATHS"}},
	{name: "decoders", envs: []string{"KUBEEVENTS_WIRE_DECODERS"}},
	{name: "oneproc", envs: []string{"KUBEEVENTS_ONE_PROCESSOR"}},
	{name: "pages", envs: []string{"KUBEEVENTS_RELEASE_STARTUP_PAGES"}},
	{name: "relist", envs: []string{"KUBEEVENTS_RELIST_IN_PLACE"}},
	{name: "bookmark", envs: []string{"KUBEEVENTS_ENDED_EARLY_BOOKMARK"}},
	{name: "probe", envs: []string{"KUBEEVENTS_READINESS_PROBE"}},
}

// featureVariants are features measured with and without, each by its off flag, by name
// (not in "all", which is the speed pieces): attribution (the "by" of every event, which
// reads managedFields; --no-by); and health, by its on flag (each object's health, which
// a run computes only when something reads it; --health).
var featureVariants = []variant{
	{name: "noby", args: []string{"--no-by"}, feature: "by"},
	{name: "health", args: []string{"--health"}, feature: "health", on: true},
	// A store sink beside -o json (issue 44: CPU per event at most 1.3 times without),
	// its file in the temporary directory, one per run of the harness.
	{name: "store", args: []string{"--sink", "store(max-size=1GiB)=" + filepath.Join(os.TempDir(), fmt.Sprintf("kubeevents-bench-store-%d.db", os.Getpid()))},
		feature: "store", on: true},
}

// parseVariants reads -variants: names of pieceVariants, "all" (every one of them, every
// piece off at once, and the control), "alloff" (every piece off at once), "control" (a
// second all-on client: how far two copies of one binary differ in the same run, the
// noise a piece's ratio must clear) and NAME=VAR[+VAR...] for a switch the harness does
// not know.
func parseVariants(arg string) ([]variant, error) {
	if arg == "" {
		return nil, nil
	}
	var out []variant
	add := func(v variant) {
		if !slices.ContainsFunc(out, func(o variant) bool { return o.name == v.name }) {
			out = append(out, v)
		}
	}
	var extra []string // the recovery pieces' variables, also in "alloff"
	wantAll, wantControl := false, false
	for _, item := range strings.Split(arg, ",") {
		item = strings.TrimSpace(item)
		if name, vars, ok := strings.Cut(item, "="); ok {
			if name == "" || vars == "" {
				return nil, fmt.Errorf("-variants %q: want NAME=VAR[+VAR...]", item)
			}
			envs := strings.Split(vars, "+")
			add(variant{name: name, envs: envs})
			extra = append(extra, envs...)
			continue
		}
		switch item {
		case "all":
			for _, v := range pieceVariants {
				add(v)
			}
			wantAll, wantControl = true, true
		case "alloff":
			wantAll = true
		case "control":
			wantControl = true
		default:
			known := append(slices.Clone(pieceVariants), featureVariants...)
			i := slices.IndexFunc(known, func(v variant) bool { return v.name == item })
			if i < 0 {
				return nil, fmt.Errorf("-variants %q: use all, alloff, NAME=VAR, or one of %s", item, variantNames())
			}
			add(known[i])
		}
	}
	if wantAll {
		var envs []string
		for _, v := range pieceVariants {
			envs = append(envs, v.envs...)
		}
		add(variant{name: "alloff", envs: append(envs, extra...)})
	}
	if wantControl {
		add(variant{name: "control"})
	}
	return out, nil
}

func variantNames() string {
	var names []string
	for _, v := range append(slices.Clone(pieceVariants), featureVariants...) {
		names = append(names, v.name)
	}
	return strings.Join(names, ", ")
}

func (v variant) client() string { return "kubeevents_off_" + v.name }

func (v variant) env() []string {
	var env []string
	for _, e := range v.envs {
		env = append(env, e+"=off")
	}
	return env
}

// variantFigures are, per variant, its CPU per event, peak RSS and RSS once watching
// (after the initial list) over the all-on client's: > 1 is what the piece saves. A
// feature's are also given the other way round, with over without, as its cost:
// FEATURE_cpu_ratio, FEATURE_peak_rss_ratio, FEATURE_watch_rss_ratio.
func variantFigures(p *phaseResult, variants []variant, f map[string]float64) {
	ke := p.Clients["kubeevents_json"]
	for _, v := range variants {
		c := p.Clients[v.client()]
		if c == nil {
			continue
		}
		f["off_cpu_ratio_"+v.name] = ratio(c.CPUPerEventUS, ke.CPUPerEventUS)
		f["off_peak_rss_ratio_"+v.name] = ratio(c.RSSMB, ke.RSSMB)
		f["off_watch_rss_ratio_"+v.name] = ratio(c.RSSWatchMB, ke.RSSWatchMB)
		with, without := ke, c
		if v.on {
			with, without = c, ke
		}
		if v.feature != "" {
			f[v.feature+"_cpu_ratio"] = ratio(with.CPUPerEventUS, without.CPUPerEventUS)
			f[v.feature+"_peak_rss_ratio"] = ratio(with.RSSMB, without.RSSMB)
			f[v.feature+"_watch_rss_ratio"] = ratio(with.RSSWatchMB, without.RSSWatchMB)
		}
	}
}

// featureTargets are the targets of the features measured: with over without, per mode.
// Attribution costs at most 10% of CPU per event and of memory; health at most 5% of CPU
// per event (its memory is reported, not a target); a store sink at most 30% of CPU per
// event (issue 44; its memory is reported).
func featureTargets(variants []variant, mode string, med map[string]float64) []target {
	var ts []target
	for _, v := range variants {
		if v.feature == "" {
			continue
		}
		figures, limit := []string{"_cpu_ratio", "_peak_rss_ratio", "_watch_rss_ratio"}, 1.1
		switch v.feature {
		case "health":
			figures, limit = []string{"_cpu_ratio"}, 1.05
		case "store":
			figures, limit = []string{"_cpu_ratio"}, 1.3
		}
		for _, figure := range figures {
			if value, ok := med[v.feature+figure]; ok {
				ts = append(ts, newTarget(v.feature+figure+"_"+mode, value, limit))
			}
		}
	}
	return ts
}

// The heavy jq sink (-heavy-jq): a file sink alone, and the same file
// sink beside a jq sink whose expression costs about 1 ms an event, in the same run; the
// second also with one processor turned off. What is compared is the file sink's p99 lag
// and the time its last event was printed.
const (
	heavyFileAlone = "kubeevents_file"
	heavyFileJQ    = "kubeevents_file_jq"
	heavyFileJQMP  = "kubeevents_file_jq_procs"
)

// defaultHeavyJQ is a loop of 1,500 additions before printing the name: about 1 ms of
// gojq an event on this project's VM (and the whole object built for jq, since reduce
// reads the whole envelope).
const defaultHeavyJQ = `(reduce range(0; 1500) as $i (0; . + $i)) as $x | .object.metadata.name`

func heavyFigures(p *phaseResult, f map[string]float64) {
	alone := p.Clients[heavyFileAlone]
	if alone == nil {
		return
	}
	fileOf := func(c *clientResult) *outputResult {
		if o := c.Outputs["file"]; o != nil {
			return o
		}
		return &c.outputResult
	}
	a := fileOf(alone)
	f["heavy_file_alone_p99_ms"] = a.P99LagMS
	f["heavy_file_alone_last_s"] = a.LastEventS
	for name, key := range map[string]string{heavyFileJQ: "heavy_jq", heavyFileJQMP: "heavy_jq_procs"} {
		c := p.Clients[name]
		if c == nil {
			continue
		}
		o := fileOf(c)
		f[key+"_file_p99_ms"] = o.P99LagMS
		f[key+"_p99_ratio"] = ratio(o.P99LagMS, a.P99LagMS)
		f[key+"_last_ratio"] = ratio(o.LastEventS, a.LastEventS)
		f[key+"_cpu_ratio"] = ratio(c.CPUS, alone.CPUS)
	}
}

// loadSampler samples the 1-minute load average (/proc/loadavg) every 2 s while a phase
// runs: every figure is reported with the load it was measured under.
type loadSampler struct {
	mu      sync.Mutex
	samples []float64
	stop    chan struct{}
	done    chan struct{}
}

func startLoadSampler() *loadSampler {
	l := &loadSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			l.sample()
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
		}
	}()
	return l
}

func (l *loadSampler) sample() {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return
	}
	if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
		l.mu.Lock()
		l.samples = append(l.samples, v)
		l.mu.Unlock()
	}
}

// loadFigures is the 1-minute load average's min, median and max over the phase.
type loadFigures struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

func (l *loadSampler) finish() loadFigures {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.samples) == 0 {
		return loadFigures{}
	}
	s := slices.Clone(l.samples)
	sort.Float64s(s)
	return loadFigures{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
}

// heavyClientSpec is the command line of the -heavy-jq clients.
func (o *e2eOpts) heavyClientSpec(name string, nsArgs []string, ps phaseSpec, dir string) procSpec {
	file, _ := filepath.Abs(filepath.Join(dir, name+".file.jsonl"))
	argv := append(append([]string{o.own[name], "watch", ps.typeArg}, nsArgs...), "--no-screen", "--watch-only",
		"--sink", "file="+file, "--kubeconfig", o.kubeconfig)
	spec := procSpec{name: name, files: []fileOutput{{"file", file, formatEnvelope}}}
	if name != heavyFileAlone {
		jq, _ := filepath.Abs(filepath.Join(dir, name+".jq.txt"))
		argv = append(argv, "--sink", "jq(output="+jq+")="+o.heavyJQ)
	}
	if name == heavyFileJQMP {
		spec.env = []string{"KUBEEVENTS_ONE_PROCESSOR=off"}
	}
	spec.argv = argv
	return spec
}

// printVariants prints each variant's ratios to the all-on client (medians of the runs).
func printVariants(mode string, variants []variant, med map[string]float64) {
	if len(variants) == 0 {
		return
	}
	fmt.Printf("\n%s: each piece switched off, over kubeevents -o json with every piece on (> 1: what the piece saves)\n", mode)
	fmt.Printf("%-12s %9s %9s %10s\n", "off", "CPU/event", "peak RSS", "watch RSS")
	for _, v := range variants {
		fmt.Printf("%-12s %9s %9s %10s\n", v.name, fmtNum(med["off_cpu_ratio_"+v.name]),
			fmtNum(med["off_peak_rss_ratio_"+v.name]), fmtNum(med["off_watch_rss_ratio_"+v.name]))
	}
}
