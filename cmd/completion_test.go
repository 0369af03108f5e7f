package cmd

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubeevents/kubeevents/internal/complete"
	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/filesink"
)

// isolate keeps a test away from the user's kubeconfig and discovery cache.
func isolate(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", filepath.Join(dir, "no-such-kubeconfig"))
	t.Setenv("KUBECACHEDIR", filepath.Join(dir, "cache"))
	t.Setenv("HOME", dir)
}

// completion is what `kubeevents __complete ARGS...` printed.
type completion struct {
	values    []string // candidates without descriptions
	lines     []string // candidates as printed, with descriptions
	directive string   // ":4"
	stderr    string
	took      time.Duration
}

// tabComplete runs cobra's completion entry point, as the shell scripts do.
func tabComplete(t *testing.T, args ...string) completion {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	start := time.Now()
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("__complete %q: %v", args, err)
	}
	c := completion{stderr: errOut.String(), took: time.Since(start)}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	c.directive = lines[len(lines)-1]
	if !strings.HasPrefix(c.directive, ":") {
		t.Fatalf("__complete %q: no directive line at the end:\n%s", args, out.String())
	}
	c.lines = lines[:len(lines)-1]
	for _, l := range c.lines {
		c.values = append(c.values, strings.SplitN(l, "\t", 2)[0])
	}
	return c
}

// quiet checks that only cobra's own directive line reached stderr.
func (c completion) quiet(t *testing.T) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(c.stderr), "\n") {
		if line != "" && !strings.HasPrefix(line, "Completion ended with directive:") {
			t.Errorf("completion printed %q on stderr; want only cobra's directive line", line)
		}
	}
}

func wantValues(t *testing.T, c completion, want ...string) {
	t.Helper()
	if !slices.Equal(c.values, want) {
		t.Errorf("completions = %q, want %q", c.values, want)
	}
}

func wantContains(t *testing.T, c completion, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(c.values, w) {
			t.Errorf("completions %q lack %q", c.values, w)
		}
	}
}

func TestCompleteFlagValues(t *testing.T) {
	isolate(t)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"watch", "-o", ""}, append(render.Formats(), kubectl.TemplateFormats()...)},
		{[]string{"watch", "--output", "j"}, []string{"json", "jsonpath=", "jsonpath-file="}},
		{[]string{"watch", "--event-types", ""}, []string{"ADDED", "MODIFIED", "DELETED", "SYNC"}},
		{[]string{"watch", "--on-full", ""}, listener.Policies()},
		{[]string{"watch", "--on-full", "drop-"}, []string{"drop-oldest", "drop-newest"}},
		{[]string{"watch", "--color", ""}, []string{"auto", "always", "never"}},
		{[]string{"watch", "--color", "a"}, []string{"auto", "always"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
		{[]string{"version", "-o", ""}, []string{"json", "yaml"}},
		{[]string{"watch", "--jq", ""}, nil},
		{[]string{"watch", "--timeout", ""}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			c := tabComplete(t, tt.args...)
			wantValues(t, c, tt.want...)
			if c.directive != ":4" && !slices.Contains(tt.args, "--event-types") {
				t.Errorf("directive = %s, want :4 (no file completion)", c.directive)
			}
			c.quiet(t)
		})
	}
	// Every value has a description.
	for _, args := range [][]string{{"watch", "-o", ""}, {"watch", "--on-full", ""}, {"watch", "--color", ""}} {
		for _, line := range tabComplete(t, args...).lines {
			if !strings.Contains(line, "\t") {
				t.Errorf("%q: %q has no description", args, line)
			}
		}
	}
}

