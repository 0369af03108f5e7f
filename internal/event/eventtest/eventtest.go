// Package eventtest holds the objects and events the tests and benchmarks of the
// packages that render events share (diff, jq, kubectl, render): a one-container pod in
// the states of its life, a pod the size of a real application's, events of every kind
// of change, and the ignore paths of the diff goldens.
package eventtest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
)

// T0 is when the first pod of the fixtures is created.
var T0 = time.Date(2026, 11, 22, 15, 4, 5, 123456789, time.UTC)

// The resources of the fixtures' events.
var (
	Pods        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	Deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	Widgets     = schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "widgets"}
	ConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	Secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	Nodes       = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
)

// WebPod is a one-container pod in the states it goes through in the fixtures.
func WebPod(phase corev1.PodPhase, ready bool, node, rv string) *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-7d9f8-abc12", Namespace: "default", ResourceVersion: rv,
			CreationTimestamp: metav1.NewTime(T0),
			Labels:            map[string]string{"app": "web"},
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		Status: corev1.PodStatus{
			Phase:             phase,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: ready, RestartCount: 1}},
		},
	}
	if node != "" {
		pod.Status.PodIP = "10.244.1.7"
	}
	// kubectl counts a container as ready only while it is running.
	if ready {
		pod.Status.ContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(T0.Add(time.Second))}
	}
	return pod
}

// webDeployment is the Deployment of the fixtures, with replicas wanted and status.
func webDeployment(replicas int32, status appsv1.DeploymentStatus) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "default", ResourceVersion: "8811", Generation: 4,
			CreationTimestamp: metav1.NewTime(T0.Add(-48 * time.Hour)),
		},
		Spec:   appsv1.DeploymentSpec{Replicas: &replicas},
		Status: status,
	}
}

// SignalEvents are what the noise reducers add to a stream (--on, --fold-rollouts): a
// pod update in which two transitions happened, the ROLLOUT lines of a Deployment's
// rollout (a step, and its end), and a folded event unfolded. Fresh events each call.
func SignalEvents() []*event.Event {
	running := WebPod(corev1.PodRunning, true, "worker-1", "8812")
	looping := WebPod(corev1.PodRunning, false, "worker-1", "8813")
	looping.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	crashed := Modified(12, Pods, "Pod", running, looping)
	crashed.On = []string{"crashloop", "not-ready"}
	rolling := webDeployment(5, appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 7, UpdatedReplicas: 3, AvailableReplicas: 4})
	rolled := webDeployment(5, appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 5, UpdatedReplicas: 5, AvailableReplicas: 5})
	step := &event.Event{Type: event.RolloutStep, Time: T0.Add(20 * time.Second), Resource: Deployments, Kind: "Deployment",
		Object: rolling, Rollout: &event.Rollout{State: event.RolloutProgressing, Message: "3/5 updated, 4 available, 2 old"}, FoldedEvents: 6}
	done := &event.Event{Type: event.RolloutStep, Time: T0.Add(30 * time.Second), Resource: Deployments, Kind: "Deployment",
		Object: rolled, Rollout: &event.Rollout{State: event.RolloutComplete, Message: `deployment "web" successfully rolled out`}, FoldedEvents: 1}
	folded := Modified(14, Pods, "Pod", WebPod(corev1.PodPending, false, "", "8801"), WebPod(corev1.PodRunning, true, "worker-2", "8815"))
	return []*event.Event{crashed, step, done, folded.Unfold()}
}

