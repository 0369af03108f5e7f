package sink

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/notify/notifytest"
)

// serviceReceiver plays the service a format posts to, as its documentation says
// (package notifytest): a request over the service's size limit is answered 413 where the
// service answers so, a request that breaks another rule 400, and the others 200. With
// cap set it refuses with 413 any body over cap bytes too, as a receiver (or a proxy in
// front of it) stricter than its documentation does.
type serviceReceiver struct {
	t      *testing.T
	format string // "" for JSON Lines, which it takes as they come
	cap    int
	url    string

	mu       sync.Mutex
	took     []string
	refused  []string // why each refused request was
	tooLarge []int    // the size of each request answered 413
	events   []int    // and how many events it held
}

func startServiceReceiver(t *testing.T, format string, cap int) *serviceReceiver {
	t.Helper()
	r := &serviceReceiver{t: t, format: format, cap: cap}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(r.serve)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	r.url = "http://" + ln.Addr().String() + map[string]string{"alertmanager": "/api/v2/alerts", "loki": "/loki/api/v1/push",
		"elasticsearch": "/kubeevents/_bulk", "otlp": "/v1/logs", "discord": "/api/webhooks/1234567890/test-token"}[format]
	if !strings.Contains(r.url[len("http://"):], "/") {
		r.url += "/hook"
	}
	return r
}

func (r *serviceReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var errs []error
	if r.format != "" {
		errs = notifytest.Check(r.format, notifytest.Request{Path: req.URL.Path, ContentType: req.Header.Get("Content-Type"), Body: body})
	}
	status := http.StatusOK
	for _, err := range errs {
		status = http.StatusBadRequest
		if notifytest.IsTooLarge(err) {
			status = http.StatusRequestEntityTooLarge
			break
		}
	}
	if r.cap > 0 && len(body) > r.cap {
		status, errs = http.StatusRequestEntityTooLarge, append(errs, fmt.Errorf("%d bytes, more than the %d this receiver takes", len(body), r.cap))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch status {
	case http.StatusOK:
		r.took = append(r.took, string(body))
	case http.StatusRequestEntityTooLarge:
		r.tooLarge = append(r.tooLarge, len(body))
		r.events = append(r.events, len(slices.Compact(slices.Sorted(slices.Values(podNames.FindAllString(string(body), -1))))))
		r.refused = append(r.refused, fmt.Sprint(errs))
	default:
		r.refused = append(r.refused, fmt.Sprintf("%v\nbody: %.2000s", errs, body))
	}
	w.WriteHeader(status)
}

// podNames are the names of the tests' pods, as a request's body holds them.
var podNames = regexp.MustCompile(`(pod|big|tiny)-[0-9]+`)

func (r *serviceReceiver) bodies() (took, refused []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.took...), append([]string(nil), r.refused...)
}

// troubledPod is an event of a pod whose containers all wait in CrashLoopBackOff, each
// with a long name: the formats' detail lists them, so its body is as long as the
// containers are many.
func troubledPod(name string, containers int, annotations map[string]string) *event.Event {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1", Annotations: annotations},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for i := range containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name:  fmt.Sprintf("sidecar-with-a-name-as-long-as-the-team-could-make-it-%03d", i),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		})
	}
	return &event.Event{Type: event.Modified, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Seq: 1, Resource: podsGVR, Kind: "Pod", Object: pod}
}

// formatSink is an http sink posting in a shipped format (or one of user's, a program)
// to url, batching up to batch events; it says its warnings on warned.
func formatSink(t *testing.T, format, program, url string, batch int, warned *[]string) (*HTTP, *settled) {
	t.Helper()
	var user map[string]string
	if program != "" {
		user = map[string]string{format: program}
	}
	catalog, err := notify.NewCatalog(user)
	if err != nil {
		t.Fatal(err)
	}
	f, err := catalog.Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := f.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	s := NewHTTP(HTTPOptions{Name: "hook", URL: url, Batching: Batching{Size: batch, Interval: time.Hour},
		Timeout: 5 * time.Second, Format: compiled, Differ: diff.NewDiffer(nil), Warn: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			*warned = append(*warned, fmt.Sprintf(format, args...))
		}})
	rec := &settled{}
	s.Hold(rec.settle)
	return s, rec
}

// count is how many of errs are nil (delivered) and how many not (failed).
func count(errs []error) (delivered, failed int) {
	for _, err := range errs {
		if err == nil {
			delivered++
		} else {
			failed++
		}
	}
	return delivered, failed
}

