package clusterstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/event"
)

// realisticPod is a running pod of a Deployment as the sinks get it (managedFields
// dropped): bench/churn's realistic pod (labels, annotations with kubectl's
// last-applied-configuration, an app container and a sidecar with probes, resources,
// env and mounts), plus what the API server, the scheduler and a kubelet add: owner,
// UID, times, node, IPs, conditions and container statuses.
func realisticPod(i int) *corev1.Pod {
	name := fmt.Sprintf("checkout-7d9f8c6b5d-%05d", i)
	h := sha256.Sum256([]byte(name))
	hash := hex.EncodeToString(h[:])
	created := metav1.NewTime(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second))
	container := func(cname, image string, port, metrics int32) corev1.Container {
		return corev1.Container{
			Name: cname, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
			Ports: []corev1.ContainerPort{{Name: cname + "-http", ContainerPort: port, Protocol: corev1.ProtocolTCP},
				{Name: cname + "-metrics", ContainerPort: metrics, Protocol: corev1.ProtocolTCP}},
			Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "LOG_FORMAT", Value: "json"},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP}},
				PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app", ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"},
				{Name: "kube-api-access-" + hash[:5], MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			SecurityContext:          &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true)},
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}
	}
	labels := map[string]string{
		"app": "checkout", "app.kubernetes.io/name": "checkout", "app.kubernetes.io/instance": "checkout-prod",
		"app.kubernetes.io/version": "2.14.3", "app.kubernetes.io/component": "api", "app.kubernetes.io/part-of": "shop",
		"app.kubernetes.io/managed-by": "kubectl", "pod-template-hash": "7d9f8c6b5d", "team": "payments",
	}
	annotations := map[string]string{
		"prometheus.io/scrape": "true", "prometheus.io/port": "9090", "prometheus.io/path": "/metrics",
		"checksum/config": hash, "kubectl.kubernetes.io/restartedAt": "2025-06-01T10:00:00Z",
	}
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: "checkout-7d9f8c6b5d-", Namespace: "shop",
			UID:             types.UID(fmt.Sprintf("%s-%s-%s-%s-%s", hash[:8], hash[8:12], hash[12:16], hash[16:20], hash[20:32])),
			ResourceVersion: fmt.Sprint(100000 + i), CreationTimestamp: created, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "checkout-7d9f8c6b5d",
				UID: "5b0c1e0a-7f53-4c8e-9a51-0d2e7f6a9b11", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{container("app", "registry.example.com/shop/checkout:2.14.3", 8080, 9090),
				container("proxy", "registry.example.com/platform/envoy:1.31.2", 15001, 15090)},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "checkout-config"}, DefaultMode: ptr.To[int32](420)}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "kube-api-access-" + hash[:5], VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](420), Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				}}}},
			},
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"}, NodeName: fmt.Sprintf("worker-%d", i%50),
			TerminationGracePeriodSeconds: ptr.To[int64](30), DNSPolicy: corev1.DNSClusterFirst, RestartPolicy: corev1.RestartPolicyAlways,
			SchedulerName: "default-scheduler", ServiceAccountName: "checkout", DeprecatedServiceAccount: "checkout",
			SecurityContext: &corev1.PodSecurityContext{}, Priority: ptr.To[int32](0), EnableServiceLinks: ptr.To(true),
			PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority),
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "shop", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}},
		},
	}
	// kubectl writes the applied configuration (without this annotation) into it.
	applied, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name, "namespace": "shop", "labels": labels, "annotations": annotations},
		"spec": map[string]any{"containers": p.Spec.Containers, "volumes": p.Spec.Volumes[:2], "nodeSelector": p.Spec.NodeSelector, "tolerations": p.Spec.Tolerations[:1]}})
	p.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(applied) + "\n"}
	for k, v := range annotations {
		p.Annotations[k] = v
	}
	started := metav1.NewTime(created.Add(4 * time.Second))
	status := func(cname, image string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: cname, Ready: true, Started: ptr.To(true), Image: image,
			ImageID:     image + "@sha256:" + hash,
			ContainerID: "containerd://" + hash[:32] + hash[:32],
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}
	}
	cond := func(t corev1.PodConditionType, at time.Duration) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(created.Add(at))}
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable,
		HostIP: fmt.Sprintf("10.0.%d.%d", i%50/250, i%50+10), HostIPs: []corev1.HostIP{{IP: fmt.Sprintf("10.0.0.%d", i%50+10)}},
		PodIP: fmt.Sprintf("10.244.%d.%d", i/250, i%250+2), PodIPs: []corev1.PodIP{{IP: fmt.Sprintf("10.244.%d.%d", i/250, i%250+2)}},
		StartTime:  &created,
		Conditions: []corev1.PodCondition{cond("PodReadyToStartContainers", 3*time.Second), cond(corev1.PodInitialized, 0), cond(corev1.PodReady, 9*time.Second), cond(corev1.ContainersReady, 9*time.Second), cond(corev1.PodScheduled, 0)},
		ContainerStatuses: []corev1.ContainerStatus{status("app", "registry.example.com/shop/checkout:2.14.3"),
			status("proxy", "registry.example.com/platform/envoy:1.31.2")}}
	return p
}

