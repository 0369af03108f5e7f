package e2e

// The local cluster serves real container logs (hack/cluster.sh: the simulated nodes'
// kubelet endpoint is kwok's server, which serves the files a kwok Logs object names), and
// internal/crashcontext finds a crash's last words in them, as kubectl logs --previous does.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/crashcontext"
)

// criLog writes lines to path in the CRI log format kubelets (and kwok) read.
func criLog(t *testing.T, path string, lines ...string) {
	t.Helper()
	var b strings.Builder
	now := time.Now().UTC()
	for i, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", now.Add(time.Duration(i-len(lines))*time.Millisecond).Format(time.RFC3339Nano), l)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// createLoggingCrashLoop creates a pod that crash-loops (sim.kubeevents.dev/behavior=
// crashloop, crashing a second after it is ready and restarting a second later) and whose
// container "app" logged lastWords before each crash: a kwok Logs object, made first,
// gives it those lines as its previous instance's log and "restarted" as its current one's.
func createLoggingCrashLoop(t *testing.T, ns, name string, lastWords ...string) *corev1.Pod {
	t.Helper()
	if _, err := client.Discovery().ServerResourcesForGroupVersion("kwok.x-k8s.io/v1alpha1"); err != nil {
		t.Fatalf("the local cluster serves no kwok Logs objects (%v): it was started before hack/cluster.sh gave its nodes a kubelet endpoint; restart it (hack/cluster.sh down, then up)", err)
	}
	dir := t.TempDir()
	criLog(t, filepath.Join(dir, "previous.log"), lastWords...)
	criLog(t, filepath.Join(dir, "current.log"), "restarted")
	applyJSON(t, ns, fmt.Sprintf(`{"apiVersion":"kwok.x-k8s.io/v1alpha1","kind":"Logs","metadata":{"name":%q},
		"spec":{"logs":[{"logsFile":%q,"previousLogsFile":%q}]}}`,
		name, filepath.Join(dir, "current.log"), filepath.Join(dir, "previous.log")))
	p := pod(name, map[string]string{"sim.kubeevents.dev/behavior": "crashloop"})
	p.Spec.SchedulerName = "" // the default scheduler: kwok's nodes run it
	p.Annotations = map[string]string{"sim.kubeevents.dev/crash-after-ms": "1s", "sim.kubeevents.dev/restart-after-ms": "1s"}
	created, err := client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
	return created
}

// waitCrashed waits until the pod's container has crashed at least once, and returns it.
func waitCrashed(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	var p *corev1.Pod
	waitUntil(t, nil, livingWait, "pod "+name+" crashed once", func() bool {
		got, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("getting pod %s: %v", name, err)
		}
		p = got
		for _, cs := range got.Status.ContainerStatuses {
			if cs.LastTerminationState.Terminated != nil {
				return true
			}
		}
		return false
	})
	return p
}

// A crash-looping pod's last log line, through kubectl logs --previous and through
// internal/crashcontext, with its exit and the pod's Warning Events.
func TestLivingCrashLogs(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	last := "panic: kubeevents-e2e " + randomHex(4) + ": dial tcp 10.96.0.9:5432: connection refused"
	createLoggingCrashLoop(t, ns, "flaky", "starting", "connecting to the database", last)
	p := waitCrashed(t, ns, "flaky")

	// kwok learns of the Logs object through a watch: a moment after it was made.
	var out []byte
	waitUntil(t, nil, 30*time.Second, "kubectl logs --previous gives the last words", func() bool {
		var err error
		out, err = exec.Command(filepath.Join(clusterBin, "kubectl"), "--kubeconfig", kubeconfig,
			"logs", "-n", ns, "flaky", "--previous", "--tail", "1").CombinedOutput()
		return err == nil && string(out) == last+"\n"
	})
	if got := kubectlOut(t, "", "logs", "-n", ns, "flaky"); got != "restarted\n" {
		t.Errorf("kubectl logs (the current instance) = %q", got)
	}

	var notices []string
	c := crashcontext.New(client, crashcontext.DefaultOptions(), func(l string) { notices = append(notices, l) }).
		Fetch(context.Background(), p, "")
	if c.Container != "app" || c.Log == nil || !c.Log.Previous || c.LogError != "" {
		t.Fatalf("context %+v (log error %q): want app's previous log", c, c.LogError)
	}
	if want := []string{"starting", "connecting to the database", last}; !slices.Equal(c.Log.Lines, want) {
		t.Errorf("log lines %q, want %q", c.Log.Lines, want)
	}
	if lt := c.LastTermination; lt == nil || lt.ExitCode != 1 || lt.Reason != "Error" {
		t.Errorf("last termination %+v, want exit 1 (Error)", lt)
	}
	if !slices.ContainsFunc(c.Warnings, func(w crashcontext.Warning) bool { return w.Reason == "BackOff" }) || c.WarningsError != "" {
		t.Errorf("warnings %+v (%q), want kwok's BackOff", c.Warnings, c.WarningsError)
	}
	if len(notices) != 0 {
		t.Errorf("notices %q", notices)
	}

	// Tail lines as asked.
	opts := crashcontext.DefaultOptions()
	opts.Lines = 1
	if c := crashcontext.New(client, opts, nil).Fetch(context.Background(), p, "app"); c.Log == nil || !slices.Equal(c.Log.Lines, []string{last}) {
		t.Errorf("Lines 1: %+v %q", c.Log, c.LogError)
	}
}

// Without the right to read logs (a user who may get pods and list events, not get
// pods/log), the context says so once and still has the rest.
func TestLivingCrashLogsForbidden(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	createLoggingCrashLoop(t, ns, "flaky", "the last words")
	createLoggingCrashLoop(t, ns, "flaky-2", "other last words")
	user := "e2e-no-logs-" + randomHex(4)
	applyJSON(t, ns, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"pods-and-events"},
		"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]},{"apiGroups":[""],"resources":["events"],"verbs":["list"]}]}`)
	applyJSON(t, ns, fmt.Sprintf(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"pods-and-events"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"pods-and-events"},
		"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":%q}]}`, user))
	cfg := rest.CopyConfig(restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	limited, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods := []*corev1.Pod{waitCrashed(t, ns, "flaky"), waitCrashed(t, ns, "flaky-2")}

	var mu sync.Mutex
	var notices []string
	f := crashcontext.New(limited, crashcontext.DefaultOptions(), func(l string) {
		mu.Lock()
		defer mu.Unlock()
		notices = append(notices, l)
	})
	// RBAC takes effect a moment after the binding is made: until then even the
	// events are refused.
	waitUntil(t, nil, 30*time.Second, "the events listed with the Role's rights", func() bool {
		return f.Fetch(context.Background(), pods[0], "app").WarningsError == ""
	})
	for _, p := range pods {
		c := f.Fetch(context.Background(), p, "app")
		if c.Log != nil || c.LogError != "not allowed to get pods/log" {
			t.Errorf("%s: log %+v, error %q", p.Name, c.Log, c.LogError)
		}
		if c.LastTermination == nil || c.LastTermination.ExitCode != 1 || c.WarningsError != "" {
			t.Errorf("%s: without the log the rest went too: %+v", p.Name, c)
		}
	}
	logNotices := 0
	for _, n := range notices {
		if strings.Contains(n, "not allowed to get pods/log in namespace "+ns) {
			logNotices++
		}
	}
	if logNotices != 1 {
		t.Errorf("notices %q: want the missing right said once", notices)
	}
}
