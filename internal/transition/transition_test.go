package transition

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
)

var (
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	t0             = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
)

// pod is a running pod with one container "app"; change edits it.
func pod(change func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "pod-uid"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, RestartCount: 2,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}}},
		},
	}
	if change != nil {
		change(p)
	}
	return p
}

func waiting(reason string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
}

func lastTerminated(reason string, at time.Time, restarts int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: reason, ExitCode: 137, FinishedAt: metav1.NewTime(at)}}
		p.Status.ContainerStatuses[0].RestartCount = restarts
	}
}

func notReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }

func both(changes ...func(*corev1.Pod)) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for _, c := range changes {
			c(p)
		}
	}
}

func node(ready corev1.ConditionStatus) *corev1.Node {
	return &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: "kwok-node-0"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
}

// deployment is a Deployment of 3 replicas, all updated and available; change edits it.
func deployment(change func(*appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 2},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3},
	}
	if change != nil {
		change(d)
	}
	return d
}

func rolling(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }

func pastDeadline(d *appsv1.Deployment) {
	rolling(d)
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
}

func modified(gvr schema.GroupVersionResource, old, obj runtime.Object) *event.Event {
	return &event.Event{Type: event.Modified, Time: t0, Resource: gvr, Kind: obj.GetObjectKind().GroupVersionKind().Kind, Object: obj, Old: old}
}

func added(gvr schema.GroupVersionResource, obj runtime.Object) *event.Event {
	return &event.Event{Type: event.Added, Time: t0, Resource: gvr, Kind: obj.GetObjectKind().GroupVersionKind().Kind, Object: obj}
}

func deleted(gvr schema.GroupVersionResource, obj runtime.Object, reason string) *event.Event {
	return &event.Event{Type: event.Deleted, Time: t0, Resource: gvr, Kind: obj.GetObjectKind().GroupVersionKind().Kind, Object: obj, Reason: reason}
}

// healthy gives ev the health the health step would have given it.
func healthy(ev *event.Event, status, previous event.HealthStatus) *event.Event {
	ev.Health = &event.Health{Status: status, Previous: previous}
	return ev
}

