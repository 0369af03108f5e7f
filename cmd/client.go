package cmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"

	"github.com/kubeevents/kubeevents/internal/quietio"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// configureClients makes every client built from configFlags (discovery, the REST
// mapper, the informers' clients, `version`'s) identify itself as this build of
// kubeevents, and give up their requests as soon as ctx ends: Ctrl-C must end
// kubeevents at once in every phase, also while discovery waits for a server that never
// answers, which client-go's discovery and REST mapper cannot be told through a context.
// ctx is read when a client is built, so it is the command's own context (Ctrl-C,
// SIGTERM) once the command runs.
func configureClients(configFlags *genericclioptions.ConfigFlags, ctx func() context.Context) {
	wrap := configFlags.WrapConfigFn
	configFlags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if wrap != nil {
			c = wrap(c)
		}
		c.UserAgent = userAgent(buildVersion())
		if ctx := ctx(); ctx != nil && ctx.Done() != nil {
			c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &interruptible{ctx: ctx, next: rt} })
		}
		return c
	}
}

// userAgent is what the API server (and its audit log) sees, in kubectl's form:
// "kubeevents/v1.2.3 (linux/amd64) kubeevents/abc1234".
func userAgent(v VersionInfo) string {
	commit := v.Commit
	if len(commit) > 7 {
		commit = commit[:7]
	}
	return fmt.Sprintf("kubeevents/%s (%s/%s) kubeevents/%s", v.Version, runtime.GOOS, runtime.GOARCH, commit)
}

// interruptible gives up a request, whatever stage it is in (dialling, the TLS
// handshake, waiting for the response, reading a watch's body), once ctx ends.
type interruptible struct {
	ctx  context.Context
	next http.RoundTripper
}

func (t *interruptible) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.ctx.Err(); err != nil {
		return nil, err // context.Canceled: the informers take it as being stopped, not as an outage
	}
	reqCtx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.ctx, cancel)
	release := func() { stop(); cancel() }
	resp, err := t.next.RoundTrip(req.WithContext(reqCtx))
	if err != nil {
		release()
		return nil, err
	}
	// A response's body (a watch's stream) is read after RoundTrip returns: its request
	// stays cancellable until the body is closed.
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// CancelRequest is passed on, as client-go's own round trippers do (http.Client calls it
// on a timeout; the request's context is cancelled as well).
func (t *interruptible) CancelRequest(req *http.Request) {
	if c, ok := t.next.(interface{ CancelRequest(*http.Request) }); ok {
		c.CancelRequest(req)
	}
}

// WrappedRoundTripper lets client-go's debugging and transport helpers see through.
func (t *interruptible) WrappedRoundTripper() http.RoundTripper { return t.next }

// releasingBody releases its request's resources once closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// watchConfig is config for the informers' clients: their connection is dialled by
// quietio, whose reads and writes do not wake the Go runtime's monitor thread on every
// event (a fifth of the CPU of a watch on a busy cluster), unless the user turned that
// off or the config already has a dialer of its own.
func (o *WatchOptions) watchConfig(config *rest.Config) *rest.Config {
	if o.plainIO || config.Dial != nil {
		return config
	}
	c := rest.CopyConfig(config)
	c.Dial = quietio.Dial
	return c
}

// stdout is where the sinks that write to the standard output write: through quietio's
// writer (one for all of them) when it is a pipe, a socket or a device, unless the user
// turned that off.
func (o *WatchOptions) stdout() io.Writer {
	if o.stdoutWriter == nil {
		o.stdoutWriter = o.Streams.Out
		if !o.plainStdout {
			o.stdoutWriter = quietio.Writer(o.Streams.Out)
		}
	}
	return o.stdoutWriter
}
