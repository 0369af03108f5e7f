package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/clusterstore"
)

// checkpointObjects are the names of the checkpoint's objects (Secrets of its type and
// name; the label is left out of a name longer than a label value), and the slots its
// index names.
func checkpointObjects(t *testing.T, r *haRelease) (names []string, slots int) {
	t.Helper()
	list, err := client.CoreV1().Secrets(r.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		if s.Type != clusterstore.SecretType || !strings.HasPrefix(s.Name, r.checkpoint) {
			continue
		}
		names = append(names, s.Name)
		if s.Name == r.checkpoint {
			var idx struct {
				Slots int `json:"slots"`
			}
			if err := json.Unmarshal(s.Data["index.json"], &idx); err != nil {
				t.Fatal(err)
			}
			slots = idx.Slots
		}
	}
	return names, slots
}

// orphansOf are the checkpoint's objects that are neither its index nor a shard of a
// slot its index names.
func orphansOf(r *haRelease, names []string, slots int) []string {
	var out []string
	for _, n := range names {
		if n == r.checkpoint {
			continue
		}
		slot, err := strconv.Atoi(strings.Split(strings.TrimPrefix(n, r.checkpoint+"-"), "-")[0])
		if err != nil || slot >= slots {
			out = append(out, n)
		}
	}
	return out
}

// One object too big for a shard of the in-cluster checkpoint (a ConfigMap of 1 MB of
// random printable text: 846 KiB gzipped, more than the 768 KiB a shard holds), made
// while a leader runs with the chart's RBAC: the checkpoint keeps it by its metadata
// only, said once in a line naming it, and goes on being written; no shard is left
// beyond the slots its index names; SIGTERM ends the leader well within the chart's
// grace period of 30 s; and the hand-over is exact: the new leader emits nothing
// already delivered, the big ConfigMap included.
func TestHACheckpointOfAnObjectTooBigForAShard(t *testing.T) {
	ns := newNamespace(t)
	r := applyChartRBAC(t, ns)
	hook := startReceiver(t)
	one := startProc(t, nil, nil, r.replicaArgs(hook.url())...)
	one.waitStderr(30*time.Second, leadingRe)
	two := startProc(t, nil, nil, r.replicaArgs(hook.url())...)
	two.waitStderr(30*time.Second, standingByRe)
	procs := []*proc{one, two}

	var a []haChange
	for i := range 10 {
		a = append(a, haCreate(t, ns, fmt.Sprintf("a-%02d", i)))
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	text := make([]byte, 1<<20-1024)
	for i := range text {
		text[i] = byte(' ' + rnd.IntN(95))
	}
	big, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "big", Labels: map[string]string{"ha": "yes"}}, Data: map[string]string{"blob": string(text)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a = append(a, haChange{name: "big", rv: big.ResourceVersion}, haUpdate(t, ns, "a-00", "1"))
	hook.waitGot(t, procs, a, 60*time.Second)
	waitUntil(t, one, 30*time.Second, "the checkpoint holding every state delivered", func() bool { return checkpointHas(t, r, statesOf(a)) })
	one.waitStderr(10*time.Second, regexp.MustCompile(`--resume secret:\S+: configmaps\.v1 `+ns+`/big takes \d+ KiB gzipped, more than a shard holds \(764 KiB\): the checkpoint keeps its metadata only`))
	// More writes: the checkpoint follows, and leaves no shard behind.
	for i := range 3 {
		a = append(a, haUpdate(t, ns, fmt.Sprintf("a-%02d", i+1), "1"))
	}
	hook.waitGot(t, procs, a, 30*time.Second)
	waitUntil(t, one, 30*time.Second, "the checkpoint following", func() bool { return checkpointHas(t, r, statesOf(a)) })
	names, slots := checkpointObjects(t, r)
	if orphans := orphansOf(r, names, slots); len(orphans) > 0 {
		t.Errorf("%d objects beyond the index's %d slots: %v", len(orphans), slots, orphans)
	}
	t.Logf("the checkpoint: %d objects, %d slots", len(names), slots)
	if strings.Contains(one.Stderr(), "cannot be written") {
		t.Errorf("the leader could not write its checkpoint:\n%s", one.Stderr())
	}

	beforeTerm := len(hook.events(t))
	one.signal(syscall.SIGTERM)
	termed := time.Now()
	if _, code := one.wait(30 * time.Second); code != 0 {
		t.Fatalf("the leader stopped with SIGTERM exited %d; stderr:\n%s", code, one.Stderr())
	}
	took := time.Since(termed)
	t.Logf("SIGTERM to exit: %s", took.Round(10*time.Millisecond))
	if took > 15*time.Second {
		t.Errorf("the leader took %s to stop after SIGTERM; the chart gives it 30 s", took)
	}
	two.waitStderr(10*time.Second, leadingRe)
	two.waitStderr(30*time.Second, regexp.MustCompile(`resumed configmaps from secret:\S+ \(written [^)]*\): 11 now, 0 changed, 0 created, 0 deleted since`))
	e := []haChange{haUpdate(t, ns, "a-09", "2")}
	events := hook.waitGot(t, []*proc{two}, e, 30*time.Second)
	for _, ev := range events[beforeTerm:] {
		if !slices.ContainsFunc(e, func(c haChange) bool { return c.name == ev.name && c.rv == ev.rv }) {
			t.Errorf("after the SIGTERM hand-over the receiver got %s %s at %s, which is not a change made since", ev.typ, ev.name, ev.rv)
		}
	}
	haFinalStates(t, ns, events)
}

// A checkpoint in ConfigMaps of a watch of Secrets is refused before anything is
// watched or written, exit 2, saying to keep it in Secrets: the view role may read
// ConfigMaps, not Secrets.
func TestConfigMapCheckpointOfSecretsRefused(t *testing.T) {
	ns := newNamespace(t)
	for _, tc := range []struct {
		args []string
		what string
	}{
		{[]string{"watch", "secrets", "-n", ns, "--resume", "configmap:" + ns + "/ck"}, "the key behind the fingerprints of their redacted values"},
		{[]string{"watch", "secrets,configmaps", "-n", ns, "--show-secrets", "--resume", "configmap:" + ns + "/ck"}, "their values (--show-secrets)"},
	} {
		res := runKubeevents(t, 60*time.Second, tc.args...)
		want := fmt.Sprintf("kubeevents: --resume configmap:%s/ck: a checkpoint of Secrets holds %s, and ConfigMaps may be read by anyone who may view the namespace; keep it in Secrets: --resume secret:%s/ck\n", ns, tc.what, ns)
		if res.code != 2 || res.stderr != want || res.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and:\n%s", tc.args, res.code, res.stdout, res.stderr, want)
		}
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(context.Background(), "ck", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused checkpoint was written: %v", err)
	}
}
