package sinkkind

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// ValueType is what a setting's value is, which says how --sink and the config file read
// it (each with its own messages), how completion offers it and how the docs describe it.
type ValueType int

const (
	Text        ValueType = iota // any string (Setting.Check may check it)
	Path                         // a file's path ("-": stdout); completed as a path, relative to the config file
	Expr                         // a jq expression; blank is missing
	Bool                         // true or false; a bare --sink option is true
	Count                        // a non-negative integer
	Buffer                       // a buffer size, 0 to MaxBuffer
	Policy                       // an on-full policy
	Period                       // a resync period
	Format                       // an output format the sink's kind takes
	Duration                     // a positive duration (a time limit, a batch interval)
	KindName                     // the config file's type
	Group                        // the config file's mapping of the rows keyed "KEY.SUB" (rotate)
	EventTypes                   // ADDED, MODIFIED, DELETED, SYNC, STALLED, separated by | (or , in the config file)
	Transitions                  // names of transitions (package transition), separated by | or ,
)

// Place is where a kind's row goes among the common settings, in the kind's messages
// and in the docs.
type Place int

const (
	AfterFold   Place = iota // after event-types, on and fold: most rows
	AfterName                // right after name and type: what the sink writes (format, path)
	AfterResync              // after buffer, on-full and resync
)

// MinResync is the shortest resync period accepted. client-go silently raises shorter
// periods to this, so they are refused instead.
const MinResync = time.Second

// MaxBuffer is the largest buffer accepted. A listener allocates its whole buffer up
// front, so an absurd value would exhaust memory rather than fail cleanly.
const MaxBuffer = 1 << 24

// Setting is one row: a setting, its names in --sink and in the config file, what its
// value is, its default and what it means.
type Setting struct {
	Flag  string // key in --sink OPTIONS; "" when only the TARGET sets it
	YAML  string // key in a config file sink, "GROUP.KEY" in a group; "" for --sink only
	Value ValueType
	Meta  string // the value's placeholder in the syntax: NAME, N, DURATION; "" for a boolean
	Help  string // what it is, in one line: completion and the docs
	// Default is the default, for the docs; "" means off or empty.
	Default string
	Place   Place
	// Check checks a Text value further (a URL, a command line); its message says what
	// the value is. ValueDoc then says what the value is, for the docs.
	Check    func(string) error
	ValueDoc string
	// Needs is the key of a row that must be set for this one, in a group, to mean
	// anything (rotation's max-size), and NeedsWhy says so: "needs a maximum size; ...".
	Needs, NeedsWhy string

	set func(*Spec, Value) // a common setting's, stored in the Spec itself
}

// Key names the row: its --sink key, or its config file key.
func (set *Setting) Key() string {
	if set.Flag != "" {
		return set.Flag
	}
	return set.YAML
}

// sameAs reports whether o is the same setting as set, in another kind perhaps: the
// same --sink key and config file key.
func (set *Setting) sameAs(o *Setting) bool {
	return set == o || set.Flag == o.Flag && set.YAML == o.YAML
}

// Syntax is the row as a --sink option: key=META, or the bare key of a boolean.
func (set *Setting) Syntax() string {
	if set.Meta == "" {
		return set.Flag
	}
	return set.Flag + "=" + set.Meta
}

// Value is a setting's value once read, from --sink or from the config file.
type Value struct {
	Text   string
	On     bool
	N      int
	Policy listener.Policy
	Period time.Duration
	Items  []string // event types, or transitions' names
}

