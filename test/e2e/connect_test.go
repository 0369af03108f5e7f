package e2e

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// silentTCP accepts connections and reads what comes, but never answers (not even the
// TLS handshake). seen counts connections.
func silentTCP(t *testing.T) (addr string, seen *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen = new(atomic.Int32)
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			seen.Add(1)
			held = append(held, c)
			go func() { _, _ = c.Read(make([]byte, 1<<16)) }()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return "https://" + l.Addr().String(), seen
}

// silentTLS completes the TLS handshake and then never answers a request.
func silentTLS(t *testing.T) (server string, seen *atomic.Int32) {
	t.Helper()
	seen = new(atomic.Int32)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		<-r.Context().Done()
		// Never an answer, not even the empty 200 a handler that returns would send.
		panic(http.ErrAbortHandler)
	}))
	srv.StartTLS()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL, seen
}

// listHoldingProxy forwards every request to the local cluster except lists of pods,
// which it holds unanswered: discovery succeeds and the first list never ends.
func listHoldingProxy(t *testing.T) (server string, held *atomic.Int32) {
	t.Helper()
	target, err := url.Parse(restConfig.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(restConfig)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	held = new(atomic.Int32)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/pods") && r.URL.Query().Get("watch") == "" {
			held.Add(1)
			<-r.Context().Done()
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	srv.StartTLS()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL, held
}

// TestInterruptWhileConnecting: Ctrl-C or SIGTERM ends kubeevents at once, quietly and
// with exit 0, in every phase before the stream: while the TCP connection or the TLS
// handshake gets no answer, while discovery waits for a server that never answers, and
// while the first list does.
func TestInterruptWhileConnecting(t *testing.T) {
	phases := []struct {
		name  string
		start func(t *testing.T) (string, *atomic.Int32)
	}{
		{"TLS handshake unanswered", silentTCP},
		{"discovery unanswered", silentTLS},
		{"first list unanswered", listHoldingProxy},
	}
	for _, phase := range phases {
		for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
			t.Run(phase.name+"/"+sig.String(), func(t *testing.T) {
				server, reached := phase.start(t)
				ns := newNamespace(t)
				dir := t.TempDir()
				p := startProc(t, createFile(t, filepath.Join(dir, "stdout")), nil, "watch", "pods", "-n", ns,
					"--kubeconfig", kubeconfig, "--server", server, "--insecure-skip-tls-verify",
					"--cache-dir", filepath.Join(dir, "cache"), "--sink", "file="+filepath.Join(dir, "events.jsonl"))
				deadline := time.Now().Add(10 * time.Second)
				for reached.Load() == 0 {
					if time.Now().After(deadline) || !p.Alive() {
						t.Fatalf("kubeevents never reached the phase; stderr:\n%s", p.Stderr())
					}
					time.Sleep(20 * time.Millisecond)
				}
				time.Sleep(300 * time.Millisecond) // well inside the phase, not at its start
				start := time.Now()
				p.signal(sig)
				_, code := p.wait(30 * time.Second)
				if took := time.Since(start); took > 2*time.Second {
					t.Errorf("took %s after %v to exit, want at once", took.Round(time.Millisecond), sig)
				}
				if code != 0 {
					t.Errorf("exit code %d after %v, want 0; stderr:\n%s", code, sig, p.Stderr())
				}
				if strings.Contains(p.Stderr(), "kubeevents: ") && !strings.Contains(p.Stderr(), "stopped after") {
					t.Errorf("an interrupt is no error, yet stderr says:\n%s", p.Stderr())
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "stdout")); len(b) != 0 {
					t.Errorf("stdout = %q, want nothing", b)
				}
			})
		}
	}
}

// TestConnectTimeoutNamed: a server that never answers ends the run with one line that
// names the time limit that applied, after waiting that long once: --request-timeout's
// when given, otherwise the request's default (client-go's 32s for discovery, `version`'s
// 10s), never a flag that was not set.
func TestConnectTimeoutNamed(t *testing.T) {
	server, _ := silentTLS(t)
	cases := []struct {
		name  string
		args  []string
		limit time.Duration
	}{
		{"--request-timeout", []string{"watch", "pods", "--request-timeout", "1s"}, time.Second},
		{"discovery's default", []string{"watch", "pods"}, 32 * time.Second},
		{"version's default", []string{"version"}, 10 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args, "--kubeconfig", kubeconfig, "--server", server, "--insecure-skip-tls-verify", "--cache-dir", t.TempDir())
			start := time.Now()
			r := runKubeevents(t, 90*time.Second, args...)
			if took := time.Since(start); took < c.limit || took > c.limit+8*time.Second {
				t.Errorf("took %s, want a little over %s", took.Round(time.Millisecond), c.limit)
			}
			if r.code != 1 {
				t.Errorf("exit code %d, want 1", r.code)
			}
			re := regexp.MustCompile(`^kubeevents: (server version: )?cannot reach the API server at https://127\.0\.0\.1:\d+: no answer within ` + c.limit.String() +
				` \(is the cluster up\? check --kubeconfig, --context and --server; --request-timeout sets how long to wait\)$`)
			checkOneLine(t, r.stderr, re)
		})
	}
}
