package replay

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/recording"
	"github.com/kubeevents/kubeevents/internal/render"
)

var t0 = time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)

// rec is one line of a recording being written by hand.
type rec struct {
	typ      string
	at       int // seconds after t0
	resource string
	obj      runtime.Object
	extra    string // more members, e.g. `"diff":[...]`
}

func (r rec) line(t *testing.T) string {
	t.Helper()
	raw, err := json.Marshal(r.obj)
	if err != nil {
		t.Fatal(err)
	}
	group, version := "", "v1"
	if gv := r.obj.GetObjectKind().GroupVersionKind(); gv.Group != "" {
		group, version = gv.Group, gv.Version
	}
	line := fmt.Sprintf(`{"type":%q,"time":%q,"resource":{"group":%q,"version":%q,"resource":%q},"object":%s`,
		r.typ, t0.Add(time.Duration(r.at)*time.Second).Format(time.RFC3339Nano), group, version, r.resource, raw)
	if r.extra != "" {
		line += "," + r.extra
	}
	return line + "}"
}

func recordingOf(t *testing.T, recs ...rec) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(r.line(t) + "\n")
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func pod(name, ns string, uid types.UID, labels map[string]string, phase corev1.PodPhase, owner *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: uid, Labels: labels, CreationTimestamp: metav1.NewTime(t0)},
		Status:     corev1.PodStatus{Phase: phase}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

func controller(kind, name string, uid types.UID) *metav1.OwnerReference {
	yes := true
	apiVersion := "apps/v1"
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes}
}

// replayed runs a replay of path and returns what it emitted.
func replayed(t *testing.T, opts Options) []*event.Event {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var events []*event.Event
	if err := s.Run(context.Background(), func(ev *event.Event) bool { events = append(events, ev); return true }); err != nil {
		t.Fatal(err)
	}
	return events
}