// common are the settings every kind takes, stored in the Spec; Kind.all places them.
var common = []*Setting{
	{Flag: "name", YAML: "name", Value: Text, Meta: "NAME", Help: "the sink's name, unique among the sinks (a default name given twice gets -2, -3, ...)",
		set: func(s *Spec, v Value) { s.Name = v.Text }},
	{YAML: "type", Value: KindName, Meta: "KIND", Help: "what the sink writes to", Default: "required"},
	{Flag: "buffer", YAML: "buffer", Value: Buffer, Meta: "N", Help: "events queued for the sink at most",
		Default: fmt.Sprintf("--buffer (%d)", listener.DefaultBuffer), set: func(s *Spec, v Value) { s.Buffer = v.N }},
	{Flag: "on-full", YAML: "onFull", Value: Policy, Meta: "POLICY", Help: "what the sink does when its buffer is full",
		Default: "--on-full (" + listener.Block.String() + ")", set: func(s *Spec, v Value) { s.OnFull = v.Policy }},
	{Flag: "resync", YAML: "resync", Value: Period, Meta: "DURATION", Help: "re-deliver every cached object to this sink this often",
		Default: "--resync (none)", set: func(s *Spec, v Value) { s.Resync = v.Period }},
	{Flag: "event-types", YAML: "eventTypes", Value: EventTypes, Meta: "TYPES", Help: "only these event types; the others count as filtered",
		Default: "all", set: func(s *Spec, v Value) { s.EventTypes = strings.Join(v.Items, "|") }},
	{Flag: "on", YAML: "on", Value: Transitions, Meta: "NAMES", Help: "only events in which one of these transitions happened (kubeevents on lists them); the others count as filtered",
		Default: "all events", set: func(s *Spec, v Value) { s.On = strings.Join(v.Items, "|") }},
	{Flag: "fold", YAML: "fold", Value: Bool, Help: "fold rollouts in progress into ROLLOUT lines (fold=false: every event, whatever --fold-rollouts says)",
		Default: "--fold-rollouts (false)", set: func(s *Spec, v Value) { on := v.On; s.Fold = &on }},
	// A sink with on= groups its events into episodes (package episode).
	{Flag: "group", YAML: "group", Value: Expr, Meta: "JQ", Help: "with on=: what groups events into one episode, a jq expression over the event (with .transition and .controller); null: in none",
		Default: "cluster, namespace, top controller, transition", set: func(s *Spec, v Value) { s.Group = v.Text }},
	{Flag: "cooldown", YAML: "cooldown", Value: Duration, Meta: "DURATION", Help: "with on=: at most one update of an episode per DURATION; the others are counted in it",
		Default: "5m", set: func(s *Spec, v Value) { s.Cooldown = v.Period }},
	{Flag: "resolve-after", YAML: "resolveAfter", Value: Duration, Meta: "DURATION", Help: "with on=: an episode nothing is heard of for DURATION is resolved (and its opposite holds at most this long)",
		Default: "15m", set: func(s *Spec, v Value) { s.ResolveAfter = v.Period }},
	{Flag: "digest", YAML: "digest", Value: Duration, Meta: "DURATION", Help: "with on=: one summary of the open episodes per DURATION instead of their updates",
		Default: "none", set: func(s *Spec, v Value) { s.Digest = v.Period }},
}

// IsCommon reports whether every kind takes the row.
func (set *Setting) IsCommon() bool { return slices.Contains(common, set) }

// Table is every row of the registered kinds, one per setting (Kind.Own), in the order
// the docs list them: a kind's row that an earlier kind did not have goes right before
// the next of the kind's own rows already in the table, and the rows in a group after
// all the others.
func Table() []*Setting {
	var table, grouped []*Setting
	index := func(list []*Setting, set *Setting) int { return slices.IndexFunc(list, set.sameAs) }
	for _, k := range kinds {
		all := k.all()
		for i, set := range all {
			switch {
			case strings.Contains(set.YAML, "."):
				if index(grouped, set) < 0 {
					grouped = append(grouped, set)
				}
				continue
			case index(table, set) >= 0:
				continue
			}
			at := len(table)
			for _, next := range all[i+1:] {
				if j := index(table, next); j >= 0 {
					at = j
					break
				}
			}
			table = slices.Insert(table, at, set)
		}
	}
	return append(table, grouped...)
}

