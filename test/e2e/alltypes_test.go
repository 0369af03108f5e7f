package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWatchAllTypesPicksUpNewCRDs: watch --all-types streams the types kubectl's all
// leaves out (ConfigMaps), and the custom resources of a definition created while it
// runs; its store sink records them, for get --store.
func TestWatchAllTypesPicksUpNewCRDs(t *testing.T) {
	ns := newNamespace(t)
	db := filepath.Join(t.TempDir(), "events.db")
	s := startKubeevents(t, "watch", "--all-types", "-n", ns, "-o", "json", "--sink", "store="+db, "-v=1")
	s.waitStderr(30*time.Second, literal("watching"))

	applyJSON(t, ns, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain"},"data":{"a":"1"}}`)
	s.waitJSON(eventWait, "ADDED configmap plain", func(ev envelope) bool {
		return ev.Type == "ADDED" && ev.meta().Kind == "ConfigMap" && ev.name() == "plain"
	})

	group := "at" + randomHex(4) + ".e2e.kubeevents.dev"
	crdName := "lamps." + group
	applyJSON(t, "", fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":%q},
 "spec":{"group":%q,"scope":"Namespaced",
  "names":{"plural":"lamps","singular":"lamp","kind":"Lamp"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, crdName, group))
	t.Cleanup(func() { _ = kubectlRun("delete", "crd", crdName, "--ignore-not-found", "--wait=false") })
	s.waitStderr(30*time.Second, literal("watching "+crdName+" too"))
	waitForResource(t, crdName)
	applyJSON(t, ns, fmt.Sprintf(`{"apiVersion":%q,"kind":"Lamp","metadata":{"name":"lit"},"spec":{"watts":40}}`, group+"/v1"))
	s.waitJSON(eventWait, "ADDED lamp lit", func(ev envelope) bool {
		return ev.Type == "ADDED" && ev.meta().Kind == "Lamp" && ev.name() == "lit"
	})

	var got result
	waitUntil(t, s, 30*time.Second, "the Lamp in the store", func() bool {
		got = runKubeevents(t, 30*time.Second, "get", crdName, "-n", ns, "--store", db)
		return got.code == 0 && strings.Contains(got.stdout, "lit")
	})
	if _, code := s.interrupt(20 * time.Second); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, s.Stderr())
	}
	if strings.Count(s.Stderr(), "watching "+crdName+" too") != 1 {
		t.Errorf("the new type was said %d times, want once; stderr:\n%s", strings.Count(s.Stderr(), "watching "+crdName+" too"), s.Stderr())
	}
}
