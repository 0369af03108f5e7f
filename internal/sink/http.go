package sink

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubeevents/kubeevents/internal/listener"
)

// HTTPOptions configure an http sink.
type HTTPOptions struct {
	Name     string
	URL      string
	Batching Batching
	// Single sends each event as one JSON document (application/json) per request
	// rather than JSON Lines (application/x-ndjson); Batching.Size is then 1.
	Single  bool
	Timeout time.Duration // time limit per request
	Retries int           // requests again after a failed one, at most
	Backoff Backoff
	Header  http.Header // values resolved; never printed
	TLS     *tls.Config // nil: Go's defaults
	Encoder *Encoder
	Warn    func(format string, args ...any)
}

// HTTP POSTs events to a URL, in batches of JSON Lines or one JSON document per request.
// Connection errors, 5xx and 429 are retried with exponential backoff and jitter, and
// Retry-After is honoured; another 4xx fails the batch at once. It implements
// listener.Holder: each event is settled when its batch was accepted (2xx) or failed.
type HTTP struct {
	*pool
	opts   HTTPOptions
	client *http.Client
	target string // the URL without its password, for messages

	mu          sync.Mutex
	retryNotice listener.Throttle
	failNotice  listener.Throttle
	failed      int
	statusSaid  map[int]bool // 4xx statuses already reported
}

// NewHTTP makes the sink.
func NewHTTP(o HTTPOptions) *HTTP {
	if o.Backoff == (Backoff{}) {
		o.Backoff = DefaultBackoff
	}
	if o.Single {
		o.Batching = Batching{Size: 1}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = o.TLS
	// The proxy is taken from the environment, as by curl and kubectl.
	s := &HTTP{opts: o, client: &http.Client{Transport: transport, Timeout: o.Timeout},
		retryNotice: listener.Throttle{Period: listener.NoticeEvery},
		failNotice:  listener.Throttle{Period: listener.NoticeEvery},
		statusSaid:  map[int]bool{}}
	s.target = o.URL
	if u, err := url.Parse(o.URL); err == nil {
		s.target = u.Redacted()
	}
	s.pool = newPool(1, o.Batching, o.Encoder.Encode, s.send)
	return s
}

// send POSTs one batch, with retries.
func (s *HTTP) send(ctx context.Context, batch []item) error {
	var body bytes.Buffer
	for _, it := range batch {
		body.Write(it.data)
	}
	data := body.Bytes()
	contentType := "application/x-ndjson"
	if s.opts.Single {
		data = bytes.TrimSuffix(data, []byte("\n"))
		contentType = "application/json"
	}
	err := withRetries(ctx, s.opts.Retries, s.opts.Backoff, func(ctx context.Context) error {
		return s.post(ctx, data, contentType)
	}, func(err error, n int, wait time.Duration) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.retryNotice.Allow(time.Now()) {
			s.opts.Warn("http sink %q: POST %s: %v; retry %d of %d in %s", s.opts.Name, s.target, err, n, s.opts.Retries, wait.Round(time.Millisecond))
		}
	})
	if err != nil && ctx.Err() == nil {
		s.report(len(batch), err)
	}
	return err
}

// report says a batch failed: a 4xx once per status, the rest at most once per
// NoticeEvery, with the count so far.
func (s *HTTP) report(n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed += n
	var se *statusError
	if errors.As(err, &se) && se.code < 500 && se.code != http.StatusTooManyRequests {
		if s.statusSaid[se.code] {
			return
		}
		s.statusSaid[se.code] = true
		s.opts.Warn("http sink %q: POST %s: %v; the receiver refused %s (%d failed so far)", s.opts.Name, s.target, err, events(n), s.failed)
		return
	}
	if s.failNotice.Allow(time.Now()) {
		tries := ""
		if s.opts.Retries > 0 {
			tries = fmt.Sprintf(" after %d retries", s.opts.Retries)
		}
		s.opts.Warn("http sink %q: POST %s: %v; gave up on %s%s (%d failed so far)", s.opts.Name, s.target, err, events(n), tries, s.failed)
	}
}

func events(n int) string {
	if n == 1 {
		return "1 event"
	}
	return strconv.Itoa(n) + " events"
}

