package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Conditions inserted before an existing one, as a kubelet reports a pod's start, are
// shown as added conditions, the existing one as unchanged; and the JSON diff, applied
// to "old", gives "object".
func TestDiffConditionsInsertedBefore(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	created := createPod(t, ns, "web", nil) // never scheduled: nothing but this test touches it
	since := metav1.NewTime(time.Now().Truncate(time.Second))
	condition := func(typ corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: since}
	}
	created.Status.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled)}
	scheduled, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	pretty := startKubeevents(t, "watch", "pods", "-n", ns, "--color", "never")
	js := startKubeevents(t, "watch", "pods", "-n", ns, "-o", "json", "--show-old")
	pretty.waitFor(eventWait, "ADDED web", func(l string) bool { return strings.Contains(l, "ADDED") })
	js.waitJSON(eventWait, "ADDED web", func(ev envelope) bool { return ev.Type == "ADDED" })

	scheduled.Status.Conditions = []corev1.PodCondition{
		condition(corev1.PodInitialized), condition(corev1.PodReady), condition(corev1.ContainersReady),
		condition(corev1.PodScheduled),
	}
	if _, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, scheduled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A label change after it ends the conditions' diff lines with its own event.
	if _, err := client.CoreV1().Pods(ns).Patch(ctx, "web", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"done":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	pretty.waitFor(eventWait, "MODIFIED web", func(l string) bool { return strings.Contains(l, "MODIFIED") })
	var changes []string
	pretty.waitFor(eventWait, "the label's MODIFIED", func(l string) bool {
		if strings.Contains(l, "MODIFIED") {
			return true
		}
		head, _, _ := strings.Cut(strings.TrimSpace(l), ": ")
		changes = append(changes, head)
		return false
	})
	want := []string{"+ status.conditions[Initialized]", "+ status.conditions[Ready]", "+ status.conditions[ContainersReady]"}
	if strings.Join(changes, "\n") != strings.Join(want, "\n") {
		t.Errorf("pretty diff of the inserted conditions:\n%s\nwant:\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}

	ev := js.waitJSON(eventWait, "MODIFIED web", func(ev envelope) bool { return ev.Type == "MODIFIED" })
	diff, err := json.Marshal(ev.Diff)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := jsonpatch.DecodePatch(diff)
	if err != nil {
		t.Fatalf("diff %s is not a JSON Patch: %v", diff, err)
	}
	patched, err := patch.Apply(ev.Old)
	if err != nil {
		t.Fatalf("diff %s does not apply to old: %v", diff, err)
	}
	// resourceVersion is left out of diffs: compare without it.
	withoutVersion := func(raw []byte) []byte {
		var object map[string]any
		if err := json.Unmarshal(raw, &object); err != nil {
			t.Fatal(err)
		}
		delete(object["metadata"].(map[string]any), "resourceVersion")
		return mustMarshal(t, object)
	}
	if !jsonpatch.Equal(withoutVersion(patched), withoutVersion(ev.Object)) {
		t.Errorf("diff %s applied to old gives\n%s\nwant object\n%s", diff, patched, ev.Object)
	}
}
