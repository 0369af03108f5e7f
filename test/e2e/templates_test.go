package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/proctest"
)

// templateFormats are -o templates with every kind of field the unscheduled pods of
// these tests lack (status.podIP, a label, an element of a missing list), without and
// with --output-watch-events.
var templateFormats = []struct {
	format      string
	watchEvents bool
}{
	{`jsonpath={.metadata.name} {.status.podIP} {.metadata.labels.tier} {.status.containerStatuses[0].ready}{"\n"}`, false},
	{`jsonpath={.metadata.name}`, false}, // no newline: kubectl runs the names together
	{`go-template={{.metadata.name}} {{.status.podIP}} {{.metadata.labels.tier}}{{"\n"}}`, false},
	{`custom-columns=NAME:.metadata.name,IP:.status.podIP,TIER:.metadata.labels.tier`, false},
	{`jsonpath={.type} {.object.metadata.name} {.object.status.podIP} {.object.spec.terminationGracePeriodSeconds}{"\n"}`, true},
	{`go-template={{.type}} {{.object.metadata.name}} {{.object.metadata.labels.tier}}{{"\n"}}`, true},
	{`custom-columns=EVENT:.type,NAME:.object.metadata.name,TIER:.object.metadata.labels.tier`, true},
}

// TestTemplatesMatchKubectlWatch: for the same changes, each template format prints byte
// for byte what `kubectl get -w` prints with it, run side by side: exactly the template's
// output (no event type, no newline it does not write), missing fields as kubectl prints
// them (nothing, "<no value>", "<none>") rather than an error that ends the run, and with
// --output-watch-events the {type, object} kubectl's templates see then.
func TestTemplatesMatchKubectlWatch(t *testing.T) {
	if clusterBin == "" {
		t.Fatal("KUBEEVENTS_CLUSTER_BIN is not set; run the tests with 'make test-e2e'")
	}
	ns := newNamespace(t)
	createPod(t, ns, "seed", nil)
	type pair struct{ kubectl, kubeevents *lockedBuffer }
	pairs := make([]pair, len(templateFormats))
	for i, tf := range templateFormats {
		pairs[i] = pair{&lockedBuffer{}, &lockedBuffer{}}
		kubectlArgs := []string{"--kubeconfig", kubeconfig, "get", "pods", "-n", ns, "-w", "-o", tf.format}
		args := []string{"watch", "pods", "-n", ns, "-o", tf.format}
		if tf.watchEvents {
			kubectlArgs, args = append(kubectlArgs, "--output-watch-events"), append(args, "--output-watch-events")
		}
		k, err := proctest.Start(proctest.Spec{Path: filepath.Join(clusterBin, "kubectl"), Args: kubectlArgs, Stdout: pairs[i].kubectl})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(k.Kill)
		startProc(t, pairs[i].kubeevents, nil, args...)
	}
	// Everything printed once each has printed marker; both have then printed all before.
	waitAll := func(marker string) {
		t.Helper()
		waitUntil(t, nil, eventWait, "every output to show "+marker, func() bool {
			for _, p := range pairs {
				if !strings.Contains(p.kubectl.String(), marker) || !strings.Contains(p.kubeevents.String(), marker) {
					return false
				}
			}
			return true
		})
	}
	waitAll("seed") // both listed: the changes come after
	createPod(t, ns, "web-1", nil)
	labelPod(t, ns, "web-1", "tier", "front")
	createPod(t, ns, "web-with-a-longer-name", map[string]string{"tier": "back"}) // widens the columns
	deletePod(t, ns, "web-1")
	deletePod(t, ns, "web-with-a-longer-name")
	createPod(t, ns, "zz-end", nil)
	waitAll("zz-end")
	for i, tf := range templateFormats {
		if got, want := pairs[i].kubeevents.String(), pairs[i].kubectl.String(); got != want {
			t.Errorf("-o %s (--output-watch-events %v):\nkubeevents %q\nkubectl    %q", tf.format, tf.watchEvents, got, want)
		}
	}
}

// An event a template cannot be executed on (kubectl would end the watch there) is left
// out with one line on stderr; the run goes on and prints the next event.
func TestTemplateFailureSkipsTheEvent(t *testing.T) {
	ns := newNamespace(t)
	s := startKubeevents(t, "watch", "pods", "-n", ns, "-o", `go-template={{.metadata.name}} {{index .metadata.labels "tier"}}{{"\n"}}`)
	createPod(t, ns, "bare", nil)
	createPod(t, ns, "labelled", map[string]string{"tier": "front"})
	s.waitFor(eventWait, "the labelled pod's line", func(l string) bool { return l == "labelled front" })
	s.waitStderr(eventWait, literal(`sink "screen": the template failed on ADDED Pod `+ns+`/bare: error executing template`))
	if strings.Count(strings.TrimSpace(s.Stderr()), "\n") != 0 || strings.Contains(s.Stderr(), "managedFields") {
		t.Errorf("want one line, without the object; stderr:\n%s", s.Stderr())
	}
	if _, code := s.interrupt(10 * time.Second); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, s.Stderr())
	}
}
