// Command churn makes the changes the benchmark measures, with client-go (QPS and Burst
// unlimited, several workers), and records when each call returned:
//
//	churn ns       -n NS                                  create the namespace (if missing)
//	churn crd                                             create the benchmark CRD (widgets.bench.kubeevents.io) and wait until it is served
//	churn create   -n NS -count N [-kind pod|cr] [-name X] create N objects (or one named X)
//	churn poke     -n NS -name X -value V [-kind pod|cr]  merge-patch one object's label (readiness probe of the clients)
//	churn run      -n NS -count N -patches M -record FILE [-kind pod|cr] [-mode labels|status|mixed]
//	                                                      M changes per object (see Modes), then delete every object
//	churn deploy   -n NS -count D -replicas R             create D Deployments of R replicas, wait until all are available
//	churn rollout  -n NS -count D -replicas R -patches M -record FILE
//	                                                      M rolling image updates of every Deployment (each waited for), then delete them and wait until their pods are gone
//	churn delete   -n NS [-name X | -count N] [-kind ...] delete objects (missing ones are fine)
//	churn populate -n NS -count N [-prefix mem-]          create missing realistic pods by server-side apply
//	churn wipe     -n NS                                  delete every pod and widget in the namespace
//
// Modes of run, what each change is (pods; custom resources take label patches only):
//
//	labels  merge patch of metadata.labels.bench-round (the first benchmark's churn)
//	status  a kubelet's status report, patched on the pod's status subresource: phase,
//	        conditions with fresh lastTransitionTime/lastProbeTime, containerStatuses
//	        (state, ready, started, restartCount), and every third not-ready report a
//	        container restart (lastState terminated, CrashLoopBackOff)
//	mixed   per object and round in turn: labels, status, the container's image (a
//	        strategic merge patch of spec.containers, allowed on a pod in place)
//
// Every change differs from the object's previous state (ready flips each report), so
// every call makes one event.
//
// deploy and rollout are the living cluster's churn: the Deployment, ReplicaSet and
// garbage-collector controllers create and delete the pods, kube-scheduler binds them and
// kwok's simulated kubelets report them Running and Ready; the number of events is not
// known in advance.
//
// Objects are named PREFIX00000, PREFIX00001, ... (-prefix; default bench-, mem- for populate).
//
// run writes FILE with one line per call, in the order the calls returned per worker:
//
//	START <unixnano>              before the first patch
//	P <name> <resourceVersion> <unixnano>   a patch returned; the resourceVersion it produced
//	D <name> - <unixnano>         a delete returned
//	END <unixnano>                after the last delete
//
// rollout writes only START and END (and a line "R <round> - <unixnano>" when each
// rollout was complete): its events are made by the controllers, not by its calls.
//
// so that the lag of an event printed by a client is the time it was printed minus the
// time the call that made it returned (MODIFIED matched by name and resourceVersion,
// DELETED by name).
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The benchmark's custom resource.
var (
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgetGVR = schema.GroupVersionResource{Group: "bench.kubeevents.io", Version: "v1", Resource: "widgets"}
)

const crdName = "widgets.bench.kubeevents.io"

