// Package escape makes text taken from objects safe to print on a terminal. Object
// names, labels and statuses are chosen by whoever can write to the cluster; unescaped,
// a control character could recolour the terminal, move the cursor or forge a whole
// line, and an invisible format character (such as a bidi override) could make text read
// differently from what it is. Every string from an object goes through Append before it
// reaches a terminal: pretty output, kubectl's columns, raw jq output.
package escape

import (
	"strconv"
	"unicode/utf8"
)

// Append appends s with every rune that is not printable escaped Go-style (\n, \x1b,
// \u009b, \u202e; invalid UTF-8 bytes as \xff). Backslashes are kept as they are:
// escaping is for the terminal's safety, not for reversible quoting.
func Append(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return appendEscapedFrom(append(dst, s[:i]...), s[i:])
		}
	}
	return append(dst, s...)
}

// appendEscapedFrom is Append's rune-by-rune path, taken only for strings that
// hold something other than printable ASCII.
func appendEscapedFrom(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = appendHex(append(dst, `\x`...), uint32(s[i]), 2)
		case r < utf8.RuneSelf && r >= 0x20 && r != 0x7f, r >= utf8.RuneSelf && strconv.IsPrint(r):
			dst = append(dst, s[i:i+size]...)
		case r < 0x20 && shortEscapes[r] != 0:
			dst = append(dst, '\\', shortEscapes[r])
		case r < utf8.RuneSelf:
			dst = appendHex(append(dst, `\x`...), uint32(r), 2)
		case r <= 0xffff:
			dst = appendHex(append(dst, `\u`...), uint32(r), 4)
		default:
			dst = appendHex(append(dst, `\U`...), uint32(r), 8)
		}
		i += size
	}
	return dst
}

// shortEscapes are the letters of Go's one-letter escapes (\n for '\n'), by character.
var shortEscapes = [0x20]byte{'\a': 'a', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't', '\v': 'v'}

// appendHex appends v as exactly digits lower-case hex digits.
func appendHex(dst []byte, v uint32, digits int) []byte {
	const hexDigits = "0123456789abcdef"
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[v>>uint(shift)&0xf])
	}
	return dst
}
