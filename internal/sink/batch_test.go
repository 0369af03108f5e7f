package sink

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeevents/kubeevents/internal/event"
)

// sent records the batches a pool sends, with the (fake) time each was sent at.
type sent struct {
	mu      sync.Mutex
	start   time.Time
	batches [][]string // each event's "name rv"
	at      []time.Duration
	settled map[string]error
}

func newSent() *sent { return &sent{start: time.Now(), settled: map[string]error{}} }

func (s *sent) send(_ context.Context, batch []item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, it := range batch {
		names = append(names, strings.TrimSpace(string(it.data)))
	}
	s.batches = append(s.batches, names)
	s.at = append(s.at, time.Since(s.start))
	return nil
}

func (s *sent) settle(ev *event.Event, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settled[ev.Key()+" "+ev.Meta().GetResourceVersion()] = err
}

// got returns what was sent so far.
func (s *sent) got() ([][]string, []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches), slices.Clone(s.at)
}

func nameEncoder(ev *event.Event) ([]byte, error) {
	return []byte(ev.Meta().GetName() + " " + ev.Meta().GetResourceVersion() + "\n"), nil
}

// A batch is sent when it holds Size events, and one that is not full Interval after its
// first event; Close sends what is left and settles every event.
func TestPoolBatchesBySizeAndInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newSent()
		p := newPool(1, Batching{Size: 3, Interval: time.Second}, nameEncoder, whole(rec.send))
		p.Hold(rec.settle)
		for i := range 7 {
			if err := p.Write(podEvent(event.Added, fmt.Sprintf("p%d", i), "1", nil)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if b, _ := rec.got(); len(b) != 2 || len(b[0]) != 3 || len(b[1]) != 3 {
			t.Fatalf("before the interval: batches %v, want two of 3", b)
		}
		time.Sleep(999 * time.Millisecond)
		synctest.Wait()
		if b, _ := rec.got(); len(b) != 2 {
			t.Fatalf("the last event went before its interval: %v", b)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if b, at := rec.got(); len(b) != 3 || !slices.Equal(b[2], []string{"p6 1"}) || at[2] != time.Second {
			t.Fatalf("batches %v at %v, want [p6 1] at 1s", b, at)
		}
		if err := p.Write(podEvent(event.Added, "late", "1", nil)); err != nil {
			t.Fatal(err)
		}
		_ = p.Close()
		if len(rec.batches) != 4 || rec.at[3] != time.Second {
			t.Fatalf("Close did not send the last batch at once: %v at %v", rec.batches, rec.at)
		}
		if len(rec.settled) != 8 {
			t.Errorf("settled %d events, want 8: %v", len(rec.settled), rec.settled)
		}
	})
}

// A batch never holds more than Bytes bytes, unless one event alone is larger.
func TestPoolBatchesByBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newSent()
		p := newPool(1, Batching{Size: 100, Bytes: 10, Interval: time.Hour}, nameEncoder, whole(rec.send))
		for _, name := range []string{"a", "b", "c", "very-long-name", "d"} {
			_ = p.Write(podEvent(event.Added, name, "1", nil)) // "a 1\n" is 4 bytes
		}
		_ = p.Close()
		want := [][]string{{"a 1", "b 1"}, {"c 1"}, {"very-long-name 1"}, {"d 1"}}
		if fmt.Sprint(rec.batches) != fmt.Sprint(want) {
			t.Errorf("batches %v, want %v", rec.batches, want)
		}
	})
}

// With several workers, each object's events are still sent in order.
func TestPoolKeepsEachObjectInOrder(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]string{}
	send := func(_ context.Context, batch []item) error {
		time.Sleep(time.Millisecond) // let the workers interleave
		mu.Lock()
		defer mu.Unlock()
		for _, it := range batch {
			name, rv, _ := strings.Cut(strings.TrimSpace(string(it.data)), " ")
			got[name] = append(got[name], rv)
		}
		return nil
	}
	p := newPool(4, Batching{Size: 1}, nameEncoder, whole(send))
	for rv := range 20 {
		for obj := range 6 {
			_ = p.Write(podEvent(event.Modified, fmt.Sprintf("obj%d", obj), fmt.Sprint(rv), nil))
		}
	}
	_ = p.Close()
	for obj := range 6 {
		name := fmt.Sprintf("obj%d", obj)
		var want []string
		for rv := range 20 {
			want = append(want, fmt.Sprint(rv))
		}
		if !slices.Equal(got[name], want) {
			t.Errorf("%s sent in the order %v", name, got[name])
		}
	}
}

