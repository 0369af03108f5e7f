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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/notify"
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
	// Retries is how many times a failed request is made again at most; RetryForever
	// retries until the receiver answers (or answers 4xx), so that an outage of any
	// length loses nothing.
	Retries int
	Backoff wait.Backoff // between attempts; zero means NewBackoff()
	Headers *Headers     // nil for none; never printed
	TLS     *tls.Config  // nil: Go's defaults
	// Encoder makes what is sent for each event, unless Format is set.
	Encoder *Encoder
	// Format, when set, makes each request's body from its batch of events, in the
	// receiver's own format (package notify), instead of the Encoder's lines; Differ and
	// ShowOld make the envelopes it is given. Batching.Size is then at most its MaxBatch,
	// and a batch goes in as many requests as its Limit needs.
	Format  *notify.Compiled
	Differ  *diff.Differ
	ShowOld bool
	Warn    func(format string, args ...any)
}

// HTTP POSTs events to a URL, in batches of JSON Lines, one JSON document per request,
// or in a receiver's own format.
// Connection errors, time-outs, 5xx, 408 and 429 are retried with exponential backoff
// and jitter, and Retry-After is honoured; 413 sends the batch again in halves; another
// 4xx fails the batch at once (after a 401, once more if a header file changed). It
// implements listener.Holder: each event is settled when the request that held it was
// accepted (2xx) or failed.
type HTTP struct {
	*pool
	opts   HTTPOptions
	client *http.Client
	target string // the URL without its password, for messages

	mu           sync.Mutex
	retryNotice  listener.Throttle
	failNotice   listener.Throttle
	headerNotice listener.Throttle
	formatNotice listener.Throttle
	splitNotice  listener.Throttle
	cutThrottle  listener.Throttle
	failed       int
	cut          int          // events sent cut to fit one request
	statusSaid   map[int]bool // 4xx statuses already reported
	// refused is half of the smallest body the receiver answered 413: no later request
	// is larger.
	refused notify.Limit

	// editor posts to a receiver that edits its messages (its format's Edit; nil:
	// none); editedSince says which episodes' first messages, posted without their
	// crash's context, were edited since; late are the late contexts' edits in flight.
	editor      editor
	editedSince map[string]bool
	late        sync.WaitGroup
}

