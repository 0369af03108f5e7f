package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// TestFaultThrottledByPriorityAndFairness: API Priority and Fairness turns
// kubeevents' requests away with 429 while it is watching. kubeevents says so once, in
// words a user understands, keeps waiting (as Retry-After asks), and when the server
// serves it again, prints what changed meanwhile.
//
// How the server is made to throttle, deterministically: kubeevents runs as a
// ServiceAccount that a FlowSchema puts in a priority level of its own with no seats
// (nominalConcurrencyShares 0, no borrowing) that rejects rather than queues. APF still
// dispatches a request to a level with no seats when nothing else in it executes, so the
// test keeps one request of that level executing: a ConfigMap create, by the same
// ServiceAccount, that a validating webhook (a TLS server in this test) holds until the
// test lets it go. A watch already open holds no seat, so the test then drops
// kubeevents' connections (a TCP proxy between it and kube-apiserver): the watch it opens
// again is turned away.
func TestFaultThrottledByPriorityAndFairness(t *testing.T) {
	fc := faultsCluster(t)
	ns := fc.newNamespace(t)
	ctx := context.Background()
	const sa = "throttled"
	rights := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create"}}
	token := serviceAccountToken(t, fc.config, ns, sa, rights)

	hold := startHoldingWebhook(t)
	hooks := fmt.Sprintf("kubeevents-e2e-hold-%s", ns)
	webhook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: hooks},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "hold.kubeevents.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(hold.url), CABundle: hold.caBundle},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"kubeevents.dev/hold": "true"}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](30),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		}},
	}
	if _, err := fc.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, webhook, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fc.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), hooks, metav1.DeleteOptions{})
	})

	proxy, kubeconfig := fc.viaProxy(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"marker": "initial-" + randomHex(4)}}
	if _, err := fc.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stdout := &timedLines{}
	p := startProc(t, stdout, nil, "watch", "configmaps", "-n", ns, "-o", "json", "--kubeconfig", kubeconfig, "--token", token)
	if _, ok := stdout.wait(eventWait, cm.Data["marker"]); !ok {
		t.Fatalf("the ConfigMap's initial state was not printed within %s; stderr:\n%s", eventWait, p.Stderr())
	}

	// The ServiceAccount's requests go to a level with no seats that rejects.
	level := "kubeevents-e2e-reject-" + ns
	plc := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: level},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](0),
				LendablePercent:          ptr.To[int32](0),
				BorrowingLimitPercent:    ptr.To[int32](0),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}
	if _, err := fc.client.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, plc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = fc.client.FlowcontrolV1().PriorityLevelConfigurations().Delete(context.Background(), level, metav1.DeleteOptions{})
	})
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: level},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level},
			MatchingPrecedence:         50, // before every suggested FlowSchema but exempt and probes
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: sa}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"},
					Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
	created, err := fc.client.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	removeFlowSchema := sync.OnceFunc(func() {
		if err := fc.client.FlowcontrolV1().FlowSchemas().Delete(context.Background(), level, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting FlowSchema %s: %v", level, err)
		}
	})
	t.Cleanup(removeFlowSchema)

	// One request of the level executes, held by the webhook, until the test lets it go.
	asSA := rest.AnonymousClientConfig(fc.config)
	asSA.BearerToken = token
	asSA.QPS, asSA.Burst = -1, 0
	saClient, err := kubernetes.NewForConfig(asSA)
	if err != nil {
		t.Fatal(err)
	}
	// The held request must run in the level: a request dispatched before APF's
	// controller has read the FlowSchema runs elsewhere, and the level, with nothing of
	// its own executing, would then serve everything (CI saw it once).
	waitFlowSchemaInForce(t, asSA, ns, created.UID, 30*time.Second)
	held := make(chan error, 1)
	go func() {
		blocker := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "blocker", Labels: map[string]string{"kubeevents.dev/hold": "true"}}}
		_, err := saClient.CoreV1().ConfigMaps(ns).Create(context.Background(), blocker, metav1.CreateOptions{})
		held <- err
	}()
	t.Cleanup(hold.release)
	select {
	case <-hold.holding:
	case err := <-held:
		t.Fatalf("the blocking create was not held by the webhook: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the webhook was not called within 30 s")
	}
	// The FlowSchema takes effect once APF's controller has read it: until a request of
	// the ServiceAccount is turned away, the level is not in force yet.
	throttledSince := waitThrottled(t, asSA, ns, 20*time.Second)

	// kubeevents' watch is open and holds no seat; its next one is turned away.
	proxy.dropAll()
	marker := "during-" + randomHex(4)
	patch := fmt.Sprintf(`{"data":{"marker":%q}}`, marker)
	if _, err := fc.client.CoreV1().ConfigMaps(ns).Patch(ctx, "cm", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err) // the test's own client is in the exempt level
	}
	// A kubeevents started now cannot list: like a server that is down at start-up, that
	// is an error (after client-go's own retries), said in one line.
	atStart := runKubeevents(t, 40*time.Second, "watch", "configmaps", "-n", ns, "--kubeconfig", fc.kubeconfig, "--token", token)
	t.Logf("started while throttled: exit %d, stderr %q", atStart.code, atStart.stderr)
	if atStart.code != 1 || !strings.Contains(atStart.stderr, "429") || strings.Count(strings.TrimSpace(atStart.stderr), "\n") != 0 {
		t.Errorf("kubeevents started while throttled: exit %d, stderr %q; want exit 1 and one line that names the 429", atStart.code, atStart.stderr)
	}

	throttled := regexp.MustCompile(`kubeevents: watch of configmaps (lost: |lost \(|still lost, now )throttled by the API server: 429 Too Many Requests\)?; .*\n`)
	// client-go retries the turned-away watch ten times, each after the Retry-After (1–2 s)
	// APF gives, before kubeevents sees the 429: some 20 s.
	p.waitStderr(45*time.Second, throttled)
	said := time.Since(throttledSince)
	if _, early := stdout.wait(0, marker); early {
		t.Fatalf("the change made while throttled was printed before the server served kubeevents again; stderr:\n%s", p.Stderr())
	}
	if !p.Alive() {
		t.Fatalf("kubeevents exited while throttled; stderr:\n%s", p.Stderr())
	}

	// The server serves kubeevents again: the FlowSchema goes, the held request ends.
	removeFlowSchema()
	hold.release()
	if err := <-held; err == nil || !strings.Contains(err.Error(), "held by the e2e test") {
		t.Errorf("the held create ended with %v, want the webhook's denial", err)
	}
	served := time.Now()
	printed, ok := stdout.wait(60*time.Second, marker)
	if !ok {
		t.Fatalf("the change made while throttled was not printed within 60 s of the throttling ending; stderr:\n%s", p.Stderr())
	}
	p.waitStderr(15*time.Second, regexp.MustCompile(`watch of configmaps resumed; no events were missed|re-synced [\d,]+ configmaps`))
	stderr := p.Stderr()
	if n := len(regexp.MustCompile(`throttled by the API server`).FindAllString(stderr, -1)); n != 1 {
		t.Errorf("the throttling was said %d times, want once:\n%s", n, stderr)
	}
	if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
		t.Errorf("stderr holds a stack trace:\n%s", stderr)
	}
	t.Logf("throttled: said %s after the server began turning the ServiceAccount away; the change made meanwhile printed %s after it served it again",
		said.Round(time.Millisecond), printed.Sub(served).Round(time.Millisecond))
	if _, code := p.interrupt(15 * time.Second); code != 0 {
		t.Errorf("exit code after Ctrl-C = %d, want 0; stderr:\n%s", code, p.Stderr())
	}
	t.Logf("stderr:\n%s", p.Stderr())
}