// HealthEvents are a Deployment's events with its health (package health): first seen
// InProgress, Failed past its progress deadline, a STALLED event, and a SYNC whose health
// did not change. Fresh events each call.
func HealthEvents() []*event.Event {
	rolling := webDeployment(5, appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 5, UpdatedReplicas: 5, AvailableReplicas: 3})
	stuck := webDeployment(5, appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 5, UpdatedReplicas: 5, AvailableReplicas: 3,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}})
	added := &event.Event{Type: event.Added, Seq: 20, Time: T0, Resource: Deployments, Kind: "Deployment", Object: rolling,
		Health: &event.Health{Status: event.HealthInProgress, Message: "Available: 3/5"}}
	failed := Modified(21, Deployments, "Deployment", rolling, stuck)
	failed.Health = &event.Health{Status: event.HealthFailed, Message: "Progress deadline exceeded", Previous: event.HealthInProgress}
	stalled := &event.Event{Type: event.Stalled, Seq: 22, Time: T0.Add(5 * time.Minute), Resource: Deployments, Kind: "Deployment", Object: rolling,
		Health: &event.Health{Status: event.HealthInProgress, Message: "no progress for 5m0s: Available: 3/5", Previous: event.HealthInProgress}}
	synced := &event.Event{Type: event.Sync, Time: T0.Add(6 * time.Minute), Resource: Deployments, Kind: "Deployment", Object: stuck, Old: stuck,
		Health: &event.Health{Status: event.HealthFailed, Message: "Progress deadline exceeded", Previous: event.HealthFailed}}
	return []*event.Event{added, failed, stalled, synced}
}

// Events covers every summary and lifecycle case once. Fresh events each call,
// since an Event caches its JSON.
func Events() []*event.Event {
	pending := WebPod(corev1.PodPending, false, "", "8801")
	running := WebPod(corev1.PodRunning, true, "worker-1", "8812")
	terminatingPod := WebPod(corev1.PodRunning, true, "worker-1", "8840")
	terminatingPod.DeletionTimestamp = new(metav1.NewTime(T0.Add(24 * time.Second)))
	terminatingPod.DeletionGracePeriodSeconds = new(int64(30))

	lost := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "prometheus-kube-prometheus-stack-prometheus-0", Namespace: "monitoring", ResourceVersion: "7000",
			CreationTimestamp: metav1.NewTime(T0.Add(-3 * time.Hour)),
		},
		Spec: corev1.PodSpec{NodeName: "worker-2", Containers: []corev1.Container{{Name: "prometheus"}, {Name: "config-reloader"}}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded, PodIP: "10.244.2.9", ContainerStatuses: []corev1.ContainerStatus{
			{Name: "prometheus", RestartCount: 2}, {Name: "config-reloader", RestartCount: 1},
		}},
	}
	deployment := webDeployment(3, appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2})
	configMap := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "coredns", Namespace: "kube-system", ResourceVersion: "215",
			CreationTimestamp: metav1.NewTime(T0.Add(-72 * time.Hour)),
		},
		Data: map[string]string{"Corefile": ".:53 {\n    errors\n    health\n}\n"},
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1alpha1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name": "blue", "namespace": "default", "resourceVersion": "9001",
			"creationTimestamp": T0.Add(10*time.Second - (3*time.Minute + 12*time.Second)).Format(time.RFC3339),
		},
		"spec": map[string]any{"size": int64(3), "color": "blue", "enabled": true},
	}}
	namespace := &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "team-a", ResourceVersion: "9100", CreationTimestamp: metav1.NewTime(T0.Add(11 * time.Second)),
		},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}

	at := func(d time.Duration) time.Time { return T0.Add(d) }
	return []*event.Event{
		{Type: event.Added, Time: at(0), Seq: 1, Resource: Pods, Kind: "Pod", Object: pending},
		{Type: event.Modified, Time: at(2 * time.Second), Seq: 2, Resource: Pods, Kind: "Pod", Object: running, Old: pending},
		{Type: event.Modified, Time: at(24 * time.Second), Seq: 3, Resource: Pods, Kind: "Pod", Object: terminatingPod, Old: running},
		{Type: event.Deleted, Time: at(25 * time.Second), Seq: 4, Resource: Pods, Kind: "Pod", Object: terminatingPod},
		{Type: event.Deleted, Time: at(26 * time.Second), Seq: 5, Resource: Pods, Kind: "Pod", Object: lost, FinalStateUnknown: true},
		{Type: event.Modified, Time: at(27 * time.Second), Seq: 6, Resource: Deployments, Kind: "Deployment", Object: deployment, Old: deployment},
		{Type: event.Added, Time: at(8 * time.Second), Seq: 7, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Object: configMap, InInitialList: true},
		{Type: event.Added, Time: at(10 * time.Second), Seq: 8, Resource: Widgets, Kind: "Widget", Object: widget},
		{Type: event.Added, Time: at(11 * time.Second), Seq: 9, Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace", Object: namespace},
		{Type: event.Sync, Time: at(30 * time.Second), Resource: Deployments, Kind: "Deployment", Object: deployment, Old: deployment},
		{Type: event.Deleted, Time: at(31 * time.Second), Seq: 10, Resource: Widgets, Kind: "Widget", Object: widget},
	}
}

