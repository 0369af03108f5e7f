// Package jsonw writes the JSON of strings and fields as encoding/json does, byte for
// byte, into a caller's buffer: what every renderer builds its lines with.
package jsonw

import "unicode/utf8"

// AppendJSONString appends s as encoding/json writes a string: HTML's <, > and & escaped,
// as are control characters, U+2028 and U+2029, and each byte that is not valid UTF-8
// written as U+FFFD. Printable ASCII that needs no escape is appended as it is; the rest
// is escaped in place rather than through json.Marshal, whose buffer every annotation
// holding JSON (kubectl's last-applied-configuration) would otherwise cost.
// TestAppendJSONStringSameAsEncodingJSON holds it to encoding/json.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control characters, and <, > and &
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// AppendJSONField appends key, the JSON text before a value (`,"name":`), and s as a
// JSON string.
func AppendJSONField(dst []byte, key, s string) []byte {
	return AppendJSONString(append(dst, key...), s)
}
