package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kubeevents/kubeevents/internal/sinkkind"
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
// syntax). The sink it returns has a registered Kind, a Name (default ones have AutoName
// set), and Origin `--sink "SPEC"`; a file sink has a format. Errors are one line
// starting with `--sink "SPEC": `.
func ParseSinkSpec(spec string) (sinkkind.Spec, error) {
	s, err := parseSpec(spec)
	if err != nil {
		return sinkkind.Spec{}, fmt.Errorf("--sink %q: %w", spec, err)
	}
	s.Origin = fmt.Sprintf("--sink %q", spec)
	return s, nil
}

func parseSpec(spec string) (sinkkind.Spec, error) {
	end := strings.IndexAny(spec, "(=")
	if end < 0 {
		end = len(spec)
	}
	name := spec[:end]
	if name == "" {
		return sinkkind.Spec{}, fmt.Errorf("missing sink kind; use %s %s", sinkkind.NameList(), syntaxHint)
	}
	kind, ok := sinkkind.Lookup(name)
	if !ok {
		return sinkkind.Spec{}, fmt.Errorf("unknown sink kind %q; use %s %s", name, sinkkind.NameList(), syntaxHint)
	}
	rest := spec[end:]

	var opts []option
	if strings.HasPrefix(rest, "(") {
		var n int
		var err error
		opts, n, err = parseOptions(rest[1:])
		if err != nil {
			return sinkkind.Spec{}, err
		}
		rest = rest[1+n:]
	}
	target, hasTarget := "", false
	if rest != "" {
		if rest[0] != '=' {
			r, _ := utf8.DecodeRuneInString(rest)
			return sinkkind.Spec{}, fmt.Errorf("unexpected %q after the option list; put the target after '=' %s", r, syntaxHint)
		}
		target, hasTarget = rest[1:], true
	}

	s := sinkkind.New(kind)
	opts = joinLists(kind, opts)
	if err := applyOptions(&s, opts); err != nil {
		return sinkkind.Spec{}, err
	}
	if err := applyTarget(&s, opts, target, hasTarget); err != nil {
		return sinkkind.Spec{}, err
	}
	if err := checkNeeds(s, opts); err != nil {
		return sinkkind.Spec{}, err
	}
	if s.Name == "" {
		s.Name, s.AutoName = kind.NameOf(s.Settings), true
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
func applyTarget(s *sinkkind.Spec, opts []option, target string, hasTarget bool) error {
	k := s.Kind
	set := k.TargetRow()
	missing := blank(target)
	switch {
	case !k.OptionalTarget && missing:
		return fmt.Errorf("%s needs %s: %s=%s %s", k.Name, k.TargetNoun, k.Name, set.Meta, syntaxHint)
	case !hasTarget:
	case slices.ContainsFunc(opts, func(o option) bool { return o.key == set.Flag }):
		return fmt.Errorf("%s given twice, as option and as =TARGET; give it once", set.Flag)
	case missing:
		return fmt.Errorf("%s needs %s after '=': %s=%s %s", k.Name, k.TargetNoun, k.Name, set.Meta, syntaxHint)
	default:
		v, err := flagValue(k, set, option{key: set.Key(), value: target, hasValue: true})
		if err != nil {
			return err
		}
		s.Set(set, v)
	}
	defaultFormat(s)
	return nil
}

// blank reports whether text leaves the setting unset: "" or only spaces (a path, an
// address or an expression of spaces is a slip, not a choice).
func blank(text string) bool {
	return strings.TrimSpace(text) == ""
}

// applyOptions sets s's settings from opts.
func applyOptions(s *sinkkind.Spec, opts []option) error {
	k := s.Kind
	seen := make(map[string]bool, len(opts))
	for _, o := range opts {
		set, ok := k.Row(o.key)
		if !ok || set.Flag == "" {
			switch {
			case o.key == "path":
				return fmt.Errorf("unknown option %q; the path is the target: %s(...)=PATH", o.key, k.Name)
			case o.key == "expr" || o.key == "expression":
				return fmt.Errorf("unknown option %q; the expression is the target: %s(...)=EXPR", o.key, k.Name)
			}
			if _, ok := sinkkind.FlagRow(o.key); ok {
				return fmt.Errorf("option %q is for %s sinks only; %s sinks take: %s",
					o.key, sinkkind.KindsTaking(o.key), k.Name, strings.Join(k.FlagKeys(), ", "))
			}
			return fmt.Errorf("unknown option %q%s; %s sinks take: %s",
				o.key, suggest.DidYouMean(o.key, k.FlagKeys()), k.Name, strings.Join(k.FlagKeys(), ", "))
		}
		if seen[o.key] {
			return fmt.Errorf("option %q given twice; give it once", o.key)
		}
		seen[o.key] = true
		v, err := flagValue(k, set, o)
		if err != nil {
			return err
		}
		s.Set(set, v)
	}
	return nil
}

// checkNeeds refuses an option given without the setting it needs (max-backups without
// max-size): it would do nothing.
func checkNeeds(s sinkkind.Spec, opts []option) error {
	for _, o := range opts {
		if set, _ := s.Kind.Row(o.key); set.Needs != "" && !s.IsSet(set.Needs) {
			needed, _ := s.Kind.Row(set.Needs)
			return fmt.Errorf("option %q %s: add %s", o.key, set.NeedsWhy, needed.Syntax())
		}
	}
	return nil
}

// joinLists gives a list option the items that follow it bare, separated by commas as
// options are: on=crashloop,oomkilled is on=crashloop|oomkilled. An item that is an
// option of the kind stays an option (on=crashloop,single: single is the http sink's).
func joinLists(k *sinkkind.Kind, opts []option) []option {
	var out []option
	for _, o := range opts {
		if n := len(out); n > 0 && !o.hasValue && isList(k, out[n-1]) {
			if set, ok := k.Row(o.key); !ok || set.Flag == "" {
				out[n-1].value += "|" + o.key
				continue
			}
		}
		out = append(out, o)
	}
	return out
}

// isList reports whether o is a list option given a value (event-types, on).
func isList(k *sinkkind.Kind, o option) bool {
	set, ok := k.Row(o.key)
	return ok && o.hasValue && set.Flag != "" && (set.Value == sinkkind.EventTypes || set.Value == sinkkind.Transitions)
}

// flagValue reads a --sink option's value, or the target's, as its setting says.
func flagValue(k *sinkkind.Kind, set *sinkkind.Setting, o option) (sinkkind.Value, error) {
	if set.Value == sinkkind.Bool {
		if !o.hasValue {
			return sinkkind.Value{On: true}, nil
		}
		switch o.value {
		case "true":
			return sinkkind.Value{On: true}, nil
		case "false":
			return sinkkind.Value{}, nil
		}
		return sinkkind.Value{}, fmt.Errorf("option %q: want true or false (or just %q), got %q", o.key, o.key, o.value)
	}
	if o.value == "" {
		return sinkkind.Value{}, fmt.Errorf("option %q needs a value: %s=VALUE", o.key, o.key)
	}
	switch set.Value {
	case sinkkind.Count, sinkkind.Buffer:
		n, err := strconv.Atoi(o.value)
		if err != nil || n < 0 {
			return sinkkind.Value{}, fmt.Errorf("option %q: want a non-negative whole number, got %q", o.key, o.value)
		}
		if set.Value == sinkkind.Buffer {
			if err := sinkkind.CheckBuffer(n); err != nil {
				return sinkkind.Value{}, fmt.Errorf("option %q: %w", o.key, err)
			}
		}
		return sinkkind.Value{N: n}, nil
	}
	v, err := set.ParseText(k, o.value)
	switch set.Value {
	case sinkkind.Period, sinkkind.Duration, sinkkind.EventTypes, sinkkind.Transitions:
		// The others' messages say what the value is (a format, a policy, a URL, a
		// command); these would not.
		if err != nil {
			err = fmt.Errorf("option %q: %w", o.key, err)
		}
	}
	return v, err
}

// plainOptionName reports whether an option name can be shown as it is in a hint: a
// name with spaces or control characters would break the one-line error.
func plainOptionName(name string) bool {
	return !strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}