func summary(events []*event.Event) string {
	var parts []string
	for _, ev := range events {
		s := fmt.Sprintf("%s %s/%s", ev.Type, strings.ToLower(ev.Kind), ev.Meta().GetName())
		if ev.Reason != "" {
			s += "(" + ev.Reason + ")"
		}
		if ev.Related {
			s += "(related)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// TestDiffsAreComputedWhereNoneWasRecorded: a recording made with --no-diff gets its
// diffs from the consecutive versions, the previous one decoded whole even where only
// metadata is read; a recorded diff is used as it is.
func TestDiffsAreComputedWhereNoneWasRecorded(t *testing.T) {
	pending := pod("web-1", "shop", "u1", nil, corev1.PodPending, nil)
	running := pod("web-1", "shop", "u1", nil, corev1.PodRunning, nil)
	path := recordingOf(t,
		rec{typ: "ADDED", at: 0, resource: "pods", obj: pending},
		rec{typ: "MODIFIED", at: 1, resource: "pods", obj: running},
		rec{typ: "MODIFIED", at: 2, resource: "pods", obj: running, extra: `"diff":[{"op":"add","path":"/metadata/labels","value":{"tier":"web"}}]`})
	d := diff.NewDiffer(nil)
	for _, objects := range []bool{true, false} {
		events := replayed(t, Options{Args: []string{path}, Objects: objects, Diffs: true})
		if len(events) != 3 {
			t.Fatalf("objects %v: %d events", objects, len(events))
		}
		computed, err := d.ChangesJSON(events[1])
		if err != nil || string(computed) != `[{"op":"replace","path":"/status/phase","value":"Running","old":"Pending"}]` {
			t.Errorf("objects %v: computed %s, %v", objects, computed, err)
		}
		recorded, _ := d.ChangesJSON(events[2])
		if string(recorded) != `[{"op":"add","path":"/metadata/labels","value":{"tier":"web"}}]` {
			t.Errorf("objects %v: recorded diff %s", objects, recorded)
		}
		if _, ok := events[2].Object.(*corev1.Pod); ok != objects {
			t.Errorf("objects %v: the event with a recorded diff has a %T", objects, events[2].Object)
		}
	}
	// Paths ignored beyond the defaults are left out of a recorded diff too.
	ignore, _ := diff.ParseIgnorePath("metadata.labels")
	events := replayed(t, Options{Args: []string{path}, Diffs: true})
	if got, _ := diff.NewDiffer([]diff.IgnorePath{ignore}).ChangesJSON(events[2]); string(got) != "[]" {
		t.Errorf("ignored path in a recorded diff: %s", got)
	}
}

// TestSelection: types by every name kubectl takes, names, namespaces, clusters, a
// window of time and the recorded field managers.
func TestSelection(t *testing.T) {
	web := pod("web-1", "shop", "u1", nil, corev1.PodRunning, nil)
	db := pod("db-1", "data", "u2", nil, corev1.PodRunning, nil)
	deploy := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "d1"}}
	path := recordingOf(t,
		rec{typ: "ADDED", at: 0, resource: "pods", obj: web, extra: `"cluster":"prod","by":[{"manager":"kubelet"}]`},
		rec{typ: "ADDED", at: 1, resource: "pods", obj: db, extra: `"cluster":"dev","by":[{"manager":"kube-scheduler"}]`},
		rec{typ: "ADDED", at: 2, resource: "deployments", obj: deploy, extra: `"cluster":"prod"`})
	for _, c := range []struct {
		sel  Selection
		want string
	}{
		{Selection{}, "ADDED pod/web-1, ADDED pod/db-1, ADDED deployment/web"},
		{Selection{Types: []string{"po"}}, "ADDED pod/web-1, ADDED pod/db-1"},
		{Selection{Types: []string{"Pod", "deployments.apps"}, Names: []string{"web-1", "web"}}, "ADDED pod/web-1, ADDED deployment/web"},
		{Selection{Types: []string{"deploy.v1.apps"}}, "ADDED deployment/web"},
		{Selection{Types: []string{"all"}, Namespaces: []string{"data"}}, "ADDED pod/db-1"},
		{Selection{Clusters: []string{"prod"}}, "ADDED pod/web-1, ADDED deployment/web"},
		{Selection{Since: t0.Add(time.Second), Until: t0.Add(time.Second)}, "ADDED pod/db-1"},
		{Selection{By: []string{"kube-*"}}, "ADDED pod/db-1"},
		{Selection{NotBy: []string{"kubelet"}}, "ADDED pod/db-1, ADDED deployment/web"},
	} {
		if got := summary(replayed(t, Options{Args: []string{path}, Select: c.sel})); got != c.want {
			t.Errorf("%+v: %s, want %s", c.sel, got, c.want)
		}
	}
	var warned []string
	replayed(t, Options{Args: []string{path}, Select: Selection{Types: []string{"podz"}}, Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
	if len(warned) != 1 || warned[0] != "no events of podz in the recording, which holds deployments.apps, pods" {
		t.Errorf("a type not recorded: %q", warned)
	}
}

// TestLabelSelectorAsAWatchSeesIt: an object relabelled out of -l is DELETED (reason
// selector, its last state that matched), and ADDED when it matches again.
func TestLabelSelectorAsAWatchSeesIt(t *testing.T) {
	web := map[string]string{"app": "web"}
	path := recordingOf(t,
		rec{typ: "ADDED", at: 0, resource: "pods", obj: pod("p", "shop", "u1", web, corev1.PodPending, nil)},
		rec{typ: "MODIFIED", at: 1, resource: "pods", obj: pod("p", "shop", "u1", web, corev1.PodRunning, nil)},
		rec{typ: "MODIFIED", at: 2, resource: "pods", obj: pod("p", "shop", "u1", map[string]string{"app": "db"}, corev1.PodRunning, nil)},
		rec{typ: "MODIFIED", at: 3, resource: "pods", obj: pod("p", "shop", "u1", nil, corev1.PodFailed, nil)},
		rec{typ: "MODIFIED", at: 4, resource: "pods", obj: pod("p", "shop", "u1", web, corev1.PodFailed, nil)})
	events := replayed(t, Options{Args: []string{path}, Select: Selection{LabelSelector: "app=web"}, Objects: true})
	if got, want := summary(events), "ADDED pod/p, MODIFIED pod/p, DELETED pod/p(selector), ADDED pod/p"; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
	if phase := events[2].Object.(*corev1.Pod).Status.Phase; phase != corev1.PodRunning {
		t.Errorf("left the selection with its last state that matched: phase %s", phase)
	}
}

// TestOwnedChainsFromTheRecording: --owned takes the objects a Deployment owns,
// transitively, even a pod recorded before its ReplicaSet (the informers list one type
// after the other), with its owner chain; others are left out. The standard input is
// read once: there what comes before its owner (the ReplicaSet before its Deployment)
// is left out, and taken in at its next change (the pod).
func TestOwnedChainsFromTheRecording(t *testing.T) {
	deploy := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "d1"}}
	rs := &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "web-5d9f", Namespace: "shop", UID: "r1", OwnerReferences: []metav1.OwnerReference{*controller("Deployment", "web", "d1")}}}
	ownedPod := pod("web-5d9f-a", "shop", "p1", nil, corev1.PodPending, controller("ReplicaSet", "web-5d9f", "r1"))
	strayPod := pod("other", "shop", "p2", nil, corev1.PodPending, controller("ReplicaSet", "other", "r9"))
	event := &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"}, ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: "shop", UID: "e1"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Name: "web-5d9f-a", Namespace: "shop", UID: "p1"}, Reason: "Scheduled"}
	recs := []rec{
		{typ: "ADDED", at: 0, resource: "pods", obj: ownedPod},
		{typ: "ADDED", at: 0, resource: "pods", obj: strayPod},
		{typ: "ADDED", at: 1, resource: "replicasets", obj: rs},
		{typ: "ADDED", at: 1, resource: "deployments", obj: deploy},
		{typ: "ADDED", at: 2, resource: "events", obj: event},
		{typ: "MODIFIED", at: 3, resource: "pods", obj: pod("web-5d9f-a", "shop", "p1", nil, corev1.PodRunning, controller("ReplicaSet", "web-5d9f", "r1"))},
	}
	path := recordingOf(t, recs...)
	sel := Selection{Types: []string{"deploy"}, Names: []string{"web"}, Owned: true, WithEvents: true}
	events := replayed(t, Options{Args: []string{path}, Select: sel})
	if got, want := summary(events), "ADDED pod/web-5d9f-a, ADDED replicaset/web-5d9f, ADDED deployment/web, ADDED event/e1(related), MODIFIED pod/web-5d9f-a"; got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
	if got := fmt.Sprint(events[0].Owners); got != "[{Deployment web} {ReplicaSet web-5d9f}]" {
		t.Errorf("the pod's chain: %s", got)
	}
	if events[2].Owners == nil || len(events[2].Owners) != 0 || events[2].Rollout == nil {
		t.Errorf("the Deployment's own event: owners %v, rollout %v", events[2].Owners, events[2].Rollout)
	}

	var stdin strings.Builder
	for _, r := range recs {
		stdin.WriteString(r.line(t) + "\n")
	}
	events = replayed(t, Options{Args: []string{"-"}, Read: recording.Options{Stdin: strings.NewReader(stdin.String())}, Select: sel})
	if got, want := summary(events), "ADDED deployment/web, ADDED event/e1(related), MODIFIED pod/web-5d9f-a"; got != want {
		t.Errorf("from the standard input: %s\nwant %s", got, want)
	}
}

