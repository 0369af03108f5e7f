package notify

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Mark ends a string kubeevents cut so that a request fits its receiver's limit; an
// envelope so cut has "cut": true, and the functions' title ends with " [cut]".
const Mark = "…[cut]"

// cutSteps make an event's envelope smaller, each more than the one before, for an event
// too large for one request: its crash's context first (the oldest of its log lines,
// then the log, then the rest), then long strings and lists, then all of the objects but
// what names them.
var cutSteps = []func(envelope map[string]any) map[string]any{
	func(e map[string]any) map[string]any { return cutContext(e, 10, 200) },
	func(e map[string]any) map[string]any { return cutContext(e, 3, 120) },
	func(e map[string]any) map[string]any { return cutContext(e, 0, 0) },
	func(e map[string]any) map[string]any { return cutValue(e, 1024, 64).(map[string]any) },
	func(e map[string]any) map[string]any { return cutValue(e, 256, 16).(map[string]any) },
	func(e map[string]any) map[string]any { return cutValue(e, 64, 4).(map[string]any) },
	func(e map[string]any) map[string]any { return cutValue(identity(e), 64, 4).(map[string]any) },
}

// cutValue is a copy of v whose strings are at most chars characters (ending in Mark
// when cut) and whose lists keep their first items; v itself is shared and left as it is.
func cutValue(v any, chars, items int) any {
	switch v := v.(type) {
	case string:
		if utf8.RuneCountInString(v) <= chars {
			return v
		}
		keep := chars - utf8.RuneCountInString(Mark)
		i := 0
		for n := 0; n < keep; n++ {
			_, size := utf8.DecodeRuneInString(v[i:])
			i += size
		}
		return v[:i] + Mark
	case []any:
		out := make([]any, min(len(v), items))
		for i := range out {
			out[i] = cutValue(v[i], chars, items)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = cutValue(x, chars, items)
		}
		return out
	}
	return v
}

// identity is the envelope with, of its objects, only what names the object: its
// apiVersion, kind, name, namespace, uid and resourceVersion; the previous object and
// the diff are left out.
func identity(envelope map[string]any) map[string]any {
	out := make(map[string]any, len(envelope))
	for k, v := range envelope {
		switch k {
		case "old", "diff":
		case "object":
			out[k] = objectIdentity(v)
		default:
			out[k] = v
		}
	}
	return out
}

func objectIdentity(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for _, k := range []string{"apiVersion", "kind"} {
		if x, ok := obj[k]; ok {
			out[k] = x
		}
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for _, k := range []string{"name", "namespace", "uid", "resourceVersion"} {
			if x, ok := meta[k]; ok {
				m[k] = x
			}
		}
		out["metadata"] = m
	}
	return out
}

// TooLargeError is an event whose body is over its format's limit even cut as far as it
// goes.
type TooLargeError struct {
	Size  string // the body's size, cut as far as it goes, in the limit's unit
	Limit Limit
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("too large for one request even cut (%s, at most %s)", e.Size, e.Limit)
}

// One is the body for one event (its envelope, as jq.EnvelopeValue gives it) within
// limit: the format's on the event as it is when that fits, else on the envelope cut as
// little as makes it fit, which says so ("cut": true; its long strings end in Mark);
// cut reports that. An event that does not fit even cut is a *TooLargeError.
func (c *Compiled) One(ctx context.Context, envelope map[string]any, limit Limit) (body []byte, cut bool, err error) {
	body, err = c.Body(ctx, []any{envelope})
	if err != nil || limit.Fits(body) {
		return body, false, err
	}
	for _, step := range cutSteps {
		envelope = step(envelope)
		envelope["cut"] = true
		if body, err = c.Body(ctx, []any{envelope}); err != nil || limit.Fits(body) {
			return body, true, err
		}
	}
	return nil, true, &TooLargeError{Size: limit.Size(body), Limit: limit}
}

// IsTooLarge reports whether err says an event was too large for one request.
func IsTooLarge(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}

// cutContext is a copy of the envelope whose crash context keeps the last lines of its
// log, each of at most chars characters (the start of a longer one cut, marked Mark at
// the start), says its log was cut, and keeps its first two Warning Events; lines 0
// leaves the log and the Warning Events out. The envelope itself is shared and left as
// it is.
func cutContext(envelope map[string]any, lines, chars int) map[string]any {
	out := make(map[string]any, len(envelope)+1)
	for k, v := range envelope {
		out[k] = v
	}
	c, ok := envelope["context"].(map[string]any)
	if !ok {
		return out
	}
	cc := make(map[string]any, len(c))
	for k, v := range c {
		cc[k] = v
	}
	out["context"] = cc
	if warnings, ok := cc["warnings"].([]any); ok && len(warnings) > 2 {
		cc["warnings"] = warnings[len(warnings)-2:]
	}
	log, ok := cc["log"].(map[string]any)
	if !ok {
		return out
	}
	if lines == 0 {
		delete(cc, "log")
		delete(cc, "warnings")
		cc["logError"] = "left out to fit the receiver's limit"
		return out
	}
	all, _ := log["lines"].([]any)
	kept := make([]any, 0, lines)
	for _, l := range all[max(len(all)-lines, 0):] {
		s, _ := l.(string)
		if n := utf8.RuneCountInString(s); n > chars {
			r := []rune(s)
			s = "[cut]…" + string(r[n-chars+utf8.RuneCountInString("[cut]…"):])
		}
		kept = append(kept, s)
	}
	cl := make(map[string]any, len(log))
	for k, v := range log {
		cl[k] = v
	}
	cl["lines"], cl["cut"] = kept, true
	cc["log"] = cl
	return out
}
