package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/listener"
)

// This file holds the checks shared by --sink flags and the config file. Their errors
// say what is wrong with a value; the callers add which setting it was and where.

// valueType is what a setting's value is, which says how --sink and the config file
// read it (each with its own messages) before the setting's assign stores it.
type valueType int

const (
	textValue       valueType = iota // any string
	pathValue                        // a file's path ("-": stdout); completed as a path
	exprValue                        // a jq expression; blank is missing
	boolValue                        // true or false; a bare --sink option is true
	countValue                       // a non-negative integer
	bufferValue                      // a buffer size, 0 to MaxBuffer
	policyValue                      // an on-full policy
	periodValue                      // a resync period
	formatValue                      // an output format the sink's kind takes
	durationValue                    // a positive duration (a time limit, a batch interval)
	urlValue                         // an http:// or https:// URL
	commandValue                     // a command line, split into words as a shell would (quotes, no expansion)
	kindValue                        // the config file's type
	groupValue                       // the config file's rotate: a mapping of the settings named "rotate.KEY"
	eventTypesValue                  // event types: ADDED, MODIFIED, DELETED, separated by | (or , in the config file)
)

// value is a setting's value once read, from --sink or from the config file.
type value struct {
	text   string
	on     bool
	n      int
	policy listener.Policy
	period time.Duration
	types  []string
}

// setting is one sink setting: its names in flags and in the config file, which kinds
// take it, what its value is and where it goes in a Sink. Both --sink and the config
// file parse through this table.
type setting struct {
	flag   string // key in --sink OPTIONS; "" when only the TARGET sets it
	yaml   string // key in a config file sink, "rotate.KEY" under rotate; "" for --sink only
	common bool   // every kind takes it; otherwise the kinds list it in their settings
	value  valueType
	help   string // what it is, for completion
	// text is the field a string setting (text, path, expr, format) is stored in;
	// assign stores the others.
	text   func(s *Sink) *string
	assign func(s *Sink, v value)
}

// set stores v in s.
func (set *setting) set(s *Sink, v value) {
	if set.text != nil {
		*set.text(s) = v.text
		return
	}
	set.assign(s, v)
}

// id names the setting in a Kind's settings: its flag key, or its config file key.
func (s *setting) id() string {
	if s.flag != "" {
		return s.flag
	}
	return s.yaml
}

