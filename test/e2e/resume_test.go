package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// collectExactly reads p's JSON events for d and fails the test unless they are exactly
// want (eventSummary's "TYPE name", sorted); run names the run in the log and messages.
func collectExactly(t *testing.T, p *proc, d time.Duration, run string, want ...string) []envelope {
	t.Helper()
	evs := p.collect(d)
	got := eventSummary(evs)
	t.Logf("%s: %d events (%s)", run, len(evs), strings.Join(got, ", "))
	if !slices.Equal(got, want) {
		t.Fatalf("%s: %v, want exactly %v; stderr:\n%s", run, got, want, p.Stderr())
	}
	return evs
}

// checkChangedFrom fails the test unless each event's diff is one change from old, the
// state every sink had.
func checkChangedFrom(t *testing.T, evs []envelope, old string) {
	t.Helper()
	for _, ev := range evs {
		if len(ev.Diff) != 1 || ev.Diff[0].Old != old {
			t.Errorf("%s %s: diff %+v, want one change from %s, the state every sink had", ev.Type, ev.name(), ev.Diff, old)
		}
	}
}

// readFIFOLines reads n lines from a FIFO opened without blocking, then stops reading, and
// sends how many it read (fewer after 20 s).
func readFIFOLines(fifo *os.File, n int) <-chan int {
	read := make(chan int, 1)
	go func() {
		// Until kubeevents opens the FIFO a read finds nothing; once it has, a read waits
		// for data, until the deadline.
		deadline := time.Now().Add(20 * time.Second)
		_ = fifo.SetReadDeadline(deadline)
		lines, buf := 0, make([]byte, 1)
		for lines < n && time.Now().Before(deadline) {
			if k, _ := fifo.Read(buf); k == 0 {
				time.Sleep(20 * time.Millisecond)
			} else if buf[0] == '\n' {
				lines++
			}
		}
		read <- lines
	}()
	return read
}

