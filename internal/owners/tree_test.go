package owners

import (
	"context"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubeevents/kubeevents/internal/event"
)

var (
	deploymentKind = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	replicaSetKind = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	podKind        = schema.GroupKind{Kind: "Pod"}
)

func object(kind, name string, uid types.UID, owners ...*metav1.ObjectMeta) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid}}
	o.Kind = kind
	for _, owner := range owners {
		yes := true
		o.OwnerReferences = append(o.OwnerReferences, metav1.OwnerReference{
			APIVersion: "apps/v1", Kind: ownerKinds[owner.UID], Name: owner.Name, UID: owner.UID, Controller: &yes})
	}
	return o
}

// ownerKinds names the kind of each test owner by UID.
var ownerKinds = map[types.UID]string{"d": "Deployment", "rs": "ReplicaSet", "rs2": "ReplicaSet", "other": "ReplicaSet", "a": "ReplicaSet", "b": "ReplicaSet"}

// server is the objects a fake Lookup finds, and how often it was asked.
type server struct {
	mu      sync.Mutex
	objects map[string]metav1.Object
	asked   int
}

func (s *server) lookup(_ context.Context, kind schema.GroupKind, namespace, name string) (metav1.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
	if o, ok := s.objects[kind.Kind+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: kind.Kind}, name)
}

func newTestTree(s *server, warnings *[]string) (*Tree, *metav1.PartialObjectMetadata) {
	d := object("Deployment", "web", "d")
	warn := func(format string, args ...any) {}
	if warnings != nil {
		warn = func(format string, args ...any) { *warnings = append(*warnings, format) }
	}
	return NewTree(d, "Deployment", []schema.GroupKind{deploymentKind, replicaSetKind, podKind}, s.lookup, warn), d
}

func annotated(t *Tree, obj *metav1.PartialObjectMetadata) string {
	ev := &event.Event{Object: obj, Kind: obj.Kind}
	t.Annotate(ev)
	var links []string
	for _, o := range ev.Owners {
		links = append(links, o.Kind+"/"+o.Name)
	}
	return strings.Join(links, ">")
}

// In order (the ReplicaSet, then its pod): both join without asking the server.
func TestTreeJoinsInOrder(t *testing.T) {
	s := &server{}
	tree, d := newTestTree(s, nil)
	rs := object("ReplicaSet", "web-1", "rs", &d.ObjectMeta)
	pod := object("Pod", "web-1-a", "p", &rs.ObjectMeta)
	if !tree.Accept("ReplicaSet")(rs) || !tree.Accept("Pod")(pod) {
		t.Fatal("a ReplicaSet of the Deployment, or its pod, was not accepted")
	}
	if s.asked != 0 {
		t.Errorf("the server was asked %d times; everything was delivered in order", s.asked)
	}
	if tree.Accept("Deployment")(d) || !tree.AcceptRoot("Deployment", "web")(d) || tree.AcceptRoot("Deployment", "web")(rs) {
		t.Error("the root is a child type's, or the root informer takes another object")
	}
	if got := annotated(tree, pod); got != "Deployment/web>ReplicaSet/web-1" {
		t.Errorf("pod's owners = %q", got)
	}
	if got := annotated(tree, d); got != "" || !tree.IsRoot(&event.Event{Object: d}) {
		t.Errorf("root's owners = %q, IsRoot false", got)
	}
}

// A pod delivered before its ReplicaSet (another informer, another goroutine): the
// ReplicaSet is looked up, both join, and the ReplicaSet's own event later finds it.
func TestTreeChildBeforeOwner(t *testing.T) {
	s := &server{objects: map[string]metav1.Object{}}
	tree, d := newTestTree(s, nil)
	rs := object("ReplicaSet", "web-1", "rs", &d.ObjectMeta)
	s.objects["ReplicaSet/web-1"] = rs
	pod := object("Pod", "web-1-a", "p", &rs.ObjectMeta)
	if !tree.Accept("Pod")(pod) {
		t.Fatal("a pod delivered before its ReplicaSet was not accepted")
	}
	if s.asked != 1 {
		t.Errorf("server asked %d times, want 1", s.asked)
	}
	if !tree.Accept("ReplicaSet")(rs) || s.asked != 1 {
		t.Errorf("the ReplicaSet's own event: not accepted, or looked up again (asked %d)", s.asked)
	}
	if got := annotated(tree, pod); got != "Deployment/web>ReplicaSet/web-1" {
		t.Errorf("pod's owners = %q", got)
	}
}