// settings are the sink settings, in the order messages list them.
var settings = []*setting{
	{flag: "name", yaml: "name", common: true, value: textValue, help: "the sink's name",
		text: func(s *Sink) *string { return &s.Name }},
	{yaml: "type", common: true, value: kindValue},
	{flag: "format", yaml: "format", value: formatValue, help: "output format",
		text: func(s *Sink) *string { return &s.Format }},
	{yaml: "path", value: pathValue,
		text: func(s *Sink) *string { return &s.Path }},
	{yaml: "expr", value: exprValue,
		text: func(s *Sink) *string { return &s.Expr }},
	{flag: "buffer", yaml: "buffer", common: true, value: bufferValue, help: "events queued for the sink at most",
		assign: func(s *Sink, v value) { s.Buffer = v.n }},
	{flag: "on-full", yaml: "onFull", common: true, value: policyValue, help: "what the sink does when its buffer is full",
		assign: func(s *Sink, v value) { s.OnFull = v.policy }},
	{flag: "resync", yaml: "resync", common: true, value: periodValue, help: "re-deliver cached objects this often (30s, 5m, 1h)",
		assign: func(s *Sink, v value) { s.Resync = v.period }},
	{flag: "raw", yaml: "raw", value: boolValue, help: "print string results without quotes",
		assign: func(s *Sink, v value) { s.Raw = v.on }},
	{flag: "output", yaml: "output", value: pathValue, help: "write results to PATH instead of stdout",
		text: func(s *Sink) *string { return &s.Output }},
	{flag: "event-types", yaml: "eventTypes", common: true, value: eventTypesValue, help: "only these event types, e.g. ADDED|DELETED",
		assign: func(s *Sink, v value) { s.EventTypes = strings.Join(v.types, "|") }},
	{yaml: "rotate", value: groupValue},
	{yaml: "command", value: commandValue,
		text: func(s *Sink) *string { return &s.Command }},
	{yaml: "url", value: urlValue,
		text: func(s *Sink) *string { return &s.URL }},
	{flag: "jq", yaml: "jq", value: exprValue, help: "send what this jq expression yields instead of each event's JSON",
		text: func(s *Sink) *string { return &s.Expr }},
	{flag: "batch", yaml: "batch", value: countValue, help: "events per run or request at most",
		assign: func(s *Sink, v value) { s.Batch = v.n }},
	{flag: "batch-bytes", yaml: "batchBytes", value: countValue, help: "bytes per request at most",
		assign: func(s *Sink, v value) { s.BatchBytes = v.n }},
	{flag: "batch-interval", yaml: "batchInterval", value: durationValue, help: "send a batch that is not full after this long (1s)",
		assign: func(s *Sink, v value) { s.BatchInterval = v.period }},
	{flag: "single", yaml: "single", value: boolValue, help: "one JSON object per request, not JSON Lines",
		assign: func(s *Sink, v value) { s.Single = v.on }},
	{flag: "timeout", yaml: "timeout", value: durationValue, help: "time limit per run (exec: 30s) or request (http: 10s)",
		assign: func(s *Sink, v value) { s.Timeout = v.period }},
	{flag: "retries", yaml: "retries", value: countValue, help: "retries of a failed run or request",
		assign: func(s *Sink, v value) { n := v.n; s.Retries = &n }},
	{flag: "concurrency", yaml: "concurrency", value: countValue, help: "runs at once at most (each object's events stay in order)",
		assign: func(s *Sink, v value) { s.Concurrency = v.n }},
	{flag: "header", yaml: "headers", value: textValue, help: "request headers: NAME=env:VAR, NAME=file:PATH or NAME=TEXT, separated by ';'",
		text: func(s *Sink) *string { return &s.Headers }},
	{flag: "ca-file", yaml: "caFile", value: pathValue, help: "CA certificates to verify the server with (PEM)",
		text: func(s *Sink) *string { return &s.CAFile }},
	{flag: "cert-file", yaml: "certFile", value: pathValue, help: "client certificate (PEM)",
		text: func(s *Sink) *string { return &s.CertFile }},
	{flag: "key-file", yaml: "keyFile", value: pathValue, help: "client certificate's key (PEM)",
		text: func(s *Sink) *string { return &s.KeyFile }},
	{flag: "max-size", yaml: "rotate.maxSizeMB", value: countValue, help: "rotate the file at this many megabytes",
		assign: func(s *Sink, v value) { s.Rotate.MaxSizeMB = v.n }},
	{flag: "max-backups", yaml: "rotate.maxBackups", value: countValue, help: "rotated files kept at most",
		assign: func(s *Sink, v value) { s.Rotate.MaxBackups = v.n }},
	{flag: "max-age", yaml: "rotate.maxAgeDays", value: countValue, help: "days rotated files are kept at most",
		assign: func(s *Sink, v value) { s.Rotate.MaxAgeDays = v.n }},
	{flag: "compress", yaml: "rotate.compress", value: boolValue, help: "gzip rotated files",
		assign: func(s *Sink, v value) { s.Rotate.Compress = v.on }},
}

// settingByID returns the setting a Kind names.
func settingByID(id string) (*setting, bool) {
	for _, s := range settings {
		if s.id() == id {
			return s, true
		}
	}
	return nil, false
}

// flagSetting returns the setting a --sink option key names.
func flagSetting(key string) (*setting, bool) {
	for _, s := range settings {
		if s.flag != "" && s.flag == key {
			return s, true
		}
	}
	return nil, false
}

// yamlSetting returns the setting a config file sink key names ("rotate.maxSizeMB"
// under rotate).
func yamlSetting(key string) (*setting, bool) {
	for _, s := range settings {
		if s.yaml != "" && s.yaml == key {
			return s, true
		}
	}
	return nil, false
}

// flagKeys lists the --sink option keys valid for kind.
func flagKeys(kind string) []string {
	k, ok := LookupKind(kind)
	if !ok {
		return nil
	}
	var keys []string
	for _, s := range settings {
		if s.flag != "" && k.takes(s) {
			keys = append(keys, s.flag)
		}
	}
	return keys
}

