package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func seqsOf(t *testing.T, lines []string) []uint64 {
	t.Helper()
	var seqs []uint64
	for _, l := range lines {
		var ev envelope
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("bad line %q: %v", l, err)
		}
		seqs = append(seqs, ev.Seq)
	}
	return seqs
}

// Three sinks from one informer (stdout JSON, a file, a jq filter into a file) see the
// same events with the same sequence numbers.
func TestThreeSinksConsistent(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	file, names := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "deleted.txt")
	createPod(t, ns, "p-0", nil)
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "-v", "1",
		"--sink", "file="+file,
		"--sink", "jq(raw,output="+names+")=select(.type==\"DELETED\") | .object.metadata.name")
	s.waitJSON(eventWait, "the initial list", func(ev envelope) bool { return ev.name() == "p-0" })
	for i := 1; i < 4; i++ {
		createPod(t, ns, fmt.Sprintf("p-%d", i), nil)
	}
	labelPod(t, ns, "p-0", "x", "1")
	deletePod(t, ns, "p-1")
	deletePod(t, ns, "p-2")
	s.waitJSON(eventWait, "DELETED p-2", func(ev envelope) bool { return ev.Type == "DELETED" && ev.name() == "p-2" })
	_, code := s.interrupt(10 * time.Second)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, s.Stderr())
	}

	stdoutJSON := s.Seen()
	fileLines := readLines(t, file, true)
	if got, want := fmt.Sprint(seqsOf(t, fileLines)), fmt.Sprint(seqsOf(t, stdoutJSON)); got != want {
		t.Errorf("file sink seqs %s, stdout seqs %s", got, want)
	}
	// A pod deletion is an update setting deletionTimestamp, then the removal.
	if len(fileLines) != 9 {
		t.Errorf("file sink has %d events, want 9 (4 ADDED, 1+2 MODIFIED, 2 DELETED)", len(fileLines))
	}
	if got := strings.Join(readLines(t, names, false), ","); got != "p-1,p-2" {
		t.Errorf("jq sink wrote %q, want p-1,p-2 (raw names of the deleted pods)", got)
	}
	info, err := os.Stat(file)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("file sink mode = %v (%v), want 0600", info.Mode().Perm(), err)
	}
	summary := regexp.MustCompile(`stopped after 9 events — screen 9 delivered; events\.jsonl 9 delivered; jq 2 delivered, 7 filtered`)
	if !summary.MatchString(s.Stderr()) {
		t.Errorf("summary missing or wrong; stderr:\n%s", s.Stderr())
	}
}

// A sink whose reader has stalled (a FIFO nobody reads) neither delays the terminal sink
// nor loses count: its drops are reported as they begin and in the summary.
func TestStalledSinkDoesNotDelayOthers(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "stalled.fifo")
	stalledFIFO(t, fifo) // never read: the writer fills the pipe and then blocks

	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "-v", "1", "--grace", "1s",
		"--sink", "jq(output="+fifo+",buffer=4,on-full=drop-newest,name=stalled)=.")
	// A pipe holds 64 KiB; pod events are about 1 KiB each, so 150 events overflow it.
	const pods = 150
	for i := range pods {
		createPod(t, ns, fmt.Sprintf("p-%03d", i), map[string]string{"padding": strings.Repeat("x", 60)})
	}
	start := time.Now()
	s.waitJSON(30*time.Second, "the last pod on the terminal", func(ev envelope) bool { return ev.name() == fmt.Sprintf("p-%03d", pods-1) })
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("terminal sink took %s to show the events: the stalled sink held it up", d)
	}
	s.waitStderr(10*time.Second, literal(`sink "stalled" is full (buffer 4, on-full=drop-newest); dropping events`))

	_, code := s.interrupt(15 * time.Second)
	stderr := s.Stderr()
	m := regexp.MustCompile(`stalled (\d+) delivered, (\d+) dropped`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary for the stalled sink; exit %d, stderr:\n%s", code, stderr)
	}
	delivered, _ := strconv.Atoi(m[1])
	dropped, _ := strconv.Atoi(m[2])
	if delivered+dropped != pods || dropped == 0 {
		t.Errorf("stalled sink: %d delivered + %d dropped, want %d in all with some dropped", delivered, dropped, pods)
	}
	if !strings.Contains(stderr, "screen 150 delivered") {
		t.Errorf("terminal sink did not deliver all 150 events; stderr:\n%s", stderr)
	}
}

