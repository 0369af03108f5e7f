package render

import (
	"strconv"
	"unicode/utf8"
)

// appendEscaped appends s with every rune that is not printable escaped Go-style
// (\n, \x1b, \u009b, \u202e; invalid UTF-8 bytes as \xff). Object names, labels and
// statuses are chosen by whoever can write to the cluster; unescaped, a control
// character could recolour the terminal, move the cursor or forge a whole line, and
// an invisible format character (such as a bidi override) could make text read
// differently from what it is. Backslashes are kept as they are: escaping is for the
// terminal's safety, not for reversible quoting.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return appendEscapedFrom(append(dst, s[:i]...), s[i:])
		}
	}
	return append(dst, s...)
}

// appendEscapedFrom is appendEscaped's rune-by-rune path, taken only for strings that
// hold something other than printable ASCII.
func appendEscapedFrom(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = appendHex(append(dst, `\x`...), uint32(s[i]), 2)
		case r < utf8.RuneSelf && r >= 0x20 && r != 0x7f, r >= utf8.RuneSelf && strconv.IsPrint(r):
			dst = append(dst, s[i:i+size]...)
		case r == '\a':
			dst = append(dst, `\a`...)
		case r == '\b':
			dst = append(dst, `\b`...)
		case r == '\f':
			dst = append(dst, `\f`...)
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r == '\v':
			dst = append(dst, `\v`...)
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

// appendHex appends v as exactly digits lower-case hex digits.
func appendHex(dst []byte, v uint32, digits int) []byte {
	const hexDigits = "0123456789abcdef"
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[v>>uint(shift)&0xf])
	}
	return dst
}

// AppendTerminalText appends s escaped for a terminal, as every string from an object is
// in pretty output: for raw text (jq -r) that goes to a terminal.
func AppendTerminalText(dst []byte, s string) []byte { return appendEscaped(dst, s) }
