// Package sinkkind is the registry of the output sink kinds. Each kind (terminal, file,
// jq, exec, http: a package below this one, listed by package kinds) declares its
// settings beyond the common ones as rows (keys, value, placeholder, default, meaning),
// its --sink target, formats and default name, and how a sink of it is compiled,
// checked and built. Package config parses --sink and the config file through the rows,
// which also write the --sink help, completion and the tables of docs/sinks.md. A sink
// as read is a Spec; the run builds every sink with Build.
package sinkkind

import (
	"fmt"
	"slices"

	"github.com/kubeevents/kubeevents/internal/listener"
)

// Kind is one sink kind.
type Kind struct {
	Name string // --sink's KIND, a config file sink's type
	// Description says what it writes to ("a file"); TargetHint follows it for "KIND="
	// in completion (": file=PATH"), AfterOptions for a closed option list ("then the
	// file's PATH"; "" when it needs no target).
	Description, TargetHint, AfterOptions string
	// Target is the Key of the row =TARGET sets, OptionalTarget that it may be left out;
	// TargetNoun names it in messages ("a path"), TargetDoc in the help and the docs.
	Target                string
	OptionalTarget        bool
	TargetNoun, TargetDoc string
	NameDoc               string     // the default name, for the docs too, unless DefaultName gives it
	Rows                  []*Setting // beyond the common ones, in its messages' order
	// Formats are the formats it can be written in, the default first. DefaultFormat is
	// set on a sink that gives none ("" leaves it to the caller: the terminal's is -o's).
	// MoreFormats says what else a format may be ("a template"), FormatsNote how that is
	// written, for the docs; with NamedFormats the config file's formats: add to them.
	Formats                  []string
	DefaultFormat            string
	MoreFormats, FormatsNote string
	NamedFormats             bool
	CheckFormat              func(k *Kind, format string) error // nil: one of Formats
	Output                   string                             // the row naming the file it writes ("-": stdout)
	Elsewhere                bool                               // it never writes to stdout
	New                      func() Settings
	DefaultName              func(Settings) string // nil: NameDoc
	// Compile compiles and completes the settings once read (a jq expression, a format),
	// with what the command line and the config file give every sink; errors are bad
	// usage. Check checks what the sink needs of the machine (a command, files), for
	// config validate. ToStdout refuses a sink whose output turned out to be stdout
	// where it cannot write as set (a file that rotates). These three and Reads may be nil.
	Compile  func(Settings, Compiling) error
	Check    func(Settings) error
	ToStdout func(s Spec, path string) error
	Reads    func(Settings) Reads
	Build    func(Spec, Env) (listener.Sink, error)
}

// Reads is what a sink reads of the events beyond their JSON and metadata: the typed
// objects (kubectl's columns and templates, jq programs; a replay reads only the
// recorded objects' metadata otherwise), and the custom resources' printer columns.
type Reads struct{ Objects, Columns bool }

// Settings are a sink's settings of its kind's own: a pointer to a struct of the kind's
// type whose fields are tagged with the Key of the row that sets them (`sink:"path"`):
// strings, booleans, ints (*int: unset is nil) and time.Durations.
type Settings any

// kinds are the registered kinds, in the order messages, completion and the docs list
// them.
var kinds []*Kind

// Register adds a kind, after those registered before it.
func Register(k *Kind) {
	if _, ok := Lookup(k.Name); ok {
		panic(fmt.Sprintf("sink kind %q registered twice", k.Name))
	}
	kinds = append(kinds, k)
}

// Kinds returns the registered kinds, in order.
func Kinds() []*Kind { return kinds }

// Lookup returns the registered kind called name.
func Lookup(name string) (*Kind, bool) {
	return find(kinds, func(k *Kind) bool { return k.Name == name })
}

// find returns the first item of list that matches.
func find[T any](list []T, match func(T) bool) (T, bool) {
	if i := slices.IndexFunc(list, match); i >= 0 {
		return list[i], true
	}
	var none T
	return none, false
}

// Names lists the registered kinds' names.
func Names() []string { return names(func(*Kind) bool { return true }) }

// names lists the names of the kinds that match.
func names(match func(*Kind) bool) []string {
	var names []string
	for _, k := range kinds {
		if match(k) {
			names = append(names, k.Name)
		}
	}
	return names
}

// NameList is "terminal, file or jq".
func NameList() string { return OrList(Names()) }

// Row returns the row of a key among the settings the kind takes, the common ones too.
func (k *Kind) Row(key string) (*Setting, bool) {
	return find(k.all(), func(set *Setting) bool { return set.Key() == key })
}

// Takes reports whether the kind takes a setting of this key.
func (k *Kind) Takes(key string) bool {
	_, ok := k.Row(key)
	return ok
}

// Own returns the kind's row of the same setting as set: the same --sink key and config
// file key. Two kinds may give one --sink key settings of their own (a file's max-size
// in megabytes rotates it, a store's is a size that bounds it), told apart by their
// config file keys.
func (k *Kind) Own(set *Setting) (*Setting, bool) {
	return find(k.all(), set.sameAs)
}

// YAMLRow returns the kind's row of a config file key.
func (k *Kind) YAMLRow(key string) (*Setting, bool) {
	return find(k.all(), func(set *Setting) bool { return set.YAML != "" && set.YAML == key })
}

// TargetRow is the row =TARGET sets.
func (k *Kind) TargetRow() *Setting {
	set, _ := k.Row(k.Target)
	return set
}

// checkFormat checks a format given to a sink of the kind.
func (k *Kind) checkFormat(format string) error {
	switch {
	case k.CheckFormat != nil:
		return k.CheckFormat(k, format)
	case !slices.Contains(k.Formats, format):
		return fmt.Errorf("unknown output format %q; use one of: %s", format, joinComma(k.Formats))
	}
	return nil
}

// all are the settings the kind takes, in its messages' order: name and type, its rows
// placed AfterName, buffer, on-full and resync, those placed AfterResync, event-types,
// on and fold, then its other rows.
func (k *Kind) all() []*Setting {
	rows := common[:2:2]
	for _, place := range []Place{AfterName, AfterResync, AfterFold} {
		for _, set := range k.Rows {
			if set.Place == place {
				rows = append(rows, set)
			}
		}
		switch place {
		case AfterName:
			rows = append(rows, common[2:5]...)
		case AfterResync:
			rows = append(rows, common[5:]...)
		}
	}
	return rows
}

// NameOf is the name of a sink of the kind that is given none.
func (k *Kind) NameOf(s Settings) string {
	if k.DefaultName == nil {
		return k.NameDoc
	}
	return k.DefaultName(s)
}