// Ctrl-C with a stalled sink under on-full=block (its handler waiting for room) still
// ends within --grace: the waiting handler gives up, the events it held count as dropped,
// and the other sinks deliver everything.
func TestInterruptWithBlockedSink(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "stalled.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0) // never read
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()

	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "-v", "1", "--grace", "1s",
		"--sink", "jq(output="+fifo+",buffer=4,name=stalled)=.")
	const pods = 150 // about 150 KiB of events: more than the pipe and the buffer hold
	for i := range pods {
		createPod(t, ns, fmt.Sprintf("p-%03d", i), map[string]string{"padding": strings.Repeat("x", 60)})
	}
	s.waitJSON(30*time.Second, "the last pod on the terminal", func(ev envelope) bool { return ev.name() == fmt.Sprintf("p-%03d", pods-1) })

	start := time.Now()
	_, code := s.interrupt(15 * time.Second)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("exit took %s after Ctrl-C with --grace 1s", d)
	}
	stderr := s.Stderr()
	if code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, stderr)
	}
	m := regexp.MustCompile(`stalled (\d+) delivered, (\d+) dropped`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary for the stalled sink; stderr:\n%s", stderr)
	}
	delivered, _ := strconv.Atoi(m[1])
	dropped, _ := strconv.Atoi(m[2])
	if delivered+dropped != pods || dropped == 0 {
		t.Errorf("stalled sink: %d delivered + %d dropped, want %d in all with some dropped", delivered, dropped, pods)
	}
	if !strings.Contains(stderr, "screen 150 delivered") || strings.Contains(stderr, `sink "screen" did not finish`) {
		t.Errorf("terminal sink did not deliver all 150 events in time; stderr:\n%s", stderr)
	}
	if !strings.Contains(stderr, `sink "stalled" did not finish writing within --grace 1s`) {
		t.Errorf("the stalled sink's late events are not reported; stderr:\n%s", stderr)
	}
}

// A sink with resync: 2s receives SYNC events for unchanged objects; the others do not.
func TestPerSinkResync(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "steady", nil)
	dir := t.TempDir()
	syncing := filepath.Join(dir, "syncing.jsonl")
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--sink", "file(resync=2s)="+syncing)
	s.waitJSON(eventWait, "ADDED steady", func(ev envelope) bool { return ev.Type == "ADDED" })
	listed := time.Now()
	syncs := func(whole bool) []envelope { // whole: every line must be whole JSON
		var out []envelope
		for _, l := range readLines(t, syncing, whole) {
			var ev envelope
			if json.Unmarshal([]byte(l), &ev) == nil && ev.Type == "SYNC" {
				out = append(out, ev)
			}
		}
		return out
	}
	waitUntil(t, s, 10*time.Second, "two SYNC events in the resync=2s sink's file", func() bool { return len(syncs(false)) >= 2 })
	took := time.Since(listed)
	s.interrupt(10 * time.Second)
	for _, l := range s.Seen() {
		if strings.Contains(l, `"type":"SYNC"`) {
			t.Errorf("the terminal sink (no resync) got a SYNC event: %s", l)
		}
	}
	for _, ev := range syncs(true) {
		if ev.Seq != 0 || ev.name() != "steady" {
			t.Errorf("SYNC event has seq %d and name %q; want no seq and steady", ev.Seq, ev.name())
		}
	}
	if took < 3*time.Second || took > 6*time.Second {
		t.Errorf("the resync=2s sink got its second SYNC event %s after the object was listed, want about 4s", took.Round(time.Millisecond))
	}
}

// Ctrl-C while events flow leaves only whole lines in a file sink.
func TestInterruptLeavesWholeLines(t *testing.T) {
	ns := newNamespace(t)
	file := filepath.Join(t.TempDir(), "events.jsonl")
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "name", "--sink", "file="+file)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 40 {
			createPod(t, ns, fmt.Sprintf("p-%d", i), nil)
		}
	}()
	s.waitFor(eventWait, "some events", func(l string) bool { return strings.Contains(l, "p-10") })
	_, code := s.interrupt(10 * time.Second)
	<-done
	if code != 0 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
	if n := len(readLines(t, file, true)); n < 11 {
		t.Errorf("file has %d lines, want at least the 11 printed before Ctrl-C", n)
	}
	raw, _ := os.ReadFile(file)
	if len(raw) == 0 || raw[len(raw)-1] != '\n' {
		t.Errorf("file does not end in a whole line")
	}
}

