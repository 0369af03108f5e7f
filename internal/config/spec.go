package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/suggest"
)

// syntaxHint ends the messages about the shape of a --sink value.
const syntaxHint = "(syntax: KIND[(OPTIONS)][=TARGET])"

// option is one key[=value] from a --sink option list.
type option struct {
	key      string
	value    string
	hasValue bool
}

// ParseSinkSpec parses a --sink flag value (see the package documentation for the
// syntax). The sink it returns has a known Type, a Name (default ones have AutoName
// set), and Origin `--sink "SPEC"`; a file sink has a Format. Errors are one line
// starting with `--sink "SPEC": `.
func ParseSinkSpec(spec string) (Sink, error) {
	s, err := parseSpec(spec)
	if err != nil {
		return Sink{}, fmt.Errorf("--sink %q: %w", spec, err)
	}
	s.Origin = fmt.Sprintf("--sink %q", spec)
	return s, nil
}

func parseSpec(spec string) (Sink, error) {
	end := strings.IndexAny(spec, "(=")
	if end < 0 {
		end = len(spec)
	}
	kind := spec[:end]
	if kind == "" {
		return Sink{}, fmt.Errorf("missing sink kind; use %s %s", kindList(), syntaxHint)
	}
	if !knownKind(kind) {
		return Sink{}, fmt.Errorf("unknown sink kind %q; use %s %s", kind, kindList(), syntaxHint)
	}
	rest := spec[end:]

	var opts []option
	if strings.HasPrefix(rest, "(") {
		var n int
		var err error
		opts, n, err = parseOptions(rest[1:])
		if err != nil {
			return Sink{}, err
		}
		rest = rest[1+n:]
	}
	target, hasTarget := "", false
	if rest != "" {
		if rest[0] != '=' {
			r, _ := utf8.DecodeRuneInString(rest)
			return Sink{}, fmt.Errorf("unexpected %q after the option list; put the target after '=' %s", r, syntaxHint)
		}
		target, hasTarget = rest[1:], true
	}

	s := Sink{Type: kind}
	if err := applyOptions(&s, opts); err != nil {
		return Sink{}, err
	}
	switch kind {
	case KindFile:
		if target == "" {
			return Sink{}, fmt.Errorf("file needs a path: file=PATH %s", syntaxHint)
		}
		s.Path = target
		if s.Format == "" {
			s.Format = string(fileFormats[0])
		}
	case KindJQ:
		if strings.TrimSpace(target) == "" {
			return Sink{}, fmt.Errorf("jq needs an expression: jq=EXPR %s", syntaxHint)
		}
		s.Expr = target
	case KindTerminal:
		if hasTarget {
			if s.Format != "" {
				return Sink{}, errors.New("format given twice, as option and as =TARGET; give it once")
			}
			if target == "" {
				return Sink{}, fmt.Errorf("terminal needs a format after '=': terminal=FORMAT %s", syntaxHint)
			}
			if err := checkFormat(kind, target); err != nil {
				return Sink{}, err
			}
			s.Format = target
		}
	}
	if s.Rotate.MaxSizeMB == 0 {
		for _, o := range opts {
			if o.key == "max-backups" || o.key == "max-age" || o.key == "compress" {
				return Sink{}, fmt.Errorf("option %q %s: add max-size=MB", o.key, errRotateNeedsSize)
			}
		}
	}
	if s.Name == "" {
		s.Name, s.AutoName = defaultName(&s), true
	}
	return s, nil
}

// parseOptions parses an option list up to and including its closing ')', and returns
// the options and how many bytes of s they took.
func parseOptions(s string) ([]option, int, error) {
	unclosed := fmt.Errorf("missing ')' to close the option list %s", syntaxHint)
	var opts []option
	pos := 0
	skipSpace := func() {
		for pos < len(s) && (s[pos] == ' ' || s[pos] == '\t') {
			pos++
		}
	}
	skipSpace()
	if pos < len(s) && s[pos] == ')' {
		return nil, pos + 1, nil
	}
	for {
		start := pos
		for pos < len(s) && !strings.ContainsRune("=,)\"", rune(s[pos])) {
			pos++
		}
		if pos == len(s) {
			return nil, 0, unclosed
		}
		o := option{key: strings.TrimSpace(s[start:pos])}
		if s[pos] == '"' {
			return nil, 0, fmt.Errorf("unexpected '\"' in an option name; only values may be quoted %s", syntaxHint)
		}
		if o.key == "" {
			return nil, 0, fmt.Errorf("empty option in the option list; options are key=value separated by ',' %s", syntaxHint)
		}
		if s[pos] == '=' {
			pos++
			skipSpace()
			o.hasValue = true
			if pos < len(s) && s[pos] == '"' {
				value, n, err := unquote(o.key, s[pos:])
				if err != nil {
					return nil, 0, err
				}
				o.value = value
				pos += n
				skipSpace()
				if pos < len(s) && s[pos] != ',' && s[pos] != ')' {
					r, _ := utf8.DecodeRuneInString(s[pos:])
					return nil, 0, fmt.Errorf("unexpected %q after the quoted value of option %q; quote the whole value", r, o.key)
				}
			} else {
				start := pos
				for pos < len(s) && s[pos] != ',' && s[pos] != ')' && s[pos] != '"' {
					pos++
				}
				if pos < len(s) && s[pos] == '"' {
					if !plainOptionName(o.key) {
						return nil, 0, fmt.Errorf("unexpected '\"' inside the value of option %q; quote the whole value", o.key)
					}
					return nil, 0, fmt.Errorf("unexpected '\"' inside the value of option %q; quote the whole value: %s=\"...\"", o.key, o.key)
				}
				o.value = strings.TrimSpace(s[start:pos])
			}
		}
		if pos == len(s) {
			return nil, 0, unclosed
		}
		opts = append(opts, o)
		if s[pos] == ')' {
			return opts, pos + 1, nil
		}
		pos++ // ','
		skipSpace()
	}
}

