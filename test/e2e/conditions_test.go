package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createConfigMaps creates configmaps prefix-00 … in ns: objects nothing in the cluster
// changes by itself, listed in name order.
func createConfigMaps(t *testing.T, ns, prefix string, n int) {
	t.Helper()
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%02d", prefix, i)}, Data: map[string]string{"k": "v"}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating configmap %s/%s: %v", ns, cm.Name, err)
		}
	}
}

// --until ends the run right after the event that met it, even when that event comes
// from the initial list and the rest of the list is already on its way: no sink gets
// any event after it.
func TestUntilStopsDuringInitialList(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "c", 30)
	file := t.TempDir() + "/events.jsonl"
	r := runKubeevents(t, 30*time.Second, "watch", "cm", "-n", ns, "-o", "json", "-v=1",
		"--until", `.object.metadata.name == "c-00"`, "--sink", "file="+file)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"name":"c-00"`) {
		t.Errorf("stdout has %d lines, want only the event that met --until (c-00):\n%s", len(lines), r.stdout)
	}
	if got := readLines(t, file, true); len(got) != 1 {
		t.Errorf("the file sink got %d events, want 1 (the one that met --until)", len(got))
	}
	if !regexp.MustCompile(`stopped after 1 events? — screen 1 delivered; events\.jsonl 1 delivered\n`).MatchString(r.stderr) {
		t.Errorf("summary missing or wrong; stderr:\n%s", r.stderr)
	}
}

// --max-events as a cap on a run that waits for a condition: reaching it before the
// condition is exit 3, as --timeout is; the event that reaches it and meets the condition
// is a met condition (exit 0).
func TestMaxEventsBeforeCondition(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "c", 3)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stderrRE string
	}{
		{"until-deleted", []string{"c-00", "--until-deleted"}, 3, `^kubeevents: --max-events 1 reached before --until-deleted was met\n`},
		{"until", []string{"--until", `.type == "DELETED"`}, 3, `^kubeevents: --max-events 1 reached before --until was met\n`},
		{"met by the last event", []string{"--until", `.object.metadata.name == "c-00"`}, 0, `^$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"watch", "cm", "-n", ns, "-o", "name", "--max-events", "1"}, tc.args...)
			r := runKubeevents(t, 30*time.Second, args...)
			if r.code != tc.code || !regexp.MustCompile(tc.stderrRE).MatchString(r.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and stderr matching %s", r.code, r.stderr, tc.code, tc.stderrRE)
			}
			if r.stdout != "ADDED configmap/c-00\n" {
				t.Errorf("stdout %q, want the one event", r.stdout)
			}
		})
	}
}

// The summary counts the events made, not the numbers drawn past --max-events.
func TestSummaryCountsMaxEvents(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "c", 30)
	r := runKubeevents(t, 30*time.Second, "watch", "cm", "-n", ns, "-o", "json", "--max-events", "1", "-v=1")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if !regexp.MustCompile(`stopped after 1 events? — screen 1 delivered\n`).MatchString(r.stderr) {
		t.Errorf("summary does not account for the one event; stderr:\n%s", r.stderr)
	}
}

// --changes-only leaves unchanged updates out before they are numbered: seq has no gap
// for them (a gap is a dropped event), and the summary says how many were left out.
func TestChangesOnlyLeavesNoSeqGap(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "c", 1)
	s := startKubeevents(t, "watch", "cm", "c-00", "-n", ns, "-o", "json", "-v=1",
		"--changes-only", "--ignore-path", "metadata.labels.noise")
	added := s.waitJSON(eventWait, "ADDED c-00", func(ev envelope) bool { return ev.Type == "ADDED" })
	patchConfigMap(t, ns, "c-00", `{"metadata":{"labels":{"noise":"1"}}}`)
	patchConfigMap(t, ns, "c-00", `{"data":{"k":"changed"}}`)
	modified := s.waitJSON(eventWait, "the data change", func(ev envelope) bool { return ev.Type == "MODIFIED" })
	if modified.Seq != added.Seq+1 {
		t.Errorf("seqs %d then %d: the update left out by --changes-only left a gap", added.Seq, modified.Seq)
	}
	if _, code := s.interrupt(10 * time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, s.Stderr())
	}
	if !regexp.MustCompile(`stopped after 2 events \(1 unchanged update left out by --changes-only\) — screen 2 delivered\n`).MatchString(s.Stderr()) {
		t.Errorf("summary wrong; stderr:\n%s", s.Stderr())
	}
}

