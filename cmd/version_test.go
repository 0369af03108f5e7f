package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/version"
)

func runVersion(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, append([]string{"kubeevents", "version"}, args...))
	code = ExitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

func TestVersionText(t *testing.T) {
	isolate(t)
	v := version.Get()
	out, errOut, code := runVersion(t, "--client")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"version:    " + v.Version + "\n", "commit:     " + v.Commit + "\n", "built:      " + v.Date + "\n", "go:         " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n", "client-go:  "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "server") {
		t.Errorf("server version with --client:\n%s", out)
	}
}

func TestVersionJSON(t *testing.T) {
	isolate(t)
	v := version.Get()
	out, _, code := runVersion(t, "--client", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]string{"version": v.Version, "commit": v.Commit, "date": v.Date, "goVersion": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %q", k, got[k], v)
		}
	}
	if s, _ := got["clientGoVersion"].(string); s == "" { // "unknown" in a test binary: it records no dependencies
		t.Errorf("clientGoVersion = %v", got["clientGoVersion"])
	}
	if _, ok := got["serverVersion"]; ok {
		t.Errorf("serverVersion with --client")
	}
	out, errOut, code := runVersion(t, "--client", "-o", "yaml")
	if code != 0 || !strings.Contains(out, "version: "+v.Version+"\n") || !strings.Contains(out, "commit: "+v.Commit+"\n") {
		t.Errorf("-o yaml: exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	if _, errOut, code := runVersion(t, "--client", "-o", "xml"); code != ExitUsage || !strings.Contains(errOut, "use json or yaml") {
		t.Errorf("-o xml: exit %d, want %d; stderr %q", code, ExitUsage, errOut)
	}
}

// `kubeevents --version`, cobra's and most CLIs' form: one line, no connection.
func TestVersionFlag(t *testing.T) {
	isolate(t)
	var out, errOut bytes.Buffer
	err := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, []string{"kubeevents", "--version"})
	if code := ExitCode(err, &errOut); code != 0 || errOut.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	if want := "kubeevents version " + version.Short(version.Get()) + "\n"; out.String() != want {
		t.Errorf("--version printed %q, want %q", out.String(), want)
	}
}

func TestVersionServer(t *testing.T) {
	isolate(t)
	var agents sync.Map // every User-Agent the server saw
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents.Store(r.UserAgent(), true)
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"99","gitVersion":"v1.99.0","platform":"linux/amd64"}`))
	}))
	defer srv.Close()
	kc := writeKubeconfig(t, srv.URL)

	// As kubectl version: the server's version is shown unless --client.
	out, errOut, code := runVersion(t, "--kubeconfig", kc)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "server:     v1.99.0\n") {
		t.Errorf("no server version:\n%s", out)
	}
	// -s/--server is the API server's address, as in every other command and in kubectl.
	for _, args := range [][]string{{"-s", srv.URL}, {"--server", srv.URL}, {"--server=" + srv.URL}} {
		out, errOut, code := runVersion(t, args...)
		if code != 0 || errOut != "" || !strings.Contains(out, "server:     v1.99.0\n") {
			t.Errorf("version %s: exit %d, stderr %q, output:\n%s", strings.Join(args, " "), code, errOut, out)
		}
	}
	// The bare switch of earlier releases says what became of it.
	if _, errOut, code := runVersion(t, "--kubeconfig", kc, "--server"); code != ExitUsage || !strings.Contains(errOut, "--server takes the API server's address (-s URL)") {
		t.Errorf("version --server: exit %d, stderr %q", code, errOut)
	}
	// The API server (and its audit log) sees which kubeevents asked, in kubectl's form.
	agents.Range(func(k, _ any) bool {
		if want := version.UserAgent(version.Get()); k != want {
			t.Errorf("User-Agent %q, want %q", k, want)
		}
		return true
	})
	out, _, _ = runVersion(t, "--kubeconfig", kc, "-o", "json")
	var got struct {
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.ServerVersion.GitVersion != "v1.99.0" {
		t.Errorf("serverVersion.gitVersion = %q (%v):\n%s", got.ServerVersion.GitVersion, err, out)
	}
}

func TestVersionServerUnreachable(t *testing.T) {
	isolate(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	kc := writeKubeconfig(t, "https://"+addr)
	out, errOut, code := runVersion(t, "--kubeconfig", kc)
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "kubeevents: server version: cannot reach the API server at https://"+addr) {
		t.Errorf("stderr is not one line about the unreachable server: %q", errOut)
	}
	if !strings.Contains(out, "client-go:") {
		t.Errorf("the client's version is not printed before the error:\n%s", out)
	}
}

// A --request-timeout client-go cannot parse is bad usage (exit 2), as for watch.
func TestVersionServerBadRequestTimeout(t *testing.T) {
	isolate(t)
	kc := writeKubeconfig(t, "https://127.0.0.1:1")
	_, errOut, code := runVersion(t, "--request-timeout", "abc", "--kubeconfig", kc) // version asks the server by default
	if code != ExitUsage || !strings.HasPrefix(errOut, `kubeevents: --request-timeout "abc": give a duration with a unit`) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want %d and one line about --request-timeout", code, errOut, ExitUsage)
	}
}
