package cmd

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
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

func connectOptions(types string, names ...string) *WatchOptions {
	o := &WatchOptions{Streams: genericiooptions.NewTestIOStreamsDiscard(), clientGetter: fakeCluster(),
		flagsSet: func(string) bool { return false }}
	o.TypeArgs = strings.Split(types, ",")
	o.Names = names
	return o
}

// Connect resolves short names, groups and scope through discovery, takes the
// namespace from the kubeconfig's context, and refuses what cannot be watched.
func TestConnectResolvesTypesThroughDiscovery(t *testing.T) {
	o := connectOptions("po,deploy,no,pods")
	if err := o.Connect(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range o.resources {
		got = append(got, r.String())
	}
	if strings.Join(got, " ") != "pods deployments.apps nodes" || o.namespace != "web" {
		t.Errorf("resources %v in namespace %q; want pods deployments.apps nodes (once each) in web", got, o.namespace)
	}
	if !o.resources[0].Namespaced || o.resources[2].Namespaced {
		t.Errorf("scopes: pods namespaced %v, nodes namespaced %v", o.resources[0].Namespaced, o.resources[2].Namespaced)
	}

	for _, tc := range []struct{ types, want string }{
		{"podz", `did you mean "pods"`},
		{"bindings", "watch"},
	} {
		err := connectOptions(tc.types).Connect()
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want a usage error mentioning %q", tc.types, err, tc.want)
		}
	}
}