// Modified is a MODIFIED event from old to object, each event fresh since it caches.
func Modified(seq uint64, gvr schema.GroupVersionResource, kind string, old, object runtime.Object) *event.Event {
	return &event.Event{
		Type: event.Modified, Time: T0.Add(time.Duration(seq) * time.Second), Seq: seq,
		Resource: gvr, Kind: kind, Object: object, Old: old,
	}
}

// UserIgnores are the ignore paths of the "ignore" golden files: a wildcard, an escaped
// annotation key and a plain field.
var UserIgnores = []string{
	"status.conditions.*.lastHeartbeatTime",
	`metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`,
	"/metadata/generation",
}

// DiffEvents has one MODIFIED event per kind of change the diff goldens show.
func DiffEvents() []*event.Event {
	var events []*event.Event
	add := func(gvr schema.GroupVersionResource, kind string, old, object runtime.Object) {
		events = append(events, Modified(uint64(100+len(events)), gvr, kind, old, object))
	}

	// A scalar change, with a resourceVersion change the default ignores hide and a
	// generation change only the user's ignores hide.
	deployment := webDeployment(1, appsv1.DeploymentStatus{ReadyReplicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1})
	scaled := deployment.DeepCopy()
	scaled.ResourceVersion, scaled.Generation, scaled.Spec.Replicas = "8820", 5, new(int32(3))
	add(Deployments, "Deployment", deployment, scaled)

	// Only the resourceVersion: an empty diff.
	touched := scaled.DeepCopy()
	touched.ResourceVersion = "8821"
	add(Deployments, "Deployment", scaled, touched)

	// Map add and remove, nested changes, lists of named elements (containers by name,
	// conditions by type), an appended container and a long value.
	pod := WebPod(corev1.PodRunning, false, "worker-1", "9000")
	pod.Annotations = map[string]string{"note": "old-value", "owner": "team-a"}
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"},
	}
	pod.Status.ContainerStatuses[0].ImageID = "docker.io/library/nginx@sha256:3f2a9c1d5e7b8a0f4c6d2e1b9a8f7e6d5c4b3a29180f7e6d5c4b3a2918079c1d"
	rolled := pod.DeepCopy()
	rolled.ResourceVersion = "9004"
	rolled.Labels["tier"] = "web"
	delete(rolled.Annotations, "note")
	rolled.Spec.Containers[0].Image = "nginx:1.28"
	rolled.Spec.Containers = append(rolled.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoyproxy/envoy:v1.32.1"})
	rolled.Status.Conditions[1] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}
	rolled.Status.ContainerStatuses[0].Ready = true
	rolled.Status.ContainerStatuses[0].RestartCount = 2
	rolled.Status.ContainerStatuses[0].ImageID = "docker.io/library/nginx@sha256:9c1d5e7b8a0f4c6d2e1b9a8f7e6d5c4b3a29180f7e6d5c4b3a2918079c1d3f2a"
	add(Pods, "Pod", pod, rolled)

	// A ConfigMap: a key added, a key removed, a multi-line value changed.
	configMap := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system", ResourceVersion: "215"},
		Data:       map[string]string{"Corefile": ".:53 {\n    errors\n}\n", "legacy": "yes", "replicas": "2"},
	}
	edited := configMap.DeepCopy()
	edited.ResourceVersion = "216"
	edited.Data = map[string]string{"Corefile": ".:53 {\n    errors\n    health\n}\n", "replicas": "3", "empty": ""}
	add(ConfigMaps, "ConfigMap", configMap, edited)

	// A Secret, redacted upstream by the informer: the change shows as a change between
	// two placeholders, and the value stays hidden.
	secret := func(rv, password string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "db", "namespace": "default", "resourceVersion": rv},
			"type":     "Opaque",
			"data":     map[string]any{"password": password, "user": "<redacted: 5 bytes #51c2a7e0>"},
		}}
	}
	add(Secrets, "Secret", secret("300", "<redacted: 12 bytes #9a1f03bc>"), secret("301", "<redacted: 12 bytes #e7d2c410>"))

	// A node's heartbeat, which the user's wildcard ignore hides, next to a real change;
	// and annotations added whole, with one the user ignores.
	node := func(rv, heartbeat, ready string, annotations map[string]any) *unstructured.Unstructured {
		metadata := map[string]any{"name": "worker-1", "resourceVersion": rv}
		if annotations != nil {
			metadata["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Node", "metadata": metadata,
			"status": map[string]any{"conditions": []any{
				map[string]any{"type": "MemoryPressure", "status": "False", "lastHeartbeatTime": heartbeat},
				map[string]any{"type": "Ready", "status": ready, "lastHeartbeatTime": heartbeat},
			}},
		}}
	}
	add(Nodes, "Node", node("500", "2026-11-22T15:00:00Z", "True", nil), node("501", "2026-11-22T15:00:40Z", "True", nil))
	add(Nodes, "Node", node("501", "2026-11-22T15:00:40Z", "True", nil), node("502", "2026-11-22T15:01:20Z", "False", map[string]any{
		"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Node","metadata":{"name":"worker-1"}}`,
		"note": "drained for maintenance",
	}))

	// A rewrite with more changes than the cap, and numbers too large for a float64.
	widget := func(rv string, base int64) *unstructured.Unstructured {
		spec := map[string]any{"total": base + 9007199254740993}
		for i := range 25 {
			spec[fmt.Sprintf("field%02d", i)] = base + int64(i)
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1alpha1", "kind": "Widget",
			"metadata": map[string]any{"name": "blue", "namespace": "default", "resourceVersion": rv},
			"spec":     spec,
		}}
	}
	add(Widgets, "Widget", widget("9001", 0), widget("9002", 100))
	return events
}

// DiffGoldenEvents are the fixture's two pod MODIFIED events and its SYNC event (which
// never has a diff, but has an old object), then DiffEvents.
func DiffGoldenEvents() []*event.Event {
	fixture := Events()
	return append([]*event.Event{fixture[1], fixture[2], fixture[9]}, DiffEvents()...)
}

// RealisticPod is the size of a typical application pod: a Deployment's labels and
// annotations, an app container, a sidecar and an init container, full status.
func RealisticPod() *corev1.Pod {
	container := func(name, image string) corev1.Container {
		return corev1.Container{
			Name: name, Image: image,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
		}
	}
	status := func(name, image string, restarts int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{
			Name: name, Image: image, Ready: true, RestartCount: restarts, Started: new(bool),
			ImageID:     image + "@sha256:3f2a9c1d5e7b8a0f4c6d2e1b9a8f7e6d5c4b3a29180f7e6d5c4b3a2918079c1d",
			ContainerID: "containerd://8b1f3c5e7a9d2b4f6e8a0c1d3e5f7a9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f",
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(T0.Add(3 * time.Second))}},
		}
	}
	condition := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(T0.Add(4 * time.Second))}
	}
	// The init container has finished, as it has once the pod is Initialized.
	initialized := status("migrate", "registry.example.com/shop/checkout-migrate:2.14.1", 0)
	initialized.Ready = false
	initialized.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", StartedAt: metav1.NewTime(T0.Add(time.Second)), FinishedAt: metav1.NewTime(T0.Add(2 * time.Second)),
	}}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "checkout-api-7d9f8b6c5-abc12", GenerateName: "checkout-api-7d9f8b6c5-", Namespace: "shop",
			UID: "0b6c7f3e-2d4a-4e8b-9c1f-5a7d3e9b2c4f", ResourceVersion: "88123412",
			CreationTimestamp: metav1.NewTime(T0),
			Labels: map[string]string{
				"app.kubernetes.io/name": "checkout-api", "app.kubernetes.io/instance": "checkout",
				"app.kubernetes.io/version": "2.14.1", "pod-template-hash": "7d9f8b6c5", "tier": "backend",
			},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt": "2026-11-20T09:12:44Z",
				"prometheus.io/scrape":              "true",
				"prometheus.io/port":                "9090",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "checkout-api-7d9f8b6c5", UID: "5e1d2c3b-4a59-4687-9a8b-7c6d5e4f3a2b", Controller: new(bool)}},
		},
		Spec: corev1.PodSpec{
			InitContainers:     []corev1.Container{container("migrate", "registry.example.com/shop/checkout-migrate:2.14.1")},
			Containers:         []corev1.Container{container("api", "registry.example.com/shop/checkout-api:2.14.1"), container("envoy", "envoyproxy/envoy:v1.32.1")},
			NodeName:           "ip-10-0-3-17.eu-west-1.compute.internal",
			ServiceAccountName: "checkout-api",
			Volumes:            []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}},
		},
		Status: corev1.PodStatus{
			Phase:                 corev1.PodRunning,
			Conditions:            []corev1.PodCondition{condition(corev1.PodInitialized), condition(corev1.PodReady), condition(corev1.ContainersReady), condition(corev1.PodScheduled)},
			HostIP:                "10.0.3.17",
			PodIP:                 "10.244.3.41",
			PodIPs:                []corev1.PodIP{{IP: "10.244.3.41"}},
			StartTime:             &metav1.Time{Time: T0.Add(time.Second)},
			QOSClass:              corev1.PodQOSBurstable,
			InitContainerStatuses: []corev1.ContainerStatus{initialized},
			ContainerStatuses:     []corev1.ContainerStatus{status("api", "registry.example.com/shop/checkout-api:2.14.1", 2), status("envoy", "envoyproxy/envoy:v1.32.1", 0)},
		},
	}
}

// RolledPodEvent is a realistic pod's MODIFIED event as a rollout step sends it: a
// container became ready after a restart, its Ready condition moved, a label was added.
func RolledPodEvent() *event.Event {
	old := RealisticPod()
	old.Status.ContainerStatuses[0].Ready = false
	pod := old.DeepCopy()
	pod.ResourceVersion = "88123499"
	pod.Labels["canary"] = "true"
	pod.Status.ContainerStatuses[0].RestartCount++
	pod.Status.ContainerStatuses[0].Ready = true
	pod.Status.Conditions[1].LastTransitionTime = metav1.NewTime(T0.Add(time.Minute))
	return &event.Event{Type: event.Modified, Time: T0, Seq: 42, Resource: Pods, Kind: "Pod", Object: pod, Old: old}
}

// KubeletReport is a kubelet's report on RealisticPod: the api container restarted and
// is not ready yet, so Ready and ContainersReady went False, with fresh timestamps.
func KubeletReport(p *corev1.Pod) {
	now := metav1.NewTime(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	for i := range p.Status.Conditions {
		if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
			c.Status, c.Reason, c.Message, c.LastTransitionTime, c.LastProbeTime = corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [api]", now, now
		}
	}
	cs := &p.Status.ContainerStatuses[0]
	cs.Ready, cs.RestartCount = false, cs.RestartCount+1
	cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: cs.State.Running.StartedAt, FinishedAt: now}}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
}

// MustParseAll parses every input with parse, failing the test at the first error: for
// ignore paths (diff.ParseIgnorePath), which this package cannot import.
func MustParseAll[T any](t testing.TB, parse func(string) (T, error), inputs ...string) []T {
	t.Helper()
	var parsed []T
	for _, in := range inputs {
		v, err := parse(in)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, v)
	}
	return parsed
}

// CheckPatch checks that patch, a diff as JSON, is a JSON Patch that turns old into
// object (both JSON), and returns its operations.
func CheckPatch(t testing.TB, old, object, patch []byte) []map[string]any {
	t.Helper()
	decoded, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("the diff is not a JSON Patch: %v\n%s", err, patch)
	}
	patched, err := decoded.Apply(old)
	if err != nil {
		t.Fatalf("the diff does not apply to the old object: %v\ndiff: %s\nold: %s", err, patch, old)
	}
	if !jsonpatch.Equal(patched, object) {
		t.Errorf("the diff applied to the old object gives\n%s\nwant the new object\n%s\ndiff: %s", patched, object, patch)
	}
	var ops []map[string]any
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatal(err)
	}
	return ops
}

// Warm is ev with its JSON and generic values computed, as the first sink leaves it.
func Warm(t testing.TB, ev *event.Event) *event.Event {
	t.Helper()
	for _, compute := range []func() (any, error){ev.ObjectValue, ev.OldValue} {
		if _, err := compute(); err != nil {
			t.Fatal(err)
		}
	}
	return ev
}
