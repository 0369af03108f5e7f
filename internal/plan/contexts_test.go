package plan

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/internal/diag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
		got, err := pickContexts(tc.spec, tc.all, contexts)
		if tc.err != "" {
			var usage *diag.UsageError
			if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q (all %v): error %v, want a usage error with %q", tc.spec, tc.all, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q (all %v) = %q, %v; want %q", tc.spec, tc.all, got, err, tc.want)
		}
	}
	if _, err := pickContexts("", true, nil); err == nil || !strings.Contains(err.Error(), "no contexts") {
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

// Globs match whole context names, across '/' (EKS's contexts are ARNs).
func TestContextGlobsCrossSlashes(t *testing.T) {
	contexts := []string{"arn:aws:eks:eu-west-1:1234:cluster/prod-eu-one", "arn:aws:eks:us-east-1:1234:cluster/prod-us", "local"}
	for spec, want := range map[string][]string{
		"*prod-eu*":   {contexts[0]},
		"*":           {contexts[0], contexts[1], "local"},
		"arn:*/prod*": {contexts[0], contexts[1]},
		"loc?l":       {"local"},
	} {
		got, err := pickContexts(spec, false, contexts)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q = %q, %v; want %q", spec, got, err, want)
		}
	}
}

// Several clusters refuse what follows one object or one cluster.
func TestSeveralClustersRefuse(t *testing.T) {
	for name, req := range map[string]Request{
		"--owned":         {Types: []string{"deploy"}, Names: []string{"web"}, Owned: true},
		"--until-deleted": {Types: []string{"pods"}, Names: []string{"web"}, UntilDeleted: true},
		"--server":        {ClusterFlags: []string{"server"}},
	} {
		req.Context = "a,*" // several, known once the contexts are picked
		_, err := Resolve(context.Background(), Kubeconfig{Default: twoContexts()}, req, quiet)
		var usage *diag.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want a usage error naming it", name, err)
		}
	}
	if got, err := selectContexts(Kubeconfig{Default: twoContexts()}, Request{Context: "a,b"}); err != nil || len(got) != 2 {
		t.Errorf("a plain watch of a,b: %q, %v", got, err)
	}
}

// One plain --context that is not in the kubeconfig is bad usage, with a suggestion, as
// a list is.
func TestOneUnknownContextSuggests(t *testing.T) {
	_, err := selectContexts(Kubeconfig{Default: twoContexts()}, Request{Context: "aa"})
	var usage *diag.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), `no context "aa" in the kubeconfig (did you mean "a"?)`) {
		t.Errorf("--context aa: %v", err)
	}
}

func twoContexts() genericclioptions.RESTClientGetter {
	kubeconfig := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"local": {Server: "https://127.0.0.1:1"}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {Token: "t"}},
		Contexts:       map[string]*clientcmdapi.Context{"a": {Cluster: "local", AuthInfo: "admin"}, "b": {Cluster: "local", AuthInfo: "admin"}},
		CurrentContext: "a",
	}
	return genericclioptions.NewTestConfigFlags().WithClientConfig(clientcmd.NewDefaultClientConfig(kubeconfig, &clientcmd.ConfigOverrides{}))
}
