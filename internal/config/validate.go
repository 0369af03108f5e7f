package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// This file holds the checks shared by --sink flags and the config file. Their errors
// say what is wrong with a value; the callers add which setting it was and where.

// valueType is what a setting's value is, which says how --sink and the config file
// read it (each with its own messages) before the setting's assign stores it.
type valueType int

const (
	textValue        valueType = iota // any string
	pathValue                         // a file's path ("-": stdout); completed as a path
	exprValue                         // a jq expression; blank is missing
	boolValue                         // true or false; a bare --sink option is true
	countValue                        // a non-negative integer
	bufferValue                       // a buffer size, 0 to MaxBuffer
	policyValue                       // an on-full policy
	periodValue                       // a resync period
	formatValue                       // an output format the sink's kind takes
	durationValue                     // a positive duration (a time limit, a batch interval)
	urlValue                          // an http:// or https:// URL
	commandValue                      // a command line, split into words as a shell would (quotes, no expansion)
	kindValue                         // the config file's type
	groupValue                        // the config file's rotate: a mapping of the settings named "rotate.KEY"
	eventTypesValue                   // event types: ADDED, MODIFIED, DELETED, separated by | (or , in the config file)
	transitionsValue                  // names of transitions (package transition), separated by | or ,
)

// value is a setting's value once read, from --sink or from the config file.
type value struct {
	text   string
	on     bool
	n      int
	policy listener.Policy
	period time.Duration
	types  []string // event types, or transitions' names
}

// setting is one sink setting: its names in flags and in the config file, which kinds
// take it, what its value is, its default, what it means and where it goes in a Sink.
// This table is the one description of the sink settings: --sink and the config file
// parse through it, completion offers it, and it writes the --sink flag's help
// (SinkSyntaxHelp) and the settings table of docs/sinks.md (SettingsMarkdown).
type setting struct {
	flag   string // key in --sink OPTIONS; "" when only the TARGET sets it
	yaml   string // key in a config file sink, "rotate.KEY" under rotate; "" for --sink only
	common bool   // every kind takes it; otherwise the kinds list it in their settings
	value  valueType
	meta   string // the value's placeholder in the syntax: NAME, N, DURATION; "" for a boolean
	help   string // what it is, in one line: completion and the docs
	// def is the default for a sink of kind k, for the docs; "" when unset means off or
	// empty. It reads the same constants as Build.
	def func(k *Kind) string
	// text is the field a string setting (text, path, expr, format) is stored in;
	// assign stores the others.
	text   func(s *Sink) *string
	assign func(s *Sink, v value)
}

// always is a default that is the same for every kind.
func always(text string) func(*Kind) string { return func(*Kind) string { return text } }