type env struct {
	ns      string
	kind    string
	mode    string // run: labels, status, mixed
	workers int
	cs      *kubernetes.Clientset
	dyn     dynamic.Interface
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: churn ns|crd|create|poke|run|delete|populate [flags] (see the package documentation)")
		os.Exit(2)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet("churn "+cmd, flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	ns := fs.String("n", "", "namespace")
	kind := fs.String("kind", "pod", "pod or cr (widgets.bench.kubeevents.io)")
	count := fs.Int("count", 0, "number of objects")
	patches := fs.Int("patches", 10, "merge patches per object (run)")
	workers := fs.Int("workers", 8, "concurrent workers")
	name := fs.String("name", "", "one object's name (create, poke, delete)")
	value := fs.String("value", "", "label value (poke)")
	record := fs.String("record", "", "file to write the call times to (run)")
	prefix := fs.String("prefix", "", "name prefix (default bench-; mem- for populate; dep- for deploy and rollout)")
	mode := fs.String("mode", "labels", "run: labels, status or mixed (see Modes)")
	replicas := fs.Int("replicas", 10, "replicas per Deployment (deploy, rollout)")
	_ = fs.Parse(os.Args[2:])
	if *prefix == "" {
		*prefix = "bench-"
		switch cmd {
		case "populate":
			*prefix = "mem-"
		case "deploy", "rollout":
			*prefix = "dep-"
		}
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		die(err)
	}
	cfg.QPS, cfg.Burst = -1, 100000
	cfg.Timeout = 60 * time.Second
	cfg.WarningHandler = rest.NoWarnings{}
	// Protobuf for built-in types: the generator's own CPU is not measured, but it shares
	// the machine with the clients that are.
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = runtime.ContentTypeProtobuf
	pcfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	e := &env{ns: *ns, kind: *kind, workers: max(*workers, 1)}
	if e.cs, err = kubernetes.NewForConfig(pcfg); err != nil {
		die(err)
	}
	if e.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		die(err)
	}
	if e.kind != "pod" && e.kind != "cr" {
		die(fmt.Errorf("-kind %q: use pod or cr", e.kind))
	}
	switch *mode {
	case "labels":
	case "status", "mixed":
		if e.kind != "pod" {
			die(fmt.Errorf("-mode %s: pods only (custom resources take label patches)", *mode))
		}
	default:
		die(fmt.Errorf("-mode %q: use labels, status or mixed", *mode))
	}
	e.mode = *mode
	ctx := context.Background()
	switch cmd {
	case "ns":
		err = e.namespace(ctx)
	case "crd":
		err = e.crd(ctx)
	case "create":
		names := []string{*name}
		if *name == "" {
			names = benchNames(*prefix, *count)
		}
		err = e.each(names, func(n string) error { return e.create(ctx, n) })
	case "poke":
		_, err = e.patch(ctx, *name, *value)
	case "run":
		err = e.run(ctx, benchNames(*prefix, *count), *patches, *record)
	case "deploy":
		err = e.deploy(ctx, benchNames(*prefix, *count), *replicas)
	case "rollout":
		err = e.rollout(ctx, benchNames(*prefix, *count), *replicas, *patches, *record)
	case "delete":
		names := []string{*name}
		if *name == "" {
			names = benchNames(*prefix, *count)
		}
		err = e.each(names, func(n string) error {
			if err := e.delete(ctx, n); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			return nil
		})
	case "populate":
		err = e.populate(ctx, *prefix, *count)
	case "wipe":
		err = e.wipe(ctx)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		die(err)
	}
}

func die(err error) {
	fmt.Fprintln(os.Stderr, "churn:", err)
	os.Exit(1)
}

func benchNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return names
}

// each runs fn on every name with e.workers workers; the first error wins.
func (e *env) each(names []string, fn func(string) error) error {
	ch := make(chan string)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range e.workers {
		wg.Go(func() {
			for n := range ch {
				if err := fn(n); err != nil {
					once.Do(func() { first = fmt.Errorf("%s: %w", n, err) })
				}
			}
		})
	}
	for _, n := range names {
		ch <- n
	}
	close(ch)
	wg.Wait()
	return first
}