// measuringObjects counts the bytes each request carries.
type measuringObjects struct {
	*memObjects
	requests, bytes, largest int
}

func (m *measuringObjects) count(o *object) {
	n := 0
	for k, v := range o.data {
		n += len(k) + len(v)
	}
	m.requests++
	m.bytes += n
	m.largest = max(m.largest, n)
}

func (m *measuringObjects) create(ctx context.Context, o *object) (string, error) {
	m.count(o)
	return m.memObjects.create(ctx, o)
}

func (m *measuringObjects) update(ctx context.Context, o *object) (string, error) {
	m.count(o)
	return m.memObjects.update(ctx, o)
}

// 10,000 realistic pods fit, in shards far below the API server's limits (1 MiB of
// data an object), and a write after ten pods changed carries two shards' worth of
// bytes or so, not the checkpoint. The figures are in docs/sinks.md.
func TestTenThousandRealisticPods(t *testing.T) {
	if testing.Short() || raceEnabled {
		// make test-unit runs it on its own, without the race detector (6 s rather than
		// 2 minutes).
		t.Skip("encodes 10,000 pods several times: run without -race and -short")
	}
	const n = 10000
	tr := &tracked{tr: checkpoint.NewTracker(1)}
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = realisticPod(i)
		tr.settle(event.Added, runtime.Object(pods[i]))
	}
	one, _ := json.Marshal(pods[0])
	objs := &measuringObjects{memObjects: newMemObjects()}
	s := newStore(objs.memObjects, Options{})
	s.objs = objs
	w := &checkpoint.Writer{Store: s, Sections: []*checkpoint.Section{{Watch: testWatch("https://a"), Tracker: tr.tr}}}
	start := time.Now()
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	firstTook := time.Since(start)
	idx := s.cur
	compressed, largest := 0, 0
	for _, sh := range idx.Shards {
		compressed += sh.Bytes
		largest = max(largest, sh.Bytes)
	}
	indexBytes := len(objs.objs["ckpt"].data[indexKey])
	t.Logf("10,000 pods: %d bytes of JSON a pod; lines %.1f MB, gzipped %.1f MB in %d shards of %d slots (largest %d KiB), index %d KiB; first write %d requests, %.1f MB, %s",
		len(one), float64(idx.Bytes)/1e6, float64(compressed)/1e6, len(idx.Shards), idx.Slots, largest>>10, indexBytes>>10, objs.requests, float64(objs.bytes)/1e6, firstTook.Round(time.Millisecond))
	if largest > MaxShardBytes || objs.largest > 1<<20-1024 || indexBytes > 256<<10 {
		t.Errorf("a request of %d bytes (largest shard %d, index %d): too close to the API server's 1 MiB", objs.largest, largest, indexBytes)
	}

	// Ten pods change (a kubelet's status updates): the next write carries their
	// shards and the index.
	objs.requests, objs.bytes = 0, 0
	for i := range 10 {
		p := pods[i*997].DeepCopy()
		p.ResourceVersion = fmt.Sprint(200000 + i)
		p.Status.ContainerStatuses[0].RestartCount++
		tr.settle(event.Modified, p)
	}
	start = time.Now()
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	t.Logf("after 10 pods changed: %d slots encoded, %d shards written, %d requests, %.2f MB, %s", s.lastEncoded, s.lastShardsPut, objs.requests, float64(objs.bytes)/1e6, time.Since(start).Round(time.Millisecond))
	if s.lastShardsPut > 10 || s.lastEncoded != s.lastShardsPut || objs.requests != s.lastShardsPut+1 {
		t.Errorf("%d shards and %d requests for 10 changed pods", s.lastShardsPut, objs.requests)
	}
	start = time.Now()
	f := load(t, newStore(objs.memObjects, Options{}))
	t.Logf("read back in %s", time.Since(start).Round(time.Millisecond))
	if got := len(f.Sections[0].Objects["pods.v1"]); got != n {
		t.Errorf("read back %d pods", got)
	}
}