// cases are, for each shipped transition, changes in which it happened and changes in
// which it did not.
var cases = []struct {
	name      string
	happened  map[string]*event.Event
	unchanged map[string]*event.Event
}{
	{"crashloop",
		map[string]*event.Event{
			"entered":            modified(podsGVR, pod(nil), pod(waiting("CrashLoopBackOff"))),
			"first seen looping": added(podsGVR, pod(waiting("CrashLoopBackOff"))),
			"init container": modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) {
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
			})),
		},
		map[string]*event.Event{
			"still looping":   modified(podsGVR, pod(waiting("CrashLoopBackOff")), pod(both(waiting("CrashLoopBackOff"), notReady))),
			"left it":         modified(podsGVR, pod(waiting("CrashLoopBackOff")), pod(nil)),
			"deleted looping": deleted(podsGVR, pod(waiting("CrashLoopBackOff")), ""),
			"other waiting":   modified(podsGVR, pod(nil), pod(waiting("ContainerCreating"))),
			"a node":          modified(nodesGVR, node(corev1.ConditionTrue), node(corev1.ConditionFalse)),
		}},
	{"oomkilled",
		map[string]*event.Event{
			"killed": modified(podsGVR, pod(nil), pod(lastTerminated("OOMKilled", t0, 3))),
			"killed again": modified(podsGVR, pod(lastTerminated("OOMKilled", t0, 3)),
				pod(lastTerminated("OOMKilled", t0.Add(time.Minute), 4))),
			"terminated, never restarted": modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", FinishedAt: metav1.NewTime(t0)}}
			})),
		},
		map[string]*event.Event{
			"the same kill": modified(podsGVR, pod(lastTerminated("OOMKilled", t0, 3)), pod(both(lastTerminated("OOMKilled", t0, 3), notReady))),
			"the termination restarted": modified(podsGVR,
				pod(func(p *corev1.Pod) {
					p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", FinishedAt: metav1.NewTime(t0)}}
				}),
				pod(lastTerminated("OOMKilled", t0, 3))),
			"an error exit": modified(podsGVR, pod(nil), pod(lastTerminated("Error", t0, 3))),
		}},
	{"image-pull",
		map[string]*event.Event{
			"cannot pull": modified(podsGVR, pod(waiting("ContainerCreating")), pod(waiting("ErrImagePull"))),
			"backing off": added(podsGVR, pod(waiting("ImagePullBackOff"))),
		},
		map[string]*event.Event{
			"from error to back-off": modified(podsGVR, pod(waiting("ErrImagePull")), pod(waiting("ImagePullBackOff"))),
			"pulled":                 modified(podsGVR, pod(waiting("ImagePullBackOff")), pod(nil)),
		}},
	{"evicted",
		map[string]*event.Event{
			"by the kubelet": modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) { p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted" })),
			"through the API": modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) {
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
			})),
		},
		map[string]*event.Event{
			"still evicted": modified(podsGVR,
				pod(func(p *corev1.Pod) { p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted" }),
				pod(func(p *corev1.Pod) {
					p.Status.Phase, p.Status.Reason, p.Labels = corev1.PodFailed, "Evicted", map[string]string{"a": "b"}
				})),
			"preempted": modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) {
				p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"})
			})),
		}},
	{"failed",
		map[string]*event.Event{
			"failed":        modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })),
			"first seen so": added(podsGVR, pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })),
		},
		map[string]*event.Event{
			"still failed": modified(podsGVR, pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), pod(func(p *corev1.Pod) { p.Status.Phase, p.Labels = corev1.PodFailed, map[string]string{"a": "b"} })),
			"succeeded":    modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })),
			"deleted":      deleted(podsGVR, pod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), ""),
		}},
	{"not-ready",
		map[string]*event.Event{
			"a pod":           modified(podsGVR, pod(nil), pod(notReady)),
			"a node, False":   modified(nodesGVR, node(corev1.ConditionTrue), node(corev1.ConditionFalse)),
			"a node, Unknown": modified(nodesGVR, node(corev1.ConditionTrue), node(corev1.ConditionUnknown)),
		},
		map[string]*event.Event{
			"a pod being deleted": modified(podsGVR, pod(nil), pod(both(notReady, func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(t0)) }))),
			"a new pod":           added(podsGVR, pod(notReady)),
			"not ready before":    modified(nodesGVR, node(corev1.ConditionUnknown), node(corev1.ConditionFalse)),
		}},
	{"ready",
		map[string]*event.Event{
			"a pod":                       modified(podsGVR, pod(notReady), pod(nil)),
			"a node":                      modified(nodesGVR, node(corev1.ConditionUnknown), node(corev1.ConditionTrue)),
			"another kind became Current": healthy(modified(deploymentsGVR, deployment(rolling), deployment(nil)), "Current", "InProgress"),
		},
		map[string]*event.Event{
			"first seen ready": added(podsGVR, pod(nil)),
			"ready before":     modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} })),
			// Pods and nodes keep their meaning: their Ready condition, not their health.
			"a pod Current by its health, Ready before": healthy(modified(podsGVR, pod(nil), pod(nil)), "Current", "InProgress"),
			"another kind without health":               modified(deploymentsGVR, deployment(rolling), deployment(nil)),
			"another kind Current before":               healthy(modified(deploymentsGVR, deployment(nil), deployment(nil)), "Current", "Current"),
			"another kind first seen Current":           healthy(added(deploymentsGVR, deployment(nil)), "Current", ""),
		}},
	{"restarted",
		map[string]*event.Event{
			"one more": modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = 3 })),
		},
		map[string]*event.Event{
			"the same count": modified(podsGVR, pod(nil), pod(notReady)),
			"a new container, no restart": modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) {
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "sidecar"})
			})),
			"first seen restarted": added(podsGVR, pod(nil)),
		}},
	{"rollout-failed",
		map[string]*event.Event{
			"past its deadline": modified(deploymentsGVR, deployment(rolling), deployment(pastDeadline)),
			"first seen failed": added(deploymentsGVR, deployment(pastDeadline)),
		},
		map[string]*event.Event{
			"still failed": modified(deploymentsGVR, deployment(pastDeadline), deployment(func(d *appsv1.Deployment) { pastDeadline(d); d.Labels = map[string]string{"a": "b"} })),
			"rolling":      modified(deploymentsGVR, deployment(nil), deployment(rolling)),
			"a pod":        modified(podsGVR, pod(nil), pod(notReady)),
			"deleted":      deleted(deploymentsGVR, deployment(pastDeadline), ""),
		}},
	{"rollout-complete",
		map[string]*event.Event{
			"complete": modified(deploymentsGVR, deployment(rolling), deployment(nil)),
		},
		map[string]*event.Event{
			"first seen complete": added(deploymentsGVR, deployment(nil)),
			"complete before":     modified(deploymentsGVR, deployment(nil), deployment(func(d *appsv1.Deployment) { d.Labels = map[string]string{"a": "b"} })),
			"started":             modified(deploymentsGVR, deployment(nil), deployment(rolling)),
		}},
	{"degraded",
		map[string]*event.Event{
			"became Failed":     healthy(modified(deploymentsGVR, deployment(rolling), deployment(pastDeadline)), "Failed", "InProgress"),
			"first seen Failed": healthy(added(deploymentsGVR, deployment(pastDeadline)), "Failed", ""),
		},
		map[string]*event.Event{
			"Failed before": healthy(modified(deploymentsGVR, deployment(pastDeadline), deployment(pastDeadline)), "Failed", "Failed"),
			"no health":     modified(deploymentsGVR, deployment(rolling), deployment(pastDeadline)),
			"deleted":       healthy(deleted(deploymentsGVR, deployment(pastDeadline), ""), "NotFound", "Failed"),
			"recovered":     healthy(modified(deploymentsGVR, deployment(pastDeadline), deployment(nil)), "Current", "Failed"),
		}},
	{"stalled",
		map[string]*event.Event{
			"a STALLED event": {Type: event.Stalled, Time: t0, Resource: deploymentsGVR, Kind: "Deployment", Object: deployment(rolling),
				Health: &event.Health{Status: event.HealthInProgress, Previous: event.HealthInProgress, Message: "no progress for 5m0s"}},
		},
		map[string]*event.Event{
			"InProgress": healthy(modified(deploymentsGVR, deployment(nil), deployment(rolling)), "InProgress", "Current"),
		}},
	{"scaled",
		map[string]*event.Event{
			"up": modified(deploymentsGVR, deployment(nil), deployment(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) })),
		},
		map[string]*event.Event{
			"status only": modified(deploymentsGVR, deployment(nil), deployment(rolling)),
			"a pod":       modified(podsGVR, pod(nil), pod(notReady)),
		}},
	{"image-changed",
		map[string]*event.Event{
			"a template": modified(deploymentsGVR, deployment(nil), deployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" })),
			"a pod":      modified(podsGVR, pod(nil), pod(func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.28" })),
		},
		map[string]*event.Event{
			"replicas": modified(deploymentsGVR, deployment(nil), deployment(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) })),
			"status":   modified(podsGVR, pod(nil), pod(notReady)),
		}},
	{"deleted",
		map[string]*event.Event{
			"a pod":  deleted(podsGVR, pod(nil), ""),
			"a node": deleted(nodesGVR, node(corev1.ConditionTrue), ""),
		},
		map[string]*event.Event{
			"out of the selection": deleted(podsGVR, pod(nil), event.ReasonSelector),
			"modified":             modified(podsGVR, pod(nil), pod(notReady)),
		}},
}

