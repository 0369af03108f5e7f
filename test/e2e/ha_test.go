package e2e

// Highly available kubeevents: two real kubeevents processes run as the
// chart's pods would (the chart's rendered RBAC applied, each with the chart's
// ServiceAccount's token, --leader-elect, the same flags, an http sink to a receiver the
// test runs, the checkpoint in a Secret), against the living cluster. Short lease
// durations keep each test within seconds.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubeevents/kubeevents/internal/clusterstore"
)

// Lease durations of these tests: a standby takes over a killed leader within
// haLease + about two retry periods (client-go tries every retry period, jittered up to
// 2.2 of it).
const (
	haLease = 3 * time.Second
	haRenew = 2 * time.Second
	haRetry = 500 * time.Millisecond
)

// helmBinary is helm, built from its Go module by hack/helm.sh (cached; make test passes
// it in KUBEEVENTS_HELM).
func helmBinary(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("KUBEEVENTS_HELM"); h != "" {
		return h
	}
	out, err := exec.Command(filepath.Join(repoRoot, "hack", "helm.sh")).Output()
	if err != nil {
		t.Fatalf("hack/helm.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func helm(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// haRelease is the chart rendered for a release named after ns, in ns: its ServiceAccount
// and RBAC applied, and a kubeconfig with the ServiceAccount's token, as a pod of the
// release would have. The cluster-scoped RBAC goes at the end of the test.
type haRelease struct {
	ns, release, fullname string
	lease, checkpoint     string
	kubeconfig            string // the ServiceAccount's
}

func applyChartRBAC(t *testing.T, ns string, set ...string) *haRelease {
	t.Helper()
	r := &haRelease{ns: ns, release: ns}
	r.fullname = ns + "-kubeevents"
	if len(r.fullname) > 63 {
		r.fullname = strings.TrimSuffix(r.fullname[:63], "-")
	}
	r.lease, r.checkpoint = r.fullname, r.fullname+"-checkpoint"
	args := []string{"template", r.release, filepath.Join(repoRoot, "charts", "kubeevents"), "--namespace", ns,
		"--show-only", "templates/serviceaccount.yaml", "--show-only", "templates/rbac.yaml"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	rendered := helm(t, args...)
	kubectlOut(t, rendered, "apply", "-f", "-")
	t.Cleanup(func() {
		_ = exec.Command(filepath.Join(clusterBin, "kubectl"), "--kubeconfig", kubeconfig, "delete",
			"clusterrole,clusterrolebinding", r.fullname, "--ignore-not-found", "--wait=false").Run()
	})
	tok, err := client.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), r.fullname,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token of ServiceAccount %s: %v", r.fullname, err)
	}
	r.kubeconfig = tokenKubeconfig(t, tok.Status.Token, ns)
	return r
}

// tokenKubeconfig is a kubeconfig for the local cluster that authenticates with token.
func tokenKubeconfig(t *testing.T, token, ns string) string {
	t.Helper()
	admin, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster := admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = cluster
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "sa", Namespace: ns}
	cfg.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// replicaArgs are one replica's flags, as the chart's Deployment gives them, with the
// test's lease durations, watching the labelled configmaps of the namespace.
func (r *haRelease) replicaArgs(hook string, more ...string) []string {
	return r.replicaSinkArgs("http(batch=20,batch-interval=100ms)="+hook, more...)
}

// replicaSinkArgs are replicaArgs with another --sink.
func (r *haRelease) replicaSinkArgs(sink string, more ...string) []string {
	return append([]string{"watch", "configmaps", "-n", r.ns, "-l", "ha=yes", "--no-screen", "-v=1",
		"--kubeconfig", r.kubeconfig,
		"--sink", sink,
		"--leader-elect", "--leader-elect-namespace", r.ns, "--leader-elect-name", r.lease,
		"--leader-elect-lease-duration", haLease.String(), "--leader-elect-renew-deadline", haRenew.String(),
		"--leader-elect-retry-period", haRetry.String(),
		"--resume", "secret:" + r.ns + "/" + r.checkpoint}, more...)
}

var (
	leadingRe    = regexp.MustCompile(`--leader-elect: leading \(lease \S+, as \S+\)`)
	standingByRe = regexp.MustCompile(`--leader-elect: standing by; the lease \S+ is held by`)
)

// haChange is a change the test made: a configmap's state (its resourceVersion), or
// its deletion.
type haChange struct {
	name, rv string
	deleted  bool
}

func haCreate(t *testing.T, ns, name string) haChange {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"ha": "yes"}}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return haChange{name: name, rv: cm.ResourceVersion}
}

