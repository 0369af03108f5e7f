package render

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

var (
	coreEventsGVR   = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	eventsV1GVR     = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
	eventObjectMeta = metav1.ObjectMeta{Name: "web-1.17a2b3c4d5e6f7a8", Namespace: "default", CreationTimestamp: metav1.NewTime(eventtest.T0)}
)

// TestEventCounts checks that an Event shows how often it happened, whichever API wrote
// it: core v1 count, series.count (events.k8s.io, and core Events written through it),
// events.k8s.io deprecatedCount.
func TestEventCounts(t *testing.T) {
	regarding := corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-1"}
	core := func(count int32, series *corev1.EventSeries) *corev1.Event {
		return &corev1.Event{ObjectMeta: eventObjectMeta, InvolvedObject: regarding, Type: corev1.EventTypeWarning,
			Reason: "BackOff", Message: "Back-off restarting failed container", Count: count, Series: series}
	}
	v1 := func(count int32, series *eventsv1.EventSeries) *eventsv1.Event {
		return &eventsv1.Event{ObjectMeta: eventObjectMeta, Regarding: regarding, Type: corev1.EventTypeWarning,
			Reason: "BackOff", Note: "Back-off restarting failed container", DeprecatedCount: count, Series: series}
	}
	for _, tc := range []struct {
		name string
		ev   *event.Event
		want string
	}{
		{"core count", &event.Event{Type: event.Modified, Resource: coreEventsGVR, Kind: "Event", Object: core(5, nil)}, " (x5)"},
		{"core series", &event.Event{Type: event.Modified, Resource: coreEventsGVR, Kind: "Event", Object: core(0, &corev1.EventSeries{Count: 9})}, " (x9)"},
		{"core once", &event.Event{Type: event.Added, Resource: coreEventsGVR, Kind: "Event", Object: core(1, nil)}, "container"},
		{"events.k8s.io series", &event.Event{Type: event.Modified, Resource: eventsV1GVR, Kind: "Event", Object: v1(0, &eventsv1.EventSeries{Count: 9})}, " (x9)"},
		{"events.k8s.io deprecatedCount", &event.Event{Type: event.Modified, Resource: eventsV1GVR, Kind: "Event", Object: v1(5, nil)}, " (x5)"},
		{"events.k8s.io once", &event.Event{Type: event.Added, Resource: eventsV1GVR, Kind: "Event", Object: v1(0, nil)}, "container"},
		{"related, series", &event.Event{Type: event.Added, Related: true, Resource: coreEventsGVR, Kind: "Event", Object: core(0, &corev1.EventSeries{Count: 9})}, " (x9)"},
	} {
		tc.ev.Time = eventtest.T0.Add(time.Minute)
		out := strings.TrimSuffix(string(render(t, Options{Location: time.UTC, Namespace: "default"}, []*event.Event{tc.ev})), "\n")
		if !strings.HasSuffix(out, "BackOff: Back-off restarting failed container"+strings.TrimPrefix(tc.want, "container")) {
			t.Errorf("%s: line %q does not end in the reason, message and %q", tc.name, out, tc.want)
		}
		if !tc.ev.Related && !strings.Contains(out, "Warning  pod/web-1  BackOff") {
			t.Errorf("%s: line %q does not say the type and the object it is about", tc.name, out)
		}
	}
}

func podEvent(typ event.EventType, namespace, name string) *event.Event {
	pod := eventtest.WebPod(corev1.PodRunning, true, "worker-1", "1")
	pod.Namespace, pod.Name = namespace, name
	return &event.Event{Type: typ, Time: eventtest.T0, Resource: eventtest.Pods, Kind: "Pod", Object: pod}
}