// waitThrottled returns once a request of the identity of cfg is turned away with 429
// (without client-go's retries), that is when.
// waitFlowSchemaInForce waits until the ServiceAccount's requests are classified by the
// FlowSchema uid: API Priority and Fairness names the FlowSchema that matched a request
// in the X-Kubernetes-PF-FlowSchema-UID response header.
func waitFlowSchemaInForce(t *testing.T, cfg *rest.Config, ns string, uid types.UID, timeout time.Duration) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	for {
		got := ""
		resp, err := hc.Get(cfg.Host + "/api/v1/namespaces/" + ns + "/configmaps?limit=1")
		if err == nil {
			got = resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID")
			resp.Body.Close()
		}
		if got == string(uid) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the FlowSchema was not in force for the ServiceAccount within %s (last FlowSchema: %q, error: %v)", timeout, got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitThrottled(t *testing.T, cfg *rest.Config, ns string, timeout time.Duration) time.Time {
	t.Helper()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := c.CoreV1().RESTClient().Get().Namespace(ns).Resource("configmaps").Name("cm").MaxRetries(0).Do(context.Background()).Error()
		if apierrors.IsTooManyRequests(err) {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("API Priority and Fairness did not turn the ServiceAccount away within %s (last answer: %v)", timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// holdingWebhook is a validating admission webhook that holds every request it gets
// until released, then denies it.
type holdingWebhook struct {
	url      string
	caBundle []byte
	holding  chan struct{} // closed when the first request is being held
	release  func()
}

func startHoldingWebhook(t *testing.T) *holdingWebhook {
	t.Helper()
	dir := t.TempDir()
	ca, caKey := newCA(t)
	cert := issue(t, ca, caKey, "127.0.0.1", dir, "webhook")
	released := make(chan struct{})
	holding := make(chan struct{})
	var once sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		once.Do(func() { close(holding) })
		select {
		case <-released:
		case <-time.After(28 * time.Second): // kube-apiserver gives up on the webhook at 30 s
		case <-r.Context().Done():
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false,
			Result: &metav1.Status{Message: "held by the e2e test"}}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(func() {
		release()
		_ = srv.Close()
	})
	return &holdingWebhook{
		url:      "https://" + ln.Addr().String() + "/hold",
		caBundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}),
		holding:  holding,
		release:  release,
	}
}
