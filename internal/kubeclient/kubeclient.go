// Package kubeclient makes the clients built from kubectl's flags fit a kubeevents run:
// identified as this build, interrupted the moment the run ends, one set of flags per
// context watched.
package kubeclient

import (
	"context"
	"io"
	"net/http"
	"sync"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kubeevents/kubeevents/internal/version"
)

// Configure makes every client built from configFlags (discovery, the REST
// mapper, the informers' clients, `version`'s) identify itself as this build of
// kubeevents, and give up their requests as soon as ctx ends: Ctrl-C must end
// kubeevents at once in every phase, also while discovery waits for a server that never
// answers, which client-go's discovery and REST mapper cannot be told through a context.
// ctx is read when a client is built, so it is the command's own context (Ctrl-C,
// SIGTERM) once the command runs.
func Configure(configFlags *genericclioptions.ConfigFlags, ctx func() context.Context) {
	wrap := configFlags.WrapConfigFn
	configFlags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		if wrap != nil {
			c = wrap(c)
		}
		c.UserAgent = version.UserAgent(version.Get())
		if ctx := ctx(); ctx != nil && ctx.Done() != nil {
			c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &interruptible{ctx: ctx, next: rt} })
		}
		return c
	}
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

// ForContext is a copy of the command's kubectl flags for one context: the same
// kubeconfig, overrides and client wrapping, with its own cached discovery and REST
// mapper (every cluster has its own).
func ForContext(f *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	c := genericclioptions.NewConfigFlags(true)
	c.CacheDir, c.KubeConfig = f.CacheDir, f.KubeConfig
	c.ClusterName, c.AuthInfoName, c.Namespace, c.APIServer, c.TLSServerName = f.ClusterName, f.AuthInfoName, f.Namespace, f.APIServer, f.TLSServerName
	c.Insecure, c.CertFile, c.KeyFile, c.CAFile, c.BearerToken = f.Insecure, f.CertFile, f.KeyFile, f.CAFile, f.BearerToken
	c.Impersonate, c.ImpersonateUID, c.ImpersonateGroup, c.ImpersonateUserExtra = f.Impersonate, f.ImpersonateUID, f.ImpersonateGroup, f.ImpersonateUserExtra
	c.Username, c.Password, c.Timeout, c.DisableCompression, c.ProxyURL = f.Username, f.Password, f.Timeout, f.DisableCompression, f.ProxyURL
	c.Context = &name
	c.WrapConfigFn = f.WrapConfigFn
	return c
}