// A mass deletion under -l does not hold the stream up with one request per object:
// kubeevents asks whether each DELETED object is still there (relabelled) or gone
// together, so a DeleteCollection of 300 ConfigMaps costs a few requests, not 300 GETs
// at client-go's 5 a second (60 s). The stream keeps its order (seq rises line by line,
// each object DELETED once) and its meaning (the relabelled ones marked, no other).
func TestSelectorMassDeletion(t *testing.T) {
	const n = 300
	ns := newNamespace(t)
	ctx := context.Background()
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Labels: map[string]string{"app": "mass"}}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s := startKubeevents(t, "watch", "cm", "-n", ns, "-l", "app=mass", "-o", "json", "-v=6")
	for i := 0; i < n; i++ {
		s.waitFor(eventWait, fmt.Sprintf("%d ADDED", n), func(l string) bool { return strings.Contains(l, `"type":"ADDED"`) })
	}
	relabelled := map[string]bool{"cm-005": true, "cm-150": true, "cm-299": true}
	for name := range relabelled {
		patchConfigMap(t, ns, name, `{"metadata":{"labels":{"app":"other"}}}`)
	}
	start := time.Now()
	if err := client.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=mass"}); err != nil {
		t.Fatal(err)
	}
	deleted := map[string]string{} // name -> reason
	var last uint64
	for len(deleted) < n {
		line := s.waitFor(30*time.Second, fmt.Sprintf("%d DELETED (%d so far)", n, len(deleted)), func(l string) bool { return strings.Contains(l, `"type":"DELETED"`) })
		var ev struct {
			Seq    uint64          `json:"seq"`
			Reason string          `json:"reason"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		name := envelope{Object: ev.Object}.name()
		if _, twice := deleted[name]; twice || ev.Seq <= last {
			t.Fatalf("DELETED %s (seq %d after %d): each object once, seqs rising", name, ev.Seq, last)
		}
		deleted[name], last = ev.Reason, ev.Seq
	}
	took := time.Since(start)
	for name, reason := range deleted {
		if want := map[bool]string{true: "selector"}[relabelled[name]]; reason != want {
			t.Errorf("%s: reason %q, want %q", name, reason, want)
		}
	}
	// Every request kubeevents made for cm-NNN (a GET) or for the namespace's ConfigMaps
	// without the selector (a check's LIST), from -v=6's log.
	checks := regexp.MustCompile(`"Response" verb="GET" url="[^"]*/namespaces/` + ns + `/configmaps(/|\?limit)`)
	requests := len(checks.FindAllString(s.Stderr(), -1))
	t.Logf("%d DELETED (3 relabelled) in %s after the deletion, with %d requests", n, took.Round(time.Millisecond), requests)
	if requests > n/10 {
		t.Errorf("%d requests to tell %d deletions from relabellings; want them asked together (at most %d)", requests, n, n/10)
	}
}

// A pod relabelled out of a label selector is DELETED for the watch (scripts keep that
// meaning), marked "reason":"selector" in JSON and said in words in pretty output; a
// real deletion is not marked.
func TestSelectorLeaveIsMarked(t *testing.T) {
	ns := newNamespace(t)
	for _, name := range []string{"relabelled", "deleted"} {
		createPod(t, ns, name, map[string]string{"app": "web"}) // never scheduled: only the test changes it
	}
	jsonOut := startKubeevents(t, "watch", "pods", "-n", ns, "-l", "app=web", "-o", "json")
	pretty := startKubeevents(t, "watch", "pods", "-n", ns, "-l", "app=web")
	for _, s := range []*proc{jsonOut, pretty} {
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
	if !strings.Contains(left, "no longer matches the selector") {
		t.Errorf("pretty line %q should say the pod no longer matches the selector", left)
	}
	gone := pretty.waitFor(eventWait, "DELETED deleted", func(l string) bool { return strings.Contains(l, "DELETED") && strings.Contains(l, "deleted") })
	if strings.Contains(gone, "no longer matches") {
		t.Errorf("pretty line %q of a real deletion says it no longer matches the selector", gone)
	}
}