// The config file defines named sinks; flags add to them.
func TestConfigFileSinks(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	archive := filepath.Join(dir, "archive.jsonl")
	cfg := filepath.Join(dir, "config.yaml")
	content := fmt.Sprintf(`defaults:
  buffer: 64
sinks:
  - name: archive
    type: file
    path: %s
    onFull: coalesce
`, archive)
	if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runKubeevents(t, 10*time.Second, "config", "validate", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "OK, 1 sink") {
		t.Fatalf("config validate: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	createPod(t, ns, "p-0", nil)
	r = runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "--config", cfg, "-o", "name", "--max-events", "1", "-v", "1")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "ADDED pod/p-0" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "2 sinks (screen, archive)") {
		t.Errorf("start line does not list both sinks: %q", r.stderr)
	}
	if lines := readLines(t, archive, true); len(lines) != 1 {
		t.Errorf("archive has %d lines, want 1", len(lines))
	}
}

// TestSinkRotationOnlyRegularFiles: rotation renames the file and puts a new regular one
// in its place, so a sink asked to rotate something that is not a regular file (a device
// node, a link to /dev/null, stdout) is refused at start-up, one line and exit 2, and the
// thing is left as it was.
func TestSinkRotationOnlyRegularFiles(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "p-0", nil)
	dir := t.TempDir()
	toNull := filepath.Join(dir, "to-null")
	if err := os.Symlink("/dev/null", toNull); err != nil {
		t.Fatal(err)
	}
	q := regexp.QuoteMeta
	cases := map[string]string{ // target: the message after `kubeevents: `
		toNull:        `sink "to-null": file sink ` + q(toNull) + ` is a character device, not a regular file, so it cannot be rotated \(rotation renames the file\); drop max-size$`,
		"/dev/stdout": `sink "stdout": /dev/stdout is the standard output, which cannot be rotated \(rotation renames the file\); drop max-size$`,
	}
	device := filepath.Join(dir, "null") // what /dev/null is: character device 1,3
	if err := syscall.Mknod(device, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		cases[device] = `sink "null": file sink ` + q(device) + ` is a character device, not a regular file, so it cannot be rotated \(rotation renames the file\); drop max-size$`
	} else {
		t.Logf("cannot make a device node here (%v); checking the link to /dev/null", err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("sinks:\n  - name: archive\n    type: file\n    path: to-null\n    rotate: {maxSizeMB: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for target, want := range cases {
		var before os.FileInfo
		if target != "/dev/stdout" {
			before, _ = os.Lstat(target)
		}
		r := runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "--max-events", "1", "--sink", "file(max-size=1)="+target)
		if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !regexp.MustCompile(`^kubeevents: `+want).MatchString(strings.TrimSuffix(r.stderr, "\n")) {
			t.Errorf("%s with max-size: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout and one line matching %s", target, r.code, r.stdout, r.stderr, want)
		}
		if before != nil {
			after, err := os.Lstat(target)
			if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
				t.Errorf("%s was replaced", target)
			}
		}
	}
	r := runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "--max-events", "1", "--config", cfg)
	want := `^kubeevents: sink "archive": file sink ` + q(toNull) + ` is a character device, not a regular file, so it cannot be rotated \(rotation renames the file\); remove its rotate settings \(` + q(cfg) + `:2:5\)\n$`
	if r.code != 2 || r.stdout != "" || !regexp.MustCompile(want).MatchString(r.stderr) {
		t.Errorf("config file sink with rotate on a link to /dev/null: exit %d, stdout %q, stderr %q; want exit 2 and %s", r.code, r.stdout, r.stderr, want)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*-20[0-9][0-9]-*")); len(matches) > 0 {
		t.Errorf("rotated (renamed) files left behind: %v", matches)
	}
}