func (e *env) namespace(ctx context.Context) error {
	_, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (e *env) crd(ctx context.Context) error {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": crdName},
		"spec": map[string]any{
			"group": widgetGVR.Group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
						"status": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
					},
				}},
			}},
		},
	}}
	_, err := e.dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := e.dyn.Resource(crdGVR).Get(ctx, crdName, metav1.GetOptions{})
		if err == nil && established(got) {
			// Established means accepted; wait until the resource is actually served.
			if _, err := e.dyn.Resource(widgetGVR).Namespace("default").List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CRD %s not served within 60s (last error: %v)", crdName, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// unscheduled names a scheduler that does not exist: the benchmark's pods stay Pending
// and unscheduled in the living local cluster too, so no controller or simulated node ever
// changes them and every event is ours.
const unscheduled = "kubeevents-none"

// benchPod is a small application pod; the server adds its defaults. It is never
// scheduled (see unscheduled).
func benchPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "bench", "tier": "web", "bench-round": "r0"}},
		Spec: corev1.PodSpec{SchedulerName: unscheduled, Containers: []corev1.Container{{
			Name: "app", Image: "nginx:1.27",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
		}}},
	}
}

// benchWidget is a custom resource of about the same size as benchPod.
func benchWidget(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.kubeevents.io/v1",
		"kind":       "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns,
			"labels": map[string]any{"app": "bench", "tier": "web", "bench-round": "r0"}},
		"spec": map[string]any{
			"image":    "nginx:1.27",
			"replicas": int64(3),
			"ports":    []any{map[string]any{"name": "http", "containerPort": int64(8080), "protocol": "TCP"}},
			"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
				"limits": map[string]any{"memory": "256Mi"}},
			"env": []any{
				map[string]any{"name": "LOG_LEVEL", "value": "info"},
				map[string]any{"name": "LISTEN", "value": ":8080"},
			},
			"strategy": map[string]any{"type": "RollingUpdate", "maxSurge": "25%", "maxUnavailable": "25%"},
		},
		"status": map[string]any{"phase": "Pending", "observedGeneration": int64(0)},
	}}
}

