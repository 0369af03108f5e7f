package cmd

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSelectContexts(t *testing.T) {
	contexts := []string{"prod-eu", "prod-us", "staging", "dev"}
	for _, tc := range []struct {
		spec string
		all  bool
		want []string
		err  string
	}{
		{spec: "staging,prod-eu", want: []string{"staging", "prod-eu"}},            // in the order given
		{spec: "prod-*", want: []string{"prod-eu", "prod-us"}},                     // a glob, in name order
		{spec: "prod-*,prod-eu, dev", want: []string{"prod-eu", "prod-us", "dev"}}, // each once
		{spec: "stag?ng", want: []string{"staging"}},
		{all: true, want: []string{"dev", "prod-eu", "prod-us", "staging"}},
		{spec: "prod-eu,stagin", err: `no context "stagin" in the kubeconfig (did you mean "staging"?); the contexts are: dev, prod-eu, prod-us, staging`},
		{spec: "qa-*", err: `"qa-*" matches none of the kubeconfig's contexts (dev, prod-eu, prod-us, staging)`},
		{spec: "[", err: "not a valid glob"},
		{spec: ",", err: "names no context"},
		{spec: "dev", all: true, err: "--all-contexts and --context"},
	} {
		got, err := selectContexts(tc.spec, tc.all, contexts)
		if tc.err != "" {
			var usage *UsageError
			if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q (all %v): error %v, want a usage error with %q", tc.spec, tc.all, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q (all %v) = %q, %v; want %q", tc.spec, tc.all, got, err, tc.want)
		}
	}
	if _, err := selectContexts("", true, nil); err == nil || !strings.Contains(err.Error(), "no contexts") {
		t.Errorf("--all-contexts without contexts: %v", err)
	}
}

// One plain name is today's --context: it is left to client-go, output unchanged.
func TestSeveralContexts(t *testing.T) {
	for spec, want := range map[string]bool{"": false, "prod": false, "a,b": true, "prod-*": true, "p?": true} {
		if got := severalContexts(spec, false); got != want {
			t.Errorf("severalContexts(%q) = %v, want %v", spec, got, want)
		}
	}
	if !severalContexts("", true) {
		t.Error("--all-contexts is several")
	}
}

// Several clusters refuse what follows one object; --resume keeps one section per cluster.
func TestSeveralClustersRefuse(t *testing.T) {
	for name, o := range map[string]*WatchOptions{
		"--owned":         {Owned: ownedFlags{Owned: true}},
		"--until-deleted": {UntilDeleted: true},
	} {
		err := o.checkSeveralClusters()
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want a usage error naming it", name, err)
		}
	}
	o := &WatchOptions{flagsSet: func(name string) bool { return name == "server" }}
	if err := o.checkSeveralClusters(); err == nil || !strings.Contains(err.Error(), "--server") {
		t.Errorf("--server: %v", err)
	}
	if err := (&WatchOptions{Resume: "ckpt"}).checkSeveralClusters(); err != nil {
		t.Errorf("a plain watch with --resume: %v", err)
	}
}