// yamlKeys lists the config file keys of a sink (prefix "") or of its group prefix
// ("rotate."), without the prefix.
func yamlKeys(prefix string) []string {
	var keys []string
	for _, s := range settings {
		if key, ok := strings.CutPrefix(s.yaml, prefix); ok && s.yaml != "" && !strings.Contains(key, ".") {
			keys = append(keys, key)
		}
	}
	return keys
}

// kindsTaking lists the kinds that take the setting, as "file" or "terminal or file".
func kindsTaking(set *setting) string {
	var names []string
	for _, k := range kinds {
		if k.takes(set) {
			names = append(names, k.Name)
		}
	}
	return orList(names)
}

// orList is "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// checkFormat checks a sink's format against its kind; "" is not checked.
func checkFormat(kind, format string) error {
	k, ok := LookupKind(kind)
	if !ok {
		return fmt.Errorf("unknown sink kind %q", kind)
	}
	return k.checkFormat(format)
}

func checkBuffer(n int) error {
	if n < 0 {
		return fmt.Errorf("must not be negative, got %d", n)
	}
	if n > MaxBuffer {
		return fmt.Errorf("must be at most %d, got %d", MaxBuffer, n)
	}
	return nil
}

// EventTypeNames are the event types a sink's event-types may keep.
var EventTypeNames = []string{"ADDED", "MODIFIED", "DELETED"}

// parseEventTypes reads ADDED|DELETED (or ADDED,DELETED in the config file): --sink
// options are separated by commas, so "|" separates the types there.
func parseEventTypes(s string) ([]string, error) {
	var types []string
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' || r == ' ' }) {
		t = strings.ToUpper(t)
		if !slices.Contains(EventTypeNames, t) {
			return nil, fmt.Errorf("%q is not an event type; use ADDED, MODIFIED or DELETED, separated by |", t)
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return nil, errors.New("no event type given; use ADDED, MODIFIED or DELETED, separated by |")
	}
	return types, nil
}

// durationHint is appended to duration errors.
const durationHint = "use a number with a unit, e.g. 30s, 5m or 1h"

func parseResync(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q; %s", s, durationHint)
	}
	return d, checkResync(d)
}

func checkResync(d time.Duration) error {
	switch {
	case d < 0:
		return fmt.Errorf("must not be negative, got %s", d)
	case d > 0 && d < MinResync:
		return fmt.Errorf("%s is too short; use at least %s (client-go would raise it to that), or 0 for no resync", d, MinResync)
	}
	return nil
}

// parseDuration reads a positive duration (timeout, batch-interval).
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q; %s", s, durationHint)
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be more than 0, got %s", s)
	}
	return d, nil
}

// checkURL checks an http sink's URL: absolute, http or https, with a host.
func checkURL(s string) error {
	if !strings.Contains(s, "://") {
		return fmt.Errorf("URL %q has no http:// or https:// scheme; write it in full, e.g. https://%s", clip(s), clip(strings.TrimPrefix(s, "//")))
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("invalid URL %q; use http://HOST[:PORT]/PATH or https://HOST[:PORT]/PATH", clip(s))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL scheme %q is not supported; use http:// or https://", u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("URL %q has no host; use %s://HOST[:PORT]/PATH", u.Redacted(), u.Scheme)
	}
	return nil
}

// SplitCommand splits an exec sink's command line into words as a shell would split
// it, with no shell: words are separated by blanks, and single or double quotes keep
// blanks in a word ('\' escapes the next character outside single quotes). Nothing is
// expanded: no $VAR, no globs, no pipes. For those, ask for a shell: sh -c '...'.
func SplitCommand(line string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated ' in the command; close it")
			}
			word.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`+"`", line[i+1]) >= 0 {
					i++
				}
				word.WriteByte(line[i])
			}
			if i == len(line) {
				return nil, errors.New(`unterminated " in the command; close it`)
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inWord = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}

// errRotateNeedsSize is reported when rotation settings are given without a size, as
// rotation is off then and they would do nothing.
var errRotateNeedsSize = errors.New("needs a maximum size; rotation is off without one")
