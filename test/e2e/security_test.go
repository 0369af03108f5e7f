package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
)

// TestSecurityTokensNeverPrinted: no bearer token appears in any output, error or log
// line, even with client-go's request logging (-v=9 and up): not the kubeconfig's, not
// one given with --token (right or wrong), not one in a broken kubeconfig.
func TestSecurityTokensNeverPrinted(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "p", nil)
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin, nobody := raw.AuthInfos["admin"].Token, raw.AuthInfos["nobody"].Token
	if admin == "" || nobody == "" {
		t.Fatalf("kubeconfig %s has no admin and nobody tokens", kubeconfig)
	}
	wrong := randomHex(16)
	inBroken := randomHex(16)
	dir := t.TempDir()
	brokenYAML := filepath.Join(dir, "broken.yaml")
	brokenShape := filepath.Join(dir, "shape.yaml")
	kc, _ := os.ReadFile(kubeconfig)
	if err := os.WriteFile(brokenYAML, []byte(string(kc)+"- name: extra\n  user:\n    token: "+inBroken+"\n  [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(brokenShape, []byte("apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: {"+inBroken+": 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := []string{admin, nobody, wrong, inBroken}
	runs := []struct {
		name string
		args []string
		code int
	}{
		{"kubeconfig token, -v=9", []string{"-v=9", "--max-events", "1"}, 0},
		{"kubeconfig token, -v=10", []string{"-v=10", "--max-events", "1"}, 0},
		{"right --token, -v=9", []string{"-v=9", "--max-events", "1", "--token", admin}, 0},
		{"wrong --token (401), -v=9", []string{"-v=9", "--token", wrong}, 1},
		{"wrong --token (401), -v=9, no discovery cache", []string{"-v=9", "--token", wrong, "--cache-dir", filepath.Join(dir, "cache")}, 1},
		{"no rights (403), -v=9", []string{"-v=9", "--context", "nobody"}, 1},
		{"broken kubeconfig", []string{"-v=9", "--kubeconfig", brokenYAML}, 1},
		{"kubeconfig of the wrong shape", []string{"-v=9", "--kubeconfig", brokenShape}, 1},
	}
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			r := runKubeevents(t, 30*time.Second, append([]string{"watch", "pods", "-n", ns, "-o", "json"}, run.args...)...)
			if r.code != run.code {
				t.Errorf("exit code %d, want %d; stderr tail:\n%s", r.code, run.code, tail([]byte(r.stderr), 500))
			}
			if run.code == 0 && (!strings.Contains(r.stderr, "Authorization: Bearer <masked>") || !strings.Contains(r.stdout, `"ADDED"`)) {
				t.Errorf("-v=9 did not log the masked requests, or no event was printed; stderr tail:\n%s", tail([]byte(r.stderr), 500))
			}
			for _, secret := range secrets {
				if strings.Contains(r.stdout, secret) || strings.Contains(r.stderr, secret) {
					t.Errorf("a token appears in the output:\n%s", contextOf(r.stdout+r.stderr, secret))
				}
			}
		})
	}
}

// contextOf shows where secret occurs in s, with the secret itself masked.
func contextOf(s, secret string) string {
	i := strings.Index(s, secret)
	from, to := max(i-150, 0), min(i+len(secret)+50, len(s))
	return strings.ReplaceAll(s[from:to], secret, "<THE SECRET>")
}

