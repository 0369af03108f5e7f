package main

import (
	"slices"
	"testing"
)

func TestParseVariants(t *testing.T) {
	names := func(vs []variant) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.name)
		}
		return out
	}
	all, err := parseVariants("all,other=KUBEEVENTS_X+KUBEEVENTS_Y")
	if err != nil {
		t.Fatal(err)
	}
	want := append(names(pieceVariants), "other", "alloff", "control")
	if got := names(all); !slices.Equal(got, want) {
		t.Errorf("all,other=...: %v, want %v", got, want)
	}
	alloff := all[len(all)-2]
	if !slices.Contains(alloff.envs, "KUBEEVENTS_Y") || !slices.Contains(alloff.envs, "KUBEEVENTS_FAST_PATHS") {
		t.Errorf("alloff turns off %v, want every piece's switch and the named ones", alloff.envs)
	}
	if c := all[len(all)-1]; len(c.env()) != 0 {
		t.Errorf("control sets %v, want nothing", c.env())
	}
	for _, bad := range []string{"nope", "x=", "=X"} {
		if _, err := parseVariants(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
