package e2e

// Defects a new user found (several namespaces, a closed stdout beside other sinks, an
// interrupted wait, Secrets in client-go's logs): each test fails on the old behaviour.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// --resume with -n a,b keeps both namespaces' objects: an identical second start emits
// nothing (it used to emit every object as DELETED), a change in one namespace comes
// once, and a checkpoint of another set of namespaces is refused.
func TestResumeSeveralNamespaces(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	createResumeConfigMap(t, a, "one", "1")
	createResumeConfigMap(t, b, "two", "1")
	ckpt := filepath.Join(t.TempDir(), "x.ckpt")
	watch := func(namespaces string, extra ...string) result {
		args := append([]string{"watch", "configmaps", "-n", namespaces, "-l", resumeLabel, "-o", "json", "--resume", ckpt, "--timeout", "3s"}, extra...)
		return runKubeevents(t, 60*time.Second, args...)
	}
	r := watch(a + "," + b)
	if got := eventSummary(jsonLines(t, r.stdout)); r.code != 0 || !slices.Equal(got, []string{"ADDED one", "ADDED two"}) {
		t.Fatalf("first start: exit %d, events %q, stderr %s", r.code, got, r.stderr)
	}
	r = watch(a + "," + b)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("an identical second start: exit %d, events:\n%s\nstderr %s; want none", r.code, r.stdout, r.stderr)
	}
	patchResumeConfigMap(t, b, "two", "2")
	r = watch(a + "," + b)
	if got := eventSummary(jsonLines(t, r.stdout)); r.code != 0 || !slices.Equal(got, []string{"MODIFIED two"}) {
		t.Errorf("after a change in %s: exit %d, events %q; want the one MODIFIED", b, r.code, got)
	}
	r = watch(a)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "of another watch") {
		t.Errorf("the checkpoint of -n %s,%s with -n %s: exit %d, stderr %q; want the refusal (exit 2)", a, b, a, r.code, r.stderr)
	}
}

// Everything that changes which objects are watched belongs to a checkpoint's identity:
// an -A checkpoint is refused with --exclude-namespace (it used to emit the excluded
// namespace's objects as DELETED).
func TestResumeExcludedNamespacesAreIdentity(t *testing.T) {
	ns := newNamespace(t)
	createResumeConfigMap(t, ns, "one", "1")
	ckpt := filepath.Join(t.TempDir(), "x.ckpt")
	args := []string{"watch", "configmaps", "-A", "-l", resumeLabel, "-o", "json", "--resume", ckpt, "--timeout", "3s"}
	if r := runKubeevents(t, 60*time.Second, args...); r.code != 0 {
		t.Fatalf("first start: exit %d, stderr %s", r.code, r.stderr)
	}
	r := runKubeevents(t, 60*time.Second, append(args, "--exclude-namespace", ns)...)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "excluded namespaces") {
		t.Errorf("with --exclude-namespace: exit %d, stdout %q, stderr %q; want the refusal naming the excluded namespaces", r.code, r.stdout, r.stderr)
	}
}

// --until-deleted with -n a,b waits for the named object in every namespace given (it
// used to exit 0 at once when the object was in the first).
func TestUntilDeletedSeveralNamespaces(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	createResumeConfigMap(t, a, "web", "1")
	r := runKubeevents(t, 60*time.Second, "watch", "configmaps", "web", "-n", b+","+a, "--until-deleted", "--timeout", "3s", "-o", "name")
	if r.code != 3 || !strings.Contains(r.stderr, "timed out after 3s before --until-deleted was met") {
		t.Fatalf("web present in %s: exit %d, stderr %q; want exit 3 after the timeout", a, r.code, r.stderr)
	}
	s := startKubeevents(t, "watch", "configmaps", "web", "-n", b+","+a, "--until-deleted", "-o", "name", "-v=1")
	s.waitFor(30*time.Second, "web listed", func(line string) bool { return strings.Contains(line, "web") })
	deleteResumeConfigMap(t, a, "web")
	if _, code := s.wait(30 * time.Second); code != 0 {
		t.Errorf("after the deletion: exit %d, stderr %s; want 0", code, s.Stderr())
	}
}

// An unmet --until-deleted (or --until) interrupted by SIGTERM or Ctrl-C exits 3, so that
// `timeout 300 kubeevents ... && promote` does not promote.
func TestInterruptedWaitIsNotSuccess(t *testing.T) {
	ns := newNamespace(t)
	createResumeConfigMap(t, ns, "web", "1")
	for _, c := range []struct {
		sig  os.Signal
		args []string
		flag string
	}{
		{syscall.SIGTERM, []string{"watch", "configmaps", "web", "-n", ns, "--until-deleted"}, "--until-deleted"},
		{os.Interrupt, []string{"watch", "configmaps", "-n", ns, "--until", `.type == "DELETED"`}, "--until"},
	} {
		s := startKubeevents(t, append(c.args, "-o", "name")...)
		s.waitFor(30*time.Second, "web listed", func(line string) bool { return strings.Contains(line, "web") })
		s.signal(c.sig)
		if _, code := s.wait(30 * time.Second); code != 3 || !strings.Contains(s.Stderr(), "interrupted before "+c.flag+" was met") {
			t.Errorf("%s on %s: exit %d, stderr %q; want 3 and the reason", c.sig, c.flag, code, s.Stderr())
		}
	}
	// A plain watch interrupted is a clean end.
	s := startKubeevents(t, "watch", "configmaps", "-n", ns, "-o", "name")
	s.waitFor(30*time.Second, "web listed", func(line string) bool { return strings.Contains(line, "web") })
	if _, code := s.interrupt(30 * time.Second); code != 0 {
		t.Errorf("a plain watch interrupted: exit %d, want 0", code)
	}
}

