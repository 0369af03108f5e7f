package e2e

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestFaultServerDownAtStartup: a server that is down, or that never answers, when
// kubeevents starts is one clear error and exit 1 within --request-timeout or so, not a
// hang, and no output file is left behind.
func TestFaultServerDownAtStartup(t *testing.T) {
	fc := faultsCluster(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn // accept and never answer
		for {
			c, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	cases := []struct {
		name, server, want string
		within             time.Duration
		killAPIServer      bool
	}{
		{"closed port", "https://127.0.0.1:1", `cannot reach the API server at https://127\.0\.0\.1:1: connection refused \(is the cluster up\?`, 5 * time.Second, false},
		{"no answer", "https://" + silent.Addr().String(), `cannot reach the API server at https://127\.0\.0\.1:\d+: no answer within 2s \(is the cluster up\? check --kubeconfig, --context and --server; --request-timeout sets how long to wait\)$`, 12 * time.Second, false},
		{"apiserver killed", "", `cannot reach the API server at https://127\.0\.0\.1:` + fc.apiPort + `: connection refused`, 5 * time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"watch", "pods", "--kubeconfig", fc.kubeconfig, "--request-timeout", "2s",
				"--cache-dir", filepath.Join(dir, "cache"), "--sink", "file=" + filepath.Join(dir, "events.jsonl")}
			if c.server != "" {
				args = append(args, "--server", c.server)
			}
			var restarted <-chan error
			if c.killAPIServer {
				restarted = fc.restartAPIServer(t, 6*time.Second)
			}
			start := time.Now()
			r := runKubeevents(t, 60*time.Second, args...)
			took := time.Since(start)
			if restarted != nil {
				if err := <-restarted; err != nil {
					t.Fatal(err)
				}
			}
			if r.code != 1 {
				t.Errorf("exit code %d, want 1; stderr %q", r.code, r.stderr)
			}
			if took > c.within {
				t.Errorf("took %s, want at most %s", took.Round(time.Millisecond), c.within)
			}
			checkOneLine(t, r.stderr, regexp.MustCompile(`^kubeevents: `+c.want))
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err == nil {
				t.Errorf("the file sink's file was left behind")
			}
		})
	}
}