// TestHTTPSinkSplitsABatchOverTheFormatsLimit: a batch whose body would be over its
// format's limit (Teams' 28 KB, Mattermost's 16383 characters, Discord's 6000, Loki's
// 256KB line) goes in several requests, each within it, every event in one of them once,
// all counted delivered. Before, Teams refused the batch whole and Mattermost's text was
// cut at its limit with the events past the cut counted delivered.
func TestHTTPSinkSplitsABatchOverTheFormatsLimit(t *testing.T) {
	for _, tc := range []struct {
		format string
		events int
		split  bool // the batch is over the limit
	}{
		{"teams", 20, true},
		{"mattermost", 50, true},
		{"discord", 10, false}, // each embed's text is cut by the format to fit
		{"slack", 50, true},
		{"loki", 100, true},
	} {
		t.Run(tc.format, func(t *testing.T) {
			rcv := startServiceReceiver(t, tc.format, 0)
			var warned []string
			s, rec := formatSink(t, tc.format, "", rcv.url, tc.events, &warned)
			for i := range tc.events {
				if err := s.Write(troubledPod(fmt.Sprintf("pod-%03d", i), 30, nil)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			delivered, failed := count(rec.wait(t, tc.events))
			took, refused := rcv.bodies()
			if len(refused) > 0 {
				t.Fatalf("the receiver refused %d requests: %s", len(refused), refused[0])
			}
			if delivered != tc.events || failed != 0 {
				t.Errorf("%d delivered, %d failed; want %d and 0", delivered, failed, tc.events)
			}
			if split := len(took) > 1; split != tc.split {
				t.Errorf("%d requests, want the batch split: %v", len(took), tc.split)
			}
			for i := range tc.events {
				name := fmt.Sprintf("pod-%03d", i)
				n := 0
				for _, body := range took {
					n += strings.Count(body, "ns/"+name) + strings.Count(body, `\"name\":\"`+name+`\"`)
				}
				if n == 0 {
					t.Errorf("%s is in no request the receiver took", name)
				}
			}
			for _, body := range took {
				if strings.Contains(body, " [cut]") || strings.Contains(body, `\"cut\":true`) {
					t.Errorf("a request holds an event cut, though each fits alone: %.300s", body)
				}
			}
			if len(warned) > 0 {
				t.Errorf("said %q", warned)
			}
		})
	}
}

// TestHTTPSinkCutsAnEventTooLargeForOneRequest: an event that is over its format's limit
// alone is sent cut, marked so where the reader sees it, and counted delivered; said on
// stderr. One that does not fit even cut is not sent, counts as failed and is said.
func TestHTTPSinkCutsAnEventTooLargeForOneRequest(t *testing.T) {
	huge := map[string]string{"note": strings.Repeat("all work and no play ", 15000)}
	for _, tc := range []struct {
		format string
		ev     *event.Event
		mark   string // in the body the receiver took
	}{
		{"teams", troubledPod("crowded", 600, nil), " [cut]"},
		{"mattermost", troubledPod("crowded", 600, nil), " [cut]"},
		{"cloudevents", troubledPod("annotated", 1, huge), `…[cut]"`},
		{"loki", troubledPod("annotated", 1, huge), `\"cut\":true`},
	} {
		t.Run(tc.format, func(t *testing.T) {
			rcv := startServiceReceiver(t, tc.format, 0)
			var warned []string
			s, rec := formatSink(t, tc.format, "", rcv.url, 10, &warned)
			if err := s.Write(tc.ev); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(troubledPod("small", 1, nil)); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			delivered, failed := count(rec.wait(t, 2))
			took, refused := rcv.bodies()
			if len(refused) > 0 {
				t.Fatalf("the receiver refused %d requests: %s", len(refused), refused[0])
			}
			if delivered != 2 || failed != 0 {
				t.Errorf("%d delivered, %d failed; want 2 and 0", delivered, failed)
			}
			var cut, small int
			for _, body := range took {
				if strings.Contains(body, tc.mark) {
					cut++
				}
				if strings.Contains(body, "small") && !strings.Contains(body, notify.Mark) {
					small++
				}
			}
			if cut != 1 || small != 1 {
				t.Errorf("bodies %d cut (marked %q) and %d with the small pod whole, want 1 and 1: %.500q", cut, tc.mark, small, took)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], "MODIFIED Pod ns/") || !strings.Contains(warned[0], "does not fit one request") {
				t.Errorf("said %q", warned)
			}
		})
	}

	// A format whose body cannot be made small enough.
	rcv := startServiceReceiver(t, "", 0)
	var warned []string
	s, rec := formatSink(t, "padded", "# max-bytes: 50\n\"x\" * 100", rcv.url, 10, &warned)
	for _, name := range []string{"a", "b"} {
		if err := s.Write(troubledPod(name, 1, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	delivered, failed := count(rec.wait(t, 2))
	if took, _ := rcv.bodies(); len(took) > 0 || delivered != 0 || failed != 2 {
		t.Errorf("%d requests, %d delivered, %d failed; want none sent, 2 failed", len(took), delivered, failed)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], `format padded: MODIFIED Pod ns/a is too large for one request even cut (100 bytes, at most 50 bytes); 1 event not sent`) {
		t.Errorf("said %q", warned)
	}
}

// TestHTTPSinkSplitsABatchAnswered413: a batch the receiver answers 413 Payload Too Large
// goes again in halves until each part is taken, and later requests are kept to half of
// the body refused; a single event answered 413 fails alone, counted as failed and said
// once. With a format, an event over the lowered limit is cut to fit it. Counts stay
// exact.
func TestHTTPSinkSplitsABatchAnswered413(t *testing.T) {
	for _, tc := range []struct {
		format            string
		delivered, failed int
	}{
		{"", 18, 2},      // the big events are refused
		{"teams", 20, 0}, // the big events are cut to fit
	} {
		t.Run(cmp.Or(tc.format, "json-lines"), func(t *testing.T) {
			// Teams is documented to take 28 KB and has been seen to refuse 20 KB:
			// this one refuses more than 6 KB.
			rcv := startServiceReceiver(t, tc.format, 6000)
			var warned []string
			var s *HTTP
			var rec *settled
			if tc.format == "" {
				var mu sync.Mutex
				s = NewHTTP(HTTPOptions{Name: "hook", URL: rcv.url, Batching: Batching{Size: 16, Interval: time.Hour},
					Timeout: 5 * time.Second, Encoder: &Encoder{Printer: jsonPrinter(t)}, Warn: func(format string, args ...any) {
						mu.Lock()
						defer mu.Unlock()
						warned = append(warned, fmt.Sprintf(format, args...))
					}})
				rec = &settled{}
				s.Hold(rec.settle)
			} else {
				s, rec = formatSink(t, tc.format, "", rcv.url, 16, &warned)
			}
			// A batch of 16 events of 1 to 3 KB, then one of two events too large for
			// the receiver alone between two small ones.
			for i := range 16 {
				if err := s.Write(troubledPod(fmt.Sprintf("pod-%02d", i), 12, nil)); err != nil {
					t.Fatal(err)
				}
			}
			for _, ev := range []*event.Event{troubledPod("big-1", 80, nil), troubledPod("tiny-1", 0, nil), troubledPod("big-2", 80, nil), troubledPod("tiny-2", 0, nil)} {
				if err := s.Write(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			delivered, failed := count(rec.wait(t, 20))
			if delivered != tc.delivered || failed != tc.failed {
				t.Errorf("%d delivered, %d failed; want %d and %d", delivered, failed, tc.delivered, tc.failed)
			}
			took, _ := rcv.bodies()
			all := strings.Join(took, "\n")
			for _, name := range []string{"pod-00", "pod-07", "pod-08", "pod-15", "tiny-1", "tiny-2"} {
				if strings.Count(all, name) != strings.Count(all, "pod-01") {
					t.Errorf("%s is in %d requests the receiver took, pod-01 in %d", name, strings.Count(all, name), strings.Count(all, "pod-01"))
				}
			}
			if tc.failed == 0 && strings.Count(all, " [cut]") != 2 {
				t.Errorf("the big events were not taken cut: %d marks", strings.Count(all, " [cut]"))
			}
			// Once a body is refused, no request is larger than half of it.
			rcv.mu.Lock()
			sizes, events := slices.Clone(rcv.tooLarge), slices.Clone(rcv.events)
			rcv.mu.Unlock()
			for i := 1; i < len(sizes); i++ {
				if events[i] > 1 && sizes[i] > sizes[i-1]/2 {
					t.Errorf("refused: %d bytes of %d events after %d bytes", sizes[i], events[i], sizes[i-1])
				}
			}
			var splits, refusals int
			for _, w := range warned {
				switch {
				case strings.Contains(w, "413 Request Entity Too Large; sending its 16 events in halves, and requests of at most"):
					splits++
				case strings.Contains(w, "413 Request Entity Too Large; the receiver refused 1 event (1 failed so far)"):
					refusals++
				case tc.format != "" && strings.Contains(w, "does not fit one request"):
				default:
					t.Errorf("said %q", w)
				}
			}
			if splits != 1 || refusals != min(tc.failed, 1) {
				t.Errorf("said %q: want the split and %d refusal", warned, min(tc.failed, 1))
			}
		})
	}
}
