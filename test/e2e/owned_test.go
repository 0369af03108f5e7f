package e2e

// watch TYPE/NAME --owned against the living cluster: a Deployment's rolling update
// streamed with its ReplicaSets and pods and their owner chains until the rollout
// completes; a rollout that passes its progress deadline; a Job followed to completion;
// bad input.

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func setPaused(t *testing.T, ns, name string, paused bool) {
	t.Helper()
	patch := `{"spec":{"paused":false}}`
	if paused {
		patch = `{"spec":{"paused":true}}`
	}
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("pausing/resuming the deployment: %v", err)
	}
}

// A rolling update, followed from the Deployment: the new ReplicaSet and its pods are
// ADDED, Running and Ready, the old pods TERMINATING then DELETED, every event with its
// owner chain, and --until-rollout exits 0 once the rollout completes, on the
// Deployment's event that says so.
func TestOwnedRollingUpdate(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	createLivingDeployment(t, ns, "web", "nginx:1.27", 2)
	// Like kubectl rollout status: waits for the first rollout, exit 0.
	first := runKubeevents(t, livingWait, "watch", "deployment/web", "-n", ns, "--owned", "--until-rollout", "--timeout", "80s", "-o", "json")
	if first.code != 0 {
		t.Fatalf("first rollout: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	lines := strings.Split(strings.TrimSpace(first.stdout), "\n")
	if last := parseOwned(t, lines[len(lines)-1]); last.kind() != "Deployment" || last.Rollout == nil || last.Rollout.State != "complete" {
		t.Fatalf("the first rollout's last event is not the Deployment's completed rollout: %s", lines[len(lines)-1])
	}
	oldPods := map[string]bool{}
	for _, l := range lines {
		if ev := parseOwned(t, l); ev.kind() == "Pod" && ev.Type != "DELETED" {
			oldPods[ev.name()] = true
		}
	}

	// Paused while the image changes, so that the stream is running before the rollout
	// starts: then it is seen from its first step.
	setPaused(t, ns, "web", true)
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}`
	if _, err := client.AppsV1().Deployments(ns).Patch(context.Background(), "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("updating the image: %v", err)
	}
	start := time.Now()
	js := startKubeevents(t, "watch", "deployment/web", "-n", ns, "--owned", "--with-events", "--until-rollout", "--timeout", "80s", "-o", "json")
	// The same without --until-rollout: it goes on after the rollout, until the old pods
	// are gone (the Deployment may say it rolled out before the last old pod's deletion
	// reaches the stream: they come through different watches).
	full := startKubeevents(t, "watch", "deployment/web", "-n", ns, "--owned", "-o", "json")
	for _, s := range []*proc{js, full} {
		s.waitFor(20*time.Second, "the Deployment's own ADDED event, waiting for the rollout", func(line string) bool {
			ev := parseOwned(t, line)
			return ev.kind() == "Deployment" && ev.hasOwners && len(ev.Owners) == 0 && ev.Rollout != nil && ev.Rollout.State == "progressing"
		})
	}
	setPaused(t, ns, "web", false)
	_, code := js.wait(livingWait)
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("--until-rollout: exit %d, want 0; stderr:\n%s\noutput:\n%s", code, js.Stderr(), strings.Join(js.Seen(), "\n"))
	}

	var newRS string
	podChain := map[string]string{}
	added, ready, terminating, deleted := map[string]bool{}, map[string]bool{}, map[string]int{}, map[string]int{}
	var related int
	for i, l := range js.Seen() {
		ev := parseOwned(t, l)
		switch ev.kind() {
		case "ReplicaSet":
			if ev.chain() != "Deployment/web" {
				t.Errorf("ReplicaSet %s: owners %q, want Deployment/web", ev.name(), ev.chain())
			}
			if ev.Type == "ADDED" && !ev.ownsAny(oldPods) {
				newRS = ev.name()
			}
		case "Pod":
			p := ev.pod(t)
			podChain[ev.name()] = ev.chain()
			switch {
			case oldPods[ev.name()] && ev.Type == "DELETED":
				deleted[ev.name()] = i + 1
			case oldPods[ev.name()] && p.Metadata.DeletionTimestamp != nil && terminating[ev.name()] == 0:
				terminating[ev.name()] = i + 1
			case !oldPods[ev.name()] && ev.Type == "ADDED":
				added[ev.name()] = true
			case !oldPods[ev.name()] && added[ev.name()] && p.runningReady():
				ready[ev.name()] = true
			}
		case "Event":
			related++
			if len(ev.Owners) == 0 || ev.Owners[0] != (struct{ Kind, Name string }{"Deployment", "web"}) {
				t.Errorf("core Event with owners %q, want a chain from Deployment/web", ev.chain())
			}
		}
	}
	if newRS == "" {
		t.Fatalf("no new ReplicaSet ADDED; output:\n%s", strings.Join(js.Seen(), "\n"))
	}
	for name, chain := range podChain {
		if !strings.HasPrefix(chain, "Deployment/web>ReplicaSet/web-") {
			t.Errorf("pod %s: owners %q, want Deployment/web>ReplicaSet/...", name, chain)
		}
		if !oldPods[name] && chain != "Deployment/web>ReplicaSet/"+newRS {
			t.Errorf("new pod %s: owners %q, want Deployment/web>ReplicaSet/%s", name, chain, newRS)
		}
	}
	if len(added) < 2 || len(ready) < 2 {
		t.Errorf("new pods ADDED %v, Running and Ready %v: want 2 of each", added, ready)
	}
	// The first old pod goes while the rollout is under way.
	if len(terminating) == 0 {
		t.Errorf("no old pod seen TERMINATING before the rollout completed")
	}
	// Every old pod: TERMINATING, then DELETED, under its old ReplicaSet.
	terminating, deleted = map[string]int{}, map[string]int{}
	full.waitFor(livingWait, "both old pods DELETED", func(line string) bool {
		ev := parseOwned(t, line)
		if ev.kind() == "Pod" && oldPods[ev.name()] {
			if !strings.HasPrefix(ev.chain(), "Deployment/web>ReplicaSet/") || strings.HasSuffix(ev.chain(), "/"+newRS) {
				t.Errorf("old pod %s: owners %q, want its old ReplicaSet", ev.name(), ev.chain())
			}
			switch {
			case ev.Type == "DELETED":
				deleted[ev.name()] = len(full.Seen())
			case ev.pod(t).Metadata.DeletionTimestamp != nil && terminating[ev.name()] == 0:
				terminating[ev.name()] = len(full.Seen())
			}
		}
		return len(deleted) == len(oldPods)
	})
	for name := range oldPods {
		if terminating[name] == 0 || terminating[name] > deleted[name] {
			t.Errorf("old pod %s: TERMINATING at line %d, DELETED at line %d; want TERMINATING first", name, terminating[name], deleted[name])
		}
	}
	if related == 0 {
		t.Errorf("--with-events: no core Event about the rollout's objects")
	}
	seen := js.Seen()
	last := parseOwned(t, seen[len(seen)-1])
	if last.kind() != "Deployment" || last.Rollout == nil || last.Rollout.State != "complete" ||
		!strings.Contains(last.Rollout.Message, `deployment "web" successfully rolled out`) {
		t.Errorf("last event is not the Deployment's completed rollout: %s", seen[len(seen)-1])
	}
	t.Logf("rolling update of 2 pods followed in %s, %d events (%d core Events)", took.Round(100*time.Millisecond), len(seen), related)
}

// A Deployment whose pods can never be scheduled (a nodeSelector no node has) passes its
// progress deadline: --until-rollout exits 1 on the Deployment's event that says so.
func TestOwnedProgressDeadlineExceeded(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	createStuckDeployment(t, ns, "stuck", 10)
	start := time.Now()
	r := runKubeevents(t, livingWait, "watch", "deployment/stuck", "-n", ns, "--owned", "--until-rollout", "--timeout", "80s", "-o", "json")
	took := time.Since(start)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if !strings.Contains(r.stderr, `rollout failed: deployment "stuck" exceeded its progress deadline`) {
		t.Errorf("stderr does not say the progress deadline was exceeded:\n%s", r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	last := parseOwned(t, lines[len(lines)-1])
	if last.kind() != "Deployment" || last.Rollout == nil || last.Rollout.State != "failed" {
		t.Errorf("last event is not the Deployment's failed rollout: %s", lines[len(lines)-1])
	}
	pending := 0
	for _, l := range lines {
		if ev := parseOwned(t, l); ev.kind() == "Pod" {
			if !strings.HasPrefix(ev.chain(), "Deployment/stuck>ReplicaSet/stuck-") {
				t.Errorf("pod %s: owners %q", ev.name(), ev.chain())
			}
			pending++
		}
	}
	if pending == 0 {
		t.Errorf("no event of the Deployment's pending pods:\n%s", r.stdout)
	}
	if took < 10*time.Second {
		t.Errorf("exited after %s, before the 10s progress deadline", took)
	}
	t.Logf("progress deadline of 10s: exit 1 after %s", took.Round(100*time.Millisecond))
}

// createStuckDeployment creates a Deployment whose one pod no node can take.
func createStuckDeployment(t *testing.T, ns, name string, deadline int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas:                &one,
			ProgressDeadlineSeconds: &deadline,
			Selector:                &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"kubeevents.dev/no-such-node": "true"},
					Containers:   []corev1.Container{{Name: "app", Image: "nginx:1.27"}},
				},
			},
		},
	}
	if _, err := client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating deployment: %v", err)
	}
}

// A Job followed to completion: its pod, with the Job as owner, runs and completes, and
// --until-rollout exits 0 on the Job's Complete condition.
func TestOwnedJobCompletes(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "once"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "run", Image: "busybox"}},
		}}},
	}
	if _, err := client.BatchV1().Jobs(ns).Create(context.Background(), job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating job: %v", err)
	}
	r := runKubeevents(t, livingWait, "watch", "job/once", "-n", ns, "--owned", "--until-rollout", "--timeout", "80s", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	succeeded := false
	for _, l := range lines {
		ev := parseOwned(t, l)
		if ev.kind() != "Pod" {
			continue
		}
		if ev.chain() != "Job/once" {
			t.Errorf("pod %s: owners %q, want Job/once", ev.name(), ev.chain())
		}
		succeeded = succeeded || ev.pod(t).Status.Phase == "Succeeded"
	}
	if !succeeded {
		t.Errorf("the Job's pod was never seen Succeeded:\n%s", r.stdout)
	}
	last := parseOwned(t, lines[len(lines)-1])
	if last.kind() != "Job" || last.Rollout == nil || last.Rollout.State != "complete" {
		t.Errorf("last event is not the Job's completion: %s", lines[len(lines)-1])
	}
}

// Bad input: an owner that does not exist, a kind that owns nothing, a rollout to wait
// for on a kind without one, --owned without one object; and --timeout before the
// rollout ends.
func TestOwnedRefusesBadInput(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"deployment/missing", "--owned"}, 1, `deployments.apps "missing" not found in namespace "` + ns + `": --owned follows an object that exists`},
		{[]string{"replicaset/web", "--owned", "--until-rollout"}, 2, "--until-rollout applies to deployments, statefulsets, daemonsets and jobs"},
		{[]string{"deployments", "--owned"}, 2, "--owned follows one object: give it as TYPE/NAME"},
		{[]string{"deployment/web", "--until-rollout"}, 2, "add --owned"},
		{[]string{"deployment/web", "other", "--owned"}, 2, "give no other arguments after it"},
		{[]string{"deployment/web", "--owned", "--owned-types", "nosuchthings"}, 2, `--owned-types: unknown resource type "nosuchthings"`},
	} {
		r := runKubeevents(t, 20*time.Second, append([]string{"watch", "-n", ns}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("watch %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.want)
		}
		if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("watch %s: more than one line on stderr:\n%s", strings.Join(tc.args, " "), r.stderr)
		}
	}

	// A rollout that is still going when --timeout expires: exit 3.
	createStuckDeployment(t, ns, "slow", 600)
	start := time.Now()
	r := runKubeevents(t, 30*time.Second, "watch", "deployment/slow", "-n", ns, "--owned", "--until-rollout", "--timeout", "3s")
	if r.code != 3 || !strings.Contains(r.stderr, "timed out after 3s before --until-rollout was met") {
		t.Errorf("--timeout before the rollout ended: exit %d, stderr %q; want 3", r.code, r.stderr)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("--timeout 3s took %s", took)
	}
}

// watch deployment/<TAB> completes the names of Deployments, as TYPE/NAME.
func TestOwnedCompletion(t *testing.T) {
	ns := newNamespace(t)
	createLivingDeployment(t, ns, "web", "nginx:1.27", 0)
	createLivingDeployment(t, ns, "worker", "nginx:1.27", 0)
	complete := completer(t)
	got := complete("watch", "-n", ns, "deployment/w")
	if strings.Join(got.values, " ") != "deployment/web deployment/worker" {
		t.Errorf("watch deployment/w<TAB> = %q, want deployment/web deployment/worker", got.values)
	}
	got = complete("watch", "-n", ns, "deploy/wo")
	if strings.Join(got.values, " ") != "deploy/worker" {
		t.Errorf("watch deploy/wo<TAB> = %q, want deploy/worker", got.values)
	}
}

// A CronJob has no selector: its Jobs and their pods are found through the owner
// references alone, two levels down, with the chain CronJob › Job › Pod.
func TestOwnedCronJobChain(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 0 1 1 *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "run", Image: "busybox"}}}}}}},
	}
	created, err := client.BatchV1().CronJobs(ns).Create(context.Background(), cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating cronjob: %v", err)
	}
	// Another Job in the namespace, owned by nothing: left out.
	other := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: created.Spec.JobTemplate.Spec}
	if _, err := client.BatchV1().Jobs(ns).Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	js := startKubeevents(t, "watch", "cronjob/nightly", "-n", ns, "--owned", "-o", "json")
	js.waitFor(20*time.Second, "the CronJob's ADDED", func(line string) bool { return parseOwned(t, line).kind() == "CronJob" })
	// What `kubectl create job --from=cronjob/nightly` creates: a Job the CronJob controls.
	yes := true
	run := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-manual", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "batch/v1", Kind: "CronJob", Name: "nightly", UID: created.UID, Controller: &yes}}}, Spec: created.Spec.JobTemplate.Spec}
	if _, err := client.BatchV1().Jobs(ns).Create(context.Background(), run, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	js.waitFor(livingWait, "the Job's pod Succeeded, under CronJob › Job", func(line string) bool {
		ev := parseOwned(t, line)
		return ev.kind() == "Pod" && ev.chain() == "CronJob/nightly>Job/nightly-manual" && ev.pod(t).Status.Phase == "Succeeded"
	})
	for _, l := range js.Seen() {
		ev := parseOwned(t, l)
		if ev.kind() == "Job" && ev.chain() != "CronJob/nightly" || ev.name() == "other" || strings.HasPrefix(ev.name(), "other-") {
			t.Errorf("event not of the CronJob's tree, or with a wrong chain (%q): %s", ev.chain(), l)
		}
	}
}

// A kind that owns nothing by default, with --owned-types: a custom chain of owner
// references (ConfigMap › Secret › ConfigMap) is followed through the types named.
func TestOwnedTypesCustomChain(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	parent, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "parent"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "v1", Kind: kind, Name: name, UID: uid}}
	}
	js := startKubeevents(t, "watch", "configmap/parent", "-n", ns, "--owned", "--owned-types", "secrets,configmaps", "-o", "json")
	js.waitFor(20*time.Second, "the parent's ADDED", func(line string) bool { return parseOwned(t, line).name() == "parent" })
	secret, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "child",
		OwnerReferences: ref("ConfigMap", "parent", parent.UID)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stranger"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "grandchild",
		OwnerReferences: ref("Secret", "child", secret.UID)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	js.waitFor(20*time.Second, "the grandchild under ConfigMap › Secret", func(line string) bool {
		ev := parseOwned(t, line)
		return ev.name() == "grandchild" && ev.chain() == "ConfigMap/parent>Secret/child"
	})
	js.interrupt(10 * time.Second)
	for _, l := range js.Seen() {
		ev := parseOwned(t, l)
		switch ev.name() {
		case "parent":
			if !ev.hasOwners || len(ev.Owners) != 0 {
				t.Errorf("the followed object's owners: %q (present %v), want []", ev.chain(), ev.hasOwners)
			}
		case "child":
			if ev.chain() != "ConfigMap/parent" {
				t.Errorf("secret's owners %q", ev.chain())
			}
		case "grandchild":
		default:
			t.Errorf("an object outside the tree: %s", l)
		}
	}
}

// A StatefulSet's rollout, by kubectl's rule for StatefulSets: its pods (StatefulSet ›
// Pod) become ready one after the other, then --until-rollout exits 0.
func TestOwnedStatefulSet(t *testing.T) {
	requireLiving(t)
	ns := newNamespace(t)
	two := int32(2)
	grace := int64(3)
	labels := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &two, ServiceName: "db",
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "db", Image: "postgres:17"}}}},
		},
	}
	if _, err := client.AppsV1().StatefulSets(ns).Create(context.Background(), sts, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating statefulset: %v", err)
	}
	r := runKubeevents(t, livingWait, "watch", "sts/db", "-n", ns, "--owned", "--until-rollout", "--timeout", "80s", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", r.code, r.stderr, r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	ready := map[string]bool{}
	for _, l := range lines {
		if ev := parseOwned(t, l); ev.kind() == "Pod" {
			if ev.chain() != "StatefulSet/db" {
				t.Errorf("pod %s: owners %q, want StatefulSet/db", ev.name(), ev.chain())
			}
			if ev.pod(t).runningReady() {
				ready[ev.name()] = true
			}
		}
	}
	if !ready["db-0"] || !ready["db-1"] {
		t.Errorf("pods seen Running and Ready: %v, want db-0 and db-1\n%s", ready, r.stdout)
	}
	last := parseOwned(t, lines[len(lines)-1])
	if last.kind() != "StatefulSet" || last.Rollout == nil || last.Rollout.State != "complete" {
		t.Errorf("last event is not the StatefulSet's completed rollout: %s", lines[len(lines)-1])
	}
}
