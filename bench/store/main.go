// Command store measures the history store (make bench-store; bench/README.md "History
// store"): no cluster needed.
//
//  1. A recording of a status churn, made by kubeevents' own renderer from realistic pods
//     (gen.go), is imported with `kubeevents store import`: events/s, CPU per event, the
//     store's size against the JSON Lines'.
//  2. A large store (-versions, 10 million by default) is written through the Writer;
//     then one object's history (p50, p99; cold, then warm), and `kubeevents get pods -n NS --at T` over
//     1,000 pods, warm and cold (the file's pages dropped from the page cache).
//  3. The same recording imported into the large store: the writer's peak RSS there
//     against into an empty store.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/store"
)

var start = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// step is the time between versions of the large store: 100 a second, over 28 hours for
// 10 million.
const step = 10 * time.Millisecond

func main() {
	kubeevents := flag.String("kubeevents", "bin/kubeevents", "the binary measured")
	pods := flag.Int("pods", 1000, "pods of the recorded status churn")
	reports := flag.Int("reports", 60, "status reports per pod (the recording holds pods*(reports+2) events)")
	versions := flag.Int("versions", 10_000_000, "versions of the large store (0: skip it)")
	objects := flag.Int("objects", 10_000, "pods of the large store, 1,000 a namespace")
	dir := flag.String("dir", "", "where the files go (default: a directory under bench/out)")
	cpuprofile := flag.String("cpuprofile", "", "write the large store's build profile here")
	reuse := flag.Bool("reuse", false, "measure the large store (and recording) already in -dir rather than write them")
	flag.Parse()
	if *dir == "" {
		*dir = filepath.Join("bench", "out", time.Now().Format("20060102-150405")+"-store")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err)
	}
	b := &bench{bin: *kubeevents, dir: *dir, reuse: *reuse}
	b.importChurn(*pods, *reports)
	if *versions > 0 {
		b.large(*versions, *objects, *cpuprofile)
	}
}

type bench struct {
	bin, dir  string
	reuse     bool
	recording string
	small     run // the import into an empty store
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench-store:", err)
	os.Exit(1)
}

// run is a command's wall time, CPU time and peak RSS.
type run struct {
	wall, cpu time.Duration
	rss       int64 // bytes
	stderr    string
}

