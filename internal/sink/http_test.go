package sink

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/notify"
)

// tokenReceiver is a real HTTP server that accepts requests carrying the token it is
// told, answers 401 to others, and records the tokens it was sent.
type tokenReceiver struct {
	mu    sync.Mutex
	want  string
	got   []string
	srv   *http.Server
	ln    net.Listener
	lines int
}

func startTokenReceiver(t *testing.T, want string) *tokenReceiver {
	t.Helper()
	r := &tokenReceiver{want: want}
	var err error
	if r.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		token := req.Header.Get("Authorization")
		r.got = append(r.got, token)
		if token != r.want {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.lines += strings.Count(string(body), "\n")
	})}
	go func() { _ = r.srv.Serve(r.ln) }()
	t.Cleanup(func() { _ = r.srv.Close() })
	return r
}

func (r *tokenReceiver) url() string { return "http://" + r.ln.Addr().String() + "/hook" }

func (r *tokenReceiver) accept(token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.want = token
}

func (r *tokenReceiver) tokens() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// settled collects what an http or exec sink settles, and waits for it.
type settled struct {
	mu   sync.Mutex
	errs []error
}

func (s *settled) settle(_ *event.Event, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

// wait waits until n events were settled, and returns their errors.
func (s *settled) wait(t *testing.T, n int) []error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		errs := append([]error(nil), s.errs...)
		s.mu.Unlock()
		if len(errs) >= n {
			return errs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events settled", len(errs), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newTestHTTP(t *testing.T, url, headers string, warn func(string, ...any)) (*HTTP, *settled) {
	t.Helper()
	h, err := ParseHeaders(headers)
	if err != nil {
		t.Fatal(err)
	}
	if warn == nil {
		warn = func(string, ...any) {}
	}
	s := NewHTTP(HTTPOptions{Name: "hook", URL: url, Batching: Batching{Size: 1}, Timeout: 5 * time.Second,
		Retries: 0, Headers: h, Encoder: &Encoder{Printer: jsonPrinter(t)}, Warn: warn})
	rec := &settled{}
	s.Hold(rec.settle)
	t.Cleanup(func() { _ = s.Close() })
	return s, rec
}

// writeToken replaces a token file the way the kubelet replaces a projected volume's:
// the file is a symbolic link into a directory that a new one replaces, by renaming a
// new link over the old one.
func writeToken(t *testing.T, dir, token string) string {
	t.Helper()
	data := filepath.Join(dir, fmt.Sprintf("..%d", time.Now().UnixNano()))
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(data), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "token")
	if _, err := os.Lstat(link); err != nil {
		if err := os.Symlink("..data/token", link); err != nil {
			t.Fatal(err)
		}
	}
	return link
}

// A header from a file follows the file: a token rotated as the kubelet rotates a
// projected ServiceAccount token is sent from the next request on.
func TestHTTPSinkRereadsARotatedHeaderFile(t *testing.T) {
	dir := t.TempDir()
	file := writeToken(t, dir, "Bearer first")
	r := startTokenReceiver(t, "Bearer first")
	s, rec := newTestHTTP(t, r.url(), "Authorization=file:"+file, nil)

	if err := s.Write(podEvent(event.Added, "a", "1", nil)); err != nil {
		t.Fatal(err)
	}
	if errs := rec.wait(t, 1); errs[0] != nil {
		t.Fatalf("with the first token: %v", errs[0])
	}
	writeToken(t, dir, "Bearer second")
	r.accept("Bearer second")
	if err := s.Write(podEvent(event.Added, "b", "1", nil)); err != nil {
		t.Fatal(err)
	}
	if errs := rec.wait(t, 2); errs[1] != nil {
		t.Fatalf("after the token file was rotated: %v; the receiver was sent %q", errs[1], r.tokens())
	}
	if got := r.tokens(); len(got) != 2 || got[1] != "Bearer second" {
		t.Errorf("tokens sent %q, want the first, then the second", got)
	}
}

