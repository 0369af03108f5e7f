package config

import (
	"slices"
	"strings"
	"testing"
)

// The config file's health rules: a program alone, or a program and what the kind owns;
// bad keys and empty rules are refused where they are.
func TestHealthRules(t *testing.T) {
	f, err := Parse("c.yaml", []byte(`health:
  Widget.example.com: '.object.status.state | {status: "Current"}'
  MyApp.example.com:
    jq: 'null'
    owns: [deployments.apps, pods]
  Gadget.example.com:
    owns: statefulsets.apps, pods
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Health["Widget.example.com"]; !strings.Contains(got.Program, "state") || got.Owns != nil {
		t.Errorf("Widget: %+v", got)
	}
	if got := f.Health["MyApp.example.com"]; got.Program != "null" || !slices.Equal(got.Owns, []string{"deployments.apps", "pods"}) {
		t.Errorf("MyApp: %+v", got)
	}
	if got := f.Health["Gadget.example.com"]; !slices.Equal(got.Owns, []string{"statefulsets.apps", "pods"}) {
		t.Errorf("Gadget: %+v", got)
	}
	for _, tc := range []struct{ doc, want string }{
		{"health:\n  myapps.example.com: 'null'\n", `c.yaml:2:3: health rule "myapps.example.com": give the kind as KIND.GROUP`},
		{"health:\n  MyApp.example.com:\n    jq: ''\n", `c.yaml:3:5: health.MyApp.example.com: want a jq program (jq) or the types its controller creates (owns), got nothing`},
		{"health:\n  MyApp.example.com:\n    program: x\n", `c.yaml:3:5: unknown field "program" in health.MyApp.example.com`},
		{"health: [a]\n", `c.yaml:1:9: health: want a mapping of kinds (KIND.GROUP) to rules, got a list`},
	} {
		if _, err := Parse("c.yaml", []byte(tc.doc)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %s", tc.doc, err, tc.want)
		}
	}
}
