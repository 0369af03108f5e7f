package health

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/kubeevents/kubeevents/internal/event"
)

// kstatusCase is one object of kstatus's own tests, with the status kstatus gives it.
type kstatusCase struct {
	name   string
	want   event.HealthStatus
	object []byte // JSON
}

// kstatusCases reads testdata/kstatus.yaml: documents, each after a comment line
// "# NAME: STATUS".
func kstatusCases(t *testing.T) []kstatusCase {
	t.Helper()
	data, err := os.ReadFile("testdata/kstatus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	head := regexp.MustCompile(`(?m)^# (\w+): (\w+)$`)
	var cases []kstatusCase
	for _, doc := range strings.Split(string(data), "\n---\n")[1:] {
		m := head.FindStringSubmatch(doc)
		if m == nil {
			t.Fatalf("a document without its # NAME: STATUS line:\n%s", doc)
		}
		doc = strings.ReplaceAll(doc, "NOW", time.Now().UTC().Format(time.RFC3339))
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
		cases = append(cases, kstatusCase{name: m[1], want: event.HealthStatus(m[2]), object: j})
	}
	return cases
}

// asInformers decodes an object's JSON as an informer hands it over: a typed object of
// client-go's scheme for a built-in kind (protobuf or JSON, decoded into the same Go
// type, unknown fields dropped), unstructured for any other.
func asInformers(t *testing.T, raw []byte) (runtime.Object, schema.GroupVersionResource, string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	gvk := u.GroupVersionKind()
	gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: strings.ToLower(gvk.Kind) + "s"}
	if !scheme.Scheme.Recognizes(gvk) {
		return u, gvr, gvk.Kind
	}
	typed, err := scheme.Scheme.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(typed); err != nil {
		t.Fatal(err)
	}
	// Informers of typed objects leave TypeMeta empty; kubeevents fills it in.
	typed.GetObjectKind().SetGroupVersionKind(gvk)
	return typed, gvr, gvk.Kind
}

// The objects of kstatus's own test tables, fed through the health step as informers hand
// them over (typed for built-in kinds), get the status kstatus's tests expect of them.
func TestKstatusTables(t *testing.T) {
	cases := kstatusCases(t)
	if len(cases) < 50 {
		t.Fatalf("read %d cases of testdata/kstatus.yaml, want them all", len(cases))
	}
	rules, err := mustCatalog(t, nil).Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		step := New(Config{Rules: rules})
		obj, gvr, kind := asInformers(t, tc.object)
		ev := &event.Event{Type: event.Added, Time: time.Now(), Resource: gvr, Kind: kind, Object: obj}
		step.Process(ev)
		want := tc.want
		if why, ok := overridden[tc.name]; ok {
			want = why.status
			t.Logf("%s: %s: %s", tc.name, why.because, want)
		}
		if why, ok := unservable[tc.name]; ok {
			// Its typed form is what the API server would serve: kstatus on that.
			raw, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			served := &unstructured.Unstructured{}
			if err := served.UnmarshalJSON(raw); err != nil {
				t.Fatal(err)
			}
			want = Kstatus(served).Status
			t.Logf("%s: %s; as served: %s", tc.name, why, want)
		}
		if ev.Health == nil || ev.Health.Status != want {
			t.Errorf("%s (%T): health %+v, want %s", tc.name, obj, ev.Health, want)
		}
		// The unstructured form (a dynamic informer's, or a recording's) agrees.
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(tc.object); err != nil {
			t.Fatal(err)
		}
		if h := Kstatus(u); h.Status != tc.want {
			t.Errorf("%s unstructured: health %+v, want %s", tc.name, h, tc.want)
		}
	}
}

// unservable are the objects of kstatus's tables that no API server serves: they lack a
// field the built-in type always has (no omitempty), which its typed form, as an
// informer hands it over, carries as zero.
var unservable = map[string]string{
	"dsBadStatus": "a DaemonSet's status always has desiredNumberScheduled (0 when not written yet)",
}

// overridden are the objects of kstatus's tables whose health a shipped rule gives on
// purpose (docs/health.md says why); kstatus alone still gives them its status.
var overridden = map[string]struct {
	status  event.HealthStatus
	because string
}{
	"jobInProgress": {event.HealthInProgress, "the shipped Job rule waits for a running Job to finish (kstatus: Current once started)"},
}

func mustCatalog(t *testing.T, user map[string]Rule) *Catalog {
	t.Helper()
	c, err := NewCatalog(user)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A pod's status built by hand (podStatusOf) gives kstatus what converting the whole pod
// gives it: the same health, for pods in every phase, crash-looping, unschedulable, and
// with an observed generation behind.
func TestPodStatusAsConverted(t *testing.T) {
	var pods []*corev1.Pod
	for _, tc := range kstatusCases(t) {
		if obj, _, kind := asInformers(t, tc.object); kind == "Pod" {
			pods = append(pods, obj.(*corev1.Pod))
		}
	}
	lagging := pods[len(pods)-1].DeepCopy()
	lagging.Generation, lagging.Status.ObservedGeneration = 3, 2
	waiting := pods[0].DeepCopy()
	waiting.Status.Phase = corev1.PodRunning
	waiting.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "back-off"}}},
		{Name: "b", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	reconciling := pods[0].DeepCopy()
	reconciling.Status.Conditions = []corev1.PodCondition{{Type: "Reconciling", Status: corev1.ConditionTrue, Reason: "Resizing", Message: "resizing"}}
	pods = append(pods, lagging, waiting, reconciling)
	if len(pods) < 8 {
		t.Fatalf("%d pods, want kstatus's and three more", len(pods))
	}
	for _, p := range pods {
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
		if err != nil {
			t.Fatal(err)
		}
		want := Kstatus(&unstructured.Unstructured{Object: raw})
		if got := Kstatus(p); got != want {
			t.Errorf("pod %s (%s): %+v, converted whole %+v", p.Name, p.Status.Phase, got, want)
		}
	}
}