// TestSinkStdoutPaths: "-", /dev/stdout and the very file stdout is are stdout: one
// stream there in that sink's format, no terminal sink beside it, no file named "-".
func TestSinkStdoutPaths(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "p-0", nil)
	dir := t.TempDir()
	isJSONLine := func(out string) bool {
		var ev envelope
		return strings.Count(out, "\n") == 1 && json.Unmarshal([]byte(out), &ev) == nil && ev.Type == "ADDED" && ev.name() == "p-0"
	}
	for _, sinkSpec := range []string{"file=-", "file=/dev/stdout", "file=/proc/self/fd/1"} {
		r := kubeevents(t).Dir(dir).Run(30*time.Second, "watch", "pods", "-n", ns, "--max-events", "1", "--sink", sinkSpec)
		if r.code != 0 || !isJSONLine(r.stdout) || r.stderr != "" {
			t.Errorf("--sink %s: exit %d, stdout %q, stderr %q; want exit 0 and one JSON line, alone", sinkSpec, r.code, r.stdout, r.stderr)
		}
	}
	r := kubeevents(t).Dir(dir).Run(30*time.Second, "watch", "pods", "-n", ns, "--max-events", "1", "--sink", "jq(output=/dev/stdout)=.type")
	if r.code != 0 || r.stdout != "\"ADDED\"\n" {
		t.Errorf("jq(output=/dev/stdout): exit %d, stdout %q, stderr %q; want exit 0 and \"ADDED\" alone", r.code, r.stdout, r.stderr)
	}
	r = kubeevents(t).Dir(dir).Run(30*time.Second, "watch", "pods", "-n", ns, "--max-events", "1", "--sink", "jq(output=-)=.type", "--sink", "file=x.jsonl")
	if r.code != 0 || r.stdout != "\"ADDED\"\n" {
		t.Errorf("jq(output=-) and a file: exit %d, stdout %q, stderr %q; want exit 0 and \"ADDED\" alone", r.code, r.stdout, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != "x.jsonl" {
		t.Errorf("files made in the working directory: %v; want x.jsonl alone", dirEntries(entries))
	}

	// Stdout redirected to a file, and that file named as a sink: written once, as JSON.
	redirected := filepath.Join(dir, "out.jsonl")
	f, err := os.OpenFile(redirected, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	r = kubeevents(t).Dir(dir).Stdout(f).Run(30*time.Second, "watch", "pods", "-n", ns, "--max-events", "1", "--sink", "file=out.jsonl")
	f.Close()
	if data, _ := os.ReadFile(redirected); r.code != 0 || !isJSONLine(string(data)) {
		t.Errorf("--sink file=out.jsonl >out.jsonl: exit %d, stderr %q, the file holds %q; want one JSON line", r.code, r.stderr, data)
	}
}

// TestSinkNoScreen: --no-screen is an archiving run: the sinks get the events, stdout
// nothing; with nothing else to write to, or with another stdout stream, it is refused.
func TestSinkNoScreen(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "p-0", nil)
	dir := t.TempDir()
	archive := filepath.Join(dir, "archive.jsonl")
	r := runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "--max-events", "1", "--no-screen", "--sink", "file="+archive, "-v", "1")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("--no-screen: exit %d, stdout %q, stderr %q; want exit 0 and nothing on stdout", r.code, r.stdout, r.stderr)
	}
	if lines := readLines(t, archive, true); len(lines) != 1 {
		t.Errorf("the archive has %d lines, want 1", len(lines))
	}
	if !strings.Contains(r.stderr, "1 sink (archive.jsonl)") {
		t.Errorf("the start line does not list the archive alone: %q", r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-screen"}, `kubeevents: --no-screen leaves no sink to write to; add one, e.g. --sink file=events.jsonl` + "\n"},
		{[]string{"--no-screen", "--jq", ".type", "--sink", "file=" + archive}, `kubeevents: --no-screen turns off the standard output stream that --jq filters; drop one of them` + "\n"},
		{[]string{"--no-screen", "--sink", "file=-"}, `kubeevents: --no-screen turns off the standard output stream, but --sink "file=-" writes to it; drop one of them` + "\n"},
	} {
		r := runKubeevents(t, 30*time.Second, append([]string{"watch", "pods", "-n", ns}, c.args...)...)
		if r.code != 2 || r.stdout != "" || r.stderr != c.want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), r.code, r.stdout, r.stderr, c.want)
		}
	}
}