// FlagRow returns the row of a --sink option key, of the first kind that takes it.
func FlagRow(key string) (*Setting, bool) {
	return find(Table(), func(set *Setting) bool { return set.Flag != "" && set.Flag == key })
}

// YAMLRow returns the row of a config file key ("rotate.maxSizeMB" in rotate), of the
// first kind that takes it.
func YAMLRow(key string) (*Setting, bool) {
	return find(Table(), func(set *Setting) bool { return set.YAML != "" && set.YAML == key })
}

// FlagKeys lists the --sink option keys the kind takes.
func (k *Kind) FlagKeys() []string {
	var keys []string
	for _, set := range k.all() {
		if set.Flag != "" {
			keys = append(keys, set.Flag)
		}
	}
	return keys
}

// YAMLKeys lists the config file keys of a sink (prefix "") or of a group ("rotate."),
// without the prefix.
func YAMLKeys(prefix string) []string {
	var keys []string
	for _, set := range Table() {
		if key, ok := strings.CutPrefix(set.YAML, prefix); ok && set.YAML != "" && !strings.Contains(key, ".") {
			keys = append(keys, key)
		}
	}
	return keys
}

// KindsTaking lists the kinds that take a setting of this --sink key: "file", "terminal
// or file".
func KindsTaking(key string) string {
	return OrList(names(func(k *Kind) bool { return k.Takes(key) }))
}

// TakenBy lists the kinds that take the setting: "all", or "exec, http".
func (set *Setting) TakenBy() string {
	if set.IsCommon() {
		return "all"
	}
	return joinComma(set.takers())
}

// KindsTaking lists the kinds that take the setting: "file", "exec or http".
func (set *Setting) KindsTaking() string { return OrList(set.takers()) }

func (set *Setting) takers() []string {
	return names(func(k *Kind) bool { _, ok := k.Own(set); return ok })
}

// OrList is "a", "a or b", "a, b or c".
func OrList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return joinComma(names[:len(names)-1]) + " or " + names[len(names)-1]
}

func joinComma(names []string) string { return strings.Join(names, ", ") }

// ParseText reads a value given as text, as --sink options and targets and the config
// file's strings give it, for a sink of kind k (nil: not known yet, and a format is not
// checked); "" leaves the setting unset (a missing target is reported by the caller),
// except for event types and transitions, which need one. Its errors say what is wrong
// with the value; the callers add which setting it was and where.
func (set *Setting) ParseText(k *Kind, text string) (Value, error) {
	v := Value{Text: text}
	if text == "" && set.Value != EventTypes && set.Value != Transitions {
		return v, nil
	}
	var err error
	switch set.Value {
	case Text, Path, Expr:
		if set.Check != nil {
			err = set.Check(text)
		}
	case Format:
		if k != nil {
			err = k.checkFormat(text)
		}
	case Policy:
		v.Policy, err = listener.ParsePolicy(text)
	case Period, Duration:
		v.Period, err = parseDuration(text, set.Value == Period)
	case EventTypes:
		v.Items, err = parseList(text, func(t string) (string, error) {
			if t = strings.ToUpper(t); !slices.Contains(EventTypeNames, t) {
				return "", fmt.Errorf("%q is not an event type; use ADDED, MODIFIED, DELETED, SYNC or STALLED, separated by |", t)
			}
			return t, nil
		}, "no event type given; use ADDED, MODIFIED, DELETED, SYNC or STALLED, separated by |")
	case Transitions:
		// Transitions' names, which the run looks up among the shipped ones and the
		// config file's.
		v.Items, err = parseList(text, func(name string) (string, error) { return name, transition.CheckName(name) },
			"no transition given; e.g. on=crashloop,oomkilled (kubeevents on lists them)")
	default:
		err = errors.New("cannot be given here")
	}
	return v, err
}

