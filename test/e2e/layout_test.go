package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// setContainerState writes the pod's status as a kubelet would: its phase and the one
// container's state and restart count.
func setContainerState(t *testing.T, ns, name string, phase corev1.PodPhase, state corev1.ContainerState, restarts int32) {
	t.Helper()
	p, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = phase
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "nginx:1.27", State: state, RestartCount: restarts}}
	if _, err := client.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the status of pod %s/%s: %v", ns, name, err)
	}
}

// A pod's STATUS is what kubectl shows (CrashLoopBackOff, OOMKilled, ...), not its phase.
func TestPodStatusReasons(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "web-1", nil)
	s := startKubeevents(t, "watch", "pods", "-n", ns, "--color", "never", "--no-diff")
	s.waitFor(eventWait, "ADDED web-1", func(l string) bool { return strings.Contains(l, "ADDED") })

	for _, step := range []struct {
		phase    corev1.PodPhase
		state    corev1.ContainerState
		restarts int32
		want     string
	}{
		{corev1.PodPending, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}, 0, `0/1\s+ImagePullBackOff\s+0\b`},
		{corev1.PodRunning, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, 5, `0/1\s+CrashLoopBackOff\s+5\b`},
		{corev1.PodRunning, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}, 6, `0/1\s+OOMKilled\s+6\b`},
		{corev1.PodFailed, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}, 6, `0/1\s+Error\s+6\b`},
	} {
		setContainerState(t, ns, "web-1", step.phase, step.state, step.restarts)
		want := regexp.MustCompile(`  MODIFIED\s+web-1\s+` + step.want + `.*$`)
		s.waitFor(eventWait, "MODIFIED web-1 with "+step.want, func(l string) bool {
			return strings.Contains(l, "MODIFIED") && want.MatchString(l)
		})
	}
	if _, code := s.interrupt(10 * time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0", code)
	}
}

