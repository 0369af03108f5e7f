package replay

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/recording"
)

// redactor hides the values of the Secrets a recording holds, as a watch's informer
// does (unless --show-secrets): a recording made with --show-secrets, or JSON from
// elsewhere, holds them in full. Every value of data and stringData, and the
// last-applied-configuration annotation, becomes the informer's placeholder, in the
// object, the previous object ("old") and the recorded diff alike; a value recorded
// redacted already is left as it is. Within one replay, a value has one placeholder, so
// a change still shows as a change.
type redactor struct{ r *informer.Redactor }

func newRedactor() *redactor { return &redactor{r: informer.NewRedactor()} }

// isSecrets reports whether gvr is core Secrets.
func isSecrets(gvr schema.GroupVersionResource) bool {
	return gvr.Group == "" && gvr.Resource == "secrets"
}

// record redacts a Secret's record in place: its object, old object and diff.
func (r *redactor) record(rec *recording.Record) {
	rec.Object = r.json(rec.Object, nil)
	if rec.Old != nil {
		rec.Old = r.json(rec.Old, nil)
	}
	if rec.Diff != nil {
		rec.Diff = r.diff(rec.Diff)
	}
}

// diff redacts the values of a recorded diff's operations, each at its path.
func (r *redactor) diff(raw []byte) []byte {
	ops := gjson.ParseBytes(raw)
	if !ops.IsArray() {
		return raw
	}
	out := make([]byte, 0, len(raw))
	out = append(out, '[')
	changed := false
	first := true
	ops.ForEach(func(_, op gjson.Result) bool {
		if !first {
			out = append(out, ',')
		}
		first = false
		at := pointerSegments(op.Get("path").String())
		redacted, ok := r.members(op, func(key string) ([]string, bool) {
			return at, key == "value" || key == "old"
		})
		changed = changed || ok
		out = append(out, redacted...)
		return true
	})
	if !changed {
		return raw
	}
	return append(out, ']')
}

// json redacts the JSON value raw found at path (the segments from the object's root).
func (r *redactor) json(raw []byte, path []string) []byte {
	v := gjson.ParseBytes(raw)
	out, _ := r.value(v, path)
	return out
}

// value is v redacted, where v is found at path; changed says whether anything was.
func (r *redactor) value(v gjson.Result, path []string) (out []byte, changed bool) {
	raw := []byte(v.Raw)
	switch {
	case isSecretValue(path):
		if v.Type != gjson.String || v.Str == "" && path[0] == "metadata" || informer.IsPlaceholder(v.Str) {
			return raw, false
		}
		value := []byte(v.Str)
		if path[0] == "data" { // base64: its decoded length is said
			if decoded, err := base64.StdEncoding.DecodeString(v.Str); err == nil {
				value = decoded
			}
		}
		// Encoded as a watch encodes it (encoding/json escapes '<' and '>').
		encoded, err := json.Marshal(r.r.Placeholder(value))
		if err != nil {
			return raw, false
		}
		return encoded, true
	case v.IsObject() && holdsSecretValues(path):
		return r.members(v, func(key string) ([]string, bool) {
			return append(path[:len(path):len(path)], key), true
		})
	}
	return raw, false
}

// members writes the object v again with the members that at says to look into
// redacted (at gives their path); the others, and the order, as they are.
func (r *redactor) members(v gjson.Result, at func(key string) ([]string, bool)) (out []byte, changed bool) {
	out = make([]byte, 0, len(v.Raw))
	out = append(out, '{')
	first := true
	v.ForEach(func(key, value gjson.Result) bool {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, key.Raw...)
		out = append(out, ':')
		raw := []byte(value.Raw)
		if path, ok := at(key.Str); ok {
			var c bool
			raw, c = r.value(value, path)
			changed = changed || c
		}
		out = append(out, raw...)
		return true
	})
	if !changed {
		return []byte(v.Raw), false
	}
	return append(out, '}'), true
}

// isSecretValue reports whether path is where a Secret holds a value: a key of data or
// stringData, or the last-applied annotation.
func isSecretValue(path []string) bool {
	switch len(path) {
	case 2:
		return path[0] == "data" || path[0] == "stringData"
	case 3:
		return path[0] == "metadata" && path[1] == "annotations" && path[2] == informer.LastAppliedAnnotation
	}
	return false
}

// holdsSecretValues reports whether path is above where a Secret holds values.
func holdsSecretValues(path []string) bool {
	switch len(path) {
	case 0:
		return true
	case 1:
		return path[0] == "data" || path[0] == "stringData" || path[0] == "metadata"
	case 2:
		return path[0] == "metadata" && path[1] == "annotations"
	}
	return false
}

// pointerSegments are a JSON pointer's segments, unescaped ("" is the whole object).
func pointerSegments(pointer string) []string {
	if pointer == "" || pointer[0] != '/' {
		return nil
	}
	segments := strings.Split(pointer[1:], "/")
	for i, s := range segments {
		segments[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segments
}
