// Package catalog is a catalog of named jq programs: the ones kubeevents ships (files of
// the package that defines the kind, NAME.jq, in the order they are listed) and the
// user's (the config file's), which replace shipped ones by name and come after them, in
// name order, otherwise. The transitions of --on (package transition) and the formats of
// http sinks (package notify) are each one kind.
package catalog

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/suggest"
)

// Kind is what a catalog holds and how its entries are made.
type Kind[T any] struct {
	Noun   string // what one is called in errors: "transition"
	Lister string // the command that lists them: "kubeevents on"
	// Files holds the shipped programs, Dir/NAME.jq, listed in Order (every file once).
	Files fs.FS
	Dir   string
	Order []string
	// Check reports a name the user's cannot have (CheckName and any of the kind's own).
	Check func(name string) error
	// Make makes an entry of a program, the user's or a shipped one, and checks what it
	// can without compiling it.
	Make func(name, program string, shipped bool) (T, error)
	Name func(T) string
}

// Catalog is the entries of one kind a run knows.
type Catalog[T any] struct {
	kind *Kind[T]
	list []T
}

// New is the shipped entries and the user's (name → program).
func New[T any](kind *Kind[T], user map[string]string) (*Catalog[T], error) {
	c := &Catalog[T]{kind: kind}
	for _, name := range kind.Order {
		src, err := fs.ReadFile(kind.Files, path.Join(kind.Dir, name+".jq"))
		if err != nil {
			return nil, err
		}
		e, err := kind.Make(name, string(src), true)
		if err != nil {
			return nil, err
		}
		c.list = append(c.list, e)
	}
	for _, name := range slices.Sorted(maps.Keys(user)) {
		if err := kind.Check(name); err != nil {
			return nil, err
		}
		e, err := kind.Make(name, user[name], false)
		if err != nil {
			return nil, err
		}
		if i := slices.Index(c.Names(), name); i >= 0 {
			c.list[i] = e
			continue
		}
		c.list = append(c.list, e)
	}
	return c, nil
}

// Shipped is the catalog of the shipped entries alone.
func (kind *Kind[T]) Shipped() *Catalog[T] {
	c, err := New(kind, nil)
	if err != nil {
		panic(err) // the shipped files are checked by the tests
	}
	return c
}

// List is every entry, the shipped ones first.
func (c *Catalog[T]) List() []T { return slices.Clone(c.list) }

// Names lists the entries' names.
func (c *Catalog[T]) Names() []string {
	names := make([]string, len(c.list))
	for i, e := range c.list {
		names[i] = c.kind.Name(e)
	}
	return names
}

// Lookup finds an entry by name; the error says which exist.
func (c *Catalog[T]) Lookup(name string) (T, error) {
	names := c.Names()
	if i := slices.Index(names, name); i >= 0 {
		return c.list[i], nil
	}
	var none T
	return none, fmt.Errorf("unknown %s %q%s; %s lists them", c.kind.Noun, name, suggest.DidYouMean(name, names), c.kind.Lister)
}

// namePattern is what a name may be: it goes into lists (separated by commas or |) and
// into output as it is.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

// CheckName reports a name no entry can have.
func CheckName(noun, name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%s name %q: use lower-case letters, digits and '-', starting with a letter", noun, name)
	}
	return nil
}

// Description is a program's first comment line, without "# "; "" when it starts with
// none.
func Description(program string) string {
	for line := range strings.SplitSeq(program, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if text, ok := strings.CutPrefix(line, "#"); ok {
			return strings.TrimSpace(text)
		}
		return ""
	}
	return ""
}