// TestSecuritySecretsRedacted: Secret values (and the copy of them in the
// last-applied-configuration annotation) are redacted in every sink by default: the
// terminal in each format, file sinks, jq input, diffs, --show-old, --metadata-only,
// and client-go's logs at -v=9. --show-secrets shows them.
func TestSecuritySecretsRedacted(t *testing.T) {
	ns := newNamespace(t)
	dir := t.TempDir()
	v1, v2 := "s3cr3t-"+randomHex(8), "s3cr3t-"+randomHex(8) // stringData.password, before and after
	k1, k2 := "k3y-"+randomHex(8), "k3y-"+randomHex(8)       // data.apikey
	apply := func(password, apikey string) {
		t.Helper()
		manifest := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds"},
 "stringData":{"password":%q},"data":{"apikey":%q}}`, password, base64.StdEncoding.EncodeToString([]byte(apikey)))
		applyJSON(t, ns, manifest)
	}
	forms := func(values ...string) []string {
		var out []string
		for _, v := range values {
			out = append(out, v, base64.StdEncoding.EncodeToString([]byte(v)))
		}
		return out
	}
	apply(v1, k1)

	path := func(name string) string { return filepath.Join(dir, name) }
	type watcher struct {
		name   string
		p      *proc
		stdout string
		files  []string // file and jq sinks' outputs
	}
	start := func(name string, files []string, args ...string) *watcher {
		w := &watcher{name: name, stdout: path(name + ".stdout"), files: files}
		all := append([]string{"watch", "secrets", "-n", ns, "--kubeconfig", kubeconfig}, args...)
		w.p = startProc(t, createFile(t, w.stdout), nil, all...)
		return w
	}
	files := []string{path("file.jsonl"), path("file.pretty"), path("file.yaml"), path("jq-data.jsonl"), path("jq-diff.jsonl"), path("jq-all.txt")}
	hidden := []*watcher{
		start("json", files, "-o", "json", "--show-old", "-v=9",
			"--sink", "file(name=file)="+files[0],
			"--sink", "file(name=pretty,format=pretty)="+files[1],
			"--sink", "file(name=yaml,format=yaml)="+files[2],
			"--sink", "jq(name=data,output="+files[3]+")=.object.data",
			"--sink", "jq(name=diff,output="+files[4]+")=.diff",
			"--sink", "jq(name=everything,raw,output="+files[5]+")=tostring"),
		start("pretty", nil, "-o", "pretty", "--color", "never"),
		start("wide", nil, "-o", "wide", "--color", "always"),
		start("yaml", nil, "-o", "yaml"),
		start("metadata-only", nil, "-o", "json", "--metadata-only", "--show-old"),
	}
	shown := start("show-secrets", nil, "-o", "json", "--show-secrets")
	all := append(hidden, shown)
	for _, w := range all {
		waitFileMatch(t, w.p, w.stdout, eventWait, regexp.MustCompile(`ADDED`))
	}
	apply(v2, k2)
	for _, w := range all {
		waitFileMatch(t, w.p, w.stdout, eventWait, regexp.MustCompile(`MODIFIED`))
	}
	for _, w := range all {
		if _, code := w.p.interrupt(15 * time.Second); code != 0 {
			t.Errorf("%s: exit code %d; stderr:\n%s", w.name, code, w.p.Stderr())
		}
	}

	values := forms(v1, v2, k1, k2)
	for _, w := range hidden {
		outputs := map[string]string{"stdout": readString(t, w.stdout), "stderr": w.p.Stderr()}
		for _, f := range w.files {
			outputs[filepath.Base(f)] = readString(t, f)
		}
		for what, text := range outputs {
			for _, v := range values {
				if strings.Contains(text, v) {
					t.Errorf("%s: a Secret value is in %s:\n%s", w.name, what, contextOf(text, v))
				}
			}
			if what != "stderr" && !strings.Contains(text, "redacted") {
				t.Errorf("%s: %s shows no redacted value:\n%s", w.name, what, tail([]byte(text), 600))
			}
		}
	}
	// The last-applied-configuration annotation is redacted as a whole.
	for _, ev := range readEvents(t, hidden[0].stdout) {
		var obj struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(ev.Object, &obj)
		if la := obj.Metadata.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; !strings.HasPrefix(la, "<redacted: ") {
			t.Errorf("%s event: last-applied-configuration = %q, want it redacted", ev.Type, la)
		}
	}
	if !strings.Contains(hidden[0].p.Stderr(), "would log Secret values") {
		t.Errorf("-v=9 on secrets: no notice that logging was limited; stderr:\n%s", tail([]byte(hidden[0].p.Stderr()), 500))
	}
	shownOut := readString(t, shown.stdout)
	for _, v := range []string{base64.StdEncoding.EncodeToString([]byte(v2)), base64.StdEncoding.EncodeToString([]byte(k2)), v2} {
		if !strings.Contains(shownOut, v) {
			t.Errorf("--show-secrets: %q is not in the output", v)
		}
	}
}

// waitFileMatch waits until the file's contents match re.
func waitFileMatch(t *testing.T, p *proc, path string, timeout time.Duration, re *regexp.Regexp) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(path)
		if re.Match(b) {
			return
		}
		if time.Now().After(deadline) || !p.Alive() {
			t.Fatalf("%s does not match %s within %s:\n%s\nstderr:\n%s", path, re, timeout, b, tail([]byte(p.Stderr()), 1000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSecurityFileModes: file sinks are created 0600, rotation keeps 0600 for the new
// file and every backup (compressed or not), and an existing file that others can read
// gets a warning.
func TestSecurityFileModes(t *testing.T) {
	ns := newNamespace(t)
	const pods, rounds = 100, 24
	const total = pods + pods*rounds
	names := createPods(t, client, ns, "rot", pods)
	dir := t.TempDir()
	for _, sub := range []string{"rot", "gz"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fresh, jqOut, wide := filepath.Join(dir, "fresh.jsonl"), filepath.Join(dir, "jq.txt"), filepath.Join(dir, "wide.jsonl")
	if err := os.WriteFile(wide, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(wide, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	rot, gz := filepath.Join(dir, "rot", "events.jsonl"), filepath.Join(dir, "gz", "events.jsonl")
	metricsAddr := freeAddr(t)
	p := startProc(t, io.Discard, nil, "watch", "pods", "-n", ns, "-o", "name", "--kubeconfig", kubeconfig, "--metrics-addr", metricsAddr,
		"--sink", "file(name=fresh)="+fresh,
		"--sink", "jq(name=jq,output="+jqOut+")=.object.metadata.name",
		"--sink", "file(name=wide)="+wide,
		"--sink", "file(name=rot,max-size=1,max-backups=100)="+rot,
		"--sink", "file(name=gz,max-size=1,max-backups=100,compress)="+gz)
	waitLines(t, p, eventWait, pods, fresh)
	if _, err := patchPods(context.Background(), client, ns, names, rounds, 8); err != nil {
		t.Fatal(err)
	}
	waitLines(t, p, 2*time.Minute, total, fresh)
	for _, sink := range []string{"jq", "wide", "rot", "gz"} {
		waitMetric(t, p, metricsAddr, `kubeevents_sink_delivered_total{sink="`+sink+`"}`, total)
	}
	// lumberjack compresses a rotated file in the background, and removes it once its
	// .gz is whole.
	waitUntil(t, p, 30*time.Second, "every rotated file of the gz sink compressed", func() bool {
		entries, err := os.ReadDir(filepath.Join(dir, "gz"))
		for _, e := range entries {
			if e.Name() != filepath.Base(gz) && !strings.HasSuffix(e.Name(), ".gz") {
				return false
			}
		}
		return err == nil
	})
	if _, code := p.interrupt(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	want := fmt.Sprintf("kubeevents: %s is readable or writable by others (mode 0644); events may hold sensitive data: chmod 600 %s\n", wide, wide)
	if p.Stderr() != want {
		t.Errorf("stderr = %q, want the one warning %q", p.Stderr(), want)
	}
	checkMode := func(path string) {
		t.Helper()
		info, err := os.Stat(path)
		if err != nil {
			t.Error(err)
		} else if info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", path, info.Mode().Perm())
		}
	}
	checkMode(fresh)
	checkMode(jqOut)
	for _, sub := range []string{"rot", "gz"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) < 3 {
			t.Errorf("%s: %d files, want the file and at least 2 rotated backups", sub, len(entries))
		}
		for _, e := range entries {
			checkMode(filepath.Join(dir, sub, e.Name()))
		}
	}
	// Rotation splits between lines: every file holds whole JSON lines, all events once.
	entries, _ := os.ReadDir(filepath.Join(dir, "rot"))
	events := 0
	for _, e := range entries {
		events += len(readEvents(t, filepath.Join(dir, "rot", e.Name())))
	}
	if events != total {
		t.Errorf("rotated files hold %d events in all, want %d", events, total)
	}
	entries, _ = os.ReadDir(filepath.Join(dir, "gz"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".gz") {
			f, err := os.Open(filepath.Join(dir, "gz", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			zr, err := gzip.NewReader(f)
			if err == nil {
				var data []byte
				if data, err = io.ReadAll(zr); err == nil {
					parseEvents(t, e.Name(), data)
				}
			}
			f.Close()
			if err != nil {
				t.Errorf("%s: %v", e.Name(), err)
			}
		}
	}
}

// TestSecurityJQSandbox: jq expressions cannot read the environment or files: $ENV and
// env are empty, input and inputs fail, and modules cannot be loaded.
func TestSecurityJQSandbox(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "p", nil)
	secret := "env-secret-" + randomHex(8)
	env := []string{"KUBEEVENTS_TEST_SECRET=" + secret, "AWS_SECRET_ACCESS_KEY=" + secret}
	dir := t.TempDir()
	exprs := map[string]string{
		"env-var":   "$ENV",
		"env-func":  "env",
		"env-key":   "$ENV.KUBEEVENTS_TEST_SECRET",
		"env-key2":  "env.AWS_SECRET_ACCESS_KEY",
		"env-all":   "[env[], $ENV[]] | tostring",
		"input":     "input",
		"inputs":    "[inputs]",
		"first-in":  "first(inputs)",
		"try-input": "try input catch .",
	}
	args := []string{"watch", "pods", "-n", ns, "--kubeconfig", kubeconfig, "-o", "json", "--max-events", "1"}
	for name, expr := range exprs {
		args = append(args, "--sink", fmt.Sprintf("jq(name=%s,output=%s)=%s", name, filepath.Join(dir, name+".out"), expr))
	}
	var stdout bytes.Buffer
	p := startProc(t, &stdout, env, args...)
	if _, code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.Stderr())
	}
	outs := map[string]string{"stdout": stdout.String(), "stderr": p.Stderr()}
	for name := range exprs {
		outs[name] = readString(t, filepath.Join(dir, name+".out"))
	}
	for what, text := range outs {
		if strings.Contains(text, secret) {
			t.Errorf("the environment's secret is in %s:\n%s", what, contextOf(text, secret))
		}
	}
	for name, want := range map[string]string{"env-var": "{}\n", "env-func": "{}\n", "env-key": "", "env-key2": "", "env-all": "\"[]\"\n",
		"input": "", "inputs": "", "first-in": "",
		"try-input": "\"input and inputs are not available: the expression runs on one event at a time, given as .\"\n"} {
		if outs[name] != want {
			t.Errorf("jq %s: output %q, want %q", exprs[name], outs[name], want)
		}
	}
	for _, name := range []string{"input", "inputs", "first-in"} {
		if !regexp.MustCompile(fmt.Sprintf(`jq sink %q: (error: )?input and inputs are not available`, name)).MatchString(p.Stderr()) {
			t.Errorf("no error for jq %s on stderr:\n%s", exprs[name], p.Stderr())
		}
	}

	// Modules, which could read files, cannot be loaded: an error before anything runs.
	module := filepath.Join(dir, "leak")
	if err := os.WriteFile(module+".jq", []byte(`def leak: "`+secret+`";`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(module+".json", []byte(`{"s":"`+secret+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{
		fmt.Sprintf(`include %q; leak`, module),
		fmt.Sprintf(`import %q as l; l::leak`, module),
		fmt.Sprintf(`import %q as $d; $d`, module),
		`import "leak" as l; l::leak`,
	} {
		r := runKubeevents(t, 30*time.Second, "watch", "pods", "-n", ns, "--jq", expr, "--max-events", "1")
		if r.code != 2 || strings.Contains(r.stdout+r.stderr, secret) || !strings.HasPrefix(r.stderr, "kubeevents: --jq: ") {
			t.Errorf("--jq %s: exit %d, stdout %q, stderr %q; want exit 2, one error, no file contents", expr, r.code, r.stdout, r.stderr)
		}
	}
}

