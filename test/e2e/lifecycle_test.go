package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lifecycle changes while watching: each is said once on stderr, in words a
// user understands, and the stream goes on once what was gone is back.

// The watched CustomResourceDefinition is deleted, then created again: its objects are
// DELETED, the deletion is said once, and objects of the new definition are streamed
// within a few seconds of its creation (kubeevents asks every second, not after
// client-go's backoff of up to 30 s).
func TestLifecycleCRDDeletedAndCreatedAgain(t *testing.T) {
	ns := newNamespace(t)
	group := "lc" + randomHex(4) + ".e2e.kubeevents.dev"
	crdName := "lamps." + group
	crd := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":%q},
 "spec":{"group":%q,"scope":"Namespaced",
  "names":{"plural":"lamps","singular":"lamp","kind":"Lamp"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, crdName, group)
	lamp := func(name string) string {
		return fmt.Sprintf(`{"apiVersion":%q,"kind":"Lamp","metadata":{"name":%q},"spec":{"watts":40}}`, group+"/v1", name)
	}
	applyJSON(t, "", crd)
	t.Cleanup(func() { _ = kubectlRun("delete", "crd", crdName, "--ignore-not-found", "--wait=false") })
	waitForResource(t, crdName)
	applyJSON(t, ns, lamp("first"))

	s := startKubeevents(t, "watch", crdName, "-n", ns, "-o", "json")
	s.waitJSON(eventWait, "ADDED first", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == "first" })

	if err := kubectlRun("delete", "crd", crdName); err != nil {
		t.Fatal(err)
	}
	s.waitJSON(eventWait, "DELETED first", func(ev envelope) bool { return ev.Type == "DELETED" && ev.name() == "first" })
	gone := regexp.MustCompile(`kubeevents: watch of ` + regexp.QuoteMeta(crdName) + ` lost: customresourcedefinition ` +
		regexp.QuoteMeta(crdName) + ` was deleted; waiting for it to come back\n`)
	s.waitStderr(30*time.Second, gone)

	applyJSON(t, "", crd)
	waitForResource(t, crdName)
	created := time.Now()
	applyJSON(t, ns, lamp("second"))
	s.waitJSON(30*time.Second, "ADDED second", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == "second" })
	t.Logf("a Lamp of the re-created definition was printed %s after kubectl began creating it", time.Since(created).Round(time.Millisecond))
	s.waitStderr(15*time.Second, regexp.MustCompile(`watch of `+regexp.QuoteMeta(crdName)+` (resumed|re-synced)|re-synced [\d,]+ `+regexp.QuoteMeta(crdName)))
	if n := len(gone.FindAllString(s.Stderr(), -1)); n != 1 {
		t.Errorf("the deletion was said %d times, want once; stderr:\n%s", n, s.Stderr())
	}
	t.Logf("stderr:\n%s", s.Stderr())
}

// The watched namespace is deleted, then created again: its pods are DELETED, both are
// said once, and pods of the new namespace are streamed.
func TestLifecycleNamespaceDeletedAndCreatedAgain(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "before", nil)
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json")
	s.waitJSON(eventWait, "ADDED before", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == "before" })

	if err := client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitJSON(60*time.Second, "DELETED before", func(ev envelope) bool { return ev.Type == "DELETED" && ev.name() == "before" })
	deleted := "kubeevents: namespace " + ns + " was deleted; waiting for it to be created again\n"
	s.waitStderr(60*time.Second, literal(deleted))

	if _, err := client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := "kubeevents: namespace " + ns + " was created; watching it\n"
	s.waitStderr(30*time.Second, literal(created))
	createPod(t, ns, "after", nil)
	s.waitJSON(eventWait, "ADDED after", func(ev envelope) bool { return ev.Type == "ADDED" && ev.name() == "after" })
	stderr := s.Stderr()
	if strings.Count(stderr, deleted) != 1 || strings.Count(stderr, created) != 1 {
		t.Errorf("want the deletion and the creation said once each; stderr:\n%s", stderr)
	}
}
