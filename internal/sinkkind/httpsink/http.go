// Package httpsink is the http sink kind: events POSTed to a URL, as JSON Lines, one JSON
// document per request, or in a receiver's own format (package notify).
package httpsink

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/notify"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/sender"
)

// Defaults of an http sink's settings.
const (
	DefaultTimeout = 10 * time.Second
	DefaultRetries = 5
	DefaultBatch   = 100
	DefaultBytes   = 1 << 20
)

// Kind is the http sink kind.
var Kind = &sinkkind.Kind{
	Name: "http", Description: "an HTTP endpoint (POSTed JSON Lines, or the receiver's format)", TargetHint: ": http=URL", AfterOptions: "then the URL",
	Target: "url", TargetNoun: "a URL", TargetDoc: "the URL", NameDoc: "http",
	Rows: []*sinkkind.Setting{
		sinkkind.FormatRow("none: JSON Lines"),
		{YAML: "url", Value: sinkkind.Text, Meta: "URL", Help: "where the events are POSTed", Default: "required", Check: checkURL, ValueDoc: "an http:// or https:// URL"},
		sender.JQ, sender.Batch(DefaultBatch),
		{Flag: "batch-bytes", YAML: "batchBytes", Value: sinkkind.Count, Meta: "N", Help: "bytes per request at most (a larger event goes alone)", Default: fmt.Sprint(DefaultBytes)},
		sender.Interval,
		{Flag: "single", YAML: "single", Value: sinkkind.Bool, Help: "one JSON document per request (application/json), not JSON Lines", Default: "false"},
		sender.Timeout(DefaultTimeout),
		sender.Retries(fmt.Sprintf("no limit under on-full block or coalesce (retried until the receiver answers), else %d", DefaultRetries)),
		{Flag: "header", YAML: "headers", Value: sinkkind.Text, Meta: "HEADERS", Help: "request headers, NAME=REF separated by ';', REF being env:VAR, file:PATH (read again when it changes) or the text itself", Default: "none"},
		{Flag: "ca-file", YAML: "caFile", Value: sinkkind.Path, Meta: "PATH", Help: "CA certificates (PEM) that verify the server", Default: "the system's"},
		{Flag: "cert-file", YAML: "certFile", Value: sinkkind.Path, Meta: "PATH", Help: "client certificate (PEM), with key-file", Default: "none"},
		{Flag: "key-file", YAML: "keyFile", Value: sinkkind.Path, Meta: "PATH", Help: "client certificate's key (PEM), with cert-file", Default: "none"},
	},
	Formats: notify.Shipped().Names(), MoreFormats: "one of the config file's formats", NamedFormats: true,
	CheckFormat: func(_ *sinkkind.Kind, name string) error { return notify.CheckName(name) },
	Elsewhere:   true,
	New:         func() sinkkind.Settings { return &Settings{} },
	Compile:     compile,
	Check:       check,
	Reads: func(s sinkkind.Settings) sinkkind.Reads {
		return sinkkind.Reads{Objects: s.(*Settings).JQ != "" || s.(*Settings).Format != ""}
	},
	Build: build,
}

// Settings are an http sink's: the receiver's format (package notify; "": JSON Lines)
// and it compiled, the URL, what it shares with exec sinks, the bytes per request at
// most (0: DefaultBytes), whether each event goes alone as one JSON document, the
// request headers ("NAME=REF; NAME=REF", REF being env:VAR, file:PATH or the text
// itself: sink.ParseHeaders) and the TLS files.
type Settings struct {
	Format   string `sink:"format"`
	Compiled *notify.Compiled
	URL      string `sink:"url"`
	sender.Settings
	BatchBytes int    `sink:"batch-bytes"`
	Single     bool   `sink:"single"`
	Headers    string `sink:"header"`
	CAFile     string `sink:"ca-file"`
	CertFile   string `sink:"cert-file"`
	KeyFile    string `sink:"key-file"`
}

