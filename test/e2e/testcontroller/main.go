// Command testcontroller is the controller of the end-to-end tests' custom resource,
// MyApp (myapps.example.com): it reconciles each MyApp of one namespace as real
// controllers do, in the way its spec.behavior says, so that the tests follow health,
// --until-ready and the health transitions on a living cluster:
//
//	ready    Reconciling, then (after spec.delayMs) Ready: the happy path
//	stall    Reconciling, then Stalled with a reason: kstatus's Failed
//	fail     Reconciling, then Ready False with a reason, as Flux says it failed:
//	         kstatus's InProgress, which a health rule turns into Failed
//	lag      Ready at once, but status.observedGeneration catches up with a new
//	         generation only after spec.delayMs: InProgress meanwhile
//	deploy   Reconciling while a Deployment it owns (spec.replicas pods) becomes
//	         available, then Ready
//
// Each status is written with the generation it is for (status.observedGeneration),
// through the status subresource. The tests start it (go build, then run) and stop it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
)

var myApps = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "myapps"}

type controller struct {
	dyn       dynamic.Interface
	kube      kubernetes.Interface
	namespace string

	mu   sync.Mutex
	seen map[string]int64 // the generation of each MyApp being or done reconciling
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig")
	namespace := flag.String("namespace", "", "the namespace whose MyApps to reconcile")
	flag.Parse()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	c := &controller{namespace: *namespace, seen: map[string]int64{}}
	if c.dyn, err = dynamic.NewForConfig(config); err != nil {
		log.Fatal(err)
	}
	if c.kube, err = kubernetes.NewForConfig(config); err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	log.Printf("reconciling the MyApps of %s", c.namespace)
	for ctx.Err() == nil {
		if err := c.watch(ctx); err != nil && ctx.Err() == nil {
			log.Printf("watch: %v; again", err)
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// watch lists the MyApps and watches them, reconciling each new generation.
func (c *controller) watch(ctx context.Context) error {
	list, err := c.dyn.Resource(myApps).Namespace(c.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range list.Items {
		c.changed(ctx, &list.Items[i])
	}
	w, err := c.dyn.Resource(myApps).Namespace(c.namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		return err
	}
	defer w.Stop()
	for e := range w.ResultChan() {
		switch e.Type {
		case watch.Added, watch.Modified:
			c.changed(ctx, e.Object.(*unstructured.Unstructured))
		case watch.Error:
			return fmt.Errorf("%v", e.Object)
		}
	}
	return nil
}

// changed starts reconciling a generation of a MyApp not seen yet.
func (c *controller) changed(ctx context.Context, app *unstructured.Unstructured) {
	if app.GetDeletionTimestamp() != nil {
		return
	}
	c.mu.Lock()
	gen := app.GetGeneration()
	if c.seen[app.GetName()] >= gen {
		c.mu.Unlock()
		return
	}
	c.seen[app.GetName()] = gen
	c.mu.Unlock()
	go func() {
		if err := c.reconcile(ctx, app.DeepCopy()); err != nil && ctx.Err() == nil {
			log.Printf("%s generation %d: %v", app.GetName(), gen, err)
		}
	}()
}

func (c *controller) reconcile(ctx context.Context, app *unstructured.Unstructured) error {
	name, gen := app.GetName(), app.GetGeneration()
	behavior, _, _ := unstructured.NestedString(app.Object, "spec", "behavior")
	delayMs, found, _ := unstructured.NestedInt64(app.Object, "spec", "delayMs")
	if !found {
		delayMs = 1500
	}
	delay := time.Duration(delayMs) * time.Millisecond
	reconciling := condition("Reconciling", "True", "Progressing", fmt.Sprintf("reconciling generation %d", gen))
	notReady := condition("Ready", "False", "Progressing", "not reconciled yet")
	log.Printf("%s generation %d: %s", name, gen, behavior)
	switch behavior {
	case "lag":
		// Ready for the generation it had, at once; the new generation is observed late.
		observed := gen - 1
		if observed < 1 {
			observed = gen
		}
		if err := c.setStatus(ctx, name, observed, condition("Ready", "True", "Succeeded", "ready")); err != nil {
			return err
		}
		time.Sleep(delay)
		return c.setStatus(ctx, name, gen, condition("Ready", "True", "Succeeded", "ready"))
	case "deploy":
		if err := c.setStatus(ctx, name, gen, reconciling, notReady); err != nil {
			return err
		}
		replicas, _, _ := unstructured.NestedInt64(app.Object, "spec", "replicas")
		if err := c.deploy(ctx, app, int32(replicas)); err != nil {
			return err
		}
		return c.setStatus(ctx, name, gen, condition("Ready", "True", "Succeeded", fmt.Sprintf("%d replicas available", replicas)))
	}
	if err := c.setStatus(ctx, name, gen, reconciling, notReady); err != nil {
		return err
	}
	time.Sleep(delay)
	switch behavior {
	case "stall":
		return c.setStatus(ctx, name, gen,
			condition("Stalled", "True", "InvalidConfig", "spec.config is invalid: replicas must be positive"),
			condition("Ready", "False", "InvalidConfig", "spec.config is invalid: replicas must be positive"))
	case "fail":
		return c.setStatus(ctx, name, gen, condition("Ready", "False", "ReconciliationFailed", "applying the manifests failed: quota exceeded"))
	}
	return c.setStatus(ctx, name, gen, condition("Ready", "True", "Succeeded", "ready"))
}

// deploy creates the Deployment the MyApp owns and waits until it is available.
func (c *controller) deploy(ctx context.Context, app *unstructured.Unstructured, replicas int32) error {
	labels := map[string]string{"app": app.GetName()}
	yes := true
	grace := int64(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app.GetName(), Labels: labels, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "example.com/v1", Kind: "MyApp", Name: app.GetName(), UID: app.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}},
	}
	deployments := c.kube.AppsV1().Deployments(c.namespace)
	if _, err := deployments.Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for ctx.Err() == nil {
		got, err := deployments.Get(ctx, d.Name, metav1.GetOptions{})
		if err == nil && got.Status.ObservedGeneration >= got.Generation && got.Status.AvailableReplicas == replicas && got.Status.UpdatedReplicas == replicas {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return ctx.Err()
}

func condition(typ, status, reason, message string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
}

// setStatus writes the MyApp's status: the generation it is for and its conditions.
func (c *controller) setStatus(ctx context.Context, name string, observed int64, conditions ...map[string]any) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		app, err := c.dyn.Resource(myApps).Namespace(c.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		list := make([]any, len(conditions))
		for i, cond := range conditions {
			list[i] = cond
		}
		app.Object["status"] = map[string]any{"observedGeneration": observed, "conditions": list}
		_, err = c.dyn.Resource(myApps).Namespace(c.namespace).UpdateStatus(ctx, app, metav1.UpdateOptions{})
		return err
	})
}
