package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod relabelled out of a label selector is DELETED for the watch (scripts keep that
// meaning), marked "reason":"selector" in JSON and said in words in pretty output; a
// real deletion is not marked.
func TestSelectorLeaveIsMarked(t *testing.T) {
	ns := newNamespace(t)
	for _, name := range []string{"relabelled", "deleted"} {
		p := pod(name, map[string]string{"app": "web"})
		p.Spec.SchedulerName = "kubeevents-none" // stays Pending: nothing else changes it
		if _, err := client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	jsonOut := startKubeevents(t, "watch", "pods", "-n", ns, "-l", "app=web", "-o", "json")
	pretty := startKubeevents(t, "watch", "pods", "-n", ns, "-l", "app=web")
	for _, s := range []*stream{jsonOut, pretty} {
		s.waitFor(eventWait, "both pods listed", func(l string) bool { return strings.Contains(l, "relabelled") })
	}
	labelPod(t, ns, "relabelled", "app", "db")
	deletePod(t, ns, "deleted")

	reasons := map[string]string{}
	for len(reasons) < 2 {
		line := jsonOut.waitFor(eventWait, "the two DELETED events", func(l string) bool { return strings.Contains(l, `"type":"DELETED"`) })
		var ev struct {
			Reason string          `json:"reason"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		reasons[envelope{Object: ev.Object}.name()] = ev.Reason
	}
	if reasons["relabelled"] != "selector" || reasons["deleted"] != "" {
		t.Errorf("reasons %q; want selector for the relabelled pod, none for the deleted one", reasons)
	}

	left := pretty.waitFor(eventWait, "DELETED relabelled", func(l string) bool { return strings.Contains(l, "DELETED") && strings.Contains(l, "relabelled") })
	if !strings.Contains(left, "no longer matches the selector") || strings.Contains(left, "lived") {
		t.Errorf("pretty line %q should say the pod no longer matches the selector, not how long it lived", left)
	}
	gone := pretty.waitFor(eventWait, "DELETED deleted", func(l string) bool { return strings.Contains(l, "DELETED") && strings.Contains(l, "deleted") })
	if !strings.Contains(gone, "lived") || strings.Contains(gone, "no longer matches") {
		t.Errorf("pretty line %q of a real deletion should say how long it lived", gone)
	}
}