// NewHTTP makes the sink.
func NewHTTP(o HTTPOptions) *HTTP {
	if o.Backoff == (wait.Backoff{}) {
		o.Backoff = NewBackoff()
	}
	if o.Single {
		o.Batching = Batching{Size: 1}
	}
	encode := o.Encoder.Encode
	if o.Format != nil {
		if o.Format.MaxBatch > 0 && o.Batching.Size > o.Format.MaxBatch {
			o.Batching.Size = o.Format.MaxBatch
		}
		encode = func(*event.Event) ([]byte, error) { return nil, nil } // the body is made per batch
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = o.TLS
	// The proxy is taken from the environment, as by curl and kubectl.
	s := &HTTP{opts: o, client: &http.Client{Transport: transport, Timeout: o.Timeout},
		retryNotice:  listener.Throttle{Period: listener.NoticeEvery},
		failNotice:   listener.Throttle{Period: listener.NoticeEvery},
		headerNotice: listener.Throttle{Period: listener.NoticeEvery},
		formatNotice: listener.Throttle{Period: listener.NoticeEvery},
		splitNotice:  listener.Throttle{Period: listener.NoticeEvery},
		cutThrottle:  listener.Throttle{Period: listener.NoticeEvery},
		statusSaid:   map[int]bool{}}
	s.target = o.URL
	if u, err := url.Parse(o.URL); err == nil {
		s.target = u.Redacted()
	}
	s.pool = newPool(1, o.Batching, encode, s.send)
	if o.Format != nil && o.Format.Edit != "" {
		s.editor, _ = newEditor(s, o.Format.Edit, o.URL) // checked with the command line (CheckEditURL)
	}
	return s
}

// send POSTs one batch: in as many requests as the receiver's limit on a request's size
// needs (its format's, and half of any body it answered 413), in order, each with its
// retries; done settles each request's events.
func (s *HTTP) send(ctx context.Context, batch []item, done func([]item, error)) {
	var envelopes []map[string]any
	if s.opts.Format != nil {
		// An event whose envelope cannot be made fails alone.
		kept := batch[:0:0]
		for _, it := range batch {
			envelope, err := jq.EnvelopeValue(it.ev, s.opts.Differ, s.opts.ShowOld)
			if err != nil {
				s.formatFailed(1, fmt.Errorf("format %s: %w", s.opts.Format.Name, err))
				done([]item{it}, err)
				continue
			}
			kept = append(kept, it)
			envelopes = append(envelopes, envelope)
		}
		batch = kept
		if s.editor != nil && slices.ContainsFunc(batch, func(it item) bool { return isEpisodeMessage(it.ev) }) {
			s.sendEpisodes(ctx, batch, envelopes, done)
			return
		}
	}
	s.deliver(ctx, batch, envelopes, done)
}

// deliver sends batch (with its events' envelopes when the sink has a format) in parts
// whose bodies fit the limit, each as many events as fit, in order. A part that the
// receiver answers 413 Payload Too Large goes again in halves, and later bodies are kept
// to half of the one refused; a single event answered 413 fails alone.
func (s *HTTP) deliver(ctx context.Context, batch []item, envelopes []map[string]any, done func([]item, error)) {
	for len(batch) > 0 {
		if ctx.Err() != nil {
			done(batch, ctx.Err())
			return
		}
		n, data, contentType, err := s.fit(ctx, batch, envelopes)
		part := batch[:n]
		if err != nil {
			if ctx.Err() == nil {
				s.formatFailed(n, err)
			}
			done(part, err)
		} else {
			err = s.post(ctx, data, contentType)
			var se *statusError
			switch {
			case errors.As(err, &se) && se.code == http.StatusRequestEntityTooLarge && n > 1:
				s.lowerLimit(err, len(data), n)
				half := n / 2
				var first, second []map[string]any
				if envelopes != nil {
					first, second = envelopes[:half], envelopes[half:n]
				}
				s.deliver(ctx, part[:half], first, done)
				s.deliver(ctx, part[half:], second, done)
			case err != nil && ctx.Err() == nil && !errors.Is(err, listener.ErrFenced):
				if errors.As(err, &se) && se.code == http.StatusRequestEntityTooLarge {
					s.lowerLimit(nil, len(data), 1)
				}
				s.report(n, err)
				done(part, err)
			default:
				done(part, err)
			}
		}
		batch = batch[n:]
		if envelopes != nil {
			envelopes = envelopes[n:]
		}
	}
}

// fit is the body of the first n events of batch: as many as fit the limit. Its first
// event alone is sent whatever its size when the sink has no format, and, with one, cut
// to fit (notify.Compiled.One) or failed when even that does not fit.
func (s *HTTP) fit(ctx context.Context, batch []item, envelopes []map[string]any) (n int, body []byte, contentType string, err error) {
	limit := s.limit()
	n = len(batch)
	for {
		if n == 1 && s.opts.Format != nil {
			body, cut, err := s.opts.Format.One(ctx, envelopes[0], limit)
			if notify.IsTooLarge(err) {
				ev := batch[0].ev
				return 1, nil, "", fmt.Errorf("format %s: %s %s %s is %w", s.opts.Format.Name, ev.Type, ev.Kind, escape.Append(nil, ev.Key()), err)
			}
			if err != nil {
				return 1, nil, "", fmt.Errorf("format %s: %w", s.opts.Format.Name, err)
			}
			if cut {
				s.cutNotice(batch[0].ev, limit)
			}
			return 1, body, s.opts.Format.ContentType, nil
		}
		body, contentType, err = s.body(ctx, batch[:n], envelopes)
		if err != nil || n == 1 || limit.Fits(body) {
			return n, body, contentType, err
		}
		// The events that fit, roughly: a body grows with its events.
		n = min(n-1, max(1, int(float64(n)*limit.Share(body))))
	}
}

// body is the request body of these events and its content type: their lines, JSON Lines
// or (Single) one JSON document; or what the format makes of their envelopes.
func (s *HTTP) body(ctx context.Context, batch []item, envelopes []map[string]any) ([]byte, string, error) {
	if s.opts.Format == nil {
		var body bytes.Buffer
		for _, it := range batch {
			body.Write(it.data)
		}
		if s.opts.Single {
			return bytes.TrimSuffix(body.Bytes(), []byte("\n")), "application/json", nil
		}
		return body.Bytes(), "application/x-ndjson", nil
	}
	values := make([]any, len(batch))
	for i := range batch {
		values[i] = envelopes[i]
	}
	body, err := s.opts.Format.Body(ctx, values)
	if err != nil {
		return nil, "", fmt.Errorf("format %s: %w", s.opts.Format.Name, err)
	}
	return body, s.opts.Format.ContentType, nil
}

// limit is what one request's body may hold: the format's limit, and half of the
// smallest body the receiver answered 413.
func (s *HTTP) limit() notify.Limit {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.Format == nil {
		return s.refused
	}
	return s.opts.Format.Limit.Within(s.refused)
}

// lowerLimit keeps later bodies to half of one of size bytes the receiver answered 413, as
// the parts of a batch sent again in halves are: a limit just below the refused size
// would have most later batches refused once each, when the receiver's own limit is well
// below it. It says so (err, the answer, for a batch sent again in halves) at most once
// per NoticeEvery.
func (s *HTTP) lowerLimit(err error, size, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if half := max(size/2, 1); s.refused.Bytes == 0 || half < s.refused.Bytes {
		s.refused.Bytes = half
	}
	if err != nil && s.splitNotice.Allow(time.Now()) {
		s.opts.Warn("http sink %q: POST %s: %v; sending its %s in halves, and requests of at most %d bytes from now on", s.opts.Name, s.target, err, diag.Events(uint64(n)), s.refused.Bytes)
	}
}

// cutNotice says that an event was too large for one request and was sent cut, at most
// once per NoticeEvery.
func (s *HTTP) cutNotice(ev *event.Event, limit notify.Limit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut++
	if !s.cutThrottle.Allow(time.Now()) {
		return
	}
	more := ""
	if s.cut > 1 {
		more = fmt.Sprintf(" (%d events cut so far)", s.cut)
	}
	s.opts.Warn("http sink %q: %s %s %s does not fit one request (at most %s): sent cut, marked %q%s", s.opts.Name, ev.Type, ev.Kind, escape.Append(nil, ev.Key()), limit, notify.Mark, more)
}

// post POSTs one body to the sink's URL, with retries.
func (s *HTTP) post(ctx context.Context, data []byte, contentType string) error {
	if s.editor != nil {
		return s.editor.post(ctx, data, contentType)
	}
	return s.do(ctx, call{method: http.MethodPost, url: s.opts.URL, data: data, contentType: contentType})
}

// call is one request an http sink makes: its method, URL and body, and what checks
// the body of a 2xx answer (nil: nothing), for a receiver that says in it whether it took
// the request (Slack's Web API) or what it made of it (its message's id).
type call struct {
	method, url string
	data        []byte
	contentType string
	answer      func(body []byte) error
}

// target is the call's URL without its password, for messages.
func (c call) target() string {
	if u, err := url.Parse(c.url); err == nil {
		return u.Redacted()
	}
	return c.url
}

// do makes one call, with retries.
func (s *HTTP) do(ctx context.Context, c call) error {
	var firstFailure time.Time
	said := false // a retry of this body was said: its end will be too
	target := c.target()
	err := withRetries(ctx, s.opts.Retries, s.opts.Backoff, s.fenced(func(ctx context.Context) error {
		return s.attempt(ctx, c)
	}), func(err error, try int, wait time.Duration) {
		if try == 1 {
			firstFailure = time.Now()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.retryNotice.Allow(time.Now()) {
			return
		}
		said = true
		if s.opts.Retries == RetryForever {
			s.opts.Warn("http sink %q: %s %s: %v; retry %d in %s (retrying until the receiver answers)", s.opts.Name, c.method, target, err, try, wait.Round(time.Millisecond))
			return
		}
		s.opts.Warn("http sink %q: %s %s: %v; retry %d of %d in %s", s.opts.Name, c.method, target, err, try, s.opts.Retries, wait.Round(time.Millisecond))
	})
	if err == nil && said {
		s.opts.Warn("http sink %q: %s %s: accepted again after %s", s.opts.Name, c.method, target, time.Since(firstFailure).Round(100*time.Millisecond))
	}
	return err
}

// formatFailed says that a batch's body could not be made (its format failed on it): at
// most once per NoticeEvery, with the count so far. Nothing was sent; the events count as
// failed.
func (s *HTTP) formatFailed(n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed += n
	if s.formatNotice.Allow(time.Now()) {
		s.opts.Warn("http sink %q: %v; %s not sent (%s failed so far)", s.opts.Name, err, diag.Events(uint64(n)), diag.Count(s.failed))
	}
}

// report says a batch failed: a 4xx once per status, the rest at most once per
// NoticeEvery, with the count so far.
func (s *HTTP) report(n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed += n
	var se *statusError
	if errors.As(err, &se) && !se.retry() {
		if s.statusSaid[se.code] {
			return
		}
		s.statusSaid[se.code] = true
		s.opts.Warn("http sink %q: POST %s: %v; the receiver refused %s (%s failed so far)", s.opts.Name, s.target, err, diag.Events(uint64(n)), diag.Count(s.failed))
		return
	}
	if s.failNotice.Allow(time.Now()) {
		s.opts.Warn("http sink %q: POST %s: %v; gave up on %s%s (%s failed so far)", s.opts.Name, s.target, err, diag.Events(uint64(n)), afterRetries(s.opts.Retries), diag.Count(s.failed))
	}
}

// statusError is a response that was not 2xx: its status and the first line of its body.
type statusError struct {
	code int
	text string
	line string
}

// retry reports whether the answer is worth asking again: the receiver is in trouble
// (5xx), or asks to be left alone for a while (429, 408), rather than refusing the
// request itself.
func (e *statusError) retry() bool {
	return e.code >= 500 || e.code == http.StatusTooManyRequests || e.code == http.StatusRequestTimeout
}

func (e *statusError) Error() string {
	if e.line == "" {
		return e.text
	}
	return e.text + ": " + e.line
}

// attempt makes one request. After a 401 it reads the header files again at once, and
// asks once more if that changed them: the token was rotated.
func (s *HTTP) attempt(ctx context.Context, c call) error {
	header, _ := s.header(false)
	err := s.request(ctx, c, header)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusUnauthorized {
		if header, changed := s.header(true); changed {
			err = s.request(ctx, c, header)
		}
	}
	return err
}

// header returns the headers to send, with the files read again if they changed, or,
// with force, whatever they look like; changed reports a value that differs from the
// last one sent. A file that cannot be read again keeps its last value, which is said
// at most once per NoticeEvery.
func (s *HTTP) header(force bool) (h http.Header, changed bool) {
	if s.opts.Headers == nil {
		return nil, false
	}
	h, changed, err := s.opts.Headers.Current(force)
	if err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.headerNotice.Allow(time.Now()) {
			s.opts.Warn("http sink %q: %v; sending the value read before", s.opts.Name, err)
		}
	}
	return h, changed
}

// request makes one request with these headers.
func (s *HTTP) request(ctx context.Context, c call, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, bytes.NewReader(c.data))
	if err != nil {
		return &attemptError{err: err}
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", c.contentType)
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
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)) // all of it lets the connection be reused
		if c.answer != nil {
			return c.answer(body)
		}
		return nil
	}
	se := &statusError{code: resp.StatusCode, text: string(escape.Append(nil, resp.Status))}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 4<<10))
	if sc.Scan() {
		se.line = firstLine(sc.Text())
	}
	return &attemptError{err: se, retry: se.retry(), after: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
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

// firstLine is the start of a receiver's answer, for a message: at most 200 bytes,
// escaped as object names are, since the receiver chose them.
func firstLine(s string) string {
	const limit = 200
	s = strings.TrimSpace(s)
	if len(s) > limit {
		i := limit
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "..."
	}
	return string(escape.Append(nil, s))
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