// TestSecurityTerminalEscapes: control characters and escape sequences that an object
// carries never reach the terminal raw, in any format: an annotation holding an OSC
// title sequence, a screen clear, a BEL and a bidi override shows up escaped.
func TestSecurityTerminalEscapes(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "esc", nil)
	const evil = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\u202eevil\r\nforged line"
	dir := t.TempDir()
	formats := map[string][]string{
		"pretty":        {"-o", "pretty", "--color", "never"},
		"pretty-color":  {"-o", "pretty", "--color", "always"},
		"wide":          {"-o", "wide", "--color", "never"},
		"json":          {"-o", "json"},
		"yaml":          {"-o", "yaml"},
		"name":          {"-o", "name"},
		"show-old-json": {"-o", "json", "--show-old"},
	}
	procs := map[string]*proc{}
	for name, args := range formats {
		path := filepath.Join(dir, name)
		procs[name] = startProc(t, createFile(t, path), nil, append([]string{"watch", "pods", "-n", ns, "--kubeconfig", kubeconfig}, args...)...)
	}
	for name, p := range procs {
		waitFileMatch(t, p, filepath.Join(dir, name), eventWait, regexp.MustCompile(`ADDED`))
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{"note": evil}}})
	if _, err := client.CoreV1().Pods(ns).Patch(context.Background(), "esc", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, p := range procs {
		waitFileMatch(t, p, filepath.Join(dir, name), eventWait, regexp.MustCompile(`MODIFIED`))
		if name != "name" {
			waitFileMatch(t, p, filepath.Join(dir, name), eventWait, regexp.MustCompile(`pwned`))
		}
		if _, code := p.interrupt(15 * time.Second); code != 0 {
			t.Errorf("%s: exit code %d", name, code)
		}
	}
	for name := range formats {
		out := readString(t, filepath.Join(dir, name))
		// Every format escapes C0 controls and DEL; the ones made for people also C1
		// controls and bidi overrides (JSON and YAML keep those as they are, as kubectl does).
		bad := regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")
		if name == "json" || name == "yaml" || name == "show-old-json" {
			bad = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f]")
		}
		if name == "pretty-color" {
			// kubeevents' own colours are the only escape sequences: ESC [ digits ; m.
			bad = regexp.MustCompile("\x1b[^\\[]|\x1b\\[[0-9;]*[^0-9;m]|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")
		}
		if loc := bad.FindStringIndex(out); loc != nil {
			t.Errorf("-o %s printed a raw control character %q: %q", name, out[loc[0]:loc[1]], out[max(loc[0]-40, 0):min(loc[1]+40, len(out))])
		}
		if strings.Contains(out, "forged line") {
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "forged line") {
					t.Errorf("-o %s: the annotation forged a line of its own: %q", name, line)
				}
			}
		}
	}
	// The change itself is shown, escaped.
	if pretty := readString(t, filepath.Join(dir, "pretty")); !regexp.MustCompile(`(?m)^ +\+ metadata\.annotations.*(\\u001b|\\x1b)\]0;pwned`).MatchString(pretty) {
		t.Errorf("-o pretty does not show the annotation, escaped:\n%s", pretty)
	}
}