func (b *bench) exec(args ...string) run {
	cmd := exec.Command(b.bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t := time.Now()
	if err := cmd.Run(); err != nil {
		fail(fmt.Errorf("%s %s: %v: %s", b.bin, strings.Join(args, " "), err, stderr.String()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return run{wall: time.Since(t), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), rss: ru.Maxrss << 10, stderr: stderr.String()}
}

func size(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil {
			n += info.Size()
		}
	}
	return n
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// importChurn makes the recording and imports it into an empty store.
func (b *bench) importChurn(pods, reports int) {
	b.recording = filepath.Join(b.dir, "churn.jsonl")
	events := pods * (reports + 2)
	if !b.reuse {
		f, err := os.Create(b.recording)
		if err != nil {
			fail(err)
		}
		if events, err = generate(f, genOpts{pods: pods, namespaces: 10, reports: reports, rate: 350, start: start}); err == nil {
			err = f.Close()
		}
		if err != nil {
			fail(err)
		}
	}
	db := filepath.Join(b.dir, "churn.db")
	_ = os.Remove(db)
	b.small = b.exec("store", "import", b.recording, "--store", db)
	jsonl, stored := size(b.recording), size(db, db+"-wal")
	fmt.Printf("Recording: %d events of a status churn (%d pods x %d kubelet reports), %s of JSON Lines, %d bytes an event\n",
		events, pods, reports, mib(jsonl), jsonl/int64(events))
	fmt.Printf("Import:    %.0f events/s (target >= 5,000), %.0f µs of CPU an event, peak RSS %s\n",
		float64(events)/b.small.wall.Seconds(), float64(b.small.cpu.Microseconds())/float64(events), mib(b.small.rss))
	fmt.Printf("Size:      %s, 1/%.1f of the JSON Lines (target <= 1/10, aim 1/20), %d bytes an event\n",
		mib(stored), float64(jsonl)/float64(stored), stored/int64(events))
}

// large writes a store of n versions of objects pods, then measures reads and a
// writer's RSS there.
func (b *bench) large(n, objects int, cpuprofile string) {
	ctx := context.Background()
	db := filepath.Join(b.dir, "large.db")
	if !b.reuse {
		b.build(ctx, db, n, objects, cpuprofile)
	}
	b.measure(ctx, db, n, objects)
}

// build writes the large store through the Writer.
func (b *bench) build(ctx context.Context, db string, n, objects int, cpuprofile string) {
	w, err := store.Create(ctx, db, store.Options{})
	if err != nil {
		fail(err)
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			fail(err)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	gen := newLineMaker()
	t := time.Now()
	var at time.Time
	for i := range n {
		at = start.Add(time.Duration(i) * step)
		if err := w.Write(ctx, gen.line(i%objects, i/objects, at)); err != nil {
			fail(err)
		}
		if i > 0 && i%1_000_000 == 0 {
			fmt.Fprintf(os.Stderr, "bench-store: %d versions written, %.0f/s\n", i, float64(i)/time.Since(t).Seconds())
		}
	}
	if err := w.Close(ctx); err != nil {
		fail(err)
	}
	pprof.StopCPUProfile()
	built := time.Since(t)
	fmt.Printf("Large:     %d versions of %d pods written in %s (%.0f/s in-process), %s, %d bytes a version\n",
		n, objects, built.Round(time.Second), float64(n)/built.Seconds(), mib(size(db, db+"-wal")), size(db)/int64(n))
}

// measure reads the large store: histories, get --at, and an import into it.
func (b *bench) measure(ctx context.Context, db string, n, objects int) {
	r, err := store.Open(ctx, db)
	if err != nil {
		fail(err)
	}
	defer r.Close()
	// The same 200 pods at random, first with the file's pages dropped from the page
	// cache (cold), then again (warm).
	pods := make([]int, 200)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range pods {
		pods[i] = rng.IntN(objects)
	}
	dropCache(db)
	for _, pass := range []string{"cold", "warm"} {
		var lat, cpus []time.Duration
		for _, o := range pods {
			cpu0 := cpuTime()
			q := store.Query{Resources: r.Resources(), Namespaces: []string{namespace(o)}, Names: []string{podName(o)}}
			t := time.Now()
			count := 0
			for _, err := range r.Versions(ctx, q, time.Time{}, time.Time{}) {
				if err != nil {
					fail(err)
				}
				count++
			}
			lat = append(lat, time.Since(t))
			cpus = append(cpus, cpuTime()-cpu0)
			if count < n/objects { // more once the recording was imported into it (-reuse)
				fail(fmt.Errorf("history of %s: %d versions, want %d", podName(o), count, n/objects))
			}
		}
		slices.Sort(lat)
		slices.Sort(cpus)
		fmt.Printf("History:   one pod's %d versions, decoded, %s: p50 %s, p99 %s (target p99 <= 100ms); CPU p50 %s, p99 %s\n",
			n/objects, pass, lat[len(lat)/2].Round(time.Millisecond/10), lat[len(lat)*99/100].Round(time.Millisecond/10),
			cpus[len(cpus)/2].Round(time.Millisecond/10), cpus[len(cpus)*99/100].Round(time.Millisecond/10))
	}

	mid := start.Add(time.Duration(n/2) * step).Format(time.RFC3339Nano)
	get := []string{"get", "pods", "-n", namespace(0), "--at", mid, "--store", db}
	dropCache(db)
	cold := b.exec(get...)
	var warm, warmCPU []time.Duration
	for range 5 {
		run := b.exec(get...)
		warm, warmCPU = append(warm, run.wall), append(warmCPU, run.cpu)
	}
	slices.Sort(warm)
	slices.Sort(warmCPU)
	fmt.Printf("Get:       kubeevents get pods -n %s --at T over %d pods: warm %s (median of 5, target <= 1s; CPU %s), cold %s (CPU %s)\n",
		namespace(0), min(objects, 1000), warm[2].Round(time.Millisecond), warmCPU[2].Round(time.Millisecond), cold.wall.Round(time.Millisecond), cold.cpu.Round(time.Millisecond))

	into := b.exec("store", "import", b.recording, "--store", db)
	fmt.Printf("Writer:    store import's peak RSS into the large store %s, into an empty one %s (target: <= 256 MiB more than a watch without a store)\n",
		mib(into.rss), mib(b.small.rss))
}

// cpuTime is this process's CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dropCache drops the store's pages from the page cache: the next read is cold.
func dropCache(path string) {
	for _, p := range []string{path, path + "-wal"} {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
	}
}

func namespace(o int) string { return fmt.Sprintf("team-%02d", o/1000) }
func podName(o int) string   { return fmt.Sprintf("checkout-api-7d9f8b6c5-%05d", o) }

// lineMaker makes the large store's events cheaply: a realistic pod's JSON, marshalled
// once, whose status changes as a kubelet's reports do.
type lineMaker struct {
	head, tail string // the object around metadata.name ... status
}

func newLineMaker() *lineMaker {
	raw, err := json.Marshal(eventtest.RealisticPod())
	if err != nil {
		fail(err)
	}
	s := string(raw)
	return &lineMaker{head: s[:strings.Index(s, `"status":`)], tail: statusTemplate}
}

// statusTemplate is a kubelet's report, as bench/churn's status mode sends them.
const statusTemplate = `"status":{"phase":"Running","conditions":[` +
	`{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-23T10:00:00Z"},` +
	`{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-23T10:00:00Z"},` +
	`{"type":"Ready","status":"READY","lastProbeTime":"TS","lastTransitionTime":"TS"},` +
	`{"type":"ContainersReady","status":"READY","lastProbeTime":null,"lastTransitionTime":"TS"},` +
	`{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-23T10:00:00Z"}],` +
	`"hostIP":"10.240.0.1","hostIPs":[{"ip":"10.240.0.1"}],"podIP":"10.244.0.7","podIPs":[{"ip":"10.244.0.7"}],"startTime":"2026-11-23T10:00:00Z",` +
	`"containerStatuses":[{"name":"app","state":{"running":{"startedAt":"TS"}},"lastState":{},"ready":READY,"restartCount":RESTARTS,` +
	`"image":"docker.io/library/nginx:1.27","imageID":"docker.io/library/nginx@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",` +
	`"containerID":"containerd://18eaa44112b59c92","started":true}],"qosClass":"Burstable"}}`

// line is version v of pod o at t: every other report flips readiness, with fresh
// timestamps, and adds a restart every sixth.
func (m *lineMaker) line(o, v int, t time.Time) []byte {
	name, uid := podName(o), fmt.Sprintf("00000000-0000-4000-8000-%012d", o)
	head := strings.Replace(m.head, "checkout-api-7d9f8b6c5-abc12", name, 1)
	head = strings.Replace(head, `"namespace":"shop"`, `"namespace":"`+namespace(o)+`"`, 1)
	head = strings.Replace(head, "0b6c7f3e-2d4a-4e8b-9c1f-5a7d3e9b2c4f", uid, 1)
	head = strings.Replace(head, `"resourceVersion":"88123412"`, fmt.Sprintf(`"resourceVersion":"%d"`, 1000+v*100_000+o), 1)
	ready := v%2 == 0
	ts := t.Truncate(time.Second).Format(time.RFC3339)
	status := strings.NewReplacer("READY", fmt.Sprint(ready), "RESTARTS", fmt.Sprint(v/6), "TS", ts).Replace(m.tail)
	typ := event.Added
	if v > 0 {
		typ = event.Modified
	}
	return fmt.Appendf(nil, `{"type":%q,"time":%q,"seq":%d,"resource":{"group":"","version":"v1","resource":"pods"},"object":%s%s,"diff":[{"op":"replace","path":"/status/containerStatuses/0/ready","value":%t,"old":%t},{"op":"replace","path":"/status/conditions/1/lastTransitionTime","value":%q}],"by":[{"manager":"kubelet","operation":"Update","subresource":"status","time":%q}]}`,
		typ, t.Format(time.RFC3339Nano), v*100_000+o+1, head, status, ready, !ready, ts, ts)
}
