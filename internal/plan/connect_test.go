package plan

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/internal/diag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// fakeCluster is what Connect reads of a cluster — its kubeconfig, discovery and REST
// mapper — with no cluster behind it: the clientGetter seam.
func fakeCluster() genericclioptions.RESTClientGetter {
	verbs := metav1.Verbs{"get", "list", "watch"}
	disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", ShortNames: []string{"po"}, Verbs: verbs},
			{Name: "nodes", SingularName: "node", Kind: "Node", ShortNames: []string{"no"}, Verbs: verbs},
			{Name: "bindings", SingularName: "binding", Namespaced: true, Kind: "Binding", Verbs: metav1.Verbs{"create"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", ShortNames: []string{"deploy"}, Verbs: verbs},
		}},
	}}}
	kubeconfig := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"local": {Server: "https://127.0.0.1:1"}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {Token: "t"}},
		Contexts:       map[string]*clientcmdapi.Context{"admin": {Cluster: "local", AuthInfo: "admin", Namespace: "web"}},
		CurrentContext: "admin",
	}
	return genericclioptions.NewTestConfigFlags().
		WithClientConfig(clientcmd.NewDefaultClientConfig(kubeconfig, &clientcmd.ConfigOverrides{})).
		WithDiscoveryClient(memory.NewMemCacheClient(disco))
}

// Resolve resolves short names, groups and scope through discovery, takes the
// namespace from the kubeconfig's context, and refuses what cannot be watched.
func TestResolveTypesThroughDiscovery(t *testing.T) {
	resolve := func(types string) (*Plan, error) {
		return Resolve(context.Background(), Kubeconfig{Default: fakeCluster()}, Request{Types: strings.Split(types, ",")}, quiet)
	}
	p, err := resolve("po,deploy,no,pods")
	if err != nil {
		t.Fatal(err)
	}
	c := p.Clusters[0]
	var got []string
	for _, r := range c.Resources {
		got = append(got, r.String())
	}
	if strings.Join(got, " ") != "pods deployments.apps nodes" || c.Namespace() != "web" || p.Several || c.Name != "" {
		t.Errorf("resources %v in namespace %q; want pods deployments.apps nodes (once each) in web, one plain cluster", got, c.Namespace())
	}
	if !c.Resources[0].Namespaced || c.Resources[2].Namespaced {
		t.Errorf("scopes: pods namespaced %v, nodes namespaced %v", c.Resources[0].Namespaced, c.Resources[2].Namespaced)
	}
	for _, tc := range []struct{ types, want string }{
		{"podz", `did you mean "pods"`},
		{"bindings", "watch"},
	} {
		_, err := resolve(tc.types)
		var usage *diag.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want a usage error mentioning %q", tc.types, err, tc.want)
		}
	}
}

// -n a,b is a cluster of two namespaces, in order, each once; --owned takes one.
func TestResolveSeveralNamespaces(t *testing.T) {
	kc := Kubeconfig{Default: fakeCluster()}
	ns := "b,a,b"
	getter := kc.Default.(*genericclioptions.TestConfigFlags)
	getter.WithNamespace(ns)
	p, err := Resolve(context.Background(), kc, Request{Types: []string{"pods"}, Namespace: ns, NamespaceGiven: true}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Clusters[0].Namespaces; !slices.Equal(got, []string{"b", "a"}) || p.Namespace() != "" {
		t.Errorf("namespaces %q, want [b a]", got)
	}
	_, err = Resolve(context.Background(), kc, Request{Types: []string{"pods"}, Names: []string{"web"}, Namespace: ns, NamespaceGiven: true, Owned: true}, quiet)
	var usage *diag.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--owned follows one object in one namespace") {
		t.Errorf("--owned with -n b,a: %v; want a usage error", err)
	}
}

var quiet = Notices{Warn: func(string, ...any) {}, Info: func(string, ...any) {}, Debug: func(string, ...any) {}}

// A checkpoint in ConfigMaps of a watch of Secrets (a type watched, or a followed
// child's) is refused, a usage error that says to keep it in Secrets; of other types it
// is not.
func TestConfigMapCheckpointOfSecretsRefused(t *testing.T) {
	getter := fakeCluster().(*genericclioptions.TestConfigFlags)
	verbs := metav1.Verbs{"get", "list", "watch"}
	getter.WithDiscoveryClient(memory.NewMemCacheClient(&fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", ShortNames: []string{"po"}, Verbs: verbs},
			{Name: "secrets", SingularName: "secret", Namespaced: true, Kind: "Secret", Verbs: verbs},
			{Name: "serviceaccounts", SingularName: "serviceaccount", Namespaced: true, Kind: "ServiceAccount", ShortNames: []string{"sa"}, Verbs: verbs},
		}},
	}}}))
	kc := Kubeconfig{Default: getter}
	for _, tc := range []struct {
		req  Request
		want string // "" for accepted
	}{
		{Request{Types: []string{"secret"}, Features: Features{Resume: "configmap:ck"}}, "--resume configmap:ck: a checkpoint of Secrets holds the key behind the fingerprints of their redacted values, and ConfigMaps may be read by anyone who may view the namespace; keep it in Secrets: --resume secret:ck"},
		{Request{Types: []string{"pods", "secrets"}, ShowSecrets: true, Features: Features{Resume: "configmap:ns/ck"}}, "holds their values (--show-secrets), and ConfigMaps may be read by anyone who may view the namespace; keep it in Secrets: --resume secret:ns/ck"},
		{Request{Types: []string{"sa"}, Names: []string{"build"}, Owned: true, OwnedTypes: []string{"secrets"}, Features: Features{Resume: "configmap:ck"}}, "--resume and --owned do not go together"},
		{Request{Types: []string{"pods"}, Features: Features{Resume: "configmap:ck"}}, ""},
		{Request{Types: []string{"secrets"}}, ""},
	} {
		_, err := Resolve(context.Background(), kc, tc.req, quiet)
		var usage *diag.UsageError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v; want it accepted", tc.req, err)
		case tc.want != "" && (!errors.As(err, &usage) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v; want a usage error with %q", tc.req, err, tc.want)
		}
	}
}
