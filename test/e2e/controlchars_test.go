package e2e

// Objects holding characters YAML does not allow as they are (DEL, C1 controls, U+FFFE),
// which anyone who may annotate an object can put there: they must not stop a YAML sink,
// nor hide the object's YAML in the view.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// awkwardValues are a ConfigMap's data and annotations that the YAML parser refuses.
var awkwardValues = map[string]string{"del": "a\x7fb", "csi": "c\u009b31m", "nonchar": "d\ufffe", "nel": "e\u0085f"}

func createAwkwardConfigMap(t *testing.T, ns, name string) {
	t.Helper()
	annotations := map[string]string{}
	for k, v := range awkwardValues {
		annotations["example.com/"+k] = v
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}, Data: awkwardValues}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ConfigMap %s: %v", name, err)
	}
}

// -o yaml on the terminal and a file(format=yaml) archive go on past such an object,
// and both read back, with a YAML parser, as the object's values.
func TestYAMLSinksSurviveControlCharacters(t *testing.T) {
	ns := newNamespace(t)
	createConfigMap(t, ns, "before")
	archive := filepath.Join(t.TempDir(), "archive.yaml")
	p := startKubeevents(t, "watch", "configmaps", "-n", ns, "-o", "yaml", "--sink", "file(format=yaml)="+archive, "-v=1")
	p.waitFor(eventWait, "the YAML of the ConfigMap before", func(l string) bool { return l == "    name: before" })
	createAwkwardConfigMap(t, ns, "odd")
	createConfigMap(t, ns, "after")
	p.waitFor(eventWait, "the YAML of the ConfigMap made after the odd one", func(l string) bool { return l == "    name: after" })
	if _, code := p.interrupt(eventWait); code != 0 {
		t.Errorf("exit code %d, want 0 (no sink stopped); stderr:\n%s", code, p.Stderr())
	}
	stdout := []byte(strings.Join(p.Lines(), "\n") + "\n")
	file, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string][]byte{"the terminal": stdout, "the archive": file} {
		names := checkAwkwardYAML(t, what, text)
		if strings.Join(names, ",") != "before,odd,after" {
			t.Errorf("%s: documents of %v, want before, odd, after", what, names)
		}
	}
}

// checkAwkwardYAML reads every document of text with a YAML parser, checks the odd
// ConfigMap's values, and returns the objects' names in order.
func checkAwkwardYAML(t *testing.T, what string, text []byte) []string {
	t.Helper()
	type document struct {
		Object struct {
			Metadata struct {
				Name        string
				Annotations map[string]string
			}
			Data map[string]string
		}
	}
	var names []string
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for {
		var doc document
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return names
		} else if err != nil {
			t.Fatalf("%s does not read as YAML after %v: %v\n%s", what, names, err, text)
		}
		if doc.Object.Metadata.Name != "kube-root-ca.crt" { // every namespace's
			names = append(names, doc.Object.Metadata.Name)
		}
		if doc.Object.Metadata.Name != "odd" {
			continue
		}
		for k, v := range awkwardValues {
			if got := doc.Object.Data[k]; got != v {
				t.Errorf("%s: data.%s reads back as %q, want %q", what, k, got, v)
			}
			if got := doc.Object.Metadata.Annotations["example.com/"+k]; got != v {
				t.Errorf("%s: annotation %s reads back as %q, want %q", what, k, got, v)
			}
		}
	}
}

// y in the view shows such an object's YAML, those characters escaped, not an error.
func TestUIYAMLOfControlCharacters(t *testing.T) {
	ns := newNamespace(t)
	createAwkwardConfigMap(t, ns, "odd")
	u := kubeevents(t).Screen(120, 40).Start("watch", "configmaps", "-n", ns, "--ui").screen
	u.waitScreen(eventWait, "the ConfigMap's row", func() bool { return u.has("odd", "4") })
	u.send("/odd" + keyEnter) // kube-root-ca.crt comes first
	u.waitScreen(uiWait, "the filter applied", func() bool { return u.has("1 shown") })
	u.send("y")
	u.waitScreen(uiWait, "its YAML", func() bool { return u.has("kind: ConfigMap") && u.has("  name: odd") })
	for _, want := range []string{`  del: "a\x7Fb"`, `  csi: "c\x9B31m"`, `  nonchar: "d\uFFFE"`, `  nel: "e\Nf"`, "kind: ConfigMap"} {
		if !u.has(want) {
			t.Errorf("the YAML lacks %q; the screen:\n%s", want, u)
		}
	}
	u.send("q")
	if code := u.waitExit(uiWait); code != 0 {
		t.Errorf("q: exit code %d, want 0", code)
	}
}