// perKind is a default that depends on the kind: text[kind], "" for the others.
func perKind(text map[string]string) func(*Kind) string {
	return func(k *Kind) string { return text[k.Name] }
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

// settings are the sink settings, in the order messages, the --sink help and the docs
// list them.
var settings = []*setting{
	{flag: "name", yaml: "name", common: true, value: textValue, meta: "NAME", help: "the sink's name, unique among the sinks (a default name given twice gets -2, -3, ...)",
		def:  func(k *Kind) string { return k.nameDoc },
		text: func(s *Sink) *string { return &s.Name }},
	{yaml: "type", common: true, value: kindValue, meta: "KIND", help: "what the sink writes to", def: always("required")},
	{flag: "format", yaml: "format", value: formatValue, meta: "FORMAT", help: "output format; an http sink's: the receiver's (kubeevents format lists them)",
		def: func(k *Kind) string {
			switch {
			case k.namedFormats:
				return "none: JSON Lines"
			case k.defaultFormat == "":
				return "-o's format"
			}
			return string(k.defaultFormat)
		},
		text: func(s *Sink) *string { return &s.Format }},
	{yaml: "path", value: pathValue, meta: "PATH", help: `the file written ("-": stdout)`, def: always("required"),
		text: func(s *Sink) *string { return &s.Path }},
	{yaml: "expr", value: exprValue, meta: "EXPR", help: "the jq expression whose results are written", def: always("required"),
		text: func(s *Sink) *string { return &s.Expr }},
	{flag: "buffer", yaml: "buffer", common: true, value: bufferValue, meta: "N", help: "events queued for the sink at most",
		def:    always(fmt.Sprintf("--buffer (%d)", listener.DefaultBuffer)),
		assign: func(s *Sink, v value) { s.Buffer = v.n }},
	{flag: "on-full", yaml: "onFull", common: true, value: policyValue, meta: "POLICY", help: "what the sink does when its buffer is full",
		def:    always("--on-full (" + listener.Block.String() + ")"),
		assign: func(s *Sink, v value) { s.OnFull = v.policy }},
	{flag: "resync", yaml: "resync", common: true, value: periodValue, meta: "DURATION", help: "re-deliver every cached object to this sink this often",
		def:    always("--resync (none)"),
		assign: func(s *Sink, v value) { s.Resync = v.period }},
	{flag: "raw", yaml: "raw", value: boolValue, help: "print string results without quotes", def: always("false"),
		assign: func(s *Sink, v value) { s.Raw = v.on }},
	{flag: "output", yaml: "output", value: pathValue, meta: "PATH", help: "write results to PATH instead of stdout",
		def:  always("stdout"),
		text: func(s *Sink) *string { return &s.Output }},
	{flag: "event-types", yaml: "eventTypes", common: true, value: eventTypesValue, meta: "TYPES", help: "only these event types; the others count as filtered",
		def:    always("all"),
		assign: func(s *Sink, v value) { s.EventTypes = strings.Join(v.types, "|") }},
	{flag: "on", yaml: "on", common: true, value: transitionsValue, meta: "NAMES", help: "only events in which one of these transitions happened (kubeevents on lists them); the others count as filtered",
		def:    always("all events"),
		assign: func(s *Sink, v value) { s.On = strings.Join(v.types, "|") }},
	{flag: "fold", yaml: "fold", common: true, value: boolValue, help: "fold rollouts in progress into ROLLOUT lines (fold=false: every event, whatever --fold-rollouts says)",
		def:    always("--fold-rollouts (false)"),
		assign: func(s *Sink, v value) { on := v.on; s.Fold = &on }},
	{yaml: "rotate", value: groupValue},
	{yaml: "command", value: commandValue, meta: "COMMAND", help: "the command run with the events on its stdin", def: always("required"),
		text: func(s *Sink) *string { return &s.Command }},
	{yaml: "url", value: urlValue, meta: "URL", help: "where the events are POSTed", def: always("required"),
		text: func(s *Sink) *string { return &s.URL }},
	{flag: "jq", yaml: "jq", value: exprValue, meta: "EXPR", help: "send what this jq expression yields instead of each event's JSON line", def: always("none"),
		text: func(s *Sink) *string { return &s.Expr }},
	{flag: "batch", yaml: "batch", value: countValue, meta: "N", help: "events per run or request at most",
		def:    perKind(map[string]string{KindExec: "1", KindHTTP: strconv.Itoa(DefaultHTTPBatch)}),
		assign: func(s *Sink, v value) { s.Batch = v.n }},
	{flag: "batch-bytes", yaml: "batchBytes", value: countValue, meta: "N", help: "bytes per request at most (a larger event goes alone)",
		def:    always(strconv.Itoa(DefaultHTTPBytes)),
		assign: func(s *Sink, v value) { s.BatchBytes = v.n }},
	{flag: "batch-interval", yaml: "batchInterval", value: durationValue, meta: "DURATION", help: "send a batch that is not full this long after its first event",
		def:    always(DefaultBatchInterval.String()),
		assign: func(s *Sink, v value) { s.BatchInterval = v.period }},
	{flag: "single", yaml: "single", value: boolValue, help: "one JSON document per request (application/json), not JSON Lines", def: always("false"),
		assign: func(s *Sink, v value) { s.Single = v.on }},
	{flag: "timeout", yaml: "timeout", value: durationValue, meta: "DURATION", help: "time limit per run (then killed) or request",
		def:    perKind(map[string]string{KindExec: DefaultExecTimeout.String(), KindHTTP: DefaultHTTPTimeout.String()}),
		assign: func(s *Sink, v value) { s.Timeout = v.period }},
	{flag: "retries", yaml: "retries", value: countValue, meta: "N", help: "retries of a failed run or request before its events count as failed",
		def: perKind(map[string]string{KindExec: strconv.Itoa(DefaultExecRetries),
			KindHTTP: fmt.Sprintf("no limit under on-full block or coalesce (retried until the receiver answers), else %d", DefaultHTTPRetries)}),
		assign: func(s *Sink, v value) { n := v.n; s.Retries = &n }},
	{flag: "concurrency", yaml: "concurrency", value: countValue, meta: "N", help: "runs at once at most; each object's events stay in order",
		def:    always("1"),
		assign: func(s *Sink, v value) { s.Concurrency = v.n }},
	{flag: "header", yaml: "headers", value: textValue, meta: "HEADERS", help: "request headers, NAME=REF separated by ';', REF being env:VAR, file:PATH (read again when it changes) or the text itself", def: always("none"),
		text: func(s *Sink) *string { return &s.Headers }},
	{flag: "ca-file", yaml: "caFile", value: pathValue, meta: "PATH", help: "CA certificates (PEM) that verify the server",
		def:  always("the system's"),
		text: func(s *Sink) *string { return &s.CAFile }},
	{flag: "cert-file", yaml: "certFile", value: pathValue, meta: "PATH", help: "client certificate (PEM), with key-file", def: always("none"),
		text: func(s *Sink) *string { return &s.CertFile }},
	{flag: "key-file", yaml: "keyFile", value: pathValue, meta: "PATH", help: "client certificate's key (PEM), with cert-file", def: always("none"),
		text: func(s *Sink) *string { return &s.KeyFile }},
	{flag: "max-size", yaml: "rotate.maxSizeMB", value: countValue, meta: "MB", help: "rotate the file at this many megabytes",
		def:    always("no rotation"),
		assign: func(s *Sink, v value) { s.Rotate.MaxSizeMB = v.n }},
	{flag: "max-backups", yaml: "rotate.maxBackups", value: countValue, meta: "N", help: "rotated files kept at most (needs max-size)",
		def:    always("all"),
		assign: func(s *Sink, v value) { s.Rotate.MaxBackups = v.n }},
	{flag: "max-age", yaml: "rotate.maxAgeDays", value: countValue, meta: "DAYS", help: "days a rotated file is kept at most (needs max-size)",
		def:    always("no limit"),
		assign: func(s *Sink, v value) { s.Rotate.MaxAgeDays = v.n }},
	{flag: "compress", yaml: "rotate.compress", value: boolValue, help: "gzip rotated files (needs max-size)", def: always("false"),
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

// parseText reads a value given as text, as --sink options and targets and the config
// file's strings give it; "" leaves the setting unset (a missing target is reported by
// the caller), except for event types, which need one. Its errors say what is wrong
// with the value; the callers add which setting it was and where.
func parseText(kind string, vt valueType, text string) (value, error) {
	v := value{text: text}
	if text == "" && vt != eventTypesValue && vt != transitionsValue {
		return v, nil
	}
	var err error
	switch vt {
	case textValue, pathValue, exprValue:
	case formatValue:
		if kind != "" { // else the missing type is reported
			err = checkFormat(kind, text)
		}
	case urlValue:
		err = checkURL(text)
	case commandValue:
		_, err = SplitCommand(text)
	case policyValue:
		v.policy, err = listener.ParsePolicy(text)
	case periodValue:
		v.period, err = parseResync(text)
	case durationValue:
		v.period, err = parseDuration(text)
	case eventTypesValue:
		v.types, err = parseEventTypes(text)
	case transitionsValue:
		v.types, err = parseTransitionNames(text)
	default:
		err = errors.New("cannot be given here")
	}
	if err != nil {
		return value{}, err
	}
	return v, nil
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
var EventTypeNames = []string{"ADDED", "MODIFIED", "DELETED", "SYNC", "STALLED"}

// parseEventTypes reads ADDED|DELETED (or ADDED,DELETED in the config file): --sink
// options are separated by commas, so "|" separates the types there.
func parseEventTypes(s string) ([]string, error) {
	var types []string
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' || r == ' ' }) {
		t = strings.ToUpper(t)
		if !slices.Contains(EventTypeNames, t) {
			return nil, fmt.Errorf("%q is not an event type; use ADDED, MODIFIED, DELETED, SYNC or STALLED, separated by |", t)
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return nil, errors.New("no event type given; use ADDED, MODIFIED, DELETED, SYNC or STALLED, separated by |")
	}
	return types, nil
}

// parseTransitionNames reads crashloop|oomkilled (or crashloop,oomkilled): transitions'
// names, which the run looks up among the shipped ones and the config file's.
func parseTransitionNames(s string) ([]string, error) {
	var names []string
	for _, name := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' || r == ' ' }) {
		if err := transition.CheckName(name); err != nil {
			return nil, err
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("no transition given; e.g. on=crashloop,oomkilled (kubeevents on lists them)")
	}
	return names, nil
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