// TestSinkOpenFailsAtOnce: a sink that cannot be opened ends the run before any event,
// with one line naming the real cause and exit 4; files the other sinks made are removed.
func TestSinkOpenFailsAtOnce(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "p-0", nil)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	for _, c := range []struct{ path, want string }{
		{"/proc/x.jsonl", `kubeevents: sink "x.jsonl": cannot open file sink /proc/x.jsonl: directory /proc is on the proc file system, which does not hold ordinary files (choose a directory on disk)` + "\n"},
		{filepath.Join(dir, "missing", "x.jsonl"), `kubeevents: sink "x.jsonl": cannot open file sink ` + filepath.Join(dir, "missing", "x.jsonl") + `: directory ` + filepath.Join(dir, "missing") + ` does not exist (create it first)` + "\n"},
	} {
		start := time.Now()
		r := runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "--sink", "file="+good, "--sink", "file="+c.path)
		if r.code != 4 || r.stdout != "" || r.stderr != c.want {
			t.Errorf("--sink file=%s: exit %d, stdout %q, stderr %q; want exit 4, no events and %q", c.path, r.code, r.stdout, r.stderr, c.want)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("--sink file=%s: took %s to fail", c.path, took)
		}
		if _, err := os.Stat(good); !os.IsNotExist(err) {
			t.Errorf("the other sink's file was left behind (%v)", err)
			os.Remove(good)
		}
	}
}

func dirEntries(entries []os.DirEntry) []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// readmeConfig is README's example config file.
const readmeConfig = `defaults:            # for every sink that leaves a field out
  buffer: 2048
  onFull: drop-oldest
sinks:
  - name: screen
    type: terminal
    format: pretty
  - name: archive
    type: file
    path: events.jsonl
    rotate: {maxSizeMB: 100, maxBackups: 5, compress: true}
    resync: 5m
    buffer: 4096
    onFull: block
  - name: deletions
    type: jq
    expr: 'select(.type=="DELETED") | .object.metadata.name'
    raw: true
    output: deletions.txt
`

// TestConfigFileGivesWayToFlags: with README's example as the default config file, the
// command line decides what goes to stdout (-o json, --jq), and the file's relative paths
// are beside the config file, not wherever kubeevents runs.
func TestConfigFileGivesWayToFlags(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "p-0", nil)
	home := t.TempDir()
	cfgDir := filepath.Join(home, "kubeevents")
	if err := os.Mkdir(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte(readmeConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + home}
	work := t.TempDir()

	r := kubeevents(t).Dir(work).Env(env...).Run(30*time.Second, "watch", "pods", "-n", ns, "-o", "json", "--max-events", "1", "-v", "1")
	var ev envelope
	if r.code != 0 || strings.Count(r.stdout, "\n") != 1 || json.Unmarshal([]byte(r.stdout), &ev) != nil || ev.name() != "p-0" {
		t.Errorf("-o json: exit %d, stdout %q, stderr %q; want one JSON line", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "3 sinks (screen, archive, deletions)") {
		t.Errorf("-o json: the start line does not list the file's sinks: %q", r.stderr)
	}
	if lines := readLines(t, filepath.Join(cfgDir, "events.jsonl"), true); len(lines) != 1 {
		t.Errorf("the archive beside the config file has %d lines, want 1", len(lines))
	}
	if _, err := os.Stat(filepath.Join(cfgDir, "deletions.txt")); err != nil {
		t.Errorf("the jq sink's output is not beside the config file: %v", err)
	}
	if entries, _ := os.ReadDir(work); len(entries) > 0 {
		t.Errorf("files made in the working directory: %v", dirEntries(entries))
	}

	r = kubeevents(t).Dir(work).Env(env...).Run(30*time.Second, "watch", "pods", "-n", ns, "--jq", ".type", "--max-events", "1", "-v", "1")
	if r.code != 0 || r.stdout != "\"ADDED\"\n" {
		t.Errorf("--jq .type: exit %d, stdout %q, stderr %q; want \"ADDED\"", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "3 sinks (screen, archive, deletions)") {
		t.Errorf("--jq: the start line does not list the file's other sinks: %q", r.stderr)
	}

	// Without flags about stdout, the file's screen sink is what stdout gets.
	r = kubeevents(t).Dir(work).Env(env...).Run(30*time.Second, "watch", "pods", "-n", ns, "--max-events", "1")
	if r.code != 0 || !strings.Contains(r.stdout, "ADDED") || strings.HasPrefix(r.stdout, "{") {
		t.Errorf("no flags: exit %d, stdout %q, stderr %q; want the file's pretty screen", r.code, r.stdout, r.stderr)
	}
}
