package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func runVersion(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, append([]string{"kubeevents", "version"}, args...))
	code = ExitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

// setBuildVars sets what -ldflags -X sets at release time.
func setBuildVars(t *testing.T, v, c, d string) {
	t.Helper()
	oldV, oldC, oldD := version, commit, date
	version, commit, date = v, c, d
	t.Cleanup(func() { version, commit, date = oldV, oldC, oldD })
}

func TestVersionText(t *testing.T) {
	isolate(t)
	setBuildVars(t, "v1.2.3", "abc1234", "2026-01-02T03:04:05Z")
	out, errOut, code := runVersion(t, "--client")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"version:    v1.2.3\n", "commit:     abc1234\n", "built:      2026-01-02T03:04:05Z\n", "go:         " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n", "client-go:  "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "server") {
		t.Errorf("server version with --client:\n%s", out)
	}
}

func TestVersionDefaults(t *testing.T) {
	setBuildVars(t, "", "", "")
	if v := versionFrom(nil); v.Version != "dev" || v.Commit != "unknown" || v.Date != "unknown" || v.ClientGoVersion != "unknown" {
		t.Errorf("without -ldflags and build information: %+v", v)
	}
	bi := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/kubeevents/kubeevents", Version: "v1.4.0"},
		Deps: []*debug.Module{
			{Path: "github.com/spf13/cobra", Version: "v1.10.2"},
			{Path: "k8s.io/client-go", Version: "v0.37.1"},
		},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-05-06T07:08:09Z"}},
	}
	v := versionFrom(bi)
	if v.Version != "v1.4.0" || v.Commit != "0123456789ab" || v.Date != "2026-05-06T07:08:09Z" || v.ClientGoVersion != "v0.37.1" {
		t.Errorf("from build information (go install ...@v1.4.0): %+v", v)
	}
	bi.Main.Version = "(devel)"
	bi.Deps[1].Replace = &debug.Module{Path: "../client-go", Version: "v0.37.2-fork"}
	if v := versionFrom(bi); v.Version != "dev" || v.ClientGoVersion != "v0.37.2-fork" {
		t.Errorf("devel build with a replaced client-go: %+v", v)
	}
	setBuildVars(t, "v2.0.0", "feedbee", "2027-01-01T00:00:00Z")
	if v := versionFrom(bi); v.Version != "v2.0.0" || v.Commit != "feedbee" || v.Date != "2027-01-01T00:00:00Z" {
		t.Errorf("-ldflags must win over build information: %+v", v)
	}
}

func TestVersionJSON(t *testing.T) {
	isolate(t)
	setBuildVars(t, "v1.2.3", "abc1234", "2026-01-02T03:04:05Z")
	out, _, code := runVersion(t, "--client", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]string{"version": "v1.2.3", "commit": "abc1234", "date": "2026-01-02T03:04:05Z", "goVersion": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH}
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
	if code != 0 || !strings.Contains(out, "version: v1.2.3\n") || !strings.Contains(out, "commit: abc1234\n") {
		t.Errorf("-o yaml: exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	if _, errOut, code := runVersion(t, "--client", "-o", "xml"); code != ExitUsage || !strings.Contains(errOut, "use json or yaml") {
		t.Errorf("-o xml: exit %d, want %d; stderr %q", code, ExitUsage, errOut)
	}
}

// `kubeevents --version`, cobra's and most CLIs' form: one line, no connection.
func TestVersionFlag(t *testing.T) {
	isolate(t)
	setBuildVars(t, "v1.2.3", "abc1234", "2026-01-02T03:04:05Z")
	var out, errOut bytes.Buffer
	err := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, []string{"kubeevents", "--version"})
	if code := ExitCode(err, &errOut); code != 0 || errOut.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	if want := "kubeevents version v1.2.3 (commit abc1234, built 2026-01-02T03:04:05Z, " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"; out.String() != want {
		t.Errorf("--version printed %q, want %q", out.String(), want)
	}
}

func TestVersionServer(t *testing.T) {
	isolate(t)
	setBuildVars(t, "v1.2.3", "abc1234567", "2026-01-02T03:04:05Z")
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
		if want := "kubeevents/v1.2.3 (" + runtime.GOOS + "/" + runtime.GOARCH + ") kubeevents/abc1234"; k != want {
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
