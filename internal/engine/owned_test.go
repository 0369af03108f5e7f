package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/informer"
	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/owners"
	"github.com/kubeevents/kubeevents/internal/plan"
)

// chains is a sink that keeps each event's object and owner chain.
type chains struct {
	mu    sync.Mutex
	lines []string
}

func (c *chains) Write(ev *event.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var links []string
	for _, o := range ev.Owners {
		links = append(links, o.Name)
	}
	c.lines = append(c.lines, fmt.Sprintf("%s %s [%s]", ev.Type, ev.Meta().GetName(), strings.Join(links, ">")))
	return nil
}

func (c *chains) Close() error { return nil }

func (c *chains) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(slices.Values(c.lines))
}

func ownedConfigMap(name string, uid types.UID, owner *corev1.ConfigMap) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid, ResourceVersion: "1"}}
	if owner != nil {
		yes := true
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &yes}}
	}
	return cm
}

// The followed object (by name), what it owns transitively (a child type's informer,
// without the names), each with its chain; an object of another owner is left out.
func TestRunOwned(t *testing.T) {
	root := ownedConfigMap("root", "r", nil)
	child := ownedConfigMap("child", "c", root)
	grandchild := ownedConfigMap("grandchild", "g", child)
	stranger := ownedConfigMap("stranger", "s", nil)
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	clients := informer.Clients{Dynamic: dynamicfake.NewSimpleDynamicClient(scheme, root, child, grandchild, stranger,
		ownedConfigMap("strangers-child", "sc", stranger))}

	sink := &chains{}
	cfg := runConfig{cfg: &Config{Watch: plan.Request{Names: []string{"root"}}, End: End{Grace: time.Second, MaxEvents: 3}},
		hooks: hooks{warn: func(string, ...any) {}}}
	cfg.listeners = []*listener.Listener{listener.New(listener.Config{Name: "chains"}, sink, cfg.hooks.warn)}
	lookup := func(_ context.Context, _ schema.GroupKind, _, name string) (metav1.Object, error) {
		return clients.Dynamic.Resource(configMaps.GVR).Namespace("ns").Get(context.Background(), name, metav1.GetOptions{})
	}
	cfg.follow = owners.FollowTree(owners.NewTree(root, "ConfigMap", []schema.GroupKind{{Kind: "ConfigMap"}}, lookup, nil),
		configMaps, "root", []owners.ChildType{{Resource: configMaps}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := runOn(ctx, clients, cfg)
	if err != nil || res.Reason != StopLimit {
		t.Fatalf("Run = %+v, %v; want the 3 events of the tree", res, err)
	}
	// The root is a ConfigMap too, listed by both informers: only its own informer shows
	// it (a fourth event would have been made in place of one of these).
	want := []string{"ADDED child [root]", "ADDED grandchild [root>child]", "ADDED root []"}
	if got := sink.got(); !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q", got, want)
	}
}
