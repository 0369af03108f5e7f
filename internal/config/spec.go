package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
	opts = joinLists(kindOf(&s), opts)
	if err := applyOptions(&s, opts); err != nil {
		return Sink{}, err
	}
	if err := applyTarget(&s, opts, target, hasTarget); err != nil {
		return Sink{}, err
	}
	if s.Rotate.MaxSizeMB == 0 {
		for _, o := range opts {
			if set, _ := flagSetting(o.key); strings.HasPrefix(set.yaml, "rotate.") && set.flag != "max-size" {
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

// applyTarget sets the setting the kind's =TARGET stands for (the path, the
// expression, the terminal's format) and the kind's default format.
func applyTarget(s *Sink, opts []option, target string, hasTarget bool) error {
	k := kindOf(s)
	set, _ := settingByID(k.target)
	missing := target == "" || (set.value == exprValue && strings.TrimSpace(target) == "")
	switch {
	case !k.optionalTarget && missing:
		return fmt.Errorf("%s needs %s: %s=%s %s", k.Name, k.targetNoun, k.Name, k.targetMeta, syntaxHint)
	case !hasTarget:
	case slices.ContainsFunc(opts, func(o option) bool { return o.key == set.flag }):
		return fmt.Errorf("%s given twice, as option and as =TARGET; give it once", set.flag)
	case missing:
		return fmt.Errorf("%s needs %s after '=': %s=%s %s", k.Name, k.targetNoun, k.Name, k.targetMeta, syntaxHint)
	default:
		v, err := flagValue(s, set, option{key: set.id(), value: target, hasValue: true})
		if err != nil {
			return err
		}
		set.set(s, v)
	}
	if s.Format == "" {
		s.Format = string(k.defaultFormat)
	}
	return nil
}

// applyOptions sets s's fields from opts. s.Type is set.
func applyOptions(s *Sink, opts []option) error {
	k := kindOf(s)
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
		if !k.takes(set) {
			return fmt.Errorf("option %q is for %s sinks only; %s sinks take: %s",
				o.key, kindsTaking(set), s.Type, strings.Join(flagKeys(s.Type), ", "))
		}
		if seen[o.key] {
			return fmt.Errorf("option %q given twice; give it once", o.key)
		}
		seen[o.key] = true
		v, err := flagValue(s, set, o)
		if err != nil {
			return err
		}
		set.set(s, v)
	}
	return nil
}

// joinLists gives a list option the items that follow it bare, separated by commas as
// options are: on=crashloop,oomkilled is on=crashloop|oomkilled. An item that is an
// option of the kind stays an option (on=crashloop,single: single is the http sink's).
func joinLists(k *Kind, opts []option) []option {
	var out []option
	for _, o := range opts {
		if n := len(out); n > 0 && !o.hasValue && isList(out[n-1]) {
			if set, ok := flagSetting(o.key); !ok || !k.takes(set) {
				out[n-1].value += "|" + o.key
				continue
			}
		}
		out = append(out, o)
	}
	return out
}

// isList reports whether o is a list option given a value (event-types, on).
func isList(o option) bool {
	set, ok := flagSetting(o.key)
	return ok && o.hasValue && (set.value == eventTypesValue || set.value == transitionsValue)
}

// flagValue reads a --sink option's value, or the target's, as its setting says.
func flagValue(s *Sink, set *setting, o option) (value, error) {
	if set.value == boolValue {
		if !o.hasValue {
			return value{on: true}, nil
		}
		switch o.value {
		case "true":
			return value{on: true}, nil
		case "false":
			return value{}, nil
		}
		return value{}, fmt.Errorf("option %q: want true or false (or just %q), got %q", o.key, o.key, o.value)
	}
	if o.value == "" {
		return value{}, fmt.Errorf("option %q needs a value: %s=VALUE", o.key, o.key)
	}
	switch set.value {
	case countValue, bufferValue:
		n, err := atoi(o)
		if err == nil && set.value == bufferValue {
			if err = checkBuffer(n); err != nil {
				err = fmt.Errorf("option %q: %w", o.key, err)
			}
		}
		return value{n: n}, err
	}
	v, err := parseText(s.Type, set.value, o.value)
	switch {
	case err == nil:
	case set.value == periodValue, set.value == durationValue, set.value == eventTypesValue, set.value == transitionsValue:
		// The others' messages say what the value is (a format, a policy, a URL, a
		// command); these would not.
		err = fmt.Errorf("option %q: %w", o.key, err)
	}
	return v, err
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