func haUpdate(t *testing.T, ns, name, value string) haChange {
	t.Helper()
	patch := fmt.Sprintf(`{"data":{"n":%q}}`, value)
	cm, err := client.CoreV1().ConfigMaps(ns).Patch(context.Background(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return haChange{name: name, rv: cm.ResourceVersion}
}

func haDelete(t *testing.T, ns, name string) haChange {
	t.Helper()
	if err := client.CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return haChange{name: name, deleted: true}
}

// haEvent is one event the receiver got: the configmap, its resourceVersion, the type.
type haEvent struct {
	typ, name, rv string
}

func (r *receiver) events(t *testing.T) []haEvent {
	t.Helper()
	var out []haEvent
	for _, req := range r.got() {
		if req.answer/100 != 2 {
			continue
		}
		for _, line := range req.lines {
			var ev envelope
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("the receiver got a line that is not an event: %q", line)
			}
			m := ev.meta()
			out = append(out, haEvent{typ: ev.Type, name: m.Metadata.Name, rv: m.Metadata.ResourceVersion})
		}
	}
	return out
}

// has reports whether the receiver got the change.
func has(events []haEvent, c haChange) bool {
	return slices.ContainsFunc(events, func(e haEvent) bool {
		if c.deleted {
			return e.name == c.name && e.typ == "DELETED"
		}
		return e.name == c.name && e.rv == c.rv && e.typ != "DELETED"
	})
}

// waitGot waits until the receiver got every change.
func (r *receiver) waitGot(t *testing.T, procs []*proc, changes []haChange, timeout time.Duration) []haEvent {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		events := r.events(t)
		var missing []haChange
		for _, c := range changes {
			if !has(events, c) {
				missing = append(missing, c)
			}
		}
		if len(missing) == 0 {
			return events
		}
		if time.Now().After(deadline) {
			var stderr []string
			for i, p := range procs {
				stderr = append(stderr, fmt.Sprintf("replica %d:\n%s", i+1, p.Stderr()))
			}
			t.Fatalf("the receiver lacks %d changes after %s (first %+v); it got %+v; %s", len(missing), timeout, missing[0], events, strings.Join(stderr, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// finalStates checks that the last event of each configmap is its state now, as
// kubectl get has it (or DELETED for one that is gone).
func haFinalStates(t *testing.T, ns string, events []haEvent) {
	t.Helper()
	last := map[string]haEvent{}
	for _, e := range events {
		last[e.name] = e
	}
	list, err := client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "ha=yes"})
	if err != nil {
		t.Fatal(err)
	}
	now := map[string]string{}
	for _, cm := range list.Items {
		now[cm.Name] = cm.ResourceVersion
	}
	for name, e := range last {
		rv, exists := now[name]
		switch {
		case exists && (e.typ == "DELETED" || e.rv != rv):
			t.Errorf("%s: last event %s at %s, kubectl get has resourceVersion %s", name, e.typ, e.rv, rv)
		case !exists && e.typ != "DELETED":
			t.Errorf("%s: last event %s at %s, but it is gone", name, e.typ, e.rv)
		}
	}
	for name := range now {
		if _, ok := last[name]; !ok {
			t.Errorf("%s: in kubectl get, never at the receiver", name)
		}
	}
}

// checkpointHas reports whether the checkpoint in the cluster holds every configmap of
// states at its resourceVersion (and none deleted).
func checkpointHas(t *testing.T, r *haRelease, states map[string]string) bool {
	t.Helper()
	store := clusterstore.New(clusterstore.Options{Client: client, Ref: clusterstore.Ref{Kind: clusterstore.Secrets, Namespace: r.ns, Name: r.checkpoint}})
	f, err := store.Load(context.Background())
	if err != nil || f == nil {
		return false
	}
	got := map[string]string{}
	for _, raw := range f.Sections[0].Objects["configmaps.v1"] {
		var m objectMeta
		_ = json.Unmarshal(raw, &m)
		got[m.Metadata.Name] = m.Metadata.ResourceVersion
	}
	for name, rv := range states {
		if got[name] != rv {
			return false
		}
	}
	return true
}

func statesOf(changes []haChange) map[string]string {
	states := map[string]string{}
	for _, c := range changes {
		if c.deleted {
			delete(states, c.name)
		} else {
			states[c.name] = c.rv
		}
	}
	return states
}

// The hand-over, twice: the leader SIGKILLed while the test changes configmaps (the
// standby takes over within the lease's duration and a retry or two, every change
// reaches the receiver, final states equal kubectl get's, duplicates only of what the
// killed leader had not checkpointed), then the new leader stopped with SIGTERM while a
// restarted replica stands by (exactly once: nothing delivered twice).
func TestHAHandOver(t *testing.T) {
	ns := newNamespace(t)
	r := applyChartRBAC(t, ns)
	hook := startReceiver(t)
	one := startProc(t, nil, nil, r.replicaArgs(hook.url())...)
	one.waitStderr(30*time.Second, leadingRe)
	two := startProc(t, nil, nil, r.replicaArgs(hook.url())...)
	two.waitStderr(30*time.Second, standingByRe)
	procs := []*proc{one, two}

	// A: the leader streams; its checkpoint catches up with what it delivered.
	var a []haChange
	for i := range 20 {
		a = append(a, haCreate(t, ns, fmt.Sprintf("a-%02d", i)))
	}
	for i := range 10 {
		a = append(a, haUpdate(t, ns, fmt.Sprintf("a-%02d", i), "1"))
	}
	hook.waitGot(t, procs, a, 30*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for !checkpointHas(t, r, statesOf(a)) {
		if time.Now().After(deadline) {
			t.Fatalf("the checkpoint did not catch up with what was delivered within 10s; stderr:\n%s", one.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// B: a burst, and the leader killed in the middle of delivering it.
	var b []haChange
	for i := range 10 {
		b = append(b, haUpdate(t, ns, fmt.Sprintf("a-%02d", 10+i), "2"))
	}
	b = append(b, haDelete(t, ns, "a-19"))
	one.signal(os.Kill)
	killed := time.Now()
	one.wait(10 * time.Second)

	// C: changes while no one leads: their final states come once the standby leads.
	var c []haChange
	for i := range 5 {
		c = append(c, haCreate(t, ns, fmt.Sprintf("c-%02d", i)))
	}
	c = append(c, haUpdate(t, ns, "a-00", "3"), haDelete(t, ns, "a-01"))

	two.waitStderr(haLease+3*haRetry+5*time.Second, leadingRe)
	took := time.Since(killed)
	t.Logf("the standby took over %s after the leader was killed (lease %s, retry %s)", took.Round(10*time.Millisecond), haLease, haRetry)
	// client-go counts the lease's duration from when the standby saw the last renewal
	// (it trusts no other clock): it sees it up to a retry period late, and tries again
	// a retry period after the lease ran out, each jittered up to 2.2 retry periods.
	if limit := haLease + 2*time.Duration(2.2*float64(haRetry)) + 500*time.Millisecond; took > limit {
		t.Errorf("the standby took over after %s, more than the lease's duration and two retry periods (%s)", took, limit)
	}
	// D: the new leader streams, once it has listed what happened meanwhile.
	two.waitStderr(30*time.Second, regexp.MustCompile(`resumed configmaps from secret:`))
	var d []haChange
	for i := range 5 {
		d = append(d, haUpdate(t, ns, fmt.Sprintf("c-%02d", i), "1"))
	}
	// B was being delivered when the leader died: its final states come for sure (an
	// intermediate state, a-19's update before its deletion, may go with the leader, as
	// README's guarantee for a crash says), C's too, and every change of D.
	events := hook.waitGot(t, procs, append(append(finalOf(b), d...), finalOf(c)...), 30*time.Second)
	haFinalStates(t, ns, events)
	// Duplicates only of what the killed leader had not checkpointed: objects of B.
	inB := map[string]bool{}
	for _, ch := range b {
		inB[ch.name] = true
	}
	seen := map[haEvent]int{}
	for _, e := range events {
		seen[e]++
	}
	for e, n := range seen {
		if n > 1 && !inB[e.name] {
			t.Errorf("%s %s at %s delivered %d times, and it was checkpointed before the kill", e.typ, e.name, e.rv, n)
		}
	}
	// The killed replica's pod restarts: a standby again.
	three := startProc(t, nil, nil, r.replicaArgs(hook.url())...)
	three.waitStderr(30*time.Second, standingByRe)
	procs = []*proc{two, three}
	beforeTerm := len(hook.events(t))
	two.signal(syscall.SIGTERM)
	if _, code := two.wait(30 * time.Second); code != 0 {
		t.Fatalf("the leader stopped with SIGTERM exited %d; stderr:\n%s", code, two.Stderr())
	}
	stopped := time.Now()
	three.waitStderr(10*time.Second, leadingRe)
	t.Logf("after SIGTERM the standby led %s later", time.Since(stopped).Round(10*time.Millisecond))
	var e []haChange
	for i := range 5 {
		e = append(e, haUpdate(t, ns, fmt.Sprintf("c-%02d", i), "2"))
	}
	events = hook.waitGot(t, procs, e, 30*time.Second)
	haFinalStates(t, ns, events)
	// Exactly once across the clean hand-over: what the new leader delivered is E alone.
	after := events[beforeTerm:]
	for _, ev := range after {
		if !slices.ContainsFunc(e, func(c haChange) bool { return c.name == ev.name && c.rv == ev.rv }) {
			t.Errorf("after the SIGTERM hand-over the receiver got %s %s at %s, which is not a change made since", ev.typ, ev.name, ev.rv)
		}
	}
	if !strings.Contains(two.Stderr(), "--leader-elect: released the lease") {
		t.Errorf("the stopped leader did not say it released the lease:\n%s", two.Stderr())
	}
}

// finalOf keeps, per configmap, the last of changes: what a re-list can show.
func finalOf(changes []haChange) []haChange {
	last := map[string]int{}
	for i, c := range changes {
		last[c.name] = i
	}
	var out []haChange
	for i, c := range changes {
		if last[c.name] == i {
			out = append(out, c)
		}
	}
	return out
}

// The Lease deleted under the leader: one replica leads on (the leader makes it again,
// or the standby takes it and the old leader stops with exit 1, saying so), and every
// change made afterwards reaches the receiver.
func TestHALeaseDeletedUnderTheLeader(t *testing.T) {
	ns := newNamespace(t)
	r := applyChartRBAC(t, ns)
	hook := startReceiver(t)
	one := startProc(t, nil, nil, r.replicaArgs(hook.url())...)
	one.waitStderr(30*time.Second, leadingRe)
	two := startProc(t, nil, nil, r.replicaArgs(hook.url())...)
	two.waitStderr(30*time.Second, standingByRe)
	procs := []*proc{one, two}
	first := []haChange{haCreate(t, ns, "x-0")}
	hook.waitGot(t, procs, first, 30*time.Second)

	if err := client.CoordinationV1().Leases(ns).Delete(context.Background(), r.lease, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Within a lease's duration and a few retries, a Lease again, held by a live replica.
	deadline := time.Now().Add(haLease + 10*haRetry)
	var holder string
	for {
		lease, err := client.CoordinationV1().Leases(ns).Get(context.Background(), r.lease, metav1.GetOptions{})
		if err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
			holder = *lease.Spec.HolderIdentity
			break
		}
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no replica holds the Lease again; stderr:\n%s\n%s", one.Stderr(), two.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A leader that lost the race stops within its renew deadline: then exactly one
	// live replica leads, the Lease's holder; one that stopped said why, exit 1.
	deadline = time.Now().Add(haRenew + 4*haRetry)
	for {
		var leaders []string
		for _, p := range procs {
			if id := leadsAs(p); id != "" {
				leaders = append(leaders, id)
			}
		}
		if len(leaders) == 1 && leaders[0] == holder {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas leading: %v, the Lease held by %s; stderr:\n%s\n%s", leaders, holder, one.Stderr(), two.Stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, p := range procs {
		if !p.Alive() && (p.ExitCode() != 1 || !strings.Contains(p.Stderr(), "--leader-elect: lost the lease")) {
			t.Errorf("replica %d ended with %d; stderr:\n%s", i+1, p.ExitCode(), p.Stderr())
		}
	}
	t.Logf("after the deletion the Lease is held by %s; replica 1 alive: %v, replica 2 alive: %v", holder, one.Alive(), two.Alive())
	after := []haChange{haCreate(t, ns, "x-1"), haUpdate(t, ns, "x-0", "1")}
	events := hook.waitGot(t, procs, after, 30*time.Second)
	haFinalStates(t, ns, events)
}

// leadsAs is the identity a live replica leads as, "" if it stands by or ended.
func leadsAs(p *proc) string {
	if !p.Alive() {
		return ""
	}
	stderr := p.Stderr()
	lead := strings.LastIndex(stderr, "--leader-elect: leading")
	if lead < 0 || strings.LastIndex(stderr, "--leader-elect: standing by") > lead || strings.Contains(stderr[lead:], "not renewed") {
		return ""
	}
	m := regexp.MustCompile(`as (\S+)\)`).FindStringSubmatch(stderr[lead:])
	if m == nil {
		return ""
	}
	return m[1]
}

// The checkpoint's index corrupted, or deleted while its shards remain: a start is one
// clear line and exit 2, never a silent fresh start; --resume-reset starts afresh.
func TestHACheckpointCorruptOrDeleted(t *testing.T) {
	ns := newNamespace(t)
	r := applyChartRBAC(t, ns)
	hook := startReceiver(t)
	one := startProc(t, nil, nil, r.replicaArgs(hook.url())...)
	one.waitStderr(30*time.Second, leadingRe)
	hook.waitGot(t, []*proc{one}, []haChange{haCreate(t, ns, "y-0")}, 30*time.Second)
	one.signal(syscall.SIGTERM)
	if _, code := one.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, one.Stderr())
	}
	secrets := client.CoreV1().Secrets(ns)
	index, err := secrets.Get(context.Background(), r.checkpoint, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	index.Data["index.json"] = []byte("{garbage")
	if _, err := secrets.Update(context.Background(), index, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := runKubeevents(t, 60*time.Second, r.replicaArgs(hook.url())...)
	want := fmt.Sprintf("kubeevents: --resume secret:%s/%s: not a usable checkpoint: its index cannot be read: ", ns, r.checkpoint)
	if res.code != 2 || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "to start afresh, add --resume-reset") {
		t.Errorf("corrupt index: exit %d, stderr:\n%s\nwant exit 2 and %q", res.code, res.stderr, want)
	}

	if err := secrets.Delete(context.Background(), r.checkpoint, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	res = runKubeevents(t, 60*time.Second, r.replicaArgs(hook.url())...)
	if res.code != 2 || !strings.Contains(res.stderr, "its index secret "+ns+"/"+r.checkpoint+" is gone but its shards remain") {
		t.Errorf("deleted index: exit %d, stderr:\n%s", res.code, res.stderr)
	}

	// Told to start afresh: every object comes as ADDED again, and it runs.
	before := len(hook.events(t))
	again := startProc(t, nil, nil, r.replicaArgs(hook.url(), "--resume-reset")...)
	again.waitStderr(30*time.Second, leadingRe)
	deadline := time.Now().Add(30 * time.Second)
	for !slices.ContainsFunc(hook.events(t)[before:], func(e haEvent) bool { return e.name == "y-0" && e.typ == "ADDED" }) {
		if time.Now().After(deadline) {
			t.Fatalf("no ADDED y-0 after --resume-reset; stderr:\n%s", again.Stderr())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Without the right to the Lease (the chart rendered without leader election), one line
// and exit 1, before anything is watched.
func TestHALeaseForbidden(t *testing.T) {
	ns := newNamespace(t)
	r := applyChartRBAC(t, ns, "leaderElection.enabled=false", "replicaCount=1")
	hook := startReceiver(t)
	res := runKubeevents(t, 60*time.Second, r.replicaArgs(hook.url())...)
	want := fmt.Sprintf("kubeevents: --leader-elect: not allowed to get, create, update the lease %s/%s; grant get, create and update on leases.coordination.k8s.io in namespace %s (the chart's Role does)\n", ns, r.lease, ns)
	if res.code != 1 || res.stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and:\n%s", res.code, res.stderr, want)
	}
}