// TestWithEventsAboutTheObjectsSelected: core Events about the objects replayed are
// EVENT lines with --with-events; the others are left out.
func TestWithEventsAboutTheObjectsSelected(t *testing.T) {
	about := func(name, pod string) *corev1.Event {
		return &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"}, ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod, Namespace: "shop"}}
	}
	path := recordingOf(t,
		rec{typ: "ADDED", at: 0, resource: "pods", obj: pod("web-1", "shop", "u1", nil, corev1.PodRunning, nil)},
		rec{typ: "ADDED", at: 1, resource: "events", obj: about("e1", "web-1")},
		rec{typ: "ADDED", at: 2, resource: "events", obj: about("e2", "db-1")})
	got := summary(replayed(t, Options{Args: []string{path}, Select: Selection{Types: []string{"pods"}, WithEvents: true}}))
	if want := "ADDED pod/web-1, ADDED event/e1(related)"; got != want {
		t.Errorf("%s, want %s", got, want)
	}
	got = summary(replayed(t, Options{Args: []string{path}, Select: Selection{Types: []string{"events"}}}))
	if want := "ADDED event/e1, ADDED event/e2"; got != want {
		t.Errorf("events as objects: %s, want %s", got, want)
	}
}

// TestObjectJSONIsWrittenAsRecorded: whole objects or metadata alone, the JSON the
// sinks write is the recorded one, byte for byte.
func TestObjectJSONIsWrittenAsRecorded(t *testing.T) {
	p := pod("web-1", "shop", "u1", map[string]string{"a": "b"}, corev1.PodRunning, nil)
	path := recordingOf(t, rec{typ: "ADDED", at: 0, resource: "pods", obj: p})
	want, _ := json.Marshal(p)
	for _, objects := range []bool{true, false} {
		events := replayed(t, Options{Args: []string{path}, Objects: objects})
		got, err := events[0].ObjectJSON()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("objects %v: %s, %v", objects, got, err)
		}
		if events[0].Meta().GetLabels()["a"] != "b" || events[0].Kind != "Pod" {
			t.Errorf("objects %v: metadata %v, kind %q", objects, events[0].Meta(), events[0].Kind)
		}
	}
}

