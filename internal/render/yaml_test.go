package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

// Strings YAML does not allow as they are (C0 and C1 controls, DEL, the non-characters
// U+FFFE and U+FFFF, a BOM, line separators), and strings a plain scalar would read as
// something else; encoding/json writes most of them unescaped.
var awkwardStrings = []string{
	"del\x7fhere", "csi\u009b31m", "nonchar\ufffe", "nonchar\uffff", "bom\ufeffin", "nel\u0085x",
	"ls\u2028ps\u2029", "tab\tnewline\nreturn\r", "bell\a", "nul\x00", "esc\x1b[31mred", "\x7f",
	"", " lead", "trail ", "true", "no", "null", "~", "8080", "1e3", "0x1F", "- item", "key: value",
	"# comment", "'single'", `"double"`, "a\\b", "日本語", "emoji 🚀", "multi\nline\n", "\u0080\u009f",
	"\nleading newline", "  indented\nscript\n", " x\ny", "\n", "trailing\n\n",
}

// A YAML document holds any string an object can: the sink does not stop, the output
// is YAML that reads back as the object's values, in the object, its old version and
// the diff (keys too, as a custom resource may have any).
func TestYAMLOfAwkwardStrings(t *testing.T) {
	data := map[string]string{}
	annotations := map[string]string{}
	for i, s := range awkwardStrings {
		data["k"+string(rune('a'+i%26))+string(rune('a'+i/26))] = s
		annotations["example.com/v"+string(rune('a'+i%26))+string(rune('a'+i/26))] = s
	}
	cm := func(rv string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "odd", Namespace: "default", ResourceVersion: rv, Annotations: annotations},
			Data:       data,
		}
	}
	crd := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Odd",
			"metadata": map[string]any{"name": "odd", "namespace": "default", "resourceVersion": rv},
		}}
		spec := map[string]any{}
		var list []any
		for _, s := range awkwardStrings {
			spec["key "+s] = s + rv
			list = append(list, s, []any{s + rv})
		}
		spec["list"] = list
		u.Object["spec"] = spec
		return u
	}
	events := []*event.Event{
		eventtest.Modified(1, eventtest.ConfigMaps, "ConfigMap", cm("1", map[string]string{"x": "y"}), cm("2", data)),
		eventtest.Modified(2, eventtest.ConfigMaps, "Odd", crd("1"), crd("2")),
	}
	p, err := NewPrinter(Options{Format: FormatYAML, Diff: diff.NewDiffer(nil), ShowOld: true, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, ev := range events {
		if out, err = p.Append(out, ev); err != nil {
			t.Fatalf("%s %s: %v", ev.Kind, ev.Key(), err)
		}
	}
	if !utf8.Valid(out) {
		t.Fatalf("the YAML is not UTF-8:\n%q", out)
	}

	jsonOut, err := NewPrinter(Options{Format: FormatJSON, Diff: diff.NewDiffer(nil), ShowOld: true, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	docs := yaml.NewDecoder(bytes.NewReader(out))
	for i, ev := range events {
		var got map[string]any
		if err := docs.Decode(&got); err != nil {
			t.Fatalf("document %d does not read as YAML: %v\n%s", i, err, out)
		}
		line, err := jsonOut.Append(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"object", "old", "diff"} {
			if want[key] == nil {
				t.Fatalf("the JSON of %s has no %q", ev.Kind, key)
			}
			if g, w := jsonOf(t, got[key]), jsonOf(t, want[key]); g != w {
				t.Errorf("%s %q reads back as\n%s\nwant\n%s", ev.Kind, key, g, w)
			}
		}
	}
	var extra any
	if err := docs.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Errorf("more than %d documents: %v", len(events), err)
	}
	// The encoder escapes what YAML does not allow: none of it is in the text.
	for _, r := range []rune{0x7f, 0x9b, 0xfffe, 0x1b} {
		if strings.ContainsRune(string(out), r) {
			t.Errorf("the YAML holds %U unescaped", r)
		}
	}
}

// jsonOf is v as canonical JSON (sorted keys; YAML's ints and JSON's floats alike).
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// yamlNode reads any JSON encoding/json reads, to the same values, in the JSON's order.
func FuzzYAMLNode(f *testing.F) {
	for _, s := range awkwardStrings {
		b, _ := json.Marshal(map[string]any{s: s, "list": []any{s, 1, 2.5, true, nil}})
		f.Add(b)
	}
	for _, s := range []string{
		`{"a":1,"b":[],"c":{},"d":-0,"e":1.5e-7,"f":12345678901234567890,"g":-9223372036854775808,"h":1E+400}`,
		`["\ud83d\ude80","\ud800","\udc00x","\ud800\u0041","\u00e9\/\b\f\n\r\t\\\""]`,
		`{"":["\n0"]}`, `{"a":["  x\ny"],"b":"\nx\n"}`, `["\nx\n",[" a\nb"]]`, // literal blocks that need an indentation indicator
		" [ 1 , \"x\" , { \"k\" : null } ] ", `"just a string"`, `7`, `{"k":"\xff\xfe"}`,
		`[1,]`, `{"a"}`, `01`, `-`, `1.`, `"\u12"`, `"unterminated`, `{"a":1}x`, `[`, "\"\x01\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := yamlNode(data)
		if !json.Valid(data) {
			if err == nil {
				t.Fatalf("invalid JSON %q read as a node", data)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		var want any
		if err := json.Unmarshal(data, &want); err != nil {
			t.Skip(err) // a number out of float64's range: no value to compare with
		}
		if duplicateKeys(data) {
			t.Skip("a key twice in an object: encoding/json never writes that")
		}
		var buf bytes.Buffer
		if err := encodeYAML(&buf, n); err != nil {
			t.Fatalf("%q: encoding the node: %v", data, err)
		}
		text := buf.Bytes()
		var got any
		if err := yaml.Unmarshal(text, &got); err != nil {
			t.Fatalf("%q: the YAML does not read back: %v\n%s", data, err, text)
		}
		if !sameJSONValue(got, want) {
			t.Errorf("%q reads back as %#v, want %#v\n%s", data, got, want, text)
		}
		if m, ok := want.(map[string]any); ok && n.Kind == yaml.MappingNode {
			if order := topLevelKeys(t, string(data)); len(order) == len(m) { // no duplicates
				for i, k := range order {
					if n.Content[2*i].Value != k {
						t.Errorf("%q: key %d is %q, want %q (the JSON's order)", data, i, n.Content[2*i].Value, k)
					}
				}
			}
		}
	})
}

// duplicateKeys reports whether an object in the JSON text has a key twice.
func duplicateKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.object && top.key
		if top != nil && top.object {
			top.key = !top.key
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true
				}
			}
		case string:
			if isKey {
				if top.keys[tok] {
					return true
				}
				top.keys[tok] = true
			}
		}
	}
}

// sameJSONValue compares what YAML read back with what encoding/json read: numbers by
// value (YAML gives ints, JSON float64s).
func sameJSONValue(got, want any) bool {
	switch w := want.(type) {
	case float64:
		switch g := got.(type) {
		case int:
			return float64(g) == w
		case uint64:
			return float64(g) == w
		case float64:
			return g == w
		}
		return false
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			if gv, ok := g[k]; !ok || !sameJSONValue(gv, v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameJSONValue(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(got, want)
}
