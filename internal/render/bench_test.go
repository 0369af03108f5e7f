package render

import (
	"context"
	"testing"
	"time"

	"github.com/wI2L/jsondiff"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeevents/kubeevents/internal/event"
)

// realisticPod is the size of a typical application pod: a Deployment's labels and
// annotations, an app container, a sidecar and an init container, full status.
func realisticPod() *corev1.Pod {
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
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(3 * time.Second))}},
		}
	}
	condition := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(4 * time.Second))}
	}
	// The init container has finished, as it has once the pod is Initialized.
	initialized := status("migrate", "registry.example.com/shop/checkout-migrate:2.14.1", 0)
	initialized.Ready = false
	initialized.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 0, Reason: "Completed", StartedAt: metav1.NewTime(t0.Add(time.Second)), FinishedAt: metav1.NewTime(t0.Add(2 * time.Second)),
	}}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "checkout-api-7d9f8b6c5-abc12", GenerateName: "checkout-api-7d9f8b6c5-", Namespace: "shop",
			UID: "0b6c7f3e-2d4a-4e8b-9c1f-5a7d3e9b2c4f", ResourceVersion: "88123412",
			CreationTimestamp: metav1.NewTime(t0),
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
			StartTime:             &metav1.Time{Time: t0.Add(time.Second)},
			QOSClass:              corev1.PodQOSBurstable,
			InitContainerStatuses: []corev1.ContainerStatus{initialized},
			ContainerStatuses:     []corev1.ContainerStatus{status("api", "registry.example.com/shop/checkout-api:2.14.1", 2), status("envoy", "envoyproxy/envoy:v1.32.1", 0)},
		},
	}
}