// TestAt: the object as it was at a time, as kubectl get -o yaml prints it; one not
// recorded by then, or deleted, is said to be so.
func TestAt(t *testing.T) {
	cm := func(value string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop", UID: "c1"}, Data: map[string]string{"mode": value}}
	}
	path := recordingOf(t,
		rec{typ: "ADDED", at: 10, resource: "configmaps", obj: cm("a")},
		rec{typ: "MODIFIED", at: 20, resource: "configmaps", obj: cm("b")},
		rec{typ: "DELETED", at: 30, resource: "configmaps", obj: cm("b")})
	opts := Options{Args: []string{path}, Select: Selection{Types: []string{"cm"}, Names: []string{"settings"}}}
	var out bytes.Buffer
	if err := At(context.Background(), opts, t0.Add(15*time.Second), "yaml", &out); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := (&printers.YAMLPrinter{}).PrintObj(cm("a"), &want); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() || !strings.Contains(want.String(), "mode: a") {
		t.Errorf("at 15s:\n%s\nwant:\n%s", out.String(), want.String())
	}
	var notRecorded *NotRecordedError
	for _, at := range []time.Duration{5 * time.Second, 35 * time.Second} {
		err := At(context.Background(), opts, t0.Add(at), "yaml", &bytes.Buffer{})
		if !errors.As(err, &notRecorded) {
			t.Errorf("at %s: %v", at, err)
		}
	}
}

// TestRecordedByIsReplayed: who made each change is replayed as recorded (the event's
// "by" and "byAmbiguous", each diff operation's own "by"), so that -o json writes the
// recording again as it was, and --by selects what pretty output names.
func TestRecordedByIsReplayed(t *testing.T) {
	pending := pod("web-1", "shop", "u1", nil, corev1.PodPending, nil)
	running := pod("web-1", "shop", "u1", map[string]string{"tier": "web"}, corev1.PodRunning, nil)
	const (
		kubectl = `{"manager":"kubectl-create","operation":"Update","time":"2026-11-23T14:00:00Z"}`
		kubelet = `{"manager":"kubelet","operation":"Update","subresource":"status","time":"2026-11-23T14:00:01Z"}`
		label   = `{"manager":"kubectl-label","operation":"Update","time":"2026-11-23T14:00:01Z"}`
	)
	recs := []rec{
		{typ: "ADDED", at: 0, resource: "pods", obj: pending, extra: `"by":[` + kubectl + `]`},
		{typ: "MODIFIED", at: 1, resource: "pods", obj: running, extra: `"diff":[` +
			`{"op":"add","path":"/metadata/labels","value":{"tier":"web"},"by":[` + label + `]},` +
			`{"op":"replace","path":"/status/phase","value":"Running","old":"Pending","by":[` + kubelet + `]}],` +
			`"by":[` + label + `,` + kubelet + `]`},
		{typ: "MODIFIED", at: 2, resource: "pods", obj: running, extra: `"diff":[],"by":[` + label + `,` + kubelet + `],"byAmbiguous":true`},
	}
	path := recordingOf(t, recs...)
	d := diff.NewDiffer(nil)
	for _, objects := range []bool{true, false} {
		events := replayed(t, Options{Args: []string{path}, Objects: objects, Diffs: true})
		if len(events) != len(recs) {
			t.Fatalf("objects %v: %d events", objects, len(events))
		}
		for i, ev := range events {
			got, err := render.AppendEnvelopeWithDiff(nil, ev, d, false)
			if want := recs[i].line(t); err != nil || string(got) != want {
				t.Errorf("objects %v, line %d:\n got %s (%v)\nwant %s", objects, i+1, got, err, want)
			}
		}
	}
	// An ignored path leaves its change out; the others keep their managers.
	ignore, _ := diff.ParseIgnorePath("metadata.labels")
	events := replayed(t, Options{Args: []string{path}, Diffs: true})
	got, err := render.AppendEnvelopeWithDiff(nil, events[1], diff.NewDiffer([]diff.IgnorePath{ignore}), false)
	if want := `"diff":[{"op":"replace","path":"/status/phase","value":"Running","old":"Pending"}],"by":[` + kubelet + `]}`; err != nil || !strings.Contains(string(got), want) {
		t.Errorf("with metadata.labels ignored:\n got %s (%v)\nwant %s", got, err, want)
	}
}

