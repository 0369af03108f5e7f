package diff

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// wildcard is the path segment that matches any one key or list index.
const wildcard = "*"

// IgnorePath is a path into an object whose changes diffs leave out, together with
// everything under it. It is written in one of two forms:
//
//   - a JSON pointer (RFC 6901), which starts with "/":
//     /status/conditions/*/lastHeartbeatTime, /metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration
//   - a dotted path, which does not (a leading "." is allowed, as jq users write it):
//     status.conditions.*.lastHeartbeatTime, metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration
//
// In a dotted path a backslash makes the next character part of the key, so a key with
// dots (annotation and label keys are full of them) is written with "\."; "\\" is a
// backslash and "\[" a bracket. An unescaped "[" is rejected, since it almost always
// means list syntax (a[0]), which is written as a segment instead: a.0 or a.*.
//
// A list element is matched by its index in decimal. A segment that is exactly "*"
// matches any one key or index, in both forms; a key that is literally "*" can only be
// ignored through its parent.
type IgnorePath struct {
	segments []string // keys or indices from the root, never empty
}

// ParseIgnorePath reads an ignore path in either form. Its errors are one line that
// quotes the input, for the caller to prefix with the flag or setting it came from.
func ParseIgnorePath(s string) (IgnorePath, error) {
	if s == "" {
		return IgnorePath{}, errors.New("invalid path: empty")
	}
	var segments []string
	var err error
	if s[0] == '/' {
		segments, err = parsePointerSegments(s)
	} else {
		segments, err = parseDottedSegments(s)
	}
	if err != nil {
		return IgnorePath{}, fmt.Errorf("invalid path %q: %w", s, err)
	}
	return IgnorePath{segments: segments}, nil
}

// parsePointerSegments splits a JSON pointer and undoes its ~0 and ~1 escapes.
func parsePointerSegments(s string) ([]string, error) {
	var segments []string
	for start := 1; start <= len(s); {
		end := strings.IndexByte(s[start:], '/')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		if end == start {
			return nil, fmt.Errorf("empty segment at column %d", start+1)
		}
		segment, err := unescapePointerSegment(s[start:end], start)
		if err != nil {
			return nil, err
		}
		segments = append(segments, segment)
		start = end + 1
	}
	return segments, nil
}

// unescapePointerSegment turns ~1 into "/" and ~0 into "~"; offset is where the segment
// starts in the whole pointer, for the error's column.
func unescapePointerSegment(segment string, offset int) (string, error) {
	if !strings.Contains(segment, "~") {
		return segment, nil
	}
	var key strings.Builder
	for i := 0; i < len(segment); i++ {
		c := segment[i]
		if c != '~' {
			key.WriteByte(c)
			continue
		}
		if i+1 == len(segment) || (segment[i+1] != '0' && segment[i+1] != '1') {
			return "", fmt.Errorf("invalid escape %q at column %d (write ~0 for \"~\" and ~1 for \"/\")",
				segment[i:min(i+2, len(segment))], offset+i+1)
		}
		if segment[i+1] == '0' {
			key.WriteByte('~')
		} else {
			key.WriteByte('/')
		}
		i++
	}
	return key.String(), nil
}

// parseDottedSegments splits a dotted path at unescaped dots.
func parseDottedSegments(s string) ([]string, error) {
	start := 0
	if s[0] == '.' {
		start = 1
		if len(s) == 1 {
			return nil, errors.New(`no segment after "."`)
		}
	}
	var segments []string
	var key []byte
	segmentStart := start
	for i := start; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 == len(s) {
				return nil, errors.New(`ends in an unfinished escape "\"`)
			}
			i++
			key = append(key, s[i])
		case '.':
			if i == segmentStart {
				return nil, fmt.Errorf("empty segment at column %d", i+1)
			}
			segments = append(segments, string(key))
			key = key[:0]
			segmentStart = i + 1
		case '[':
			return nil, fmt.Errorf(`"[" at column %d: write list elements as a segment, e.g. status.conditions.0 or status.conditions.*; a literal "[" is "\["`, i+1)
		default:
			key = append(key, c)
		}
	}
	if segmentStart == len(s) {
		return nil, errors.New(`ends in "."`)
	}
	return append(segments, string(key)), nil
}

// String is the path in dotted form, escaped so that ParseIgnorePath reads it back as
// the same path. It is not escaped for terminals.
func (p IgnorePath) String() string {
	var b strings.Builder
	for i, segment := range p.segments {
		if i > 0 {
			b.WriteByte('.')
		} else if strings.HasPrefix(segment, "/") {
			b.WriteByte('\\') // else it would read as a JSON pointer
		}
		for j := 0; j < len(segment); j++ {
			switch c := segment[j]; c {
			case '.', '\\', '[':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// pointer is the path as a JSON pointer, escaped as jsondiff writes the paths it
// compares (which is how a path without wildcards is handed to jsondiff.Ignores).
func (p IgnorePath) pointer() string {
	var b strings.Builder
	for _, segment := range p.segments {
		b.WriteByte('/')
		appendPointerKey(&b, segment)
	}
	return b.String()
}

func appendPointerKey(b *strings.Builder, key string) {
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '~':
			b.WriteString("~0")
		case '/':
			b.WriteString("~1")
		default:
			b.WriteByte(c)
		}
	}
}

func (p IgnorePath) hasWildcard() bool {
	for _, segment := range p.segments {
		if segment == wildcard {
			return true
		}
	}
	return false
}

// appendMatchingPointers appends the JSON pointer of every value in doc that segments
// match, prefix being the pointer of doc itself. It expands wildcards against one
// event's objects, since jsondiff only ignores exact pointers.
func appendMatchingPointers(pointers []string, doc any, segments []string, prefix string) []string {
	if len(segments) == 0 {
		return append(pointers, prefix)
	}
	segment, rest := segments[0], segments[1:]
	switch node := doc.(type) {
	case map[string]any:
		if segment != wildcard {
			if child, ok := node[segment]; ok {
				pointers = appendMatchingPointers(pointers, child, rest, pointerChild(prefix, segment))
			}
			return pointers
		}
		for key, child := range node {
			pointers = appendMatchingPointers(pointers, child, rest, pointerChild(prefix, key))
		}
	case []any:
		for i, child := range node {
			if segmentMatchesIndex(segment, i) {
				pointers = appendMatchingPointers(pointers, child, rest, prefix+"/"+strconv.Itoa(i))
			}
		}
	}
	return pointers
}

func pointerChild(prefix, key string) string {
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(key))
	b.WriteString(prefix)
	b.WriteByte('/')
	appendPointerKey(&b, key)
	return b.String()
}

// segmentMatchesIndex reports whether a path segment names list index i: "*", or i in
// canonical decimal, the only form jsondiff writes.
func segmentMatchesIndex(segment string, i int) bool {
	return segment == wildcard || segment == strconv.Itoa(i)
}

// segmentMatchesPointerSegment reports whether a path segment matches one segment of a
// change's JSON pointer (still escaped). The index "-" that jsondiff writes for an
// element appended to a list is thus matched by "*" but not by a number.
func segmentMatchesPointerSegment(segment, escaped string) bool {
	if segment == wildcard {
		return true
	}
	if !strings.Contains(escaped, "~") {
		return segment == escaped
	}
	key, err := unescapePointerSegment(escaped, 0)
	return err == nil && segment == key
}