// TestNamespaceLeftOut: the namespace -n names is not repeated on every line; others
// (an Event about an object elsewhere) still are.
func TestNamespaceLeftOut(t *testing.T) {
	out := string(render(t, Options{Location: time.UTC, Namespace: "shop", ShowKind: true}, []*event.Event{
		podEvent(event.Added, "shop", "web-1"),
		podEvent(event.Added, "other", "web-2"),
	}))
	if !strings.Contains(out, " pod/web-1 ") || strings.Contains(out, "shop") {
		t.Errorf("the watched namespace is printed:\n%s", out)
	}
	if !strings.Contains(out, " pod/other/web-2 ") {
		t.Errorf("another namespace is left out:\n%s", out)
	}
	if out := string(render(t, Options{Location: time.UTC}, []*event.Event{podEvent(event.Added, "shop", "web-1")})); !strings.Contains(out, " shop/web-1 ") {
		t.Errorf("all namespaces: want shop/web-1 in %q", out)
	}
}

// summaryColumn is where the summary starts: the column of the pod's READY cell.
func summaryColumn(t *testing.T, line string) int {
	t.Helper()
	i := strings.Index(line, " 1/1 ") + 1
	if i < 1 {
		t.Fatalf("no READY cell in %q", line)
	}
	return utf8.RuneCountInString(line[:i])
}

// TestColumnsGrowWithWhatIsSeen: the name column is as wide as the widest name seen (no
// fixed 40 characters), so lines stay aligned after a long name; a name past the
// column's limit is printed whole and leaves the column as it was.
func TestColumnsGrowWithWhatIsSeen(t *testing.T) {
	long := "checkout-api-7d9f8b6c5-abc12-with-a-long-suffix" // 47 runes: past the old 40
	huge := strings.Repeat("x", maxNameColumn+1)
	out := string(render(t, Options{Location: time.UTC, Namespace: "shop"}, []*event.Event{
		podEvent(event.Added, "shop", "web-1"),
		podEvent(event.Added, "shop", long),
		podEvent(event.Modified, "shop", "web-1"),
		podEvent(event.Added, "shop", huge),
		podEvent(event.Deleted, "shop", "db"),
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
	if !strings.Contains(lines[3], " "+huge+" 1/1") {
		t.Errorf("a name past the limit must be whole and followed by one space: %q", lines[3])
	}
}

// TestFitsTheTerminal: on an 80-column terminal a pod stream watched with -n fits the
// width, TERMINATING widens the type column once seen, and diff values are shortened to
// the terminal's width rather than a fixed one.
func TestFitsTheTerminal(t *testing.T) {
	width := 80
	terminalWidth := func() int { return width }
	old := eventtest.WebPod(corev1.PodRunning, true, "worker-1", "1")
	old.Name, old.Namespace = "checkout-api-7d9f8b6c5-abc12", "shop"
	digest := func(s string) string { return "registry.example.com/shop/checkout-api@sha256:" + strings.Repeat(s, 64) }
	old.Status.ContainerStatuses[0].ImageID = digest("a")
	updated := old.DeepCopy()
	updated.Status.ContainerStatuses[0].ImageID = digest("b")
	updated.Status.ContainerStatuses[0].RestartCount = 12
	deleting := updated.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: eventtest.T0.Add(time.Minute)}
	deleting.DeletionGracePeriodSeconds = new(int64(30))
	events := func() []*event.Event {
		return []*event.Event{
			{Type: event.Added, Time: eventtest.T0, Resource: eventtest.Pods, Kind: "Pod", Object: old},
			{Type: event.Modified, Time: eventtest.T0, Resource: eventtest.Pods, Kind: "Pod", Object: updated, Old: old},
			{Type: event.Modified, Time: eventtest.T0, Resource: eventtest.Pods, Kind: "Pod", Object: deleting, Old: updated},
			{Type: event.Deleted, Time: eventtest.T0.Add(time.Minute), Resource: eventtest.Pods, Kind: "Pod", Object: deleting},
		}
	}
	opts := Options{Location: time.UTC, Namespace: "shop", Diff: diff.NewDiffer(nil), TerminalWidth: terminalWidth}
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