// `kubeevents watch ... --sink file=x | head -1`: once the reader of stdout is gone the
// run ends within seconds, says why (another sink was writing), and the file keeps what
// it was given. It used to run on, silently, for ever.
func TestClosedStdoutBesideAnotherSink(t *testing.T) {
	ns := newNamespace(t)
	createResumeConfigMap(t, ns, "web", "1")
	file := filepath.Join(t.TempDir(), "x.jsonl")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := kubeevents(t).Stdout(w).Start("watch", "configmaps", "-n", ns, "-l", resumeLabel, "-o", "name", "--sink", "file="+file)
	_ = w.Close() // kubeevents' now
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || !strings.Contains(line, "web") {
		t.Fatalf("first line %q, %v", line, err)
	}
	_ = r.Close() // as head -1 does once it has its line
	if _, _, err := p.Wait(10 * time.Second); err != nil {
		t.Fatalf("kubeevents still runs 10 s after its stdout was closed; stderr:\n%s", p.Stderr())
	}
	if p.ExitCode() != 0 {
		t.Errorf("exit %v, want 0", p.Err())
	}
	if !strings.Contains(p.Stderr(), "the standard output was closed") {
		t.Errorf("stderr %q; want it to say that stdout was closed", p.Stderr())
	}
	if data, err := os.ReadFile(file); err != nil || !strings.Contains(string(data), `"name":"web"`) {
		t.Errorf("the file sink holds %q, %v; want the event", data, err)
	}
}

// client-go logs response bodies from -v=8: with Secrets among the types followed by
// --owned-types, the logs are capped as when Secrets are watched directly.
func TestSecretsOfOwnedTypesStayOutOfLogs(t *testing.T) {
	ns := newNamespace(t)
	owner, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const value = "s3cr3t-value-of-the-test"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owned", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}}, StringData: map[string]string{"token": value}}
	if _, err := client.CoreV1().Secrets(ns).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := runKubeevents(t, 60*time.Second, "watch", "configmap/owner", "-n", ns, "--owned", "--owned-types", "secrets", "-v=9", "--timeout", "3s", "-o", "name")
	encoded := base64.StdEncoding.EncodeToString([]byte(value))
	if strings.Contains(r.stderr, value) || strings.Contains(r.stderr, encoded) {
		t.Errorf("the Secret's value is in the logs:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "-v=9 would log Secret values") || !strings.Contains(r.stdout, "secret/owned") {
		t.Errorf("exit %d, stdout %q; want the owned Secret shown and the cap said", r.code, r.stdout)
	}
}

// --with-events with -n a,b watches the Events of those namespaces, not of every one:
// a user with rights in a and b only can use it.
func TestWithEventsInTheNamespacesGiven(t *testing.T) {
	a, b := newNamespace(t), newNamespace(t)
	r := runKubeevents(t, 60*time.Second, "watch", "configmaps", "-n", a+","+b, "--with-events", "-v=6", "--timeout", "3s", "-o", "name")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	for _, ns := range []string{a, b} {
		if !strings.Contains(r.stderr, "/api/v1/namespaces/"+ns+"/events?") {
			t.Errorf("no list of the Events of %s in the requests:\n%s", ns, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "/api/v1/events?") {
		t.Errorf("the Events of every namespace were listed:\n%s", r.stderr)
	}
}

// Under cron or nohup stdout is /dev/null: a sink writing to /dev/null as well is no
// second writer of stdout (it used to be refused with --no-screen).
func TestDevNullStdoutAndSink(t *testing.T) {
	ns := newNamespace(t)
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	r := kubeevents(t).Stdout(devNull).Run(60*time.Second, "watch", "configmaps", "-n", ns, "--no-screen", "--sink", "jq(output=/dev/null)=.", "--timeout", "2s")
	if r.code != 0 {
		t.Errorf("exit %d, stderr %q; want 0", r.code, r.stderr)
	}
}

// Bad input found while connecting is still bad input: one line, exit 2.
func TestBadInputSeveralNamespacesAndContexts(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "deploy/web", "-n", "a,b", "--owned"}, "--owned follows one object in one namespace, but -n names 2 (a,b)"},
		{[]string{"watch", "pods", "--context", "admn"}, `no context "admn" in the kubeconfig (did you mean "admin"?)`},
	} {
		r := runKubeevents(t, 60*time.Second, c.args...)
		if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
}

// jsonLines reads JSON Lines output.
func jsonLines(t *testing.T, out string) []envelope {
	t.Helper()
	var evs []envelope
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev envelope
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}
