package kubectl

//lint:file-ignore SA1019 v1 Endpoints are deprecated but still served and printed by kubectl

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The cells whose printers cut lists short or fill in what is unset, on the cases the
// end-to-end comparison with kubectl (TestColumnsMatchKubectl) does not make.
func TestPlatformCells(t *testing.T) {
	created := metav1.NewTime(t0.Add(-90 * time.Second))
	meta := metav1.ObjectMeta{Name: "x", CreationTimestamp: created}
	fifty := resource.MustParse("50")
	for _, tc := range []struct {
		what string
		obj  runtime.Object
		wide bool
		want []string
	}{
		{"an HPA with three metrics, one without status", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta,
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}, MaxReplicas: 5,
				Metrics: []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{AverageUtilization: ptr.To[int32](80)}}},
					{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: &fifty}}},
					{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{Value: &fifty}}},
				}},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](41)}}},
			}}}, false,
			[]string{"Deployment/web", "cpu: 41%/80%, <unknown>/50 + 1 more...", "<unset>", "5", "2", "90s"}},
		{"Endpoints: a headless subset and more than three addresses", &corev1.Endpoints{ObjectMeta: meta, Subsets: []corev1.EndpointSubset{
			{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}},
			{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.2"}, {IP: "fd00::3"}}, Ports: []corev1.EndpointPort{{Port: 80}, {Port: 443}}},
		}}, false, []string{"10.0.0.1,10.0.0.2:80,[fd00::3]:80 + 2 more...", "90s"}},
		{"Endpoints without subsets", &corev1.Endpoints{ObjectMeta: meta}, false, []string{"<none>", "90s"}},
		{"an EndpointSlice: ports by name or *, four addresses", &discoveryv1.EndpointSlice{ObjectMeta: meta, AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("http")}, {}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1", "10.0.0.2"}}, {Addresses: []string{"10.0.0.3", "10.0.0.4"}}}},
			false, []string{"IPv4", "http,*", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...", "90s"}},
		{"an EndpointSlice without ports or endpoints", &discoveryv1.EndpointSlice{ObjectMeta: meta, AddressType: discoveryv1.AddressTypeFQDN},
			false, []string{"FQDN", "<unset>", "<unset>", "90s"}},
		{"a RoleBinding, wide", &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{
			{Kind: "User", Name: "ann"}, {Kind: "ServiceAccount", Namespace: "ns", Name: "bot"}, {Kind: "User", Name: "bob"}, {Kind: "Other", Name: "x"}}},
			true, []string{"ClusterRole/view", "90s", "ann, bob", "", "ns/bot"}},
		{"a ClusterRole", &rbacv1.ClusterRole{ObjectMeta: meta}, true, []string{t0.Add(-90 * time.Second).UTC().Format(time.RFC3339)}},
	} {
		_, cells, ok := kubectlTable(tc.obj, t0, tc.wide)
		if !ok || len(cells) != len(tc.want) {
			t.Errorf("%s: %q, want %q", tc.what, cells, tc.want)
			continue
		}
		for i := range cells {
			if cells[i] != tc.want[i] {
				t.Errorf("%s: %q, want %q", tc.what, cells, tc.want)
				break
			}
		}
	}
}