func (e *env) create(ctx context.Context, name string) error {
	var err error
	if e.kind == "pod" {
		_, err = e.cs.CoreV1().Pods(e.ns).Create(ctx, benchPod(name), metav1.CreateOptions{})
	} else {
		_, err = e.dyn.Resource(widgetGVR).Namespace(e.ns).Create(ctx, benchWidget(e.ns, name), metav1.CreateOptions{})
	}
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// patch sets the label bench-round and returns the resourceVersion the change produced.
func (e *env) patch(ctx context.Context, name, value string) (string, error) {
	body := []byte(`{"metadata":{"labels":{"bench-round":"` + value + `"}}}`)
	if e.kind == "pod" {
		p, err := e.cs.CoreV1().Pods(e.ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		if err != nil {
			return "", err
		}
		return p.ResourceVersion, nil
	}
	u, err := e.dyn.Resource(widgetGVR).Namespace(e.ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
	if err != nil {
		return "", err
	}
	return u.GetResourceVersion(), nil
}

func (e *env) delete(ctx context.Context, name string) error {
	zero := int64(0)
	opts := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	if e.kind == "pod" {
		return e.cs.CoreV1().Pods(e.ns).Delete(ctx, name, opts)
	}
	return e.dyn.Resource(widgetGVR).Namespace(e.ns).Delete(ctx, name, opts)
}

type call struct {
	op   byte // 'P' patch, 'D' delete
	name string
	rv   string
	t    int64
}

// run gives each worker its share of the objects; each worker patches its objects round
// by round (so no object is patched by two workers at once, and every patch changes the
// label to a new value), then, once every worker is done patching, deletes them.
func (e *env) run(ctx context.Context, names []string, patches int, record string) error {
	if record == "" {
		return errors.New("run needs -record FILE")
	}
	out, err := os.Create(record)
	if err != nil {
		return err
	}
	defer out.Close()
	w := min(e.workers, max(len(names), 1))
	shares := make([][]string, w)
	for i, n := range names {
		shares[i%w] = append(shares[i%w], n)
	}
	calls := make([][]call, w)
	errs := make([]error, w)
	var patched, deleted sync.WaitGroup
	patched.Add(w)
	deleted.Add(w)
	start := time.Now().UnixNano()
	for i := range w {
		go func() {
			defer deleted.Done()
			mine := make([]call, 0, len(shares[i])*(patches+1))
			kubelets := make(map[string]*kubelet, len(shares[i]))
			for _, n := range shares[i] {
				kubelets[n] = &kubelet{}
			}
			for r := 1; r <= patches && errs[i] == nil; r++ {
				value := "r" + strconv.Itoa(r)
				for j, n := range shares[i] {
					rv, err := e.change(ctx, n, r, j, value, kubelets[n])
					if err != nil {
						errs[i] = fmt.Errorf("patching %s: %w", n, err)
						break
					}
					mine = append(mine, call{'P', n, rv, time.Now().UnixNano()})
				}
			}
			patched.Done()
			patched.Wait()
			for _, n := range shares[i] {
				if errs[i] != nil {
					break
				}
				if err := e.delete(ctx, n); err != nil {
					errs[i] = fmt.Errorf("deleting %s: %w", n, err)
					break
				}
				mine = append(mine, call{'D', n, "-", time.Now().UnixNano()})
			}
			calls[i] = mine
		}()
	}
	deleted.Wait()
	end := time.Now().UnixNano()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	fmt.Fprintf(bw, "START %d\n", start)
	for _, cs := range calls {
		for _, c := range cs {
			fmt.Fprintf(bw, "%c %s %s %d\n", c.op, c.name, c.rv, c.t)
		}
	}
	fmt.Fprintf(bw, "END %d\n", end)
	if err := bw.Flush(); err != nil {
		return err
	}
	return out.Close()
}

// populate creates, by server-side apply, the realistic pods prefix00000... that the
// namespace does not hold yet (a rerun reuses them: keyed by name).
func (e *env) populate(ctx context.Context, prefix string, n int) error {
	have := map[string]bool{}
	cont := ""
	for {
		l, err := e.cs.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{Limit: 1000, Continue: cont})
		if err != nil {
			return err
		}
		for _, p := range l.Items {
			have[p.Name] = true
		}
		if cont = l.Continue; cont == "" {
			break
		}
	}
	var missing []string
	for _, name := range benchNames(prefix, n) {
		if !have[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		fmt.Fprintf(os.Stderr, "churn: %s already holds the %d pods\n", e.ns, n)
		return nil
	}
	fmt.Fprintf(os.Stderr, "churn: creating %d of %d pods in %s by server-side apply (%d workers)\n", len(missing), n, e.ns, e.workers)
	t0 := time.Now()
	var mu sync.Mutex
	done := 0
	sort.Strings(missing)
	err := e.each(missing, func(name string) error {
		body, err := realisticPod(e.ns, name)
		if err != nil {
			return err
		}
		force := true
		_, err = e.cs.CoreV1().Pods(e.ns).Patch(ctx, name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "kubectl", Force: &force})
		mu.Lock()
		done++
		if done%1000 == 0 {
			fmt.Fprintf(os.Stderr, "churn: %d/%d (%.0f/s)\n", done, len(missing), float64(done)/time.Since(t0).Seconds())
		}
		mu.Unlock()
		return err
	})
	fmt.Fprintf(os.Stderr, "churn: created %d pods in %s\n", len(missing), time.Since(t0).Round(time.Second))
	return err
}

// realisticPod is what a Deployment's pod spec applied with kubectl looks like: the
// usual labels and annotations, including kubectl.kubernetes.io/last-applied-configuration
// (about 2 KB: the applied object itself), an app container and a sidecar with probes,
// resources, env and mounts.
func realisticPod(ns, name string) ([]byte, error) {
	h := sha256.Sum256([]byte(name))
	hash := hex.EncodeToString(h[:])
	container := func(cname, image string, port, metrics int) map[string]any {
		return map[string]any{
			"name": cname, "image": image, "imagePullPolicy": "IfNotPresent",
			"ports": []any{map[string]any{"name": cname + "-http", "containerPort": port, "protocol": "TCP"},
				map[string]any{"name": cname + "-metrics", "containerPort": metrics, "protocol": "TCP"}},
			"env": []any{
				map[string]any{"name": "LOG_LEVEL", "value": "info"},
				map[string]any{"name": "LOG_FORMAT", "value": "json"},
				map[string]any{"name": "POD_NAME", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
			},
			"resources": map[string]any{
				"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
				"limits":   map[string]any{"memory": "256Mi"},
			},
			"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": port}, "periodSeconds": 10},
			"volumeMounts": []any{
				map[string]any{"name": "config", "mountPath": "/etc/app", "readOnly": true},
				map[string]any{"name": "tmp", "mountPath": "/tmp"},
			},
			"securityContext": map[string]any{"runAsNonRoot": true, "readOnlyRootFilesystem": true},
		}
	}
	labels := map[string]any{
		"app":                          "checkout",
		"app.kubernetes.io/name":       "checkout",
		"app.kubernetes.io/instance":   "checkout-prod",
		"app.kubernetes.io/version":    "2.14.3",
		"app.kubernetes.io/component":  "api",
		"app.kubernetes.io/part-of":    "shop",
		"app.kubernetes.io/managed-by": "kubectl",
		"pod-template-hash":            hash[:10],
		"team":                         "payments",
	}
	annotations := map[string]any{
		"prometheus.io/scrape":              "true",
		"prometheus.io/port":                "9090",
		"prometheus.io/path":                "/metrics",
		"checksum/config":                   hash,
		"kubectl.kubernetes.io/restartedAt": "2025-06-01T10:00:00Z",
	}
	obj := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels, "annotations": annotations},
		"spec": map[string]any{
			"schedulerName": unscheduled,
			"containers": []any{
				container("app", "registry.example.com/shop/checkout:2.14.3", 8080, 9090),
				container("proxy", "registry.example.com/platform/envoy:1.31.2", 15001, 15090),
			},
			"volumes": []any{
				map[string]any{"name": "config", "configMap": map[string]any{"name": "checkout-config"}},
				map[string]any{"name": "tmp", "emptyDir": map[string]any{}},
			},
			"nodeSelector":                  map[string]any{"kubernetes.io/os": "linux"},
			"terminationGracePeriodSeconds": 30,
			"tolerations":                   []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "shop", "effect": "NoSchedule"}},
		},
	}
	applied, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	// kubectl writes the applied configuration (without this annotation) into it.
	annotations["kubectl.kubernetes.io/last-applied-configuration"] = strings.TrimSpace(string(applied)) + "\n"
	return json.Marshal(obj)
}

// wipe deletes every pod and every widget (if the CRD exists) in the namespace.
func (e *env) wipe(ctx context.Context) error {
	for _, kind := range []string{"pod", "cr"} {
		var names []string
		cont := ""
		for {
			l, err := e.dyn.Resource(gvrOf(kind)).Namespace(e.ns).List(ctx, metav1.ListOptions{Limit: 1000, Continue: cont})
			if err != nil {
				if kind == "cr" && apierrors.IsNotFound(err) {
					break // no CRD
				}
				return err
			}
			for _, it := range l.Items {
				names = append(names, it.GetName())
			}
			if cont = l.GetContinue(); cont == "" {
				break
			}
		}
		if len(names) == 0 {
			continue
		}
		fmt.Fprintf(os.Stderr, "churn: deleting %d %ss in %s\n", len(names), kind, e.ns)
		k := &env{ns: e.ns, kind: kind, workers: e.workers, cs: e.cs, dyn: e.dyn}
		if err := k.each(names, func(n string) error {
			if err := k.delete(ctx, n); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func gvrOf(kind string) schema.GroupVersionResource {
	if kind == "cr" {
		return widgetGVR
	}
	return schema.GroupVersionResource{Version: "v1", Resource: "pods"}
}
