package version

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	k8sversion "k8s.io/apimachinery/pkg/version"
)

// setBuildVars sets what -ldflags -X sets at release time.
func setBuildVars(t *testing.T, v, c, d string) {
	t.Helper()
	oldV, oldC, oldD := version, commit, date
	version, commit, date = v, c, d
	t.Cleanup(func() { version, commit, date = oldV, oldC, oldD })
}

func TestVersionDefaults(t *testing.T) {
	setBuildVars(t, "", "", "")
	if v := from(nil); v.Version != "dev" || v.Commit != "unknown" || v.Date != "unknown" || v.ClientGoVersion != "unknown" {
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
	v := from(bi)
	if v.Version != "v1.4.0" || v.Commit != "0123456789ab" || v.Date != "2026-05-06T07:08:09Z" || v.ClientGoVersion != "v0.37.1" {
		t.Errorf("from build information (go install ...@v1.4.0): %+v", v)
	}
	bi.Main.Version = "(devel)"
	bi.Deps[1].Replace = &debug.Module{Path: "../client-go", Version: "v0.37.2-fork"}
	if v := from(bi); v.Version != "dev" || v.ClientGoVersion != "v0.37.2-fork" {
		t.Errorf("devel build with a replaced client-go: %+v", v)
	}
	setBuildVars(t, "v2.0.0", "feedbee", "2027-01-01T00:00:00Z")
	if v := from(bi); v.Version != "v2.0.0" || v.Commit != "feedbee" || v.Date != "2027-01-01T00:00:00Z" {
		t.Errorf("-ldflags must win over build information: %+v", v)
	}
}

func TestWrite(t *testing.T) {
	setBuildVars(t, "v1.2.3", "abc1234", "2026-01-02T03:04:05Z")
	v := Get()
	var b bytes.Buffer
	if err := Write(&b, v, ""); err != nil {
		t.Fatal(err)
	}
	want := "version:    v1.2.3\ncommit:     abc1234\nbuilt:      2026-01-02T03:04:05Z\ngo:         " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\nclient-go:  " + v.ClientGoVersion + "\n"
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
	v.ServerVersion = &k8sversion.Info{GitVersion: "v1.99.0"}
	b.Reset()
	if err := Write(&b, v, ""); err != nil || !strings.HasSuffix(b.String(), "client-go:  "+v.ClientGoVersion+"\nserver:     v1.99.0\n") {
		t.Errorf("text with the server's version (%v):\n%s", err, b.String())
	}
	b.Reset()
	if err := Write(&b, v, "json"); err != nil {
		t.Fatal(err)
	}
	var got Info
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || got.Version != "v1.2.3" || got.Commit != "abc1234" || got.ServerVersion == nil || got.ServerVersion.GitVersion != "v1.99.0" || !strings.HasSuffix(b.String(), "}\n") {
		t.Errorf("json (%v):\n%s", err, b.String())
	}
	b.Reset()
	if err := Write(&b, v, "yaml"); err != nil || !strings.Contains(b.String(), "version: v1.2.3\n") || !strings.Contains(b.String(), "gitVersion: v1.99.0\n") || strings.HasSuffix(b.String(), "\n\n") {
		t.Errorf("yaml (%v):\n%s", err, b.String())
	}
}

func TestShortAndUserAgent(t *testing.T) {
	setBuildVars(t, "v1.2.3", "abc1234567", "2026-01-02T03:04:05Z")
	v := Get()
	if want := "v1.2.3 (commit abc1234567, built 2026-01-02T03:04:05Z, " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"; Short(v) != want {
		t.Errorf("Short = %q, want %q", Short(v), want)
	}
	if want := "kubeevents/v1.2.3 (" + runtime.GOOS + "/" + runtime.GOARCH + ") kubeevents/abc1234"; UserAgent(v) != want {
		t.Errorf("UserAgent = %q, want %q", UserAgent(v), want)
	}
}
