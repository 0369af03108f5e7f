package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// jsonTime is the envelope's time, the one field two runs cannot share.
var jsonTime = regexp.MustCompile(`"time":"[^"]*",`)

// KUBEEVENTS_FAST_PATHS=off (decode, encode and diff every object whole) and
// KUBEEVENTS_QUIET_IO=off (client-go's own connection, stdout written with os.File's
// Write) print the same bytes as the fast paths on the same events: two runs side by
// side, one each way, see the changes of every part of a pod (metadata, status, spec;
// each change leaves the other parts to be reused) and print identical JSON lines, diffs
// included, but for the time.
func TestDiffSameWithFastPathsOff(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "web", map[string]string{"app": "web"})
	createPod(t, ns, "other", nil)
	args := []string{"watch", "pods", "-n", ns, "-o", "json"}
	fast := startKubeeventsEnv(t, []string{"KUBEEVENTS_FAST_PATHS=on", "KUBEEVENTS_QUIET_IO=on"}, args...)
	slow := startKubeeventsEnv(t, []string{"KUBEEVENTS_FAST_PATHS=off", "KUBEEVENTS_QUIET_IO=off"}, args...)
	for _, s := range []*stream{fast, slow} {
		added := 0
		s.waitJSON(eventWait, "ADDED web and other", func(ev envelope) bool {
			if ev.Type == "ADDED" {
				added++
			}
			return added == 2
		})
	}

	ctx := context.Background()
	pods := client.CoreV1().Pods(ns)
	patch := func(patch string, subresource ...string) {
		t.Helper()
		if _, err := pods.Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, subresource...); err != nil {
			t.Fatalf("patch %s: %v", patch, err)
		}
	}
	changes := 0
	for i := range 3 {
		patch(fmt.Sprintf(`{"metadata":{"labels":{"round":"%d"},"annotations":{"note":"n%d"}}}`, i, i))
		patch(fmt.Sprintf(`{"status":{"conditions":[{"type":"kubeevents.io/round","status":"True","reason":"R%d"}]}}`, i), "status")
		patch(fmt.Sprintf(`{"spec":{"activeDeadlineSeconds":%d}}`, 3600-i))
		changes += 3
	}
	labelPod(t, ns, "other", "tier", "db")
	changes++
	deletePod(t, ns, "web")

	var outputs [2][]string
	for i, s := range []*stream{fast, slow} {
		s.waitJSON(eventWait, "DELETED web", func(ev envelope) bool { return ev.Type == "DELETED" && ev.name() == "web" })
		if _, code := s.interrupt(10 * time.Second); code != 0 {
			t.Fatalf("exit code %d; stderr:\n%s", code, s.Stderr())
		}
		for _, line := range s.all {
			outputs[i] = append(outputs[i], jsonTime.ReplaceAllString(line, ""))
		}
	}
	modified := 0
	for _, line := range outputs[0] {
		if strings.HasPrefix(line, `{"type":"MODIFIED"`) && strings.Contains(line, `"diff":[`) {
			modified++
		}
	}
	if modified < changes {
		t.Errorf("%d MODIFIED events with a diff, want at least %d:\n%s", modified, changes, strings.Join(outputs[0], "\n"))
	}
	if a, b := strings.Join(outputs[0], "\n"), strings.Join(outputs[1], "\n"); a != b {
		t.Errorf("the output differs with the fast paths off\non:\n%s\noff:\n%s", a, b)
	}
}