// waitCheckpointed waits until the checkpoint at path holds the states evs leave (name →
// resourceVersion): every sink was given them, and kubeevents wrote them (at most once a
// second).
func waitCheckpointed(t *testing.T, p *proc, path string, evs []envelope) {
	t.Helper()
	want := finalStates(evs)
	deadline := time.Now().Add(15 * time.Second)
	for {
		diff := stateDiff(checkpointed(t, path), want)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) || !p.Alive() {
			t.Fatalf("the checkpoint does not hold what every sink was given:\n%s\nstderr:\n%s", diff, p.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A clean stop (Ctrl-C), then changes while kubeevents is down, then a start with the same
// --resume: exactly what changed comes, each once (MODIFIED with its diff against the
// state delivered before, ADDED, DELETED with finalStateUnknown), and nothing for the
// unchanged. A second restart without changes emits nothing.
func TestResumeAfterCleanStop(t *testing.T) {
	ns := newNamespace(t)
	ckpt := filepath.Join(t.TempDir(), "state", "kubeevents.ckpt")
	if err := os.MkdirAll(filepath.Dir(ckpt), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"keep", "change", "remove"} {
		createResumeConfigMap(t, ns, name, "v1")
	}
	args := []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--resume", ckpt}

	first := startKubeevents(t, args...)
	collectExactly(t, first, 3*time.Second, "first run", "ADDED change", "ADDED keep", "ADDED remove")
	if _, code := first.interrupt(15 * time.Second); code != 0 {
		t.Fatalf("first run: exit %d after Ctrl-C; stderr:\n%s", code, first.Stderr())
	}
	info, err := os.Stat(ckpt)
	if err != nil {
		t.Fatalf("no checkpoint after a clean stop: %v", err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("checkpoint mode %o, want 600", perm)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(ckpt), ".*tmp*")); len(leftovers) > 0 {
		t.Errorf("temporary files left beside the checkpoint: %v", leftovers)
	}

	// While it is down.
	patchResumeConfigMap(t, ns, "change", "v2")
	deleteResumeConfigMap(t, ns, "remove")
	createResumeConfigMap(t, ns, "new", "v1")

	second := startKubeevents(t, args...)
	evs := collectExactly(t, second, 4*time.Second, "resumed after a clean stop and 3 changes, 1 object unchanged",
		"ADDED new", "DELETED remove", "MODIFIED change")
	for _, ev := range evs {
		switch ev.Type {
		case "MODIFIED":
			if len(ev.Diff) != 1 || ev.Diff[0].Path != "/data/k" || ev.Diff[0].Old != "v1" || ev.Diff[0].Value != "v2" {
				t.Errorf("MODIFIED change: diff %+v, want /data/k v1 → v2", ev.Diff)
			}
		case "DELETED":
			if !ev.FinalStateUnknown {
				t.Errorf("DELETED remove without finalStateUnknown")
			}
		}
	}
	second.waitStderr(5*time.Second, literal("resumed configmaps from "+ckpt))
	second.waitStderr(5*time.Second, literal(": 3 now, 1 changed, 1 created, 1 deleted since"))
	if _, code := second.interrupt(15 * time.Second); code != 0 {
		t.Fatalf("second run: exit %d; stderr:\n%s", code, second.Stderr())
	}

	third := startKubeevents(t, args...)
	collectExactly(t, third, 3*time.Second, "resumed without changes")
	third.waitStderr(5*time.Second, literal(": 3 now, 0 changed, 0 created, 0 deleted since"))
	// And it still follows changes as they happen.
	patchResumeConfigMap(t, ns, "keep", "v2")
	third.waitJSON(10*time.Second, "MODIFIED keep", func(ev envelope) bool { return ev.Type == "MODIFIED" && ev.name() == "keep" })
	third.interrupt(15 * time.Second)
}

// Killed (SIGKILL) while a stalled sink still holds events that the terminal already
// printed: the checkpoint holds only what every sink was given, so after the restart every
// object whose newest state had not reached every sink comes again (at least once), and
// what every sink had is not repeated.
func TestResumeAfterKillRedeliversUnwritten(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "kubeevents.ckpt")
	fifo := filepath.Join(dir, "slow.fifo")
	reader := stalledFIFO(t, fifo)
	for _, name := range []string{"steady", "big", "small"} {
		createResumeConfigMap(t, ns, name, "v1")
	}
	base := []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--resume", ckpt}

	first := startKubeevents(t, append(slices.Clone(base), "--sink", "jq(name=slow,output="+fifo+")=.")...)
	// The slow sink's reader takes the first three lines (the initial list), then stops
	// reading: the FIFO then holds what fits in the pipe, and the sink's Write blocks.
	read := readFIFOLines(reader, 3)
	evs := collectExactly(t, first, 3*time.Second, "first run", "ADDED big", "ADDED small", "ADDED steady")
	select {
	case n := <-read:
		if n != 3 {
			t.Fatalf("the slow sink's reader got %d lines, want 3", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the slow sink did not write the initial list")
	}
	waitCheckpointed(t, first, ckpt, evs)

	// More than the pipe holds: the slow sink's Write of it blocks for good.
	patchResumeConfigMap(t, ns, "big", strings.Repeat("x", 100<<10))
	patchResumeConfigMap(t, ns, "small", "v2")
	first.waitJSON(10*time.Second, "MODIFIED small on the terminal", func(ev envelope) bool { return ev.Type == "MODIFIED" && ev.name() == "small" })
	// Not a wait: the time in which kubeevents, were it to checkpoint what the terminal
	// alone printed, would have written it (it writes at most once a second). Nothing it
	// should write can come meanwhile: the slow sink holds both changes.
	time.Sleep(2500 * time.Millisecond)
	if diff := stateDiff(checkpointed(t, ckpt), finalStates(evs)); diff != "" {
		t.Fatalf("the checkpoint holds changes the slow sink was never given:\n%s", diff)
	}
	first.signal(syscall.SIGKILL)
	first.wait(10 * time.Second)

	// Restarted without the slow sink.
	second := startKubeevents(t, base...)
	evs = collectExactly(t, second, 4*time.Second, "resumed after SIGKILL with the 2 changes the slow sink never wrote",
		"MODIFIED big", "MODIFIED small")
	second.waitStderr(5*time.Second, literal(": 3 now, 2 changed, 0 created, 0 deleted since"))
	checkChangedFrom(t, evs, "v1")
	second.interrupt(15 * time.Second)
}

// A checkpoint that belongs to another watch, or is not a whole checkpoint, is one line
// naming the file and what is wrong, exit 2, and the file is left as it was; --resume-reset
// starts afresh.
func TestResumeRefusesCorruptOrMismatchedCheckpoint(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "kubeevents.ckpt")
	createResumeConfigMap(t, ns, "one", "v1")
	createResumeConfigMap(t, ns, "two", "v1")
	args := []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--resume", ckpt, "--timeout", "2s"}
	if r := runKubeevents(t, 30*time.Second, args...); r.code != 0 || strings.Count(r.stdout, "\n") != 2 {
		t.Fatalf("writing a checkpoint: exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	good, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(good), "\n"), "\n")
	lines[len(lines)-1] += "\n"
	if len(lines) != 4 {
		t.Fatalf("checkpoint of 2 objects has %d lines, want 4 (header, 2 objects, end):\n%s", len(lines), good)
	}

	refused := func(name string, content []byte, runArgs []string, wants ...string) {
		t.Run(name, func(t *testing.T) {
			if content != nil {
				if err := os.WriteFile(ckpt, content, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile(ckpt)
			if runArgs == nil {
				runArgs = args
			}
			r := runKubeevents(t, 30*time.Second, runArgs...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
			}
			if r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("want no output and one line on stderr; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			for _, want := range append(wants, ckpt, "--resume-reset") {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
				}
			}
			if after, _ := os.ReadFile(ckpt); string(after) != string(before) {
				t.Errorf("the refused checkpoint was changed")
			}
			t.Logf("%s", strings.TrimSpace(r.stderr))
		})
	}
	with := func(from, to string) []string {
		out := slices.Clone(args)
		out[slices.Index(out, from)] = to
		return out
	}
	refused("other selector", good, with(resumeLabel, "resume-test=other"), `label selector "resume-test=yes" in the checkpoint, "resume-test=other" now`)
	refused("other type", good, with("configmaps", "secrets"), "resources configmaps.v1 in the checkpoint, secrets.v1 now")
	refused("other names", good, append(slices.Clone(args), "one"), "names (none) in the checkpoint, one now")
	refused("truncated", []byte(strings.Join(lines[:3], "")), nil, "truncated")
	refused("cut mid-line", good[:len(good)-len(lines[3])-10], nil, "truncated")
	refused("last line cut", good[:len(good)-1], nil, "truncated")
	refused("garbage line", []byte(lines[0]+"{nope\n"+lines[2]+lines[3]), nil, ckpt+":2")
	refused("count off", []byte(lines[0]+lines[1]+lines[3]), nil, "2 objects announced, 1 found")
	refused("not a checkpoint", []byte("hello\n"), nil, "no checkpoint header")
	refused("empty", []byte{}, nil, "empty")

	t.Run("cannot be written", func(t *testing.T) {
		for _, c := range []struct {
			path, want string
			code       int
		}{
			{"/proc/kubeevents.ckpt", "the checkpoint cannot be written", 4},
			{dir, "a directory; give the path of a checkpoint file", 2},
		} {
			r := runKubeevents(t, 30*time.Second, with(ckpt, c.path)...)
			if r.code != c.code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("--resume %s: exit %d, want %d, no output and one line saying %q; stdout:\n%s\nstderr:\n%s", c.path, r.code, c.code, c.want, r.stdout, r.stderr)
			}
			t.Logf("%s", strings.TrimSpace(r.stderr))
		}
	})
	t.Run("reset", func(t *testing.T) {
		if err := os.WriteFile(ckpt, []byte("hello\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := runKubeevents(t, 30*time.Second, append(slices.Clone(args), "--resume-reset")...)
		if r.code != 0 || strings.Count(r.stdout, "\n") != 2 {
			t.Fatalf("--resume-reset: exit %d, want 0 and both objects ADDED; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		after, _ := os.ReadFile(ckpt)
		if !strings.HasPrefix(string(after), `{"format":"kubeevents-checkpoint"`) {
			t.Errorf("--resume-reset did not write a fresh checkpoint:\n%s", after)
		}
		// And the fresh one resumes.
		r = runKubeevents(t, 30*time.Second, args...)
		if r.code != 0 || r.stdout != "" {
			t.Errorf("resuming from the fresh checkpoint: exit %d, want 0 and no events; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
}

// Secrets stay redacted in the checkpoint, and a value that did not change keeps its
// placeholder across the restart: the resumed MODIFIED shows the one value that changed.
func TestResumeSecretsStayRedacted(t *testing.T) {
	ns := newNamespace(t)
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Labels: map[string]string{"resume-test": "yes"}},
		StringData: map[string]string{"user": "admin", "password": "hunter2-before"},
	}
	if _, err := client.CoreV1().Secrets(ns).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	args := []string{"watch", "secrets", "-n", ns, "-l", resumeLabel, "-o", "json", "--resume", ckpt}
	first := startKubeevents(t, args...)
	first.waitJSON(15*time.Second, "ADDED creds", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == "creds" })
	if _, code := first.interrupt(15 * time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, first.Stderr())
	}
	data, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "hunter2") || !strings.Contains(string(data), "redacted: 5 bytes") {
		t.Fatalf("the checkpoint holds the Secret's values, or no placeholders:\n%s", data)
	}

	patch := []byte(`{"stringData":{"password":"hunter2-after"}}`)
	if _, err := client.CoreV1().Secrets(ns).Patch(context.Background(), "creds", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	second := startKubeevents(t, args...)
	evs := collectExactly(t, second, 4*time.Second, "resumed", "MODIFIED creds")
	second.interrupt(15 * time.Second)
	var paths []string
	for _, op := range evs[0].Diff {
		paths = append(paths, op.Path)
	}
	if !slices.Equal(paths, []string{"/data/password"}) {
		t.Errorf("resumed diff touches %v, want only /data/password (user's placeholder unchanged)", paths)
	}
	if line := strings.Join(second.Seen(), "\n"); strings.Contains(line, "hunter2") {
		t.Errorf("a Secret value was printed:\n%s", line)
	}
}

// resume: in the config file is --resume, relative to the config file's directory; the
// flag overrides it.
func TestResumeFromConfigFile(t *testing.T) {
	ns := newNamespace(t)
	createResumeConfigMap(t, ns, "one", "v1")
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte("resume: state/kubeevents.ckpt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // not where the config file is
	args := []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--config", config, "--timeout", "2s"}
	if r := runKubeevents(t, 30*time.Second, args...); r.code != 0 || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("first run: exit %d; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "kubeevents.ckpt")); err != nil {
		t.Fatalf("no checkpoint beside the config file: %v", err)
	}
	if r := runKubeevents(t, 30*time.Second, args...); r.code != 0 || r.stdout != "" {
		t.Errorf("resumed from the config file's checkpoint: exit %d, want 0 and no events; stdout:\n%s", r.code, r.stdout)
	}
	flag := filepath.Join(dir, "flag.ckpt")
	if r := runKubeevents(t, 30*time.Second, append(args, "--resume", flag)...); r.code != 0 || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("--resume over the config file's: exit %d, want the object ADDED from a fresh checkpoint; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(flag); err != nil {
		t.Errorf("--resume did not override the config file's resume: %v", err)
	}
}

// A sink that drops events (on-full=drop-newest behind a stalled reader) and is cut off at
// Ctrl-C after --grace (what it still holds is dropped) never wrote those states: a clean stop is exactly-once only for
// what every sink wrote, so after the restart the objects it missed come again, and the
// rest do not.
func TestResumeRedeliversWhatASinkDropped(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "kubeevents.ckpt")
	fifo := filepath.Join(dir, "stalled.fifo")
	reader := stalledFIFO(t, fifo)
	names := []string{"steady", "big", "d1", "d2", "d3"}
	for _, name := range names {
		createResumeConfigMap(t, ns, name, "v1")
	}
	base := []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--resume", ckpt, "--grace", "1s"}
	first := startKubeevents(t, append(slices.Clone(base), "-v", "1",
		"--sink", "jq(name=stalled,on-full=drop-newest,buffer=5,output="+fifo+")=.")...)
	// The stalled sink's reader takes the initial list, then stops reading.
	read := readFIFOLines(reader, len(names))
	initial := collectExactly(t, first, 3*time.Second, "first run", "ADDED big", "ADDED d1", "ADDED d2", "ADDED d3", "ADDED steady")
	if n := <-read; n != len(names) {
		t.Fatalf("the stalled sink wrote %d lines of the initial list, want %d", n, len(names))
	}
	waitCheckpointed(t, first, ckpt, initial)

	patchResumeConfigMap(t, ns, "big", strings.Repeat("x", 100<<10)) // more than the pipe holds
	// Six more changes while its Write of that one is stuck: five fill its buffer, the
	// sixth is dropped.
	for _, value := range []string{"v2", "v3"} {
		for _, name := range []string{"d1", "d2", "d3"} {
			patchResumeConfigMap(t, ns, name, value)
		}
	}
	first.waitJSON(10*time.Second, "the last change on the terminal", func(ev envelope) bool {
		return ev.Type == "MODIFIED" && ev.name() == "d3" && strings.Contains(string(ev.Object), `"v3"`)
	})
	if _, code := first.interrupt(15 * time.Second); code != 0 {
		t.Fatalf("first run: exit %d; stderr:\n%s", code, first.Stderr())
	}
	if !strings.Contains(first.Stderr(), "stalled 5 delivered, 7 dropped") {
		t.Fatalf("want the stalled sink to have written the 5 ADDED and dropped the 7 changes (1 when full, 6 at exit); stderr:\n%s", first.Stderr())
	}

	second := startKubeevents(t, base...)
	evs := collectExactly(t, second, 4*time.Second, "resumed after a clean stop in which a sink dropped 7 events of 4 objects",
		"MODIFIED big", "MODIFIED d1", "MODIFIED d2", "MODIFIED d3")
	checkChangedFrom(t, evs, "v1")
	second.interrupt(15 * time.Second)
}

// An http sink holds events in a batch after its Write returns: such an event is
// delivered only once the receiver took it. One the receiver refused (or that never
// reached it) must leave the checkpoint at the older state, so the next resumed start
// emits it again, even after a clean stop.
func TestResumeRedeliversWhatAnHTTPSinkFailed(t *testing.T) {
	ns := newNamespace(t)
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	r := startReceiver(t)
	for _, name := range []string{"sent", "refused"} {
		createResumeConfigMap(t, ns, name, "v1")
	}
	base := []string{"watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "json", "--resume", ckpt, "-v", "1"}
	hook := "http(name=hook,batch=1,retries=0)=" + r.url()
	first := startKubeevents(t, append(slices.Clone(base), "--sink", hook)...)
	initial := collectExactly(t, first, 3*time.Second, "first run", "ADDED refused", "ADDED sent")
	r.waitDelivered(t, first, 2, 10*time.Second)
	waitCheckpointed(t, first, ckpt, initial)

	r.answerNext(answer{status: http.StatusBadRequest, body: "no"})
	patchResumeConfigMap(t, ns, "refused", "v2")
	first.waitStderr(10*time.Second, literal(`http sink "hook": POST `+r.url()+`: 400 Bad Request`))
	patchResumeConfigMap(t, ns, "sent", "v2")
	r.waitDelivered(t, first, 3, 10*time.Second)
	if _, code := first.interrupt(15 * time.Second); code != 0 {
		t.Fatalf("first run: exit %d; stderr:\n%s", code, first.Stderr())
	}
	if s := summaryOf(t, first.Stderr(), "hook"); s["delivered"] != 3 || s["failed"] != 1 {
		t.Fatalf("hook's summary %v, want 3 delivered and 1 failed; stderr:\n%s", s, first.Stderr())
	}

	second := startKubeevents(t, append(slices.Clone(base), "--sink", hook)...)
	evs := collectExactly(t, second, 4*time.Second, "resumed after a clean stop in which the receiver refused one event", "MODIFIED refused")
	if len(evs[0].Diff) != 1 || evs[0].Diff[0].Old != "v1" || evs[0].Diff[0].Value != "v2" {
		t.Errorf("MODIFIED refused: diff %+v, want v1 → v2", evs[0].Diff)
	}
	if names := r.waitDelivered(t, second, 4, 10*time.Second); names[3] != "refused" {
		t.Errorf("the receiver got %v, want refused last, once more", names)
	}
	second.interrupt(15 * time.Second)
}