func TestCompleteSink(t *testing.T) {
	isolate(t)
	var kinds []string
	for _, k := range sinkkind.Names() {
		kinds = append(kinds, k+"=")
	}
	c := tabComplete(t, "watch", "--sink", "")
	wantContains(t, c, append(kinds, "terminal", "file(", "jq(")...)
	if c.directive != ":6" {
		t.Errorf("kinds: directive = %s, want :6 (no space, no files)", c.directive)
	}
	tests := []struct {
		toComplete string
		want       []string
		directive  string
	}{
		{"f", []string{"file=", "file("}, ":6"},
		{"file(", []string{"file(name=", "file(format=", "file(buffer=", "file(on-full=", "file(resync=", "file(event-types=", "file(on=", "file(fold", "file(group=", "file(cooldown=", "file(resolve-after=", "file(digest=", "file(max-size=", "file(max-backups=", "file(max-age=", "file(compress"}, ":6"},
		{"jq(raw,o", []string{"jq(raw,on-full=", "jq(raw,output=", "jq(raw,on="}, ":6"},
		{"http(format=slack,on=crash", []string{"http(format=slack,on=crashloop"}, ":6"},
		{"jq(raw,on-full=drop-", []string{"jq(raw,on-full=drop-oldest", "jq(raw,on-full=drop-newest"}, ":6"},
		{"file(format=", filesink.Kind.Formats, ":6"},
		{"terminal(format=n", []string{"terminal(format=name"}, ":6"},
		{"file(max-size=10,compress=", []string{"true", "false"}, ":6"},
		{`jq(output="a,b)",r`, []string{`jq(output="a,b)",resync=`, `jq(output="a,b)",raw`, `jq(output="a,b)",resolve-after=`}, ":6"},
		{"file(format=json)", []string{"file(format=json)="}, ":6"},
		{"terminal(format=json)", nil, ":4"},
		{"terminal=w", []string{"terminal=wide"}, ":4"},
		{"file=nosuch", nil, ":4"},
		{"jq=.", nil, ":4"},
		{"nosuch(", nil, ":4"},
	}
	for _, tt := range tests {
		t.Run(tt.toComplete, func(t *testing.T) {
			c := tabComplete(t, "watch", "--sink", tt.toComplete)
			want := tt.want
			if tt.toComplete == "file(format=" {
				want = nil
				for _, f := range filesink.Kind.Formats {
					want = append(want, "file(format="+f)
				}
			}
			if tt.toComplete == "file(max-size=10,compress=" {
				want = []string{"file(max-size=10,compress=true", "file(max-size=10,compress=false"}
			}
			wantValues(t, c, want...)
			if c.directive != tt.directive {
				t.Errorf("directive = %s, want %s", c.directive, tt.directive)
			}
			c.quiet(t)
		})
	}
	// Options already given are not offered again.
	c = tabComplete(t, "watch", "--sink", "file(compress,max-size=5,")
	if slices.Contains(c.values, "file(compress,max-size=5,compress") || slices.Contains(c.values, "file(compress,max-size=5,max-size=") {
		t.Errorf("options given are offered again: %q", c.values)
	}
	wantContains(t, c, "file(compress,max-size=5,max-backups=")
	// Whatever completion offers for a file sink, the parser takes (filled in).
	fill := map[string]string{"name": "x", "format": "json", "event-types": "DELETED", "on": "deleted", "buffer": "1", "on-full": "block", "resync": "1m", "max-size": "1", "max-backups": "1", "max-age": "1",
		"group": ".object.metadata.name", "cooldown": "1m", "resolve-after": "1m", "digest": "1m"}
	for _, v := range tabComplete(t, "watch", "--sink", "file(").values {
		key := strings.TrimSuffix(strings.TrimPrefix(v, "file("), "=")
		spec := v + fill[key]
		if key == "max-backups" || key == "max-age" || key == "compress" {
			spec += ",max-size=1"
		}
		spec += ")=out.jsonl"
		if _, err := config.ParseSinkSpec(spec); err != nil {
			t.Errorf("completion %q: %q does not parse: %v", v, spec, err)
		}
	}
}