// TestShippedTransitions runs every shipped transition on changes in which it happened
// and on changes in which it did not.
func TestShippedTransitions(t *testing.T) {
	catalog := Shipped()
	for _, c := range cases {
		set, err := catalog.Compile([]string{c.name}, t.Errorf)
		if err != nil {
			t.Fatal(err)
		}
		for what, ev := range c.happened {
			if on := set.Eval(ev); !slices.Equal(on, []string{c.name}) {
				t.Errorf("%s, %s: Eval = %q, want it to have happened", c.name, what, on)
			}
		}
		for what, ev := range c.unchanged {
			if on := set.Eval(ev); on != nil {
				t.Errorf("%s, %s: Eval = %q, want nothing", c.name, what, on)
			}
		}
	}
	var tested []string
	for _, c := range cases {
		tested = append(tested, c.name)
	}
	if !slices.Equal(tested, shippedOrder) {
		t.Errorf("cases cover %q, want every shipped transition in order: %q", tested, shippedOrder)
	}
}

// TestProjectedInputGivesTheSameAnswer: a transition reads only part of the envelope (jq
// projects its input); on every case, its answer on the whole envelope is the same.
func TestProjectedInputGivesTheSameAnswer(t *testing.T) {
	for _, tr := range Shipped().List() {
		q, err := jq.Compile(tr.Program)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			for what, ev := range mergeCases(c.happened, c.unchanged) {
				projected, err := q.Input(ev, nil, true)
				if err != nil {
					t.Fatal(err)
				}
				whole, err := jq.EnvelopeValue(ev, nil, true)
				if err != nil {
					t.Fatal(err)
				}
				a, errA := q.Run(context.Background(), projected)
				b, errB := q.Run(context.Background(), whole)
				if (errA == nil) != (errB == nil) || !slices.EqualFunc(a, b, func(x, y any) bool { return jq.Truthy(x) == jq.Truthy(y) }) {
					t.Errorf("%s on %s (%s): projected %v %v, whole %v %v", tr.Name, c.name, what, a, errA, b, errB)
				}
			}
		}
	}
}

