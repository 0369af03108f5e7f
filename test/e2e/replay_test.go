package e2e

// kubeevents replay and history on recordings kubeevents made of the living cluster: a
// rollout replayed as pretty output with diffs and as --owned chains, history --at
// against what kubectl get -o yaml printed at that time, --follow across a rotation,
// and bad input.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func hasResourceVersion(kind, name, rv string) func(string) bool {
	return func(line string) bool {
		var ev envelope
		return json.Unmarshal([]byte(line), &ev) == nil && ev.meta().Kind == kind && ev.name() == name && ev.meta().Metadata.ResourceVersion == rv
	}
}

// TestReplayRollout: a rollout recorded by kubeevents itself (a file sink), replayed as
// pretty output with diffs and as --owned chains; history --at prints the Deployment and a
// ConfigMap exactly as kubectl get -o yaml printed them at that time.
func TestReplayRollout(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	recorder := startKubeevents(t, "watch", "deployments,replicasets,pods,configmaps", "-n", ns, "--with-events", "--no-screen",
		"--sink", "file="+path, "-v=1")
	recorder.waitStderr(20*time.Second, literal("watching"))

	createLivingDeployment(t, ns, "web", "nginx:1.27", 2)
	kubectlOut(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout", "80s")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "a"}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What kubectl printed then, once the recording has that version of each.
	var printed = map[string]string{}
	var rv struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	for _, obj := range []struct{ kind, ref, name string }{{"Deployment", "deployment/web", "web"}, {"ConfigMap", "configmap/settings", "settings"}} {
		printed[obj.ref] = kubectlOut(t, "", "get", obj.ref, "-n", ns, "-o", "yaml")
		if err := json.Unmarshal([]byte(kubectlOut(t, "", "get", obj.ref, "-n", ns, "-o", "json")), &rv); err != nil {
			t.Fatal(err)
		}
		waitRecorded(t, recorder, path, obj.ref+" at resourceVersion "+rv.Metadata.ResourceVersion, hasResourceVersion(obj.kind, obj.name, rv.Metadata.ResourceVersion))
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)

	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}`
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "settings", types.MergePatchType, []byte(`{"data":{"mode":"b"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectlOut(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout", "80s")
	waitRecorded(t, recorder, path, "the second rollout's end", func(line string) bool {
		var ev struct {
			Object struct {
				Kind   string         `json:"kind"`
				Spec   map[string]any `json:"spec"`
				Status map[string]any `json:"status"`
			} `json:"object"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Object.Kind != "Deployment" {
			return false
		}
		spec, status := ev.Object.Spec, ev.Object.Status
		return strings.Contains(line, "nginx:1.28") && status["updatedReplicas"] == spec["replicas"] && status["availableReplicas"] == spec["replicas"] && status["replicas"] == spec["replicas"]
	})
	recorder.interrupt(10 * time.Second)

	// Pretty, with the diffs of the recording.
	pretty := runKubeevents(t, 30*time.Second, "replay", path, "deployment/web", "-n", ns, "--owned", "--with-events")
	if pretty.code != 0 {
		t.Fatalf("replay --owned: exit %d; stderr:\n%s", pretty.code, pretty.stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\S+\s+ADDED\s+deploy/web\s`),
		regexp.MustCompile(`(?m)^\S+\s+\S+\s+deploy/web › rs/web-\w+ › pod/web-\w+-\w+\s`),
		regexp.MustCompile(`(?m)^\s+~ spec\.template\.spec\.containers\[app\]\.image: nginx:1\.27 → nginx:1\.28$`),
		regexp.MustCompile(`(?m)^\S+\s+EVENT\s+deploy/web\s.*ScalingReplicaSet`),
		regexp.MustCompile(`successfully rolled out`),
	} {
		if !want.MatchString(pretty.stdout) {
			t.Errorf("replay --owned --with-events: no line matching %s in:\n%s", want, pretty.stdout)
		}
	}
	if strings.Contains(pretty.stdout, "settings") {
		t.Errorf("replay --owned shows the ConfigMap, which web does not own:\n%s", pretty.stdout)
	}

	// As JSON: every pod's chain is the Deployment's, through one of its ReplicaSets.
	js := runKubeevents(t, 30*time.Second, "replay", path, "deploy/web", "-n", ns, "--owned", "-o", "json")
	pods := 0
	for _, line := range strings.Split(strings.TrimSpace(js.stdout), "\n") {
		ev := parseOwned(t, line)
		if ev.kind() == "Pod" {
			pods++
			if !strings.HasPrefix(ev.chain(), "Deployment/web>ReplicaSet/web-") {
				t.Errorf("pod %s: chain %q", ev.name(), ev.chain())
			}
		}
	}
	if pods < 8 { // two pods of the first rollout, two of the second, each a few times
		t.Errorf("replay --owned -o json: %d pod events:\n%s", pods, js.stdout)
	}

	// history: every version, and the objects as kubectl printed them.
	history := runKubeevents(t, 30*time.Second, "history", "cm/settings", "-n", ns, "--file", dir)
	if history.code != 0 || !regexp.MustCompile(`(?m)^\s+~ data\.mode: a → b$`).MatchString(history.stdout) {
		t.Errorf("history cm/settings: exit %d, stderr %s, stdout:\n%s", history.code, history.stderr, history.stdout)
	}
	for ref, want := range printed {
		got := runKubeevents(t, 30*time.Second, "history", ref, "-n", ns, "--file", path, "--at", at)
		if got.code != 0 || got.stdout != want {
			t.Errorf("history %s --at %s: exit %d, stderr %s\ngot:\n%s\nkubectl printed:\n%s", ref, at, got.code, got.stderr, got.stdout, want)
		}
	}
}

// TestReplayFollowsAcrossRotation: replay --follow of a file sink's file that kubeevents
// is writing, and rotating, prints every change in order, from before and after the
// rotation.
func TestReplayFollowsAcrossRotation(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "events.jsonl")
	recorder := startKubeevents(t, "watch", "configmaps", "-n", ns, "--no-screen", "--sink", "file(max-size=1)="+path, "-v=1")
	recorder.waitStderr(20*time.Second, literal("watching"))
	follow := startKubeevents(t, "replay", path, "--follow", "-o", "json", "--jq", `.object.data.round`, "-r")
	big := strings.Repeat("x", 300<<10) // four changes fill the 1 MB the file may hold
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{"round": "0", "pad": big}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const rounds = 10
	for i := 1; i < rounds; i++ {
		patch := fmt.Sprintf(`{"data":{"round":"%d"}}`, i)
		if _, err := client.CoreV1().ConfigMaps(ns).Patch(context.Background(), "big", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	follow.waitFor(30*time.Second, "the last round", func(line string) bool { return line == fmt.Sprint(rounds-1) })
	backups, _ := filepath.Glob(filepath.Join(dir, "events-*.jsonl*"))
	if len(backups) == 0 {
		t.Fatalf("the file sink did not rotate; files: %v", backups)
	}
	var want []string
	for i := range rounds {
		want = append(want, fmt.Sprint(i))
	}
	if got := follow.Seen(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("replay --follow across %d rotations printed %v, want %v", len(backups), got, want)
	}
	// The backups and the file, read together afterwards, hold the same in time order.
	again := runKubeevents(t, 30*time.Second, "replay", dir, "--jq", `.object.data.round`, "-r")
	if got := strings.Fields(again.stdout); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("replay of the directory: %v, want %v; stderr:\n%s", got, want, again.stderr)
	}
}

// TestReplayBadInput: a line that is not an event is one line naming file and line, exit
// 2; --skip-bad-lines skips and counts; a last line cut short is said to be so; a file
// that does not exist and flags that do not go together are usage errors. --by selects
// on the recorded field managers.
func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	good := func(name, manager string) string {
		return fmt.Sprintf(`{"type":"ADDED","time":"2026-11-23T14:00:00Z","seq":1,"resource":{"group":"","version":"v1","resource":"configmaps"},`+
			`"object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":%q,"namespace":"shop"}},"by":[{"manager":%q,"operation":"Update","time":"2026-11-23T14:00:00Z"}]}`, name, manager)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(good("a", "kubectl-edit")+"\n"+good("b", "helm")+"\n15:04:05  ADDED  web-1  1/1  Running\n"+good("c", "kubectl-patch")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runKubeevents(t, 20*time.Second, "replay", bad, "-o", "name")
	if r.code != 2 || r.stdout != "ADDED configmap/a\nADDED configmap/b\n" {
		t.Errorf("a bad line: exit %d, stdout %q", r.code, r.stdout)
	}
	checkOneLine(t, r.stderr, regexp.MustCompile(`^kubeevents: .*bad\.jsonl:3: not an event kubeevents wrote: not JSON .*--skip-bad-lines`))

	r = runKubeevents(t, 20*time.Second, "replay", bad, "-o", "name", "--skip-bad-lines")
	if r.code != 0 || r.stdout != "ADDED configmap/a\nADDED configmap/b\nADDED configmap/c\n" || !strings.Contains(r.stderr, "skipped 1 line that kubeevents did not write (the first: "+bad+":3)") {
		t.Errorf("--skip-bad-lines: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	r = runKubeevents(t, 20*time.Second, "replay", bad, "-o", "name", "--skip-bad-lines", "--by", "kubectl-*")
	if r.stdout != "ADDED configmap/a\nADDED configmap/c\n" {
		t.Errorf("--by kubectl-*: %q", r.stdout)
	}
	r = runKubeevents(t, 20*time.Second, "replay", bad, "-o", "name", "--skip-bad-lines", "--not-by", "helm")
	if r.stdout != "ADDED configmap/a\nADDED configmap/c\n" {
		t.Errorf("--not-by helm: %q", r.stdout)
	}

	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, []byte(good("a", "x")+"\n"+good("b", "x")[:40]), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runKubeevents(t, 20*time.Second, "replay", cut, "-o", "name")
	if r.code != 2 || r.stdout != "ADDED configmap/a\n" {
		t.Errorf("a last line cut short: exit %d, stdout %q", r.code, r.stdout)
	}
	checkOneLine(t, r.stderr, regexp.MustCompile(`cut\.jsonl:2: the last line is cut short .*--follow waits for the rest`))

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", filepath.Join(dir, "missing.jsonl")}, "missing.jsonl: no such file"},
		{[]string{"replay", "pods"}, "no recording given"},
		{[]string{"replay", bad, "--since", "1h", "--since-time", "2026-11-23T14:00:00Z"}, "give one"},
		{[]string{"replay", bad, "--until-time", "yesterday"}, `--until-time "yesterday": give an RFC 3339 time`},
		{[]string{"replay", bad, "pods", "--owned"}, "--owned follows one object"},
		{[]string{"replay", "-", "--follow"}, "drop --follow"},
		{[]string{"history", "cm/a"}, "no recording given"},
		{[]string{"history", "cm/a", "--file", bad, "--at", "2026-11-23T14:00:00Z", "-o", "wide"}, "-o wide: --at prints the object as kubectl get does"},
	} {
		r := runKubeevents(t, 20*time.Second, c.args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %q", c.args, r.code, r.stderr)
		}
		checkOneLine(t, r.stderr, literal(c.want))
	}
}

// TestWatchShowsPastEvents: watch --with-events --since shows the core Events of the
// watched objects that happened before the start, marked past, with when they happened;
// --resume shows those that happened while kubeevents was down, and not those it showed.
func TestWatchShowsPastEvents(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	createLivingDeployment(t, ns, "web", "nginx:1.27", 1)
	kubectlOut(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout", "80s")
	scaled := func(to string) func(ev envelope) bool {
		return func(ev envelope) bool {
			var e struct {
				Reason  string `json:"reason"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(ev.Object, &e)
			return e.Reason == "ScalingReplicaSet" && strings.HasSuffix(e.Message, "to "+to)
		}
	}
	past := func(line string) bool { return strings.Contains(line, `"past":true`) }

	since := startKubeevents(t, "watch", "deployments", "-n", ns, "--with-events", "--since", "10m", "-o", "json")
	since.waitJSON(30*time.Second, "the past ScalingReplicaSet Event", scaled("1"))
	since.interrupt(10 * time.Second)
	for _, l := range since.Seen() {
		if strings.Contains(l, "ScalingReplicaSet") && (!past(l) || !strings.Contains(l, `"lastTimestamp":`)) {
			t.Errorf("the Event from before the start is not marked past: %s", l)
		}
	}

	ckpt := filepath.Join(t.TempDir(), "events.ckpt")
	first := startKubeevents(t, "watch", "deployments", "-n", ns, "--with-events", "--resume", ckpt, "-o", "json", "-v=1")
	first.waitStderr(30*time.Second, literal("watching"))
	first.waitJSON(30*time.Second, "the Deployment", func(ev envelope) bool { return ev.name() == "web" })
	first.interrupt(10 * time.Second)
	kubectlOut(t, "", "scale", "deployment/web", "-n", ns, "--replicas", "2")
	waitUntilEvent(t, ns, "to 2")

	second := startKubeevents(t, "watch", "deployments", "-n", ns, "--with-events", "--resume", ckpt, "-o", "json")
	second.waitJSON(30*time.Second, "the Event of the scaling while it was down", scaled("2"))
	second.interrupt(10 * time.Second)
	for _, l := range second.Seen() {
		if strings.Contains(l, "ScalingReplicaSet") && strings.Contains(l, "to 1") {
			t.Errorf("the resumed run shows an Event the first one could have shown: %s", l)
		}
		if strings.Contains(l, "ScalingReplicaSet") && !past(l) {
			t.Errorf("an Event of while it was down is not marked past: %s", l)
		}
	}
}

// waitUntilEvent waits until a core Event in ns has a message ending in suffix.
func waitUntilEvent(t *testing.T, ns, suffix string) {
	t.Helper()
	deadline := time.Now().Add(livingWait)
	for time.Now().Before(deadline) {
		events, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err == nil {
			for _, e := range events.Items {
				if strings.HasSuffix(e.Message, suffix) {
					return
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no Event in %s ends with %q", ns, suffix)
}

// TestReplaySecretsRedacted: a recording made with --show-secrets holds Secret values;
// replay and history redact them, in every output, sink and diff, from a file and from
// the standard input, as watch does; replay --show-secrets shows them.
func TestReplaySecretsRedacted(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "secrets.jsonl")
	recorder := startKubeevents(t, "watch", "secrets", "-n", ns, "--show-secrets", "--show-old", "--no-screen", "--sink", "file="+path, "-v=1")
	recorder.waitStderr(20*time.Second, literal("watching"))
	v1, v2 := "s3cr3t-"+randomHex(8), "s3cr3t-"+randomHex(8) // stringData.password (in last-applied only)
	k1, k2 := "k3y-"+randomHex(8), "k3y-"+randomHex(8)       // data.apikey
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	apply := func(password, apikey string) {
		t.Helper()
		applyJSON(t, ns, fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds"},"stringData":{"password":%q},"data":{"apikey":%q}}`,
			password, b64(apikey)))
	}
	apply(v1, k1)
	apply(v2, k2)
	waitRecorded(t, recorder, path, "the second version", func(line string) bool { return strings.Contains(line, `"MODIFIED"`) && strings.Contains(line, b64(k2)) })
	recorder.interrupt(10 * time.Second)
	recorded := readString(t, path)
	values := []string{v1, v2, k1, k2, b64(v1), b64(v2), b64(k1), b64(k2)}
	for _, v := range []string{v2, b64(k1), b64(k2)} {
		if !strings.Contains(recorded, v) {
			t.Fatalf("the recording made with --show-secrets does not hold %q:\n%s", v, recorded)
		}
	}

	at := time.Now().UTC().Format(time.RFC3339Nano)
	out := filepath.Join(dir, "sink.jsonl")
	runs := map[string]result{
		"replay -o json --show-old": runKubeevents(t, 30*time.Second, "replay", path, "-o", "json", "--show-old"),
		"replay (pretty)":           runKubeevents(t, 30*time.Second, "replay", path, "--color", "never"),
		"replay -o yaml":            runKubeevents(t, 30*time.Second, "replay", path, "-o", "yaml"),
		"replay --jq":               runKubeevents(t, 30*time.Second, "replay", path, "--jq", "[.object, .diff]"),
		"replay --sink file=":       runKubeevents(t, 30*time.Second, "replay", path, "--no-screen", "--sink", "file="+out),
		"replay - (stdin)":          kubeevents(t).Stdin(strings.NewReader(recorded)).Run(30*time.Second, "replay", "-", "-o", "json"),
		"history":                   runKubeevents(t, 30*time.Second, "history", "secret/creds", "-n", ns, "--file", path, "-o", "json"),
		"history --at":              runKubeevents(t, 30*time.Second, "history", "secret/creds", "-n", ns, "--file", path, "--at", at),
	}
	runs["replay --sink file="] = result{stdout: readString(t, out), stderr: runs["replay --sink file="].stderr, code: runs["replay --sink file="].code}
	for what, r := range runs {
		if r.code != 0 {
			t.Errorf("%s: exit %d; stderr:\n%s", what, r.code, r.stderr)
		}
		for _, v := range values {
			if strings.Contains(r.stdout+r.stderr, v) {
				t.Errorf("%s: a Secret value, %q, is printed:\n%s", what, v, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, "redacted") {
			t.Errorf("%s: no redacted value:\n%s", what, r.stdout)
		}
	}
	for _, ev := range parseEvents(t, "replay -o json", []byte(runs["replay -o json --show-old"].stdout)) {
		var obj struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(ev.Object, &obj)
		if la := obj.Metadata.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; !strings.HasPrefix(la, "<redacted: ") {
			t.Errorf("%s event: last-applied-configuration = %q, want it redacted", ev.Type, la)
		}
	}
	shown := runKubeevents(t, 30*time.Second, "replay", path, "-o", "json", "--show-secrets")
	for _, v := range []string{b64(k1), b64(k2), v2} {
		if !strings.Contains(shown.stdout, v) {
			t.Errorf("replay --show-secrets: %q is not shown (exit %d, stderr %s)", v, shown.code, shown.stderr)
		}
	}
}

// TestReplayKeepsWhoMadeEachChange: replay -o json of a whole recording writes it again
// byte for byte, "by" included; pretty output names the managers and jq reads them.
func TestReplayKeepsWhoMadeEachChange(t *testing.T) {
	ns := newNamespace(t)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	recorder := startKubeevents(t, "watch", "configmaps", "-n", ns, "--no-screen", "--sink", "file="+path, "-v=1")
	recorder.waitStderr(20*time.Second, literal("watching"))
	kubectlOut(t, "", "create", "configmap", "settings", "-n", ns, "--from-literal=mode=a")
	kubectlOut(t, "", "label", "configmap", "settings", "-n", ns, "tier=web")
	kubectlOut(t, "", "patch", "configmap", "settings", "-n", ns, "--type=merge", "-p", `{"data":{"mode":"b"}}`)
	waitRecorded(t, recorder, path, "the patch", func(line string) bool { return strings.Contains(line, `"manager":"kubectl-patch"`) })
	recorder.interrupt(10 * time.Second)
	recorded := strings.Split(strings.TrimSpace(readString(t, path)), "\n")
	if n := strings.Count(strings.Join(recorded, "\n"), `,"by":[`); n < 3 {
		t.Fatalf("the recording names who made %d changes, want at least 3:\n%s", n, strings.Join(recorded, "\n"))
	}

	js := runKubeevents(t, 30*time.Second, "replay", path, "-o", "json")
	if got := strings.Split(strings.TrimSpace(js.stdout), "\n"); js.code != 0 || strings.Join(got, "\n") != strings.Join(recorded, "\n") {
		for i := range max(len(got), len(recorded)) {
			if i >= len(got) || i >= len(recorded) || got[i] != recorded[i] {
				t.Errorf("replay -o json: exit %d, line %d differs from the recording's (of %d, %d):\n got %s\nwant %s", js.code, i+1, len(got), len(recorded),
					strings.Join(got[min(i, len(got)-1):min(i+1, len(got))], ""), strings.Join(recorded[min(i, len(recorded)-1):min(i+1, len(recorded))], ""))
				break
			}
		}
	}
	pretty := runKubeevents(t, 30*time.Second, "replay", path, "cm", "settings", "--color", "never")
	for _, want := range []string{`(?m)^\S+\s+ADDED\s+\S*/settings\s.*by kubectl-create$`, `(?m)^\S+\s+MODIFIED\s+\S*/settings\s.*by kubectl-label$`, `(?m)^\S+\s+MODIFIED\s+\S*/settings\s.*by kubectl-patch$`} {
		if !regexp.MustCompile(want).MatchString(pretty.stdout) {
			t.Errorf("replay (pretty): no line matching %s in:\n%s", want, pretty.stdout)
		}
	}
	managers := runKubeevents(t, 30*time.Second, "replay", path, "cm", "settings", "--jq", ".by[0].manager", "-r")
	if managers.stdout != "kubectl-create\nkubectl-label\nkubectl-patch\n" {
		t.Errorf("replay --jq .by[0].manager: %q; stderr %s", managers.stdout, managers.stderr)
	}
}

// TestReplayTransitionsLiving: a pod's crash loop recorded; replayed with --on crashloop,
// the events in which the pod entered CrashLoopBackOff are kept (the first is the first
// recorded version in that state), each naming the transition, and an alertmanager sink
// with on=crashloop is sent the alert.
func TestReplayTransitionsLiving(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	recorder := startKubeevents(t, "watch", "pods", "-n", ns, "--no-screen", "--sink", "file="+path, "-v=1")
	recorder.waitStderr(20*time.Second, literal("watching"))
	flaky := pod("flaky", map[string]string{"sim.kubeevents.dev/behavior": "crashloop"})
	flaky.Spec.SchedulerName = ""
	flaky.Annotations = map[string]string{"sim.kubeevents.dev/crash-after-ms": "500", "sim.kubeevents.dev/restart-after-ms": "3000"}
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), flaky, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// crashLooping: the line's pod waits in CrashLoopBackOff (its diff may name the state
	// it left, so the line's text does not tell).
	crashLooping := func(line string) bool {
		var ev envelope
		if line == "" || json.Unmarshal([]byte(line), &ev) != nil {
			return false
		}
		for _, c := range ev.pod(t).Status.ContainerStatuses {
			if c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff" {
				return true
			}
		}
		return false
	}
	// A version in CrashLoopBackOff, and one after it that is not: what --on keeps and
	// leaves out are both there.
	waitUntil(t, recorder, livingWait, "the recording holds the pod in CrashLoopBackOff and out of it again", func() bool {
		raw, _ := os.ReadFile(path)
		seen := false
		for _, line := range strings.Split(string(raw), "\n") {
			if crashLooping(line) {
				seen = true
			} else if seen && line != "" {
				return true
			}
		}
		return false
	})
	recorder.interrupt(10 * time.Second)
	var first string
	for _, line := range strings.Split(readString(t, path), "\n") {
		if crashLooping(line) {
			var ev envelope
			_ = json.Unmarshal([]byte(line), &ev)
			first = ev.meta().Metadata.ResourceVersion
			break
		}
	}

	on := runKubeevents(t, 30*time.Second, "replay", path, "-o", "json", "--on", "crashloop")
	lines := strings.Split(strings.TrimSpace(on.stdout), "\n")
	if on.code != 0 || on.stdout == "" {
		t.Fatalf("replay --on crashloop: exit %d, nothing kept; stderr:\n%s", on.code, on.stderr)
	}
	for i, line := range lines {
		var ev onEnvelope
		if err := json.Unmarshal([]byte(line), &ev); err != nil || !slices.Equal(ev.On, []string{"crashloop"}) || !crashLooping(line) {
			t.Errorf("replay --on crashloop: a line that is not the pod entering CrashLoopBackOff (on %v): %s", ev.On, line)
		}
		if rv := ev.meta().Metadata.ResourceVersion; i == 0 && rv != first {
			t.Errorf("replay --on crashloop: the first is at resourceVersion %s, the first recorded in CrashLoopBackOff %s", rv, first)
		}
	}

	rcv := newFormatReceiver(t, map[string]string{"/api/v2/alerts": "alertmanager"})
	sent := runKubeevents(t, 30*time.Second, "replay", path, "--no-screen",
		"--sink", "http(format=alertmanager,on=crashloop,batch-interval=200ms)="+rcv.srv.URL+"/api/v2/alerts")
	bodies := rcv.got("alertmanager")
	if sent.code != 0 || len(bodies) == 0 {
		t.Fatalf("replay with an alertmanager sink on=crashloop: exit %d, %d requests; stderr:\n%s", sent.code, len(bodies), sent.stderr)
	}
	for _, body := range bodies {
		var alerts []struct {
			Labels map[string]string `json:"labels"`
		}
		if err := json.Unmarshal([]byte(body), &alerts); err != nil {
			t.Fatalf("alertmanager body: %v", err)
		}
		for _, a := range alerts {
			if a.Labels["alertname"] != "crashloop" || a.Labels["name"] != "flaky" || a.Labels["namespace"] != ns {
				t.Errorf("an alert the sink's on=crashloop should have left out, or mislabelled: %v", a.Labels)
			}
		}
	}
}

// TestReplaySelectsWithinTheRecording: history's name in two namespaces asks for -n (or
// -A); a name not recorded says so, exit 1; replay says in one line when -n, --cluster
// or a name matches nothing recorded; -n and --cluster are worded as selecting within the
// recording; the shell's completion offers what the recording holds.
func TestReplaySelectsWithinTheRecording(t *testing.T) {
	ns1, ns2 := newNamespace(t), newNamespace(t)
	namespaces := []string{ns1, ns2}
	slices.Sort(namespaces)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	recorder := startKubeevents(t, "watch", "configmaps", "-n", ns1+","+ns2, "--no-screen", "--sink", "file="+path, "-v=1")
	recorder.waitStderr(20*time.Second, literal("watching"))
	for _, ns := range namespaces {
		kubectlOut(t, "", "create", "configmap", "settings", "-n", ns, "--from-literal=mode=a")
	}
	kubectlOut(t, "", "patch", "configmap", "settings", "-n", ns1, "--type=merge", "-p", `{"data":{"mode":"b"}}`)
	waitRecorded(t, recorder, path, "the patch", func(line string) bool { return strings.Contains(line, `"mode":"b"`) })
	waitRecorded(t, recorder, path, "the ConfigMap in "+ns2, func(line string) bool {
		return strings.Contains(line, `"name":"settings","namespace":"`+ns2+`"`)
	})
	recorder.interrupt(10 * time.Second)
	recorded := readString(t, path)

	for _, c := range []struct {
		args  []string
		stdin string
		code  int
		want  string // the one line of stderr
	}{
		{[]string{"history", "cm/settings", "--file", path}, "", 2,
			"cm/settings was recorded in several namespaces (" + strings.Join(namespaces, ", ") + "): choose one with -n, or all of them with -A"},
		{[]string{"history", "cm/settings", "--file", "-"}, recorded, 2, "cm/settings was recorded in several namespaces"},
		{[]string{"history", "cm/nosuch", "--file", path}, "", 1, "cm/nosuch was not recorded in " + path},
		{[]string{"history", "cm/settings", "-n", "default", "--file", path}, "", 1,
			"cm/settings was not recorded in namespace default in " + path + " (it was recorded in namespaces " + strings.Join(namespaces, ", ") + ")"},
		{[]string{"replay", path, "--cluster", "foo"}, "", 0, "--cluster foo: the recording names no cluster"},
		{[]string{"replay", path, "-n", "nosuch"}, "", 0,
			"no events in namespace nosuch in the recording, which holds the namespaces " + strings.Join(namespaces, ", ")},
		{[]string{"replay", path, "cm", "nosuch"}, "", 0, "no events of cm named nosuch in the recording"},
	} {
		r := kubeevents(t).Stdin(strings.NewReader(c.stdin)).Run(30*time.Second, c.args...)
		if r.code != c.code || r.stdout != "" {
			t.Errorf("%q: exit %d, want %d; stdout %q", c.args, r.code, c.code, r.stdout)
		}
		checkOneLine(t, r.stderr, regexp.MustCompile(`^kubeevents: `+regexp.QuoteMeta(c.want)))
	}

	one := runKubeevents(t, 30*time.Second, "history", "cm/settings", "-n", ns1, "--file", path, "--color", "never")
	if one.code != 0 || !regexp.MustCompile(`(?m)^\s+~ data\.mode: a → b$`).MatchString(one.stdout) || strings.Count(one.stdout, "settings") != 2 {
		t.Errorf("history -n %s: exit %d, stderr %s, stdout:\n%s", ns1, one.code, one.stderr, one.stdout)
	}
	all := runKubeevents(t, 30*time.Second, "history", "cm/settings", "-A", "--file", path, "-o", "json")
	seen := map[string]int{}
	for _, ev := range parseEvents(t, "history -A", []byte(all.stdout)) {
		seen[ev.meta().Metadata.Namespace]++
	}
	if all.code != 0 || seen[ns1] != 2 || seen[ns2] != 1 {
		t.Errorf("history -A: exit %d, events by namespace %v; stderr %s", all.code, seen, all.stderr)
	}

	help := runKubeevents(t, 30*time.Second, "replay", "--help")
	for _, want := range []string{`(?m)^\s+-n, --namespace string\s+only the objects of these namespaces recorded`, `(?m)^\s+--cluster string\s+only the events of these clusters, in a recording of several`} {
		if !regexp.MustCompile(want).MatchString(help.stdout) {
			t.Errorf("replay --help: no line matching %s in:\n%s", want, help.stdout)
		}
	}
	if strings.Contains(help.stdout, "namespace scope for this CLI request") {
		t.Errorf("replay --help still gives kubectl's wording for -n:\n%s", help.stdout)
	}

	complete := completer(t)
	complete("replay", path, "").is(t, "replay FILE <TAB>", "configmaps")
	complete("replay", path, "-n", ns2, "cm", "s").is(t, "replay FILE -n NS cm s<TAB>", "settings")
	complete("replay", path, "-n", "").is(t, "replay FILE -n <TAB>", namespaces...)
	complete("history", "--file", path, "cm/s").is(t, "history --file FILE cm/s<TAB>", "cm/settings")
}

// TestReplayClusterNotRecorded: in a recording of two clusters, --cluster naming
// another says so with the clusters it holds; --cluster completes with them.
func TestReplayClusterNotRecorded(t *testing.T) {
	second, kc := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	recorder := startKubeevents(t, "watch", "configmaps", "-n", ns, "--context", "one,two", "--kubeconfig", kc, "--no-screen", "--sink", "file="+path, "-v=1")
	recorder.waitStderr(30*time.Second, literal("watching"))
	createConfigMapIn(t, client, ns, "a")
	createConfigMapIn(t, second.client, ns, "b")
	for _, c := range []struct{ cluster, name string }{{"one", "a"}, {"two", "b"}} {
		waitRecorded(t, recorder, path, c.name+" in "+c.cluster, func(line string) bool {
			return strings.Contains(line, `"cluster":"`+c.cluster+`"`) && strings.Contains(line, `"name":"`+c.name+`"`)
		})
	}
	recorder.interrupt(10 * time.Second)

	r := runKubeevents(t, 30*time.Second, "replay", path, "--cluster", "three")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("--cluster three: exit %d, stdout %q", r.code, r.stdout)
	}
	checkOneLine(t, r.stderr, literal("kubeevents: no events of cluster three in the recording, which holds the clusters one, two"))
	r = runKubeevents(t, 30*time.Second, "replay", path, "--cluster", "two", "cm", "b", "-o", "name")
	if r.code != 0 || r.stdout != "ADDED configmap/b\n" || r.stderr != "" {
		t.Errorf("--cluster two: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	completer(t)("replay", path, "--cluster", "").is(t, "replay FILE --cluster <TAB>", "one", "two")
}
