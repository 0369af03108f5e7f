package render

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// yamlNode converts JSON to the YAML node of its value, in block style: mappings keep
// the JSON's key order (apiVersion, kind, metadata, spec, status; op, path, value, old),
// numbers their digits, strings their decoded value.
//
// The JSON is decoded here rather than read by the YAML parser (JSON is YAML): the
// parser refuses text holding characters YAML does not allow unescaped (DEL, C1
// controls, U+FFFE), which encoding/json writes as they are, so one such annotation
// would stop the sink. The encoder escapes them in a double-quoted string.
func yamlNode(jsonText []byte) (*yaml.Node, error) {
	d := jsonDecoder{data: jsonText}
	d.space()
	n, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.space(); d.pos < len(d.data) {
		return nil, d.errorf("text after the JSON value")
	}
	return n, nil
}

// maxJSONDepth bounds the nesting decoded, as encoding/json does (10,000).
const maxJSONDepth = 10000

// jsonDecoder turns JSON text into yaml.Nodes. The nodes, and the slices of their
// children, are carved out of blocks allocated a few at a time rather than one by one.
type jsonDecoder struct {
	data []byte
	pos  int

	nodes   []yaml.Node
	content []*yaml.Node // children being collected, the innermost container's last
	slab    []*yaml.Node // where the containers' Content slices are carved from
	scratch []byte       // a string with escapes, while it is decoded
}

func (d *jsonDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *jsonDecoder) node(kind yaml.Kind, tag, value string) *yaml.Node {
	if len(d.nodes) == 0 {
		d.nodes = make([]yaml.Node, 128)
	}
	n := &d.nodes[0]
	d.nodes = d.nodes[1:]
	n.Kind, n.Tag, n.Value = kind, tag, value
	return n
}

// children moves the children collected since start into a slice of their own.
func (d *jsonDecoder) children(start int) []*yaml.Node {
	kids := d.content[start:]
	d.content = d.content[:start]
	if len(kids) == 0 {
		return nil
	}
	if len(kids) > len(d.slab) {
		d.slab = make([]*yaml.Node, max(len(kids), 512))
	}
	out := d.slab[:len(kids):len(kids)] // full: an append elsewhere copies
	d.slab = d.slab[len(kids):]
	copy(out, kids)
	return out
}

func (d *jsonDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value(depth int) (*yaml.Node, error) {
	if depth > maxJSONDepth {
		return nil, d.errorf("nested too deep")
	}
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return d.node(yaml.ScalarNode, "!!str", s), nil
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	for _, lit := range [...]struct{ text, tag string }{{"true", "!!bool"}, {"false", "!!bool"}, {"null", "!!null"}} {
		if len(d.data)-d.pos >= len(lit.text) && string(d.data[d.pos:d.pos+len(lit.text)]) == lit.text {
			d.pos += len(lit.text)
			return d.node(yaml.ScalarNode, lit.tag, lit.text), nil
		}
	}
	return nil, d.errorf("unexpected %q", d.data[d.pos])
}

func (d *jsonDecoder) object(depth int) (*yaml.Node, error) {
	d.pos++ // {
	start := len(d.content)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return d.node(yaml.MappingNode, "!!map", ""), nil
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("want a key")
		}
		key, err := d.str()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("want ':' after a key")
		}
		d.pos++
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		d.content = append(d.content, d.node(yaml.ScalarNode, "!!str", key), v)
		d.space()
		if d.pos < len(d.data) && d.data[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.data) && d.data[d.pos] == '}' {
			d.pos++
			n := d.node(yaml.MappingNode, "!!map", "")
			n.Content = d.children(start)
			return n, nil
		}
		return nil, d.errorf("want ',' or '}' in an object")
	}
}

func (d *jsonDecoder) array(depth int) (*yaml.Node, error) {
	d.pos++ // [
	start := len(d.content)
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return d.node(yaml.SequenceNode, "!!seq", ""), nil
	}
	for {
		d.space()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		d.content = append(d.content, v)
		d.space()
		if d.pos < len(d.data) && d.data[d.pos] == ',' {
			d.pos++
			continue
		}
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			n := d.node(yaml.SequenceNode, "!!seq", "")
			n.Content = d.children(start)
			return n, nil
		}
		return nil, d.errorf("want ',' or ']' in an array")
	}
}