func mergeCases(a, b map[string]*event.Event) map[string]*event.Event {
	out := map[string]*event.Event{}
	for k, v := range a {
		out["happened: "+k] = v
	}
	for k, v := range b {
		out["not: "+k] = v
	}
	return out
}

// TestShippedOrderNamesEveryFile: every file of shipped/ is listed, once, and each starts
// with a description.
func TestShippedOrderNamesEveryFile(t *testing.T) {
	files, err := filepath.Glob("shipped/*.jq")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".jq"))
	}
	slices.Sort(names)
	ordered := slices.Sorted(slices.Values(shippedOrder))
	if !slices.Equal(names, slices.Compact(ordered)) || len(ordered) != len(shippedOrder) {
		t.Errorf("shipped/ holds %q; shippedOrder lists %q", names, shippedOrder)
	}
	for _, tr := range Shipped().List() {
		if tr.Description == "" || !tr.Shipped || CheckName(tr.Name) != nil {
			t.Errorf("%s: description %q, shipped %v, name %v", tr.Name, tr.Description, tr.Shipped, CheckName(tr.Name))
		}
	}
	if _, err := os.Stat("shipped"); err != nil {
		t.Fatal(err)
	}
}

// TestUserTransitions: the config file's transitions come after the shipped ones, replace
// a shipped one by name, and are named as the shipped ones are.
func TestUserTransitions(t *testing.T) {
	c, err := NewCatalog(map[string]string{
		"warning": `# A Warning Event.` + "\n" + `.object.kind == "Event" and .object.type == "Warning"`,
		"deleted": `.type == "DELETED"`,
	})
	if err != nil {
		t.Fatal(err)
	}
	names := c.Names()
	if names[len(names)-1] != "warning" || len(names) != len(shippedOrder)+1 {
		t.Errorf("names %q", names)
	}
	d, err := c.Lookup("deleted")
	if err != nil || d.Shipped || d.Program != `.type == "DELETED"` {
		t.Errorf("deleted: %+v, %v", d, err)
	}
	set, err := c.Compile([]string{"deleted"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if on := set.Eval(deleted(podsGVR, pod(nil), event.ReasonSelector)); !slices.Equal(on, []string{"deleted"}) {
		t.Errorf("the user's deleted counts a pod leaving the selection: %q", on)
	}
	for _, bad := range []string{"Warning", "9lives", "a,b", "a|b", ""} {
		if _, err := NewCatalog(map[string]string{bad: "true"}); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if _, err := c.Lookup("crashlop"); err == nil || !strings.Contains(err.Error(), `did you mean "crashloop"`) {
		t.Errorf("Lookup(crashlop) = %v", err)
	}
	if _, err := c.Compile([]string{"nope"}, nil); err == nil {
		t.Error("an unknown name compiled")
	}
	bad, _ := NewCatalog(map[string]string{"broken": ".object |"})
	if _, err := bad.Compile([]string{"broken"}, nil); err == nil || !strings.Contains(err.Error(), `transition "broken"`) {
		t.Errorf("a syntax error: %v", err)
	}
}

// TestEvalSaysFailuresOnce: a program that fails counts as false, and is said once per
// NoticeEvery, with the count after the first.
func TestEvalSaysFailuresOnce(t *testing.T) {
	c, err := NewCatalog(map[string]string{"bad": `.object.metadata.name | error`})
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	set, err := c.Compile([]string{"bad", "deleted"}, func(format string, args ...any) { said = append(said, format) })
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if on := set.Eval(deleted(podsGVR, pod(nil), "")); !slices.Equal(on, []string{"deleted"}) {
			t.Errorf("Eval = %q", on)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "transition %q: jq: %v") {
		t.Errorf("said %q", said)
	}
}

// TestDocsListEveryTransition fails when docs/signal.md has no row for a shipped
// transition, or one for a transition that is not shipped.
func TestDocsListEveryTransition(t *testing.T) {
	checkDocRows(t, "transition", Shipped().Names())
}

// checkDocRows checks that the table of docs/signal.md whose first column is headed
// header lists exactly names.
func checkDocRows(t *testing.T, header string, names []string) {
	t.Helper()
	doc, err := os.ReadFile("../../docs/signal.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n| "+header+" |")
	if !ok {
		t.Fatalf("docs/signal.md has no table headed %q", header)
	}
	_, table, _ = strings.Cut(table, "\n") // the rest of the header line
	var rows []string
	for line := range strings.SplitSeq(table, "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ := strings.Cut(rest, "`")
			rows = append(rows, name)
		} else if !strings.HasPrefix(line, "|") {
			break
		}
	}
	if !slices.Equal(rows, names) {
		t.Errorf("docs/signal.md lists the %ss %v, want %v (in this order)", header, rows, names)
	}
}