// A 401 makes the sink read its header files again, whatever they look like, and ask
// once more when that gave another value: a file rewritten in place within the same
// second, at the same size, is not seen to change otherwise.
func TestHTTPSinkRereadsHeaderFilesOnA401(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("Bearer aaaa\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	r := startTokenReceiver(t, "Bearer bbbb")
	var warned []string
	var mu sync.Mutex
	s, rec := newTestHTTP(t, r.url(), "Authorization=file:"+file, func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, fmt.Sprintf(f, a...))
	})
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("Bearer bbbb\n"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if err := os.Chtimes(file, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(podEvent(event.Added, "a", "1", nil)); err != nil {
		t.Fatal(err)
	}
	if errs := rec.wait(t, 1); errs[0] != nil {
		t.Fatalf("after a 401 and a changed file: %v; tokens sent %q", errs[0], r.tokens())
	}
	if got := r.tokens(); len(got) != 2 || got[0] != "Bearer aaaa" || got[1] != "Bearer bbbb" {
		t.Errorf("tokens sent %q, want the old one (401), then the new one", got)
	}

	// A 401 with a file that did not change fails at once: asking again would be
	// refused again.
	r.accept("Bearer cccc")
	if err := s.Write(podEvent(event.Added, "b", "1", nil)); err != nil {
		t.Fatal(err)
	}
	if errs := rec.wait(t, 2); errs[1] == nil || !strings.Contains(errs[1].Error(), "401") {
		t.Errorf("a 401 with the same token settled as %v", errs[1])
	}
	if got := r.tokens(); len(got) != 3 {
		t.Errorf("tokens sent %q, want one more request", got)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, w := range warned {
		if strings.Contains(w, "bbbb") || strings.Contains(w, "aaaa") {
			t.Errorf("a message shows the token: %s", w)
		}
	}
}

// A header file that cannot be read any more keeps its last value, said without it.
func TestHTTPSinkKeepsAHeaderItCannotReadAgain(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("Bearer kept\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startTokenReceiver(t, "Bearer kept")
	var warned []string
	var mu sync.Mutex
	s, rec := newTestHTTP(t, r.url(), "Authorization=file:"+file, func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, fmt.Sprintf(f, a...))
	})
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(podEvent(event.Added, "a", "1", nil)); err != nil {
		t.Fatal(err)
	}
	if errs := rec.wait(t, 1); errs[0] != nil {
		t.Fatalf("with the token read before: %v", errs[0])
	}
	mu.Lock()
	defer mu.Unlock()
	want := `http sink "hook": header Authorization: cannot read ` + file + `: no such file or directory; sending the value read before`
	if len(warned) != 1 || warned[0] != want {
		t.Errorf("said %q, want %q", warned, want)
	}
}

// Under RetryForever an http sink holds its batch while the receiver fails, however
// many times, and delivers it once the receiver answers; it says so when it starts
// retrying and when it is through.
func TestHTTPSinkRetriesForeverAcrossAnOutage(t *testing.T) {
	var mu sync.Mutex
	down, attempts := true, 0
	var body string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		data, _ := io.ReadAll(req.Body)
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if down {
			// Gone in the middle of the request, as a receiver that is restarting.
			conn, _, _ := w.(http.Hijacker).Hijack()
			_ = conn.Close()
			return
		}
		body = string(data)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	var warned []string
	url := "http://" + ln.Addr().String() + "/hook"
	s := NewHTTP(HTTPOptions{Name: "hook", URL: url, Batching: Batching{Size: 1},
		Timeout: time.Second, Retries: RetryForever, Encoder: &Encoder{Printer: jsonPrinter(t)},
		Backoff: wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 100, Cap: 10 * time.Millisecond},
		Warn: func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			warned = append(warned, fmt.Sprintf(f, a...))
		}})
	rec := &settled{}
	s.Hold(rec.settle)
	defer s.Close()
	if err := s.Write(podEvent(event.Added, "a", "1", nil)); err != nil {
		t.Fatal(err)
	}
	// Far more attempts than any finite default of retries.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := attempts
		mu.Unlock()
		if n >= 30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts; settled: %v", n, rec.errs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	rec.mu.Lock()
	early := append([]error(nil), rec.errs...)
	rec.mu.Unlock()
	if len(early) != 0 {
		t.Fatalf("the event was settled while the receiver failed: %v", early)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	if errs := rec.wait(t, 1); errs[0] != nil {
		t.Fatalf("settled as %v", errs[0])
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(body, `"name":"a"`) {
		t.Errorf("the receiver got %q", body)
	}
	text := strings.Join(warned, "\n")
	if !strings.Contains(text, `http sink "hook": POST `+url+`: EOF; retry 1 in `) ||
		!strings.Contains(text, "(retrying until the receiver answers)") ||
		!strings.Contains(text, `http sink "hook": POST `+url+`: accepted again after `) {
		t.Errorf("said:\n%s", text)
	}
}

// What a receiver answers is escaped before it is shown, as object names are.
func TestHTTPSinkEscapesTheAnswer(t *testing.T) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "bad \x1b]0;pwned\x07\x1b[2J payload\n")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	var warned []string
	var mu sync.Mutex
	s, rec := newTestHTTP(t, "http://"+ln.Addr().String()+"/", "", func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, fmt.Sprintf(f, a...))
	})
	_ = s.Write(podEvent(event.Added, "a", "1", nil))
	rec.wait(t, 1)
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 1 || !strings.Contains(warned[0], `400 Bad Request: bad \x1b]0;pwned\a\x1b[2J payload; the receiver refused 1 event (1 failed so far)`) {
		t.Errorf("said %q", warned)
	}
}