// number is a JSON number with its digits, tagged as the YAML parser resolves them:
// !!int when it is an integer that fits 64 bits, else !!float.
func (d *jsonDecoder) number() (*yaml.Node, error) {
	start, integer := d.pos, true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '.' || c == 'e' || c == 'E' {
			integer = false
		} else if c != '-' && c != '+' && (c < '0' || c > '9') {
			break
		}
		d.pos++
	}
	text := string(d.data[start:d.pos])
	if !validNumber(text) {
		return nil, d.errorf("bad number %q", text)
	}
	tag := "!!float"
	if integer && (len(text) < 19 || fitsInt64(text)) {
		tag = "!!int"
	}
	return d.node(yaml.ScalarNode, tag, text), nil
}

func fitsInt64(text string) bool {
	if _, err := strconv.ParseInt(text, 10, 64); err == nil {
		return true
	}
	_, err := strconv.ParseUint(text, 10, 64)
	return err == nil
}

// validNumber is JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(s string) bool {
	i := 0
	digits := func() bool {
		j := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// str decodes the string at d.pos (its opening quote) as encoding/json does: invalid
// UTF-8 and lone surrogates become U+FFFD.
func (d *jsonDecoder) str() (string, error) {
	d.pos++ // "
	start := d.pos
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			s := d.data[start:d.pos]
			d.pos++
			if !utf8.Valid(s) {
				return string(appendValidUTF8(nil, s)), nil
			}
			return string(s), nil
		case c == '\\':
			return d.escapedStr(start)
		case c < ' ':
			return "", d.errorf("control character %#x in a string", c)
		}
		d.pos++
	}
	return "", d.errorf("unterminated string")
}

// escapedStr goes on with a string from its first backslash, at d.pos.
func (d *jsonDecoder) escapedStr(start int) (string, error) {
	b := append(d.scratch[:0], d.data[start:d.pos]...)
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			d.scratch = b
			if !utf8.Valid(b) {
				return string(appendValidUTF8(nil, b)), nil
			}
			return string(b), nil
		case c < ' ':
			return "", d.errorf("control character %#x in a string", c)
		case c != '\\':
			b = append(b, c)
			d.pos++
			continue
		}
		if d.pos+1 >= len(d.data) {
			break
		}
		esc := d.data[d.pos+1]
		d.pos += 2
		switch esc {
		case '"', '\\', '/':
			b = append(b, esc)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", d.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r = d.lowSurrogate(r)
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", d.errorf("bad escape \\%c", esc)
		}
	}
	return "", d.errorf("unterminated string")
}

// hex4 reads the 4 hex digits of a \u escape at d.pos.
func (d *jsonDecoder) hex4() (rune, bool) {
	if d.pos+4 > len(d.data) {
		return 0, false
	}
	r := rune(0)
	for _, c := range d.data[d.pos : d.pos+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.pos += 4
	return r, true
}

// lowSurrogate completes the high surrogate r with the \u escape at d.pos into one
// character; without a low surrogate there, r is U+FFFD and the escape is left to be
// read on its own, as encoding/json does.
func (d *jsonDecoder) lowSurrogate(r rune) rune {
	save := d.pos
	if d.pos+1 < len(d.data) && d.data[d.pos] == '\\' && d.data[d.pos+1] == 'u' {
		d.pos += 2
		if r2, ok := d.hex4(); ok {
			if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
				return pair
			}
		}
	}
	d.pos = save
	return utf8.RuneError
}

// appendValidUTF8 appends s with each byte of invalid UTF-8 replaced by U+FFFD, as
// encoding/json decodes it.
func appendValidUTF8(dst, s []byte) []byte {
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[:size]...)
		}
		s = s[size:]
	}
	return dst
}
