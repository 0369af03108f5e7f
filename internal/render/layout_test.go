package render

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/informer"
)

func podEvent(typ informer.EventType, namespace, name string) *informer.Event {
	pod := webPod(corev1.PodRunning, true, "worker-1", "1")
	pod.Namespace, pod.Name = namespace, name
	return &informer.Event{Type: typ, Time: t0, Resource: podsGVR, Kind: "Pod", Object: pod}
}

// TestNamespaceLeftOut: the namespace -n names is not repeated on every line; others
// (an Event about an object elsewhere) still are.
func TestNamespaceLeftOut(t *testing.T) {
	out := string(render(t, Options{Location: time.UTC, Namespace: "shop", ShowKind: true}, []*informer.Event{
		podEvent(informer.Added, "shop", "web-1"),
		podEvent(informer.Added, "other", "web-2"),
	}))
	if !strings.Contains(out, " pod/web-1 ") || strings.Contains(out, "shop") {
		t.Errorf("the watched namespace is printed:\n%s", out)
	}
	if !strings.Contains(out, " pod/other/web-2 ") {
		t.Errorf("another namespace is left out:\n%s", out)
	}
	if out := string(render(t, Options{Location: time.UTC}, []*informer.Event{podEvent(informer.Added, "shop", "web-1")})); !strings.Contains(out, " shop/web-1 ") {
		t.Errorf("all namespaces: want shop/web-1 in %q", out)
	}
}

// summaryColumn is where the summary starts: the column of the pod's status.
func summaryColumn(t *testing.T, line string) int {
	t.Helper()
	i := strings.Index(line, "Running")
	if i < 0 {
		t.Fatalf("no status in %q", line)
	}
	return utf8.RuneCountInString(line[:i])
}

// TestColumnsGrowWithWhatIsSeen: the name column is as wide as the widest name seen (no
// fixed 40 characters), so lines stay aligned after a long name; a name past the
// column's limit is printed whole and leaves the column as it was.
func TestColumnsGrowWithWhatIsSeen(t *testing.T) {
	long := "checkout-api-7d9f8b6c5-abc12-with-a-long-suffix" // 47 runes: past the old 40
	huge := strings.Repeat("x", maxNameColumn+1)
	out := string(render(t, Options{Location: time.UTC, Namespace: "shop"}, []*informer.Event{
		podEvent(informer.Added, "shop", "web-1"),
		podEvent(informer.Added, "shop", long),
		podEvent(informer.Modified, "shop", "web-1"),
		podEvent(informer.Added, "shop", huge),
		podEvent(informer.Deleted, "shop", "db"),
	}))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if got, want := summaryColumn(t, lines[0]), len("15:04:05  ADDED     web-1  "); got != want {
		t.Errorf("first line's summary at column %d, want %d (sized to its name): %q", got, want, lines[0])
	}
	column := summaryColumn(t, lines[1])
	if want := len("15:04:05  ADDED     ") + len(long) + 2; column != want {
		t.Errorf("long name's summary at column %d, want %d: %q", column, want, lines[1])
	}
	for _, line := range []string{lines[2], lines[4]} {
		if got := summaryColumn(t, line); got != column {
			t.Errorf("summary at column %d, want %d as the longest name seen:\n%s", got, column, out)
		}
	}
	if !strings.Contains(lines[3], " "+huge+" Running") {
		t.Errorf("a name past the limit must be whole and followed by one space: %q", lines[3])
	}
}

// TestFitsTheTerminal: on an 80-column terminal a pod stream watched with -n fits the
// width, TERMINATING widens the type column once seen, and diff values are shortened to
// the terminal's width rather than a fixed one.
func TestFitsTheTerminal(t *testing.T) {
	width := 80
	terminalWidth := func() int { return width }
	old := webPod(corev1.PodRunning, true, "worker-1", "1")
	old.Name, old.Namespace = "checkout-api-7d9f8b6c5-abc12", "shop"
	digest := func(s string) string { return "registry.example.com/shop/checkout-api@sha256:" + strings.Repeat(s, 64) }
	old.Status.ContainerStatuses[0].ImageID = digest("a")
	updated := old.DeepCopy()
	updated.Status.ContainerStatuses[0].ImageID = digest("b")
	updated.Status.ContainerStatuses[0].RestartCount = 12
	deleting := updated.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: t0.Add(time.Minute)}
	deleting.DeletionGracePeriodSeconds = ptr(int64(30))
	events := func() []*informer.Event {
		return []*informer.Event{
			{Type: informer.Added, Time: t0, Resource: podsGVR, Kind: "Pod", Object: old},
			{Type: informer.Modified, Time: t0, Resource: podsGVR, Kind: "Pod", Object: updated, Old: old},
			{Type: informer.Modified, Time: t0, Resource: podsGVR, Kind: "Pod", Object: deleting, Old: updated},
			{Type: informer.Deleted, Time: t0.Add(time.Minute), Resource: podsGVR, Kind: "Pod", Object: deleting},
		}
	}
	opts := Options{Location: time.UTC, Namespace: "shop", Diff: NewDiffer(nil), TerminalWidth: terminalWidth}
	out := string(render(t, opts, events()))
	// A terminating or deleted pod's line says more (grace, how long it lived) than fits
	// beside a name this long; every other line fits.
	var imageLine string
	for line := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > width && !strings.Contains(line, "TERMINATING") && !strings.Contains(line, "DELETED") {
			t.Errorf("%d runes, wider than the %d-column terminal: %q", n, width, line)
		}
		if strings.Contains(line, "imageID") {
			imageLine = line
		}
	}
	if utf8.RuneCountInString(imageLine) != width {
		t.Errorf("the digests should use the whole %d columns: %q", width, imageLine)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "15:04:05  ADDED     checkout-api") {
		t.Errorf("before any TERMINATING, the type column fits MODIFIED: %q", lines[0])
	}
	if !strings.Contains(out, "DELETED      checkout-api") {
		t.Errorf("after a TERMINATING, the type column fits it:\n%s", out)
	}

	for _, width = range []int{200, 300} {
		for line := range strings.SplitSeq(string(render(t, opts, events())), "\n") {
			if !strings.Contains(line, "imageID") {
				continue
			}
			if whole := len(digest("a")) + len(digest("b")); width-utf8.RuneCountInString("          ~ status.containerStatuses[app].imageID:  → ") >= whole {
				if strings.Contains(line, "…") {
					t.Errorf("on a %d-column terminal the digests fit whole: %q", width, line)
				}
			} else if utf8.RuneCountInString(line) != width {
				t.Errorf("on a %d-column terminal the digests should use the whole width: %q", width, line)
			}
		}
	}
}