// An Event repeated shows how often it happened, whether events.k8s.io wrote it
// (series.count) or a core v1 client (count).
func TestEventCountShown(t *testing.T) {
	ns := newNamespace(t)
	regarding := corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: "web-1"}
	now := metav1.NowMicro()
	seriesEvent := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1.backoff"},
		EventTime:  now, Series: &eventsv1.EventSeries{Count: 2, LastObservedTime: now},
		ReportingController: "e2e.kubeevents.dev/test", ReportingInstance: "e2e-1", Action: "Restarting",
		Regarding: regarding, Reason: "BackOff", Note: "Back-off restarting failed container", Type: corev1.EventTypeWarning,
	}
	if _, err := client.EventsV1().Events(ns).Create(context.Background(), seriesEvent, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the events.k8s.io Event: %v", err)
	}
	recordEvent(t, ns, "web-1.pulled", "web-1", corev1.EventTypeNormal, "Pulled", "Container image already present")

	newer := startKubeevents(t, "watch", "events.events.k8s.io", "-n", ns, "--color", "never")
	core := startKubeevents(t, "watch", "events", "-n", ns, "--color", "never")
	newer.waitFor(eventWait, "ADDED web-1.backoff", func(l string) bool { return strings.Contains(l, "ADDED") && strings.Contains(l, "web-1.backoff") })
	core.waitFor(eventWait, "ADDED web-1.pulled", func(l string) bool { return strings.Contains(l, "ADDED") && strings.Contains(l, "web-1.pulled") })

	patch := fmt.Sprintf(`{"series":{"count":9,"lastObservedTime":%q}}`, metav1.NowMicro().Format(metav1.RFC3339Micro))
	if _, err := client.EventsV1().Events(ns).Patch(context.Background(), "web-1.backoff", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Events(ns).Patch(context.Background(), "web-1.pulled", types.MergePatchType, []byte(`{"count":5}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`  MODIFIED\s+web-1\.backoff\s+Warning  pod/web-1  BackOff: Back-off restarting failed container \(x9\)(  by \S.*)?$`)
	newer.waitFor(eventWait, "the series.count bump with (x9)", func(l string) bool { return strings.Contains(l, "MODIFIED") && want.MatchString(l) })
	want = regexp.MustCompile(`  MODIFIED\s+web-1\.pulled\s+Normal  pod/web-1  Pulled: Container image already present \(x5\)(  by \S.*)?$`)
	core.waitFor(eventWait, "the count bump with (x5)", func(l string) bool { return strings.Contains(l, "MODIFIED") && want.MatchString(l) })
}

// On an 80-column terminal, with -n: names leave the namespace out, the name column is
// as wide as the names seen (longer than the old fixed 40 when they are, aligned), every
// line fits the terminal, and a long value in a diff takes the terminal's width.
func TestLayoutFitsTerminal(t *testing.T) {
	const cols = 80
	ns := newNamespace(t)
	long := "checkout-api-7d9f8b6c5-abc12" // what a Deployment's pods are called
	createPod(t, ns, "db-0", nil)
	createPod(t, ns, long, nil)
	r := kubeevents(t).Terminal(cols, 50).Start("watch", "pods", "-n", ns, "--color", "never")
	isAdded := func(name string) func(string) bool {
		return func(l string) bool { return strings.Contains(l, "ADDED") && strings.Contains(l, " "+name+" ") }
	}
	listed := map[string]bool{}
	for len(listed) < 2 {
		r.waitFor(eventWait, "ADDED db-0 and "+long, func(l string) bool {
			for _, name := range []string{"db-0", long} {
				if isAdded(name)(l) {
					listed[name] = true
					return true
				}
			}
			return false
		})
	}

	value := strings.Repeat("0123456789", 20)
	annotate := func(v string) {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"note":%q}}}`, v)
		if _, err := client.CoreV1().Pods(ns).Patch(context.Background(), "db-0", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	annotate(value)
	modified := r.waitFor(eventWait, "MODIFIED db-0", func(l string) bool { return strings.Contains(l, "MODIFIED") && strings.Contains(l, " db-0 ") })
	added := r.waitFor(eventWait, "the diff line", func(l string) bool { return strings.Contains(l, "+ metadata.annotations: ") })
	annotate(strings.ToUpper(value) + "x")
	r.waitFor(eventWait, "the second MODIFIED db-0", func(l string) bool { return strings.Contains(l, "MODIFIED") && strings.Contains(l, " db-0 ") })
	replaced := r.waitFor(eventWait, "the changed value", func(l string) bool { return strings.Contains(l, "~ metadata.annotations.note: ") })

	for _, line := range r.Seen() {
		if strings.Contains(line, ns) {
			t.Errorf("-n %s, yet the namespace is printed: %q", ns, line)
		}
		if n := utf8.RuneCountInString(line); n > cols {
			t.Errorf("%d runes on a %d-column terminal: %q", n, cols, line)
		}
	}
	// The long name's line and db-0's later line start kubectl's columns (READY first) at
	// the same column.
	statusColumn := func(line string) int { return strings.Index(line, " 0/1 ") + 1 }
	var longLine string
	for _, line := range r.Seen() {
		if isAdded(long)(line) {
			longLine = line
		}
	}
	if statusColumn(modified) != statusColumn(longLine) || statusColumn(longLine) != strings.Index(longLine, long)+len(long)+2 {
		t.Errorf("summaries not aligned after the longest name:\n%s\n%s", longLine, modified)
	}
	// Values are shortened to the terminal's width, not to a fixed one: the added value
	// fills the line, the changed one shares it between old and new.
	for _, line := range []string{added, replaced} {
		if n := utf8.RuneCountInString(line); n != cols || !strings.Contains(line, "…") {
			t.Errorf("want a value shortened in the middle to end at column %d, got %d runes: %q", cols, n, line)
		}
	}
}