// Retries wait as the backoff says, doubling, or as long as the receiver asked when that
// is longer; a failure that is not worth retrying is not retried.
func TestWithRetriesWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at []time.Duration
		b := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.5, Steps: math.MaxInt32, Cap: 4 * time.Second}
		fail := func(after time.Duration) func(context.Context) error {
			return func(context.Context) error {
				at = append(at, time.Since(start))
				return &attemptError{err: errors.New("503"), retry: true, after: after}
			}
		}
		err := withRetries(context.Background(), 4, b, fail(0), nil)
		if err == nil || len(at) != 5 {
			t.Fatalf("err %v after %d attempts, want an error after 5", err, len(at))
		}
		// Waits of 1s, 2s, 4s, 4s, each plus up to half of it.
		for i, base := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
			wait := at[i+1] - at[i]
			if wait < base || wait > base+base/2 {
				t.Errorf("wait before retry %d: %s, want %s to %s", i+1, wait, base, base+base/2)
			}
		}

		at, start = nil, time.Now()
		_ = withRetries(context.Background(), 1, b, fail(7*time.Second), nil)
		if len(at) != 2 || at[1] != 7*time.Second {
			t.Errorf("Retry-After 7s: attempts at %v", at)
		}

		at, start = nil, time.Now()
		err = withRetries(context.Background(), 5, b, func(context.Context) error {
			at = append(at, time.Since(start))
			return &attemptError{err: errors.New("400 Bad Request")}
		}, nil)
		if len(at) != 1 || err == nil {
			t.Errorf("a 4xx was tried %d times", len(at))
		}

		// Ending the context ends the wait.
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(1500*time.Millisecond, cancel)
		start = time.Now()
		err = withRetries(ctx, 10, wait.Backoff{Duration: time.Hour}, fail(0), nil)
		if !errors.Is(err, context.Canceled) || time.Since(start) != 1500*time.Millisecond {
			t.Errorf("cancelled after %s: %v", time.Since(start), err)
		}
	})
}

// With RetryForever, a failure worth retrying is retried for as long as it lasts, each
// wait at most the backoff's cap (plus jitter); one that is not worth it ends at once.
func TestWithRetriesForever(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		attempts := 0
		var longest time.Duration
		last := start
		err := withRetries(context.Background(), RetryForever, NewBackoff(), func(context.Context) error {
			attempts++
			longest, last = max(longest, time.Since(last)), time.Now()
			if time.Since(start) < 2*time.Hour {
				return &attemptError{err: errors.New("connection refused"), retry: true}
			}
			return nil
		}, nil)
		if err != nil {
			t.Fatalf("gave up after %d attempts, %s: %v", attempts, time.Since(start), err)
		}
		if attempts < int(2*time.Hour/(45*time.Second)) || longest > 45*time.Second {
			t.Errorf("%d attempts in 2h, the longest wait %s; want one at least every 45s", attempts, longest)
		}
		attempts = 0
		err = withRetries(context.Background(), RetryForever, NewBackoff(), func(context.Context) error {
			attempts++
			return &attemptError{err: errors.New("400 Bad Request")}
		}, nil)
		if err == nil || attempts != 1 {
			t.Errorf("a 4xx under RetryForever: %d attempts, %v", attempts, err)
		}
	})
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0}, {"3", 3 * time.Second}, {" 12 ", 12 * time.Second}, {"-5", 0}, {"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"999999", 10 * time.Minute},
	} {
		if got := retryAfter(tc.v, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

// Header values come from the environment, a file or the text; errors never hold a value.
func TestParseHeaders(t *testing.T) {
	t.Setenv("HOOK_TOKEN", "Bearer s3cret-env")
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("s3cret-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	headers, err := ParseHeaders("Authorization=env:HOOK_TOKEN; X-Key = file:" + file + ";X-Source=kubeevents")
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := headers.Current(false)
	if h.Get("Authorization") != "Bearer s3cret-env" || h.Get("X-Key") != "s3cret-file" || h.Get("X-Source") != "kubeevents" {
		t.Errorf("headers %v", h)
	}
	t.Setenv("BROKEN", "a\nb")
	for spec, want := range map[string]string{
		"Authorization=env:NOT_SET_ANYWHERE": "header Authorization: environment variable NOT_SET_ANYWHERE is not set",
		"X-Key=file:/no/such/file":           "header X-Key: cannot read /no/such/file: no such file or directory",
		"Authorization: s3cret":              `header "Authorization...": want NAME=env:VAR`,
		"X-Bad=env:BROKEN":                   "header X-Bad: the value from env:BROKEN holds a line break",
	} {
		_, err := ParseHeaders(spec)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseHeaders(%q) = %v, want %q", spec, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "a\nb") || strings.Contains(err.Error(), "s3cret")) {
			t.Errorf("error shows a value: %v", err)
		}
	}
}

func TestSplitLinesOfAChild(t *testing.T) {
	var lines []string
	w := &lineWriter{emit: func(l string) { lines = append(lines, l) }}
	_, _ = w.Write([]byte("one\ntw"))
	_, _ = w.Write([]byte("o\r\nthree"))
	w.flush()
	if !slices.Equal(lines, []string{"one", "two", "three"}) {
		t.Errorf("lines %q", lines)
	}
}