// A file sink's path (file=PATH, file(...)=PATH, jq(output=PATH) completes to the files
// and directories there, the sink's prefix kept: the shell cannot, since the word starts
// with the kind.
func TestCompleteSinkPaths(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	for _, f := range []string{"events.jsonl", "other.txt", ".hidden"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	tests := []struct {
		toComplete string
		want       []string
		directive  string
	}{
		{"file=", []string{"file=events.jsonl", "file=other.txt", "file=sub/"}, ":6"},
		{"file=ev", []string{"file=events.jsonl"}, ":4"},
		{"file=.", []string{"file=.hidden"}, ":4"},
		{"file=" + dir + "/s", []string{"file=" + dir + "/sub/"}, ":6"},
		{"file(max-size=5)=o", []string{"file(max-size=5)=other.txt"}, ":4"},
		{"jq(output=ev", []string{"jq(output=events.jsonl"}, ":6"},
		{"jq=ev", nil, ":4"},
	}
	for _, tt := range tests {
		t.Run(tt.toComplete, func(t *testing.T) {
			c := tabComplete(t, "watch", "--sink", tt.toComplete)
			wantValues(t, c, tt.want...)
			if c.directive != tt.directive {
				t.Errorf("directive = %s, want %s", c.directive, tt.directive)
			}
		})
	}
}

// writeKubeconfig writes a kubeconfig with contexts alpha (current) and beta, both for
// the API server at server.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: %q}
- name: two
  cluster: {server: %q}
users:
- name: ann
  user: {token: t1}
- name: bob
  user: {token: t2}
contexts:
- name: alpha
  context: {cluster: one, user: ann, namespace: apps}
- name: beta
  context: {cluster: two, user: bob}
current-context: alpha
`, server, server)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompleteKubeconfigNames(t *testing.T) {
	isolate(t)
	// The server does not exist: contexts, clusters and users come from the file alone.
	kc := writeKubeconfig(t, "https://127.0.0.1:1")
	c := tabComplete(t, "watch", "--kubeconfig", kc, "--context", "")
	wantValues(t, c, "alpha", "beta")
	if !strings.Contains(c.lines[0], "(current)") || !strings.Contains(c.lines[0], "namespace apps") {
		t.Errorf("context alpha: description %q lacks (current) or its namespace", c.lines[0])
	}
	if c.directive != ":4" {
		t.Errorf("directive = %s, want :4", c.directive)
	}
	c.quiet(t)
	wantValues(t, tabComplete(t, "watch", "--kubeconfig", kc, "--context", "b"), "beta")
	// A comma list (several clusters): the last context is completed, the ones given
	// are not offered again.
	wantValues(t, tabComplete(t, "watch", "--kubeconfig", kc, "--context", "alpha,"), "alpha,beta")
	wantValues(t, tabComplete(t, "watch", "--kubeconfig", kc, "--context", "beta,a"), "beta,alpha")
	wantValues(t, tabComplete(t, "watch", "--kubeconfig", kc, "--context", "alpha,beta,"))
	wantValues(t, tabComplete(t, "--kubeconfig", kc, "watch", "--cluster", ""), "one", "two")
	wantValues(t, tabComplete(t, "watch", "--kubeconfig", kc, "--user", ""), "ann", "bob")
	// KUBECONFIG works too, as in kubectl.
	t.Setenv("KUBECONFIG", kc)
	wantValues(t, tabComplete(t, "watch", "--context", ""), "alpha", "beta")
}

// Completion must never hang the shell or print errors into it: with the server down,
// slow, or the kubeconfig broken, it offers nothing, quickly.
func TestCompleteUnreachableServer(t *testing.T) {
	isolate(t)
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + l.Addr().String()
	l.Close()
	// A server that accepts requests and never answers.
	stop := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(stop) })
	broken := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(broken, []byte("this: [is not a kubeconfig"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, server := range []struct{ name, kubeconfig string }{
		{"refused", writeKubeconfig(t, closed)},
		{"no answer", writeKubeconfig(t, hung.URL)},
		{"broken kubeconfig", broken},
		{"missing kubeconfig", filepath.Join(t.TempDir(), "missing")},
	} {
		cases := [][]string{
			{"watch", ""},
			{"watch", "po"},
			{"watch", "pods,"},
			{"watch", "pods", ""},
			{"watch", "-n", ""},
			{"version", "--namespace", "d"},
		}
		if server.name == "no answer" {
			cases = [][]string{cases[0], cases[3], cases[4]} // each takes the whole timeout
		}
		for _, args := range cases {
			t.Run(server.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				args := append([]string{"--kubeconfig", server.kubeconfig}, args...)
				c := tabComplete(t, args...)
				wantValues(t, c)
				if c.directive != ":4" {
					t.Errorf("directive = %s, want :4 (no file completion)", c.directive)
				}
				if c.took > complete.Timeout+time.Second {
					t.Errorf("took %s; completion must give up after %s", c.took.Round(time.Millisecond), complete.Timeout)
				}
				c.quiet(t)
			})
		}
	}
}

// The scripts in completions/ are what the code generates; `make completions` updates them.
func TestCompletionFilesUpToDate(t *testing.T) {
	root := NewRootCommand(genericiooptions.IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	for _, sh := range complete.Shells {
		var want bytes.Buffer
		if err := complete.Script(root, sh.Name, &want, true); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "completions", sh.File)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run make completions)", sh.Name, err)
			continue
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s is stale: it differs from `kubeevents completion %s`; run make completions", path, sh.Name)
		}
	}
}

func TestCompletionCommand(t *testing.T) {
	for _, sh := range complete.Shells {
		var out, errOut bytes.Buffer
		err := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, []string{"kubeevents", "completion", sh.Name})
		if err != nil {
			t.Fatalf("completion %s: %v", sh.Name, err)
		}
		want, _ := os.ReadFile(filepath.Join("..", "completions", sh.File))
		if !bytes.Equal(out.Bytes(), want) {
			t.Errorf("completion %s differs from completions/%s", sh.Name, sh.File)
		}
		var noDesc bytes.Buffer
		if err := Execute(context.Background(), genericiooptions.IOStreams{Out: &noDesc, ErrOut: &errOut}, []string{"kubeevents", "completion", sh.Name, "--no-descriptions"}); err != nil {
			t.Fatalf("completion %s --no-descriptions: %v", sh.Name, err)
		}
		if noDesc.Len() == 0 {
			t.Errorf("completion %s --no-descriptions printed nothing", sh.Name)
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		var out bytes.Buffer
		err := Execute(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &out}, append([]string{"kubeevents"}, args...))
		if code := ExitCode(err, &out); code != ExitUsage {
			t.Errorf("%q: exit code %d, want %d (%v)", args, code, ExitUsage, err)
		}
	}
}

func TestPluginDisplayName(t *testing.T) {
	for _, tt := range []struct {
		arg0, want string
	}{
		{"/usr/local/bin/kubectl-tail_resources", "kubectl tail-resources"},
		{"kubectl-tail_resources.exe", "kubectl tail-resources"},
		{"/home/me/.krew/bin/kubectl-tail_resources", "kubectl tail-resources"},
		{"/usr/bin/kubeevents", "kubeevents"},
		{"kubectl-tail", "kubeevents"},
	} {
		var out bytes.Buffer
		root := NewRootCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &out})
		setPluginDisplayName(root, tt.arg0)
		watch, _, err := root.Find([]string{"watch"})
		if err != nil {
			t.Fatal(err)
		}
		if got := watch.CommandPath(); got != tt.want+" watch" {
			t.Errorf("%s: watch's command path = %q, want %q", tt.arg0, got, tt.want+" watch")
		}
		root.SetArgs([]string{"watch", "--help"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		help := out.String()
		if !strings.Contains(help, "Usage:\n  "+tt.want+" watch TYPE") || !strings.Contains(help, "  "+tt.want+" watch pods\n") {
			t.Errorf("%s: help does not use %q:\n%s", tt.arg0, tt.want, help)
		}
		if tt.want != "kubeevents" && strings.Contains(help, "kubeevents watch") {
			t.Errorf("%s: help still says kubeevents watch:\n%s", tt.arg0, help)
		}
	}
}

// TestCompleteFromTheRecording: replay and history complete the types, names,
// namespaces and clusters their recordings hold, without a cluster; replay's first
// argument, and what matches nothing recorded, are the shell's files.
func TestCompleteFromTheRecording(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	line := func(cluster, resource, group, kind, ns, name string) string {
		apiVersion := "v1"
		if group != "" {
			apiVersion = group + "/v1"
		}
		return fmt.Sprintf(`{"type":"ADDED","time":"2026-11-23T14:00:00Z","cluster":%q,"resource":{"group":%q,"version":"v1","resource":%q},`+
			`"object":{"kind":%q,"apiVersion":%q,"metadata":{"name":%q,"namespace":%q}}}`, cluster, group, resource, kind, apiVersion, name, ns)
	}
	path := filepath.Join(dir, "events.jsonl")
	recording := strings.Join([]string{
		line("prod", "configmaps", "", "ConfigMap", "shop", "settings"),
		line("prod", "deployments", "apps", "Deployment", "shop", "web"),
		line("dev", "deployments", "apps", "Deployment", "data", "db"),
		line("dev", "deployments", "apps", "Deployment", "data", "dbadmin"),
	}, "\n") + "\n"
	if err := os.WriteFile(path, []byte(recording), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"replay", ""}, nil, ":0"},
		{[]string{"replay", path, ""}, []string{"configmaps", "deployments"}, ":4"},
		{[]string{"replay", path, "configmaps,d"}, []string{"configmaps,deployments"}, ":4"},
		{[]string{"replay", path, "deploy", ""}, []string{"db", "dbadmin", "web"}, ":4"},
		{[]string{"replay", path, "deploy", "db", ""}, []string{"dbadmin", "web"}, ":4"},
		{[]string{"replay", path, "-n", "data", "deploy", ""}, []string{"db", "dbadmin"}, ":4"},
		{[]string{"replay", path, "--cluster", "prod", "deploy", ""}, []string{"web"}, ":4"},
		{[]string{"replay", path, "deploy/d"}, []string{"deploy/db", "deploy/dbadmin"}, ":4"},
		{[]string{"replay", path, "x"}, nil, ":0"}, // another recording, perhaps
		{[]string{"replay", path, "-n", ""}, []string{"data", "shop"}, ":4"},
		{[]string{"replay", path, "-n", "data,"}, []string{"data,shop"}, ":4"},
		{[]string{"replay", path, "--cluster", ""}, []string{"dev", "prod"}, ":4"},
		{[]string{"history", "--file", path, ""}, []string{"configmaps/", "deployments/"}, ":6"},
		{[]string{"history", "--file", path, "deployments/"}, []string{"deployments/db", "deployments/dbadmin", "deployments/web"}, ":4"},
		{[]string{"history", "--file", path, "-n", "shop", "deployments/"}, []string{"deployments/web"}, ":4"},
		{[]string{"history", ""}, nil, ":4"},
	} {
		got := tabComplete(t, c.args...)
		got.quiet(t)
		if !slices.Equal(got.values, c.want) || got.directive != c.directive {
			t.Errorf("%q: %q %s, want %q %s", c.args, got.values, got.directive, c.want, c.directive)
		}
	}
}