// An http sink with a format posts each batch in the receiver's own language, with its
// content type, no more events a request than the format takes; a batch the format fails
// on is not sent, and its events count as failed.
func TestHTTPSinkPostsInAFormat(t *testing.T) {
	type got struct {
		contentType string
		body        string
	}
	var mu sync.Mutex
	var requests []got
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		defer mu.Unlock()
		requests = append(requests, got{req.Header.Get("Content-Type"), string(body)})
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	catalog, err := notify.NewCatalog(map[string]string{
		"names": "# content-type: text/plain\n# max-batch: 2\nmap(.object.metadata.name) | join(\" \")",
		"fails": "error(\"no\")",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		format string
		want   []got
		failed int
	}{
		{"names", []got{{"text/plain", "a b"}, {"text/plain", "c"}}, 0},
		{"fails", nil, 3},
	} {
		mu.Lock()
		requests = nil
		mu.Unlock()
		f, _ := catalog.Lookup(tc.format)
		compiled, err := f.Compile()
		if err != nil {
			t.Fatal(err)
		}
		var warned []string
		s := NewHTTP(HTTPOptions{Name: "hook", URL: "http://" + ln.Addr().String() + "/hook", Batching: Batching{Size: 100, Interval: time.Hour},
			Timeout: 5 * time.Second, Format: compiled, Warn: func(format string, args ...any) { warned = append(warned, fmt.Sprintf(format, args...)) }})
		rec := &settled{}
		s.Hold(rec.settle)
		for _, name := range []string{"a", "b", "c"} {
			if err := s.Write(podEvent(event.Added, name, "1", nil)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		failed := 0
		for _, err := range rec.wait(t, 3) {
			if err != nil {
				failed++
			}
		}
		mu.Lock()
		if fmt.Sprint(requests) != fmt.Sprint(tc.want) || failed != tc.failed {
			t.Errorf("%s: requests %q, %d failed; want %q, %d failed", tc.format, requests, failed, tc.want, tc.failed)
		}
		mu.Unlock()
		if tc.failed > 0 && (len(warned) != 1 || !strings.Contains(warned[0], "format fails: error: no; 3 events not sent")) {
			t.Errorf("%s: warned %q", tc.format, warned)
		}
	}
}

// The fence (listener.Fenced) is asked before every attempt: a batch still being built
// when it closes is not sent, a batch being retried is not tried again, and at Close
// both are settled as held back (listener.ErrFenced), not failed and not said as failed.
func TestHTTPSinkAsksTheFenceBeforeEverySend(t *testing.T) {
	var mu sync.Mutex
	down, attempts := true, 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.ReadAll(req.Body)
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if down {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	var closed atomic.Bool
	fence := func() error {
		if closed.Load() {
			return errors.New("the lease was last renewed 8s ago")
		}
		return nil
	}
	var warned []string
	newSink := func(b Batching) (*HTTP, *settled) {
		s := NewHTTP(HTTPOptions{Name: "hook", URL: "http://" + ln.Addr().String() + "/hook", Batching: b,
			Timeout: time.Second, Retries: RetryForever, Encoder: &Encoder{Printer: jsonPrinter(t)},
			Backoff: wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 100, Cap: 10 * time.Millisecond},
			Warn: func(f string, a ...any) {
				mu.Lock()
				defer mu.Unlock()
				warned = append(warned, fmt.Sprintf(f, a...))
			}})
		rec := &settled{}
		s.Hold(rec.settle)
		s.Fence(fence)
		return s, rec
	}
	// Retried while the receiver is down; the fence closes: no attempt after the one in
	// flight.
	s, rec := newSink(Batching{Size: 1})
	if err := s.Write(podEvent(event.Added, "a", "1", nil)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := attempts
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts", n)
		}
	}
	closed.Store(true)
	time.Sleep(20 * time.Millisecond) // the attempt in flight, if any, ends
	mu.Lock()
	before := attempts
	down = false
	mu.Unlock()
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	after := attempts
	mu.Unlock()
	if after != before {
		t.Errorf("%d attempts after the fence closed", after-before)
	}
	_ = s.Close()
	if errs := rec.wait(t, 1); !errors.Is(errs[0], listener.ErrFenced) {
		t.Errorf("settled as %v, want held back", errs[0])
	}
	// A batch being built when the fence closes is not sent, even at Close.
	closed.Store(false)
	s, rec = newSink(Batching{Size: 10, Interval: time.Hour})
	for _, name := range []string{"b", "c"} {
		if err := s.Write(podEvent(event.Added, name, "1", nil)); err != nil {
			t.Fatal(err)
		}
	}
	closed.Store(true)
	mu.Lock()
	before = attempts
	mu.Unlock()
	_ = s.Close()
	errs := rec.wait(t, 2)
	mu.Lock()
	defer mu.Unlock()
	if attempts != before || !errors.Is(errs[0], listener.ErrFenced) || !errors.Is(errs[1], listener.ErrFenced) {
		t.Errorf("%d sent at Close, settled as %v; want none sent, both held back", attempts-before, errs)
	}
	for _, w := range warned {
		if strings.Contains(w, "failed") {
			t.Errorf("said %q", w)
		}
	}
}