func newBenchPrinter(b *testing.B, format Format) *Printer {
	p, err := NewPrinter(Options{Format: format, Color: true, Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkJSONLineEncode is the cost of a JSON line for the first sink that writes an
// event: encoding the object plus the envelope.
func BenchmarkJSONLineEncode(b *testing.B) {
	p, pod := newBenchPrinter(b, FormatJSON), realisticPod()
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		ev := &event.Event{Type: event.Modified, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: pod}
		var err error
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// BenchmarkJSONLineEnvelope is the cost for every further sink: the object's JSON is
// already cached on the event.
func BenchmarkJSONLineEnvelope(b *testing.B) {
	p := newBenchPrinter(b, FormatJSON)
	ev := &event.Event{Type: event.Modified, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: realisticPod()}
	if _, err := ev.ObjectJSON(); err != nil {
		b.Fatal(err)
	}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

func BenchmarkPrettyLine(b *testing.B) {
	p := newBenchPrinter(b, FormatPretty)
	ev := &event.Event{Type: event.Modified, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: realisticPod()}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// rolledPodEvent is a realistic pod's MODIFIED event as a rollout step sends it: a
// container became ready after a restart, its Ready condition moved, a label was added.
func rolledPodEvent() *event.Event {
	old := realisticPod()
	old.Status.ContainerStatuses[0].Ready = false
	pod := old.DeepCopy()
	pod.ResourceVersion = "88123499"
	pod.Labels["canary"] = "true"
	pod.Status.ContainerStatuses[0].RestartCount++
	pod.Status.ContainerStatuses[0].Ready = true
	pod.Status.Conditions[1].LastTransitionTime = metav1.NewTime(t0.Add(time.Minute))
	return &event.Event{Type: event.Modified, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: pod, Old: old}
}

// warmEvent is ev with its JSON and generic values computed, as the first sink leaves it.
func warmEvent(b *testing.B, ev *event.Event) *event.Event {
	for _, compute := range []func(event.TypedValue) (any, error){ev.ObjectValue, ev.OldValue} {
		if _, err := compute(typedValue); err != nil {
			b.Fatal(err)
		}
	}
	return ev
}

// BenchmarkDiffPod is the diff of a MODIFIED pod from its encodings (what the first sink
// pays once per event: only the fields whose encodings differ are decoded), against
// decoding both objects whole and against jsondiff.CompareJSON on the encoded objects
// (which also makes numbers float64).
func BenchmarkDiffPod(b *testing.B) {
	ev := warmEvent(b, rolledPodEvent())
	d := NewDiffer(mustParseIgnores(b, "status.conditions.*.lastProbeTime"))
	b.Run("ComparedParts", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if changes, _, err := d.compute(ev); err != nil || len(changes) != 4 {
				b.Fatal(changes, err)
			}
		}
	})
	// What the churn of make bench does: a label changes, spec and status stay.
	b.Run("ComparedPartsLabelOnly", func(b *testing.B) {
		old := realisticPod()
		pod := old.DeepCopy()
		pod.ResourceVersion = "88123499"
		pod.Labels["bench-round"] = "r2"
		ev := &event.Event{Type: event.Modified, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: pod, Old: old}
		b.ReportAllocs()
		for b.Loop() {
			if changes, _, err := d.compute(ev); err != nil || len(changes) != 1 {
				b.Fatal(changes, err)
			}
		}
	})
	// What the status churn of make bench does (a kubelet's report): the api container
	// goes not ready; the Ready and ContainersReady conditions with it, with fresh
	// timestamps.
	b.Run("ComparedPartsStatusReport", func(b *testing.B) {
		old := realisticPod()
		pod := old.DeepCopy()
		pod.ResourceVersion = "88123499"
		now := metav1.NewTime(t0.Add(time.Minute))
		for i := range pod.Status.Conditions {
			if c := &pod.Status.Conditions[i]; c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				c.Status, c.Reason, c.LastTransitionTime, c.LastProbeTime = corev1.ConditionFalse, "ContainersNotReady", now, now
			}
		}
		pod.Status.ContainerStatuses[0].Ready = false
		ev := &event.Event{Type: event.Modified, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: pod, Old: old}
		b.ReportAllocs()
		for b.Loop() {
			if changes, _, err := d.compute(ev); err != nil || len(changes) != 7 {
				b.Fatal(changes, err)
			}
		}
	})
	// A condition inserted before the others: the keyed lists are aligned and compared
	// again (see keyedlist.go), the cost only such updates pay.
	b.Run("ComparedPartsConditionInserted", func(b *testing.B) {
		old := realisticPod()
		pod := old.DeepCopy()
		pod.ResourceVersion = "88123499"
		pod.Status.Conditions = append([]corev1.PodCondition{{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue}}, pod.Status.Conditions...)
		ev := &event.Event{Type: event.Modified, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: pod, Old: old}
		b.ReportAllocs()
		for b.Loop() {
			if changes, _, err := d.compute(ev); err != nil || len(changes) != 1 || changes[0].Path != "/status/conditions/0" {
				b.Fatal(changes, err)
			}
		}
	})
	b.Run("WholeDecode", func(b *testing.B) {
		oldJSON, _ := ev.OldJSON()
		objectJSON, _ := ev.ObjectJSON()
		b.ReportAllocs()
		for b.Loop() {
			old, _ := decodeGeneric(oldJSON)
			object, _ := decodeGeneric(objectJSON)
			if patch, err := jsondiff.CompareWithoutMarshal(old, object); err != nil || len(patch) == 0 {
				b.Fatal(patch, err)
			}
		}
	})
	b.Run("CompareJSON", func(b *testing.B) {
		old, _ := ev.OldJSON()
		object, _ := ev.ObjectJSON()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsondiff.CompareJSON(old, object, jsondiff.Ignores(d.exact...)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkObjectValue is the generic JSON values of a fresh event's pod, as a jq sink
// beside a JSON sink needs them (the event's JSON computed already): built from its
// fields (typedValue), and decoded from that JSON.
func BenchmarkObjectValue(b *testing.B) {
	pod := realisticPod()
	pod.Kind, pod.APIVersion = "Pod", "v1"
	for _, c := range []struct {
		name  string
		typed event.TypedValue
	}{{"Built", typedValue}, {"Decoded", nil}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				ev := &event.Event{Type: event.Modified, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: pod}
				if _, err := ev.ObjectJSON(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := ev.ObjectValue(c.typed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnvelopeValue builds the jq envelope of an event whose values and diff are
// computed (EnvelopeValue then caches it for further jq sinks).
func BenchmarkEnvelopeValue(b *testing.B) {
	ev := warmEvent(b, rolledPodEvent())
	d := NewDiffer(nil)
	if _, err := d.Changes(ev); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildEnvelopeValue(ev, d, true, wholeValue); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJQSelect is a typical filter on a built envelope, the per-sink cost of --jq.
func BenchmarkJQSelect(b *testing.B) {
	ev := warmEvent(b, rolledPodEvent())
	envelope, err := EnvelopeValue(ev, NewDiffer(nil), false)
	if err != nil {
		b.Fatal(err)
	}
	q := mustCompileJQ(b, `select(.type=="DELETED")`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if outputs, err := q.Run(ctx, envelope); err != nil || len(outputs) != 0 {
			b.Fatal(outputs, err)
		}
	}
}

// BenchmarkJSONLineWithDiff is a JSON line with "diff": for the first sink of a fresh
// event (encoding, decoding and diffing both objects) and for every further sink.
func BenchmarkJSONLineWithDiff(b *testing.B) {
	d := NewDiffer(nil)
	b.Run("FirstSink", func(b *testing.B) {
		p, events := newBenchPrinter(b, FormatJSON), rolledPodEvent()
		p.differ = d
		var dst []byte
		b.ReportAllocs()
		for b.Loop() {
			ev := &event.Event{Type: events.Type, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: events.Object, Old: events.Old}
			var err error
			if dst, err = p.Append(dst[:0], ev); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(dst)))
	})
	b.Run("FurtherSink", func(b *testing.B) {
		p, ev := newBenchPrinter(b, FormatJSON), rolledPodEvent()
		p.differ = d
		dst, err := p.Append(nil, ev)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if dst, err = p.Append(dst[:0], ev); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(dst)))
	})
}

// BenchmarkPrettyLineWithDiff is a pretty line with its change lines, diff cached.
func BenchmarkPrettyLineWithDiff(b *testing.B) {
	p, ev := newBenchPrinter(b, FormatPretty), rolledPodEvent()
	p.differ = NewDiffer(nil)
	dst, err := p.Append(nil, ev)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// BenchmarkJQInput is a jq sink's input for a fresh event (no sink built its values
// yet) and its run: an expression reading two fields (the three-sink benchmark's), whose
// input is projected (jqinput.go), and `.`, which reads it whole, as every expression's
// did before the projection.
func BenchmarkJQInput(b *testing.B) {
	for _, c := range []struct{ name, expr string }{
		{"Projected", `select(.type=="DELETED") | .object.metadata.name`},
		{"Whole", `.`},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := mustCompileJQ(b, c.expr)
			d := NewDiffer(nil)
			template := jqDeletedPodEvent()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				ev := &event.Event{Type: event.Deleted, Time: t0, Seq: 42, Resource: podsGVR, Kind: "Pod", Object: template.Object}
				input, err := q.Input(ev, d, false)
				if err != nil {
					b.Fatal(err)
				}
				if outputs, err := q.Run(ctx, input); err != nil || len(outputs) != 1 {
					b.Fatal(outputs, err)
				}
			}
		})
	}
}
