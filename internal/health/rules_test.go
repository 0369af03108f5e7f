package health

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubeevents/kubeevents/internal/event"
)

// custom is a custom resource from YAML, as a dynamic informer hands it over.
func custom(t testing.TB, doc string) *unstructured.Unstructured {
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err == nil {
		u := &unstructured.Unstructured{}
		if err = u.UnmarshalJSON(j); err == nil {
			return u
		}
	}
	t.Fatal(err)
	return nil
}

func eventOf(u *unstructured.Unstructured) *event.Event {
	gvk := u.GroupVersionKind()
	return &event.Event{Type: event.Modified, Time: time.Now(), Kind: gvk.Kind,
		Resource: schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: strings.ToLower(gvk.Kind) + "s"}, Object: u}
}

func judge(t *testing.T, rules *Rules, u *unstructured.Unstructured) event.Health {
	t.Helper()
	ev := eventOf(u)
	New(Config{Rules: rules}).Process(ev)
	return *ev.Health
}

func shippedRules(t *testing.T) *Rules {
	t.Helper()
	r, err := mustCatalog(t, nil).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The shipped rules read what kstatus cannot: each kind's failures (and Argo Rollouts'
// string observedGeneration, which kstatus cannot read at all), from the status fields
// their documentation gives; what they leave alone is kstatus's.
func TestShippedRules(t *testing.T) {
	rules := shippedRules(t)
	for _, tc := range []struct {
		name, object string
		want         event.HealthStatus
		message      string // a part of the message
	}{
		{"argo rollout healthy", `{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: web, generation: 3}, status: {observedGeneration: "3", phase: Healthy}}`, "Current", "healthy"},
		{"argo rollout degraded", `{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: web, generation: 3}, status: {observedGeneration: "3", phase: Degraded, message: "ProgressDeadlineExceeded: ReplicaSet web-5d9f has timed out progressing."}}`, "Failed", "timed out progressing"},
		{"argo rollout paused", `{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: web, generation: 3}, status: {observedGeneration: "3", phase: Paused, message: CanaryPauseStep}}`, "InProgress", "paused: CanaryPauseStep"},
		{"argo rollout not observed", `{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: web, generation: 4}, status: {observedGeneration: "3", phase: Healthy}}`, "InProgress", "observe generation 4"},
		{"flux kustomization failed", `{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: apps, generation: 2}, status: {observedGeneration: 2, conditions: [{type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed: missing resource"}]}}`, "Failed", "BuildFailed: kustomize build failed"},
		{"flux kustomization reconciling", `{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: apps, generation: 2}, status: {observedGeneration: 2, conditions: [{type: Reconciling, status: "True", reason: Progressing, message: building}, {type: Ready, status: "False", reason: BuildFailed, message: old}]}}`, "InProgress", "building"},
		{"flux helmrelease waiting for a dependency", `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: db, generation: 1}, status: {observedGeneration: 1, conditions: [{type: Ready, status: "False", reason: DependencyNotReady, message: "dependency 'infra/cert' is not ready"}]}}`, "InProgress", "not ready"},
		{"flux helmrelease ready", `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: db, generation: 1}, status: {observedGeneration: 1, conditions: [{type: Ready, status: "True", reason: UpgradeSucceeded, message: ok}]}}`, "Current", ""},
		{"flux helmrelease stalled", `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: db, generation: 1}, status: {observedGeneration: 1, conditions: [{type: Stalled, status: "True", reason: RetriesExceeded, message: "upgrade retries exhausted"}, {type: Ready, status: "False", reason: UpgradeFailed, message: "upgrade failed"}]}}`, "Failed", "UpgradeFailed"},
		{"certificate issuing failed", `{apiVersion: cert-manager.io/v1, kind: Certificate, metadata: {name: tls, generation: 1}, status: {conditions: [{type: Issuing, status: "False", reason: Failed, message: "The certificate request has failed to complete and will be retried: ACME order failed"}, {type: Ready, status: "False", reason: DoesNotExist, message: "Issuing certificate as Secret does not exist"}]}}`, "Failed", "ACME order failed"},
		{"certificate last failure", `{apiVersion: cert-manager.io/v1, kind: Certificate, metadata: {name: tls, generation: 1}, status: {lastFailureTime: "2026-11-23T10:00:00Z", failedIssuanceAttempts: 3, conditions: [{type: Ready, status: "False", reason: DoesNotExist, message: "no secret"}]}}`, "Failed", "3 attempts"},
		{"certificate issuing", `{apiVersion: cert-manager.io/v1, kind: Certificate, metadata: {name: tls, generation: 1}, status: {conditions: [{type: Issuing, status: "True", reason: DoesNotExist, message: "Issuing certificate as Secret does not exist"}, {type: Ready, status: "False", reason: DoesNotExist, message: "no secret"}]}}`, "InProgress", ""},
		{"certificate ready", `{apiVersion: cert-manager.io/v1, kind: Certificate, metadata: {name: tls, generation: 1}, status: {conditions: [{type: Ready, status: "True", reason: Ready, message: "Certificate is up to date and has not expired"}]}}`, "Current", "up to date"},
		{"crossplane synced false", `{apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, metadata: {name: logs, generation: 1}, status: {conditions: [{type: Synced, status: "False", reason: ReconcileError, message: "cannot create bucket: AccessDenied"}, {type: Ready, status: "False", reason: Creating}]}}`, "Failed", "ReconcileError: cannot create bucket"},
		{"crossplane creating", `{apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, metadata: {name: logs, generation: 1}, status: {conditions: [{type: Synced, status: "True", reason: ReconcileSuccess}, {type: Ready, status: "False", reason: Creating}]}}`, "InProgress", ""},
		{"crossplane paused", `{apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, metadata: {name: logs, generation: 1}, status: {conditions: [{type: Synced, status: "False", reason: ReconcilePaused}, {type: Ready, status: "True", reason: Available}]}}`, "Current", ""},
		{"crossplane available", `{apiVersion: example.org/v1alpha1, kind: XDatabase, metadata: {name: db, generation: 1}, status: {conditions: [{type: Synced, status: "True", reason: ReconcileSuccess}, {type: Ready, status: "True", reason: Available}]}}`, "Current", ""},
		{"argo cd degraded", `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: shop}, status: {health: {status: Degraded, message: "Deployment web exceeded its progress deadline"}, sync: {status: Synced}}}`, "Failed", "progress deadline"},
		{"argo cd healthy", `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: shop}, status: {health: {status: Healthy}, sync: {status: OutOfSync}}}`, "Current", "OutOfSync"},
		{"argo cd syncing", `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: shop}, status: {health: {status: Healthy}, operationState: {phase: Running, message: "waiting for healthy state"}}}`, "InProgress", "syncing"},
		{"argo cd progressing", `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: shop}, status: {health: {status: Progressing}}}`, "InProgress", "Progressing"},
		{"terminating whatever the rule", `{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: web, generation: 3, deletionTimestamp: "2026-11-23T10:00:00Z"}, status: {observedGeneration: "3", phase: Healthy}}`, "Terminating", ""},
	} {
		h := judge(t, rules, custom(t, tc.object))
		if h.Status != tc.want || !strings.Contains(h.Message, tc.message) {
			t.Errorf("%s: %+v, want %s with %q", tc.name, h, tc.want, tc.message)
		}
	}
}

// Without the rules, kstatus alone reads these kinds wrong: what the rules are for.
func TestKstatusAloneMissesTheseFailures(t *testing.T) {
	for _, doc := range []string{
		`{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: web, generation: 3}, status: {observedGeneration: "3", phase: Degraded}}`,
		`{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: apps, generation: 2}, status: {observedGeneration: 2, conditions: [{type: Ready, status: "False", reason: BuildFailed}]}}`,
		`{apiVersion: s3.aws.upbound.io/v1beta1, kind: Bucket, metadata: {name: logs, generation: 1}, status: {conditions: [{type: Synced, status: "False", reason: ReconcileError}]}}`,
	} {
		if h := Kstatus(custom(t, doc)); h.Status == event.HealthFailed {
			t.Errorf("kstatus alone says Failed of %s", doc)
		}
	}
}

// The config file's rules teach a kind, replace a shipped rule, or say only what a kind
// owns; a rule that gives no answer leaves the object to kstatus; one that fails or
// gives what is no health makes it Unknown, said once.
func TestUserRules(t *testing.T) {
	c := mustCatalog(t, map[string]Rule{
		"Widget.example.com":  {Program: `if .object.status.state == "broken" then {status: "Failed", message: .object.status.why} elif .object.status.state == "ok" then "Current" else null end`},
		"Rollout.argoproj.io": {Program: `{status: "Current", message: "replaced"}`},
		"Gadget.example.com":  {Owns: []string{"deployments.apps", "pods"}},
		"Broken.example.com":  {Program: `{status: "Fine"}`},
	})
	rules, err := c.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	rules.WarnTo(func(format string, args ...any) { warned = append(warned, format) })
	for _, tc := range []struct {
		object string
		want   event.HealthStatus
	}{
		{`{apiVersion: example.com/v1, kind: Widget, metadata: {name: a}, status: {state: broken, why: "no power"}}`, "Failed"},
		{`{apiVersion: example.com/v1, kind: Widget, metadata: {name: a}, status: {state: ok}}`, "Current"},
		{`{apiVersion: example.com/v1, kind: Widget, metadata: {name: a, generation: 2}, status: {observedGeneration: 1, state: starting}}`, "InProgress"}, // kstatus's
		{`{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: web}, status: {phase: Degraded}}`, "Current"},
		{`{apiVersion: example.com/v1, kind: Broken, metadata: {name: a}}`, "Unknown"},
	} {
		if h := judge(t, rules, custom(t, tc.object)); h.Status != tc.want {
			t.Errorf("%s: %+v, want %s", tc.object, h, tc.want)
		}
	}
	if len(warned) != 1 {
		t.Errorf("warned %d times, want once: %q", len(warned), warned)
	}
	if got := rules.Owns(schema.GroupKind{Group: "example.com", Kind: "Gadget"}); strings.Join(got, ",") != "deployments.apps,pods" {
		t.Errorf("Gadget owns %q", got)
	}
	if got := rules.Owns(schema.GroupKind{Group: "argoproj.io", Kind: "Rollout"}); got != nil {
		t.Errorf("a replaced rule keeps the shipped owns: %q", got)
	}
	for _, bad := range []string{"rollouts.argoproj.io", "deployment", "Foo Bar", ""} {
		if _, err := NewCatalog(map[string]Rule{bad: {Program: "null"}}); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
	if _, err := mustCatalog(t, map[string]Rule{"Widget.example.com": {Program: "{status:"}}).Compile(); err == nil ||
		!strings.Contains(err.Error(), `health rule "Widget.example.com"`) {
		t.Errorf("a program that does not compile: %v", err)
	}
}

// Every shipped rule compiles and says where it comes from (a documentation link).
func TestShippedRulesCiteTheirDocs(t *testing.T) {
	for _, e := range mustCatalog(t, nil).List() {
		if e.Description == "" || !strings.Contains(e.Program, "https://") {
			t.Errorf("%s: no description or no link to the documentation it is written from", e.Key)
		}
	}
}