// TestSecretValuesAreRedacted: a recording made with --show-secrets holds Secret values;
// replayed, they are redacted as a watch redacts them (data, stringData and the
// last-applied annotation, in the object, the old one and the diff), one placeholder per
// value; --show-secrets keeps them; a recording redacted already is written as it is.
func TestSecretValuesAreRedacted(t *testing.T) {
	const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
	secret := func(password string) *corev1.Secret {
		applied := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds"},"stringData":{"password":%q}}`, password)
		return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "shop", UID: "s1", Annotations: map[string]string{lastApplied: applied}},
			Data:       map[string][]byte{"password": []byte(password), "user": []byte("admin-user")}}
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	oldJSON, _ := json.Marshal(secret("hunter2-old"))
	path := recordingOf(t,
		rec{typ: "ADDED", at: 0, resource: "secrets", obj: secret("hunter2-old")},
		rec{typ: "MODIFIED", at: 1, resource: "secrets", obj: secret("hunter2-new"), extra: `"old":` + string(oldJSON) + `,"diff":[` +
			`{"op":"replace","path":"/data/password","value":"` + b64("hunter2-new") + `","old":"` + b64("hunter2-old") + `"},` +
			`{"op":"replace","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","value":"hunter2-new","old":"hunter2-old"},` +
			`{"op":"add","path":"/data","value":{"token":"` + b64("tok-secret") + `"}}]`})
	values := []string{"hunter2", b64("hunter2-old"), b64("hunter2-new"), b64("admin-user"), b64("tok-secret")}

	written := func(opts Options) []string {
		var lines []string
		for _, ev := range replayed(t, opts) {
			line, err := render.AppendEnvelopeWithDiff(nil, ev, diff.NewDiffer(nil), true)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, string(line))
		}
		return lines
	}
	for _, objects := range []bool{true, false} {
		lines := written(Options{Args: []string{path}, Objects: objects, Diffs: true})
		all := strings.Join(lines, "\n")
		for _, v := range values {
			if strings.Contains(all, v) {
				t.Errorf("objects %v: a Secret value, %q, is written:\n%s", objects, v, all)
			}
		}
		var first, second struct {
			Object struct {
				Data     map[string]string `json:"data"`
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"object"`
			Old struct {
				Data map[string]string `json:"data"`
			} `json:"old"`
			Diff []struct {
				Path  string `json:"path"`
				Value any    `json:"value"`
				Old   any    `json:"old"`
			} `json:"diff"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
			t.Fatal(err)
		}
		placeholder := regexp.MustCompile(`^<redacted: [0-9]+ bytes #[0-9a-f]{8}>$`)
		for what, v := range map[string]string{
			"data.password":         first.Object.Data["password"],
			"data.user":             first.Object.Data["user"],
			"last-applied":          first.Object.Metadata.Annotations[lastApplied],
			"old data.password":     second.Old.Data["password"],
			"diff /data/password":   fmt.Sprint(second.Diff[0].Value),
			"diff last-applied old": fmt.Sprint(second.Diff[1].Old),
			"diff /data token":      fmt.Sprint(second.Diff[2].Value.(map[string]any)["token"]),
		} {
			if !placeholder.MatchString(v) {
				t.Errorf("objects %v: %s is %q, not a placeholder", objects, what, v)
			}
		}
		switch {
		case first.Object.Data["user"] != second.Object.Data["user"]:
			t.Errorf("objects %v: an unchanged value has two placeholders: %q, %q", objects, first.Object.Data["user"], second.Object.Data["user"])
		case first.Object.Data["password"] != second.Old.Data["password"] || first.Object.Data["password"] != fmt.Sprint(second.Diff[0].Old):
			t.Errorf("objects %v: the old password's placeholders differ: %q, %q, %v", objects, first.Object.Data["password"], second.Old.Data["password"], second.Diff[0].Old)
		case first.Object.Data["password"] == second.Object.Data["password"]:
			t.Errorf("objects %v: a changed value keeps its placeholder", objects)
		case !strings.HasPrefix(first.Object.Data["password"], "<redacted: 11 bytes #"):
			t.Errorf("objects %v: the length said is not the decoded value's: %q", objects, first.Object.Data["password"])
		}
	}

	shown := strings.Join(written(Options{Args: []string{path}, Diffs: true, ShowSecrets: true}), "\n")
	for _, v := range values {
		if !strings.Contains(shown, v) {
			t.Errorf("ShowSecrets: %q is not written", v)
		}
	}

	// A recording redacted when it was made is written as it is.
	redacted := written(Options{Args: []string{path}, Diffs: true})
	again := filepath.Join(t.TempDir(), "again.jsonl")
	if err := os.WriteFile(again, []byte(strings.Join(redacted, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := written(Options{Args: []string{again}, Diffs: true}); strings.Join(got, "\n") != strings.Join(redacted, "\n") {
		t.Errorf("a redacted recording replayed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(redacted, "\n"))
	}
}

// TestHistoryOfOneObject: history's name selects one object: a name recorded in several
// namespaces asks for -n (a usage error), unless -A or -n lists them; a name not
// recorded is a NotRecordedError naming the type/name, the recording and where else it
// is. From files and from the standard input alike.
func TestHistoryOfOneObject(t *testing.T) {
	cm := func(name, ns, value string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(ns + name)}, Data: map[string]string{"mode": value}}
	}
	recs := []rec{
		{typ: "ADDED", at: 0, resource: "configmaps", obj: cm("settings", "a", "1")},
		{typ: "ADDED", at: 1, resource: "configmaps", obj: cm("settings", "b", "1")},
		{typ: "ADDED", at: 2, resource: "configmaps", obj: cm("other", "a", "1")},
		{typ: "MODIFIED", at: 3, resource: "configmaps", obj: cm("settings", "a", "2")},
	}
	path := recordingOf(t, recs...)
	var stdin strings.Builder
	for _, r := range recs {
		stdin.WriteString(r.line(t) + "\n")
	}
	for _, from := range []string{"file", "stdin"} {
		run := func(sel Selection, all bool) (string, error) {
			t.Helper()
			opts := Options{Args: []string{path}, Select: sel}
			if from == "stdin" {
				opts.Args, opts.Read.Stdin = []string{"-"}, strings.NewReader(stdin.String())
			}
			h, err := NewHistory(opts, all)
			if err != nil {
				t.Fatal(err)
			}
			var events []*event.Event
			err = h.Run(context.Background(), func(ev *event.Event) bool { events = append(events, ev); return true })
			var parts []string
			for _, ev := range events {
				parts = append(parts, ev.Meta().GetNamespace()+"/"+ev.Meta().GetName())
			}
			return strings.Join(parts, " "), err
		}
		where := path
		if from == "stdin" {
			where = "the standard input"
		}
		settings := Selection{Types: []string{"cm"}, Names: []string{"settings"}}
		got, err := run(settings, false)
		var usage *diag.UsageError
		if !errors.As(err, &usage) || err.Error() != "cm/settings was recorded in several namespaces (a, b): choose one with -n, or all of them with -A" || got != "" {
			t.Errorf("%s: ambiguous name: %q, %v", from, got, err)
		}
		for _, c := range []struct {
			ns   []string
			all  bool
			want string
		}{
			{[]string{"a"}, false, "a/settings a/settings"},
			{nil, true, "a/settings b/settings a/settings"},
			{[]string{"a", "b"}, false, "a/settings b/settings a/settings"},
		} {
			sel := settings
			sel.Namespaces = c.ns
			if got, err := run(sel, c.all); err != nil || got != c.want {
				t.Errorf("%s: -n %v -A %v: %q, %v; want %q", from, c.ns, c.all, got, err, c.want)
			}
		}
		var notRecorded *NotRecordedError
		for _, c := range []struct {
			sel  Selection
			want string
		}{
			{Selection{Types: []string{"cm"}, Names: []string{"nosuch"}}, "cm/nosuch was not recorded in " + where},
			{Selection{Types: []string{"cm"}, Names: []string{"settings"}, Namespaces: []string{"c"}},
				"cm/settings was not recorded in namespace c in " + where + map[string]string{"file": " (it was recorded in namespaces a, b)"}[from]},
			{Selection{Types: []string{"podz"}, Names: []string{"web"}},
				"podz/web was not recorded in " + where + map[string]string{"file": ", which holds no podz but configmaps"}[from]},
		} {
			got, err := run(c.sel, false)
			if !errors.As(err, &notRecorded) || err.Error() != c.want || got != "" {
				t.Errorf("%s: %+v: %q, %v\nwant the error %q", from, c.sel, got, err, c.want)
			}
		}
	}
}

// TestSelectionThatMatchesNothingIsSaid: clusters, namespaces and names given that the
// recording does not hold are said, each with what it holds; a selection that matches
// nothing else is said too; nothing is said when events were replayed.
func TestSelectionThatMatchesNothingIsSaid(t *testing.T) {
	web := pod("web-1", "shop", "u1", nil, corev1.PodRunning, nil)
	db := pod("db-1", "data", "u2", nil, corev1.PodRunning, nil)
	one := recordingOf(t, rec{typ: "ADDED", at: 0, resource: "pods", obj: web}, rec{typ: "ADDED", at: 1, resource: "pods", obj: db})
	several := recordingOf(t,
		rec{typ: "ADDED", at: 0, resource: "pods", obj: web, extra: `"cluster":"prod"`},
		rec{typ: "ADDED", at: 1, resource: "pods", obj: db, extra: `"cluster":"dev"`})
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		sel  Selection
		want string // "" for nothing said
	}{
		{one, Selection{}, ""},
		{one, Selection{Clusters: []string{"prod"}}, "--cluster prod: the recording names no cluster (it was made of one cluster; drop --cluster)"},
		{several, Selection{Clusters: []string{"staging"}}, "no events of cluster staging in the recording, which holds the clusters dev, prod"},
		{several, Selection{Clusters: []string{"prod", "staging"}}, "no events of cluster staging in the recording, which holds the clusters dev, prod"},
		{one, Selection{Namespaces: []string{"shopp"}}, "no events in namespace shopp in the recording, which holds the namespaces data, shop"},
		{one, Selection{Types: []string{"po"}, Namespaces: []string{"shopp"}}, "no events of po in namespace shopp in the recording, which holds po in namespaces data, shop"},
		{one, Selection{Types: []string{"po"}, Names: []string{"web-9"}, Namespaces: []string{"shop"}}, "no events of po named web-9 in namespace shop in the recording"},
		{one, Selection{Types: []string{"po"}, Names: []string{"db-1"}, Namespaces: []string{"shop"}}, "no events of po named db-1 in namespace shop in the recording"},
		{one, Selection{Since: t0.Add(time.Hour)}, "none of the 2 events recorded matches the selection"},
		{empty, Selection{}, empty + " holds no events"},
	} {
		var warned []string
		replayed(t, Options{Args: []string{c.path}, Select: c.sel, Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }})
		want := []string{c.want}
		if c.want == "" {
			want = nil
		}
		if fmt.Sprint(warned) != fmt.Sprint(want) {
			t.Errorf("%+v: said %q, want %q", c.sel, warned, want)
		}
	}
}