// CheckBuffer checks a buffer size.
func CheckBuffer(n int) error {
	switch {
	case n < 0:
		return fmt.Errorf("must not be negative, got %d", n)
	case n > MaxBuffer:
		return fmt.Errorf("must be at most %d, got %d", MaxBuffer, n)
	}
	return nil
}

// EventTypeNames are the event types a sink's event-types may keep.
var EventTypeNames = []string{"ADDED", "MODIFIED", "DELETED", "SYNC", "STALLED"}

// parseList reads the items of a list, separated by | (--sink options are separated by
// commas) or , (in the config file), each checked once; none is the error without any.
func parseList(s string, check func(string) (string, error), none string) ([]string, error) {
	var items []string
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' || r == ' ' }) {
		item, err := check(item)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(items, item) {
			items = append(items, item)
		}
	}
	if len(items) == 0 {
		return nil, errors.New(none)
	}
	return items, nil
}

// parseDuration reads a positive duration (timeout, batch-interval) or a resync period.
func parseDuration(s string, resync bool) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("invalid duration %q; use a number with a unit, e.g. 30s, 5m or 1h", s)
	case !resync && d <= 0:
		return 0, fmt.Errorf("must be more than 0, got %s", s)
	case d < 0:
		return 0, fmt.Errorf("must not be negative, got %s", d)
	case resync && d > 0 && d < MinResync:
		return 0, fmt.Errorf("%s is too short; use at least %s (client-go would raise it to that), or 0 for no resync", d, MinResync)
	}
	return d, nil
}

// FormatRow is the format setting of a kind that takes formats (Kind.Formats), with its
// default for the docs.
func FormatRow(def string) *Setting {
	return &Setting{Flag: "format", YAML: "format", Value: Format, Meta: "FORMAT", Place: AfterName, Default: def,
		Help: "output format; an http sink's: the receiver's (kubeevents format lists them)"}
}

// Clip shortens a value quoted in a message to its first 60 bytes, and "...".
func Clip(s string) string {
	const limit = 60
	if len(s) <= limit {
		return s
	}
	i := limit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// KindsHelp is the --sink help's line on the kinds and their targets (written from the
// kinds and rows, as completion and the tables of docs/sinks.md by hack/sinkdoc are).
func KindsHelp() string {
	var targets []string
	for _, k := range kinds {
		targets = append(targets, k.TargetDoc+" for "+k.Name)
	}
	return fmt.Sprintf("KIND is %s; TARGET (taken verbatim) is %s.\n", NameList(), joinComma(targets))
}

// OptionsHelp lists the --sink options, grouped by the kinds that take them, in the
// table's order: "name=NAME, buffer=N (all kinds); format=FORMAT (terminal, file)".
func OptionsHelp() string {
	var groups []string
	keys := map[string][]string{}
	for _, set := range Table() {
		if who := set.TakenBy(); set.Flag != "" {
			if who == "all" {
				who = "all kinds"
			}
			if keys[who] == nil {
				groups = append(groups, who)
			}
			keys[who] = append(keys[who], set.Syntax())
		}
	}
	for i, who := range groups {
		groups[i] = joinComma(keys[who]) + " (" + who + ")"
	}
	return strings.Join(groups, "; ")
}

// OptionValues lists the values a --sink option of kind k takes, for completion: its
// formats, the on-full policies, true and false; path reports an option whose value is a
// file's path.
func (k *Kind) OptionValues(key string) (values []string, path bool) {
	set, ok := k.Row(key)
	if !ok || set.Flag == "" {
		return nil, false
	}
	switch set.Value {
	case Format:
		return k.Formats, false
	case Policy:
		return listener.Policies(), false
	case Bool:
		return []string{"true", "false"}, false
	case EventTypes:
		return EventTypeNames, false
	case Transitions:
		return transition.Shipped().Names(), false
	case Path:
		return nil, true
	}
	return nil, false
}
