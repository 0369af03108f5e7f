package catalog

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

type entry struct{ name, program, description string }

var testKind = &Kind[entry]{Noun: "thing", Lister: "kubeevents things", Dir: "shipped", Order: []string{"b", "a"},
	Files: fstest.MapFS{"shipped/a.jq": {Data: []byte("# A.\n.a")}, "shipped/b.jq": {Data: []byte("\n  # B, indented.\n.b")}},
	Check: func(name string) error { return CheckName("thing", name) },
	Make: func(name, program string, _ bool) (entry, error) {
		return entry{name, program, Description(program)}, nil
	},
	Name: func(e entry) string { return e.name }}

// Shipped entries come in their order, the user's replace them by name or follow them
// in name order; an unknown name is an error that lists them by their command.
func TestCatalog(t *testing.T) {
	c, err := New(testKind, map[string]string{"z": ".z", "a": "# Mine.\n.mine", "m": ".m"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Names(), []string{"b", "a", "m", "z"}; !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
	if a, err := c.Lookup("a"); err != nil || a.description != "Mine." {
		t.Errorf("a: %+v, %v; want the user's", a, err)
	}
	if b, _ := c.Lookup("b"); b.description != "B, indented." {
		t.Errorf("b's description %q", b.description)
	}
	if _, err := c.Lookup("mm"); err == nil || !strings.Contains(err.Error(), `unknown thing "mm"`) || !strings.Contains(err.Error(), "kubeevents things lists them") {
		t.Errorf("an unknown name: %v", err)
	}
	if _, err := New(testKind, map[string]string{"Bad": "."}); err == nil || !strings.Contains(err.Error(), `thing name "Bad"`) {
		t.Errorf("a bad name: %v", err)
	}
	if got := testKind.Shipped().Names(); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("shipped alone: %q", got)
	}
}