// unquote reads the double-quoted string s starts with, and returns its value and how
// many bytes of s it took.
func unquote(key, s string) (string, int, error) {
	var b strings.Builder
	for pos := 1; pos < len(s); pos++ {
		switch s[pos] {
		case '"':
			return b.String(), pos + 1, nil
		case '\\':
			pos++
			if pos == len(s) {
				break
			}
			if s[pos] != '"' && s[pos] != '\\' {
				r, _ := utf8.DecodeRuneInString(s[pos:])
				return "", 0, fmt.Errorf("invalid escape %q in the value of option %q; inside quotes only \\\" and \\\\ are escapes", `\`+string(r), key)
			}
			b.WriteByte(s[pos])
		default:
			b.WriteByte(s[pos])
		}
	}
	return "", 0, fmt.Errorf("unterminated quote in the value of option %q; end it with '\"'", key)
}

// applyOptions sets s's fields from opts. s.Type is set.
func applyOptions(s *Sink, opts []option) error {
	seen := make(map[string]bool, len(opts))
	for _, o := range opts {
		set, ok := flagSetting(o.key)
		if !ok {
			switch o.key {
			case "path":
				return fmt.Errorf("unknown option %q; the path is the target: %s(...)=PATH", o.key, s.Type)
			case "expr", "expression":
				return fmt.Errorf("unknown option %q; the expression is the target: %s(...)=EXPR", o.key, s.Type)
			}
			return fmt.Errorf("unknown option %q%s; %s sinks take: %s",
				o.key, suggest.DidYouMean(o.key, flagKeys(s.Type)), s.Type, strings.Join(flagKeys(s.Type), ", "))
		}
		if set.kinds&kindBit(s.Type) == 0 {
			return fmt.Errorf("option %q is for %s sinks only; %s sinks take: %s",
				o.key, set.kinds, s.Type, strings.Join(flagKeys(s.Type), ", "))
		}
		if seen[o.key] {
			return fmt.Errorf("option %q given twice; give it once", o.key)
		}
		seen[o.key] = true
		if set.bool {
			v := true
			if o.hasValue {
				switch o.value {
				case "true":
				case "false":
					v = false
				default:
					return fmt.Errorf("option %q: want true or false (or just %q), got %q", o.key, o.key, o.value)
				}
			}
			if o.key == "raw" {
				s.Raw = v
			} else {
				s.Rotate.Compress = v
			}
			continue
		}
		if o.value == "" {
			return fmt.Errorf("option %q needs a value: %s=VALUE", o.key, o.key)
		}
		var err error
		switch o.key {
		case "name":
			s.Name = o.value
		case "format":
			err = checkFormat(s.Type, o.value)
			s.Format = o.value
		case "output":
			s.Output = o.value
		case "on-full":
			s.OnFull, err = listener.ParsePolicy(o.value)
		case "resync":
			s.Resync, err = parseResync(o.value)
			if err != nil {
				err = fmt.Errorf("option %q: %w", o.key, err)
			}
		case "buffer":
			s.Buffer, err = atoi(o)
			if err == nil {
				if err = checkBuffer(s.Buffer); err != nil {
					err = fmt.Errorf("option %q: %w", o.key, err)
				}
			}
		case "max-size":
			s.Rotate.MaxSizeMB, err = atoi(o)
		case "max-backups":
			s.Rotate.MaxBackups, err = atoi(o)
		case "max-age":
			s.Rotate.MaxAgeDays, err = atoi(o)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// atoi parses a non-negative integer option.
func atoi(o option) (int, error) {
	n, err := strconv.Atoi(o.value)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("option %q: want a non-negative whole number, got %q", o.key, o.value)
	}
	return n, nil
}

// plainOptionName reports whether an option name can be shown as it is in a hint: a
// name with spaces or control characters would break the one-line error.
func plainOptionName(name string) bool {
	return !strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}
