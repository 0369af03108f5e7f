package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
)

// BenchmarkWrite10kPods is one checkpoint write of 10,000 pods like the e2e tests' (a
// pending pod with one container): the cost that the writer's spacing (at least ten times
// a write's duration) keeps under a tenth of a core.
func BenchmarkWrite10kPods(b *testing.B) { benchmarkWrite10kPods(b, false) }

// BenchmarkWrite10kPodsWithManagers is the same with each pod's two managedFields entries
// (its creator's and a status writer's) kept in its line, as attribution has them.
func BenchmarkWrite10kPodsWithManagers(b *testing.B) { benchmarkWrite10kPods(b, true) }

func benchmarkWrite10kPods(b *testing.B, withManagers bool) {
	tr := NewTracker(1)
	managers := managedfields.NewTracker()
	created := metav1.NewTime(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	for i := range 10000 {
		p := pod(fmt.Sprintf("p-%05d", i), fmt.Sprint(1000+i))
		p.Labels = map[string]string{"app": "mem", "tier": "web"}
		p.Spec = corev1.PodSpec{SchedulerName: "kubeevents-none", Containers: []corev1.Container{{
			Name: "app", Image: "nginx:1.27", Env: []corev1.EnvVar{{Name: "A", Value: strings.Repeat("x", 40)}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
		}}}
		p.Status = corev1.PodStatus{Phase: corev1.PodPending}
		e := ev(event.Added, runtime.Object(p), uint64(i+1))
		if withManagers {
			p.ManagedFields = []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: "Update", APIVersion: "v1", Time: &created},
				{Manager: "kube-scheduler", Operation: "Update", APIVersion: "v1", Subresource: "status", Time: &created},
			}
			managers.Observe(p)
			p.ManagedFields = nil
			e.ManagedFields = managers.Take(p)
		}
		tr.Made(e)
		e.Written()
	}
	path := filepath.Join(b.TempDir(), "ckpt")
	w := &Writer{Path: path, Sections: oneSection(testWatch(), tr)}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(); err != nil {
			b.Fatal(err)
		}
	}
	if info, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(info.Size())/1e6, "MB/file")
	}
}
