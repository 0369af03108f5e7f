package kubeclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// A client built from the flags gives up a watch's body as soon as the run's context
// ends, and refuses new requests after, while the server never ends the stream.
func TestClientsStopWithTheRun(t *testing.T) {
	streaming, done := make(chan struct{}), make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{}\n"))
		w.(http.Flusher).Flush()
		close(streaming)
		select { // a watch that never ends on its own
		case <-r.Context().Done():
		case <-done: // the test is over, failed
		}
	}))
	defer server.Close()
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	flags := genericclioptions.NewConfigFlags(false)
	Configure(flags, func() context.Context { return ctx })
	cfg := flags.WrapConfigFn(&rest.Config{Host: server.URL})
	if cfg.UserAgent == "" {
		t.Error("no user agent")
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rt}
	resp, err := client.Get(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	<-streaming
	read := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		read <- err
	}()
	cancel()
	select {
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the body was still read 10s after the run's context ended")
	}
	_ = resp.Body.Close()
	if _, err := client.Get(server.URL); !errors.Is(err, context.Canceled) {
		t.Errorf("a request after the end: %v, want context.Canceled", err)
	}
}