// statusError is a response that was not 2xx: its status and the first line of its body.
type statusError struct {
	code int
	text string
	line string
}

func (e *statusError) Error() string {
	if e.line == "" {
		return e.text
	}
	return e.text + ": " + e.line
}

// post makes one request.
func (s *HTTP) post(ctx context.Context, data []byte, contentType string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.opts.URL, bytes.NewReader(data))
	if err != nil {
		return &attemptError{err: err}
	}
	for k, vs := range s.opts.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", contentType)
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "kubeevents")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A certificate that cannot be verified will not be verified on the next try.
		var badCert *tls.CertificateVerificationError
		return &attemptError{err: requestError(err, s.opts.Timeout), retry: !errors.As(err, &badCert)}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
		return nil
	}
	se := &statusError{code: resp.StatusCode, text: resp.Status}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 4<<10))
	if sc.Scan() {
		se.line = strings.TrimSpace(sanitize(sc.Text()))
	}
	retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
	return &attemptError{err: se, retry: retry, after: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
}

// requestError says what went wrong with a request in a few words: the timeout, or the
// connection error's gist ("connection refused"), without the method and URL the caller
// already names.
func requestError(err error, timeout time.Duration) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return fmt.Errorf("no answer within %s", timeout)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		msg := opErr.Err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return errors.New(msg)
	}
	if ue != nil {
		return ue.Err
	}
	return err
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date; 0 when absent or bad.
// It is capped at 10 minutes, so a receiver cannot park the sink for ever.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), 10*time.Minute)
}

// sanitize keeps a receiver's text printable on one line.
func sanitize(s string) string {
	const limit = 200
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			r = '?'
		}
		b.WriteRune(r)
		if b.Len() >= limit {
			b.WriteString("...")
			break
		}
	}
	return b.String()
}

// ParseHeaders reads an http sink's headers: "NAME=REF; NAME=REF", where REF is
// env:VAR (the variable's value, which must be set), file:PATH (the file's contents
// without a final newline) or the text itself. Secrets thus stay out of the command line
// and the config file, and are never printed: errors name the header and the
// reference, never a value.
func ParseHeaders(spec string) (http.Header, error) {
	h := http.Header{}
	for part := range strings.SplitSeq(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, ref, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t:") {
			return nil, fmt.Errorf("header %q: want NAME=env:VAR, NAME=file:PATH or NAME=TEXT", clipName(part))
		}
		ref = strings.TrimSpace(ref)
		var value string
		switch {
		case strings.HasPrefix(ref, "env:"):
			v, ok := os.LookupEnv(ref[len("env:"):])
			if !ok {
				return nil, fmt.Errorf("header %s: environment variable %s is not set", name, ref[len("env:"):])
			}
			value = v
		case strings.HasPrefix(ref, "file:"):
			data, err := os.ReadFile(ref[len("file:"):])
			if err != nil {
				return nil, fmt.Errorf("header %s: cannot read %s: %w", name, ref[len("file:"):], unwrapPathError(err))
			}
			value = strings.TrimRight(string(data), "\r\n")
		default:
			value = ref
		}
		if strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("header %s: the value from %s holds a line break", name, refName(ref))
		}
		h.Add(name, value)
	}
	return h, nil
}

// refName names a header's reference in messages without its text, which may be a secret.
func refName(ref string) string {
	if strings.HasPrefix(ref, "env:") || strings.HasPrefix(ref, "file:") {
		return ref
	}
	return "its text"
}

// clipName shows a malformed header by its name alone: what follows may be a secret.
func clipName(s string) string {
	if i := strings.IndexAny(s, "=: \t"); i >= 0 {
		return s[:i] + "..."
	}
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

// TLSConfig builds an http sink's TLS settings: the CA file's certificates replace the
// system's, and a client certificate is sent when cert and key are given. nil when none
// is given.
func TLSConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("ca-file %s: %w", caFile, unwrapPathError(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca-file %s: no PEM certificate in it", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("cert-file and key-file go together; give both")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("cert-file %s, key-file %s: %w", certFile, keyFile, unwrapPathError(err))
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