// Objects of other owners are left out, and their owners are asked about once.
func TestTreeLeavesOutOthers(t *testing.T) {
	s := &server{objects: map[string]metav1.Object{}}
	tree, _ := newTestTree(s, nil)
	otherDeployment := object("Deployment", "api", "other-d")
	other := object("ReplicaSet", "api-1", "other")
	yes := true
	other.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "api", UID: "other-d", Controller: &yes}}
	s.objects["ReplicaSet/api-1"] = other
	s.objects["Deployment/api"] = otherDeployment
	for i := 0; i < 3; i++ {
		if tree.Accept("Pod")(object("Pod", "api-1-x", types.UID("op"+string(rune('0'+i))), &other.ObjectMeta)) {
			t.Fatal("a pod of another Deployment was accepted")
		}
	}
	if s.asked != 2 {
		t.Errorf("server asked %d times, want 2 (the ReplicaSet and its Deployment, once)", s.asked)
	}
	// An owner of a kind that is not followed is never looked up.
	cm := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "x",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "c"}}}}
	if tree.Accept("Pod")(cm) || s.asked != 2 {
		t.Errorf("an object owned by a ConfigMap: accepted, or looked up (asked %d)", s.asked)
	}
}

// A missing middle link (the ReplicaSet is gone) and a cycle of owners: the objects are
// left out, the cycle is reported once.
func TestTreeMissingLinkAndCycle(t *testing.T) {
	s := &server{objects: map[string]metav1.Object{}}
	var warnings []string
	tree, _ := newTestTree(s, &warnings)
	gone := &metav1.ObjectMeta{Name: "web-gone", UID: "rs2"}
	if tree.Accept("Pod")(object("Pod", "web-gone-a", "p1", gone)) {
		t.Error("a pod whose ReplicaSet is gone was accepted")
	}
	a := object("ReplicaSet", "a", "a")
	b := object("ReplicaSet", "b", "b", &a.ObjectMeta)
	a.OwnerReferences = object("ReplicaSet", "a", "a", &b.ObjectMeta).OwnerReferences
	s.objects["ReplicaSet/a"], s.objects["ReplicaSet/b"] = a, b
	for i := 0; i < 2; i++ {
		if tree.Accept("Pod")(object("Pod", "loop", types.UID("p2"+string(rune('0'+i))), &a.ObjectMeta)) {
			t.Error("a pod under a cycle of owners was accepted")
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "form a cycle") {
		t.Errorf("warnings = %q, want one about the cycle", warnings)
	}
}

// Core Events are accepted when they are about an object of the tree; their chain
// reaches down to that object.
func TestTreeEvents(t *testing.T) {
	s := &server{}
	tree, d := newTestTree(s, nil)
	rs := object("ReplicaSet", "web-1", "rs", &d.ObjectMeta)
	tree.Accept("ReplicaSet")(rs)
	about := &corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: "web-1", UID: "rs"}}
	if !tree.AcceptEvent(about) {
		t.Fatal("an Event about the ReplicaSet was not accepted")
	}
	if tree.AcceptEvent(&corev1.Event{InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Name: "x", UID: "x"}}) {
		t.Error("an Event about another object was accepted")
	}
	// An Event about a pod of the tree that its informer has not delivered yet: the pod
	// is looked up and joins.
	pod := object("Pod", "web-1-a", "p", &rs.ObjectMeta)
	s.objects = map[string]metav1.Object{"Pod/web-1-a": pod}
	early := &corev1.Event{InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Name: "web-1-a", Namespace: "ns", UID: "p"}}
	if !tree.AcceptEvent(early) || !tree.Accept("Pod")(pod) {
		t.Error("an Event that came before its pod, or the pod after it, was not accepted")
	}
	asked := s.asked
	if tree.AcceptEvent(&corev1.Event{InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Name: "x", UID: "x"}}) || s.asked != asked {
		t.Error("an Event about an object found outside the tree was accepted, or looked up again")
	}
	ev := &event.Event{Object: about, Related: true}
	tree.Annotate(ev)
	if len(ev.Owners) != 2 || ev.Owners[1] != (event.Owner{Kind: "ReplicaSet", Name: "web-1"}) {
		t.Errorf("Event's owners = %v", ev.Owners)
	}
}

// The followed Deployment's DELETED event says it was deleted, not where its rollout
// stood before (which read "Waiting for deployment rollout…" to the end).
func TestTreeDeletedRootSaysDeleted(t *testing.T) {
	tree, _ := newTestTree(&server{}, nil)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "d", Generation: 2},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}}
	for _, c := range []struct {
		typ  event.EventType
		want event.RolloutState
	}{{event.Modified, event.RolloutProgressing}, {event.Deleted, event.RolloutDeleted}} {
		ev := &event.Event{Type: c.typ, Object: d, Kind: "Deployment"}
		tree.Annotate(ev)
		if ev.Rollout == nil || ev.Rollout.State != c.want {
			t.Errorf("%s: rollout %+v, want %s", c.typ, ev.Rollout, c.want)
		}
		if c.typ == event.Deleted && (ev.Rollout.Message != `deployment "web" was deleted` || !ev.Rollout.Done()) {
			t.Errorf("DELETED: %+v, want a done rollout that says the deployment was deleted", ev.Rollout)
		}
	}
}
