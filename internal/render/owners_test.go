package render

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/jq"
)

// ownedEvents are a Deployment followed with --owned, its pod, and a core Event about
// the pod.
func ownedEvents() []*event.Event {
	replicas := int32(2)
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", CreationTimestamp: metav1.NewTime(eventtest.T0)},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: 1, UpdatedReplicas: 2, AvailableReplicas: 1}}
	chain := []event.Owner{{Kind: "Deployment", Name: "web"}, {Kind: "ReplicaSet", Name: "web-7d9f8"}}
	related := &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: "web-7d9f8-abc12.1", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-7d9f8-abc12", Namespace: "default"},
		Type:           corev1.EventTypeNormal, Reason: "Scheduled", Message: "Successfully assigned"}
	return []*event.Event{
		{Type: event.Modified, Time: eventtest.T0, Seq: 1, Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment",
			Object: d, Owners: []event.Owner{}, Rollout: &event.Rollout{State: event.RolloutProgressing, Message: `Waiting for deployment "web" rollout to finish: 1 of 2 updated replicas are available...`}},
		{Type: event.Added, Time: eventtest.T0, Seq: 2, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod",
			Object: eventtest.WebPod(corev1.PodRunning, true, "node-1", "5"), Owners: chain},
		{Type: event.Added, Time: eventtest.T0, Seq: 3, Resource: schema.GroupVersionResource{Version: "v1", Resource: "events"}, Kind: "Event",
			Object: related, Related: true, Owners: append(chain, event.Owner{Kind: "Pod", Name: "web-7d9f8-abc12"})},
	}
}

func TestOwnedPretty(t *testing.T) {
	out := string(render(t, Options{Format: FormatPretty, ShowKind: true, Namespace: "default", Location: time.UTC}, ownedEvents()))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, want := range []string{
		`MODIFIED  deploy/web .* 1/2  2  1  0s  … Waiting for deployment "web" rollout to finish: 1 of 2 updated replicas are available...$`,
		`ADDED     deploy/web › rs/web-7d9f8 › pod/web-7d9f8-abc12  1/1  Running`,
		`EVENT     deploy/web › rs/web-7d9f8 › pod/web-7d9f8-abc12  Scheduled: Successfully assigned$`,
	} {
		if i >= len(lines) || !matches(want, lines[i]) {
			t.Errorf("line %d:\n%s\nwant it to match %q\nall:\n%s", i+1, lines[min(i, len(lines)-1)], want, out)
		}
	}
}

func TestOwnedJSON(t *testing.T) {
	events := ownedEvents()
	for i, want := range []string{
		`"owners":[],"rollout":{"state":"progressing","message":"Waiting for deployment \"web\" rollout to finish: 1 of 2 updated replicas are available..."}`,
		`"owners":[{"kind":"Deployment","name":"web"},{"kind":"ReplicaSet","name":"web-7d9f8"}],"object"`,
		`"owners":[{"kind":"Deployment","name":"web"},{"kind":"ReplicaSet","name":"web-7d9f8"},{"kind":"Pod","name":"web-7d9f8-abc12"}]`,
	} {
		line, err := AppendEnvelopeWithDiff(nil, events[i], nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(line), want) {
			t.Errorf("event %d: %s\nwant it to hold %s", i+1, line, want)
		}
		// jq sees the same envelope.
		value, err := jq.EnvelopeValue(events[i], nil, false)
		if err != nil {
			t.Fatal(err)
		}
		var parsed map[string]any
		if err := json.Unmarshal(line, &parsed); err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(map[string]any{"owners": parsed["owners"], "rollout": parsed["rollout"]})
		b, _ := json.Marshal(map[string]any{"owners": value["owners"], "rollout": value["rollout"]})
		if string(a) != string(b) {
			t.Errorf("event %d: JSON has %s, jq's envelope %s", i+1, a, b)
		}
	}
	// Outside --owned: neither field.
	plain := eventtest.Events()[0]
	line, _ := AppendEnvelopeWithDiff(nil, plain, nil, false)
	if strings.Contains(string(line), `"owners"`) || strings.Contains(string(line), `"rollout"`) {
		t.Errorf("an event outside --owned has owners or rollout: %s", line)
	}
}

func matches(pattern, line string) bool { return regexp.MustCompile(pattern).MatchString(line) }

func TestOwnedYAML(t *testing.T) {
	out := string(render(t, Options{Format: FormatYAML, Location: time.UTC}, ownedEvents()[:2]))
	for _, want := range []string{
		"owners: []\nrollout:\n  state: progressing\n  message: 'Waiting for deployment \"web\" rollout to finish: 1 of 2 updated replicas are available...'\nobject:",
		"owners:\n- kind: Deployment\n  name: web\n- kind: ReplicaSet\n  name: web-7d9f8\nobject:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("YAML lacks %q:\n%s", want, out)
		}
	}
}

// A Job's line has kubectl get jobs' columns: STATUS, COMPLETIONS (succeeded of
// completions), DURATION, AGE.
func TestJobSummary(t *testing.T) {
	three := int32(3)
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: "default"},
		Spec:       batchv1.JobSpec{Completions: &three},
		Status:     batchv1.JobStatus{Succeeded: 1, Active: 2, Failed: 1}}
	out := string(render(t, Options{Format: FormatPretty, Namespace: "default", Location: time.UTC},
		[]*event.Event{{Type: event.Modified, Time: eventtest.T0, Seq: 1, Kind: "Job", Object: job, Old: job}}))
	if !strings.Contains(out, "once  Running  1/3  ") {
		t.Errorf("Job line: %q", out)
	}
}