// compile compiles the jq expression and the format, which it looks up among the
// shipped ones and the config file's.
func compile(settings sinkkind.Settings, c sinkkind.Compiling) error {
	s := settings.(*Settings)
	if err := s.Compile(); err != nil {
		return err
	}
	if err := s.consistent(); err != nil || s.Format == "" {
		return err
	}
	formats, err := notify.NewCatalog(c.Formats)
	if err != nil {
		return err
	}
	f, err := formats.Lookup(s.Format)
	if err != nil {
		return err
	}
	if s.Compiled, err = f.Compile(); err != nil {
		return err
	}
	return sink.CheckEditURL(f, s.URL)
}

// consistent refuses batch settings on a sink that sends one event per request, where
// they would change nothing, and settings a format leaves without use.
func (s *Settings) consistent() error {
	switch {
	case s.Single && (s.Batch > 1 || s.BatchBytes > 0):
		return errors.New("single sends one event per request; drop batch and batch-bytes, or single")
	case s.Format != "" && s.JQ != "":
		return fmt.Errorf("format %s and jq both say what is sent; drop one", s.Format)
	case s.Format != "" && s.BatchBytes > 0:
		return fmt.Errorf("batch-bytes counts the events' JSON lines, which format %s does not send; drop batch-bytes (batch limits a request's events)", s.Format)
	}
	return nil
}

// check: the header and TLS files can be read and the header variables are set.
func check(settings sinkkind.Settings) error {
	s := settings.(*Settings)
	if err := s.consistent(); err != nil {
		return err
	}
	if _, err := sink.ParseHeaders(s.Headers); err != nil {
		return err
	}
	_, err := sink.TLSConfig(s.CAFile, s.CertFile, s.KeyFile)
	return err
}

// build makes an http sink; headers and TLS files that cannot be read are errors like a
// file that cannot be opened.
func build(spec sinkkind.Spec, env sinkkind.Env) (listener.Sink, error) {
	s := spec.Settings.(*Settings)
	if err := s.consistent(); err != nil {
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: err}
	}
	headers, err := sink.ParseHeaders(s.Headers)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := sink.TLSConfig(s.CAFile, s.CertFile, s.KeyFile)
	if err != nil {
		return nil, err
	}
	enc, err := s.Encoder(spec, env)
	if err != nil {
		return nil, err
	}
	if s.Format != "" && s.Compiled == nil {
		return nil, &sinkkind.InvalidError{Sink: spec.Name, Err: fmt.Errorf("format %q was not compiled", s.Format)}
	}
	return sink.NewHTTP(sink.HTTPOptions{Name: spec.Name, URL: s.URL, Batching: s.Batching(DefaultBatch, cmp.Or(s.BatchBytes, DefaultBytes)),
		Single: s.Single, Timeout: cmp.Or(s.Timeout, DefaultTimeout), Retries: retries(spec),
		Headers: headers, TLS: tlsConfig, Encoder: enc, Format: s.Compiled, Differ: env.Differ, ShowOld: env.ShowOld,
		Warn: env.Warn}), nil
}

// retries is an http sink's retries: those it gives, else, under a policy that loses
// nothing (block, the default, and coalesce), no limit, so that a receiver that is down
// for any length of time gets every event once it is back, while the buffer fills and
// the policy applies; else DefaultRetries.
func retries(spec sinkkind.Spec) int {
	s := spec.Settings.(*Settings)
	if s.Retries == nil && spec.OnFull.Lossless() {
		return sink.RetryForever
	}
	return s.RetriesOr(DefaultRetries)
}

// checkURL checks an http sink's URL: absolute, http or https, with a host.
func checkURL(s string) error {
	if !strings.Contains(s, "://") {
		return fmt.Errorf("URL %q has no http:// or https:// scheme; write it in full, e.g. https://%s", sinkkind.Clip(s), sinkkind.Clip(strings.TrimPrefix(s, "//")))
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("invalid URL %q; use http://HOST[:PORT]/PATH or https://HOST[:PORT]/PATH", sinkkind.Clip(s))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL scheme %q is not supported; use http:// or https://", u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("URL %q has no host; use %s://HOST[:PORT]/PATH", u.Redacted(), u.Scheme)
	}
	return nil
}
