package kubectl

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// platformTable is kubectlTable for the types that run the cluster rather than the
// workloads: HorizontalPodAutoscalers, Endpoints, EndpointSlices, RBAC's roles and
// bindings, StorageClasses and Leases, followed line for line from their printers in
// k8s.io/kubernetes/pkg/printers/internalversion (v1.37.1), on the v1 (autoscaling: v2)
// types. Roles and ClusterRoles have no printer there: the server's default table
// converter gives them CREATED AT, the creation time in RFC 3339, UTC.
func platformTable(obj runtime.Object, now time.Time, wide bool) (headers []string, cells []string, ok bool) {
	since := func(t metav1.Time) string { return timestampSince(now, t) }
	switch o := obj.(type) {
	case *autoscalingv2.HorizontalPodAutoscaler:
		// printHorizontalPodAutoscaler
		reference := fmt.Sprintf("%s/%s", o.Spec.ScaleTargetRef.Kind, o.Spec.ScaleTargetRef.Name)
		minPods := "<unset>"
		if o.Spec.MinReplicas != nil {
			minPods = fmt.Sprintf("%d", *o.Spec.MinReplicas)
		}
		return []string{"REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"},
			[]string{reference, hpaMetrics(o.Spec.Metrics, o.Status.CurrentMetrics), minPods,
				strconv.Itoa(int(o.Spec.MaxReplicas)), strconv.Itoa(int(o.Status.CurrentReplicas)), since(o.CreationTimestamp)}, true
	//lint:ignore SA1019 v1 Endpoints are deprecated but still served, watched and printed by kubectl
	case *corev1.Endpoints:
		return []string{"ENDPOINTS", "AGE"}, []string{endpointsCell(o), since(o.CreationTimestamp)}, true
	case *discoveryv1.EndpointSlice:
		return []string{"ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"},
			[]string{string(o.AddressType), discoveryPorts(o.Ports), discoveryEndpoints(o.Endpoints), since(o.CreationTimestamp)}, true
	case *rbacv1.RoleBinding:
		return bindingTable(o.RoleRef, o.Subjects, since(o.CreationTimestamp), wide)
	case *rbacv1.ClusterRoleBinding:
		return bindingTable(o.RoleRef, o.Subjects, since(o.CreationTimestamp), wide)
	case *rbacv1.Role:
		return createdAtTable(o.CreationTimestamp)
	case *rbacv1.ClusterRole:
		return createdAtTable(o.CreationTimestamp)
	case *storagev1.StorageClass:
		// printStorageClass. kubectl's list adds " (default)" to the name of the effective
		// default class; a single object, as each event is (and kubectl get -w's changes),
		// has no suffix.
		reclaimPolicy := string(corev1.PersistentVolumeReclaimDelete)
		if o.ReclaimPolicy != nil {
			reclaimPolicy = string(*o.ReclaimPolicy)
		}
		volumeBindingMode := string(storagev1.VolumeBindingImmediate)
		if o.VolumeBindingMode != nil {
			volumeBindingMode = string(*o.VolumeBindingMode)
		}
		allowVolumeExpansion := false
		if o.AllowVolumeExpansion != nil {
			allowVolumeExpansion = *o.AllowVolumeExpansion
		}
		return []string{"PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"},
			[]string{o.Provisioner, reclaimPolicy, volumeBindingMode, strconv.FormatBool(allowVolumeExpansion), since(o.CreationTimestamp)}, true
	case *coordinationv1.Lease:
		var holderIdentity string
		if o.Spec.HolderIdentity != nil {
			holderIdentity = *o.Spec.HolderIdentity
		}
		return []string{"HOLDER", "AGE"}, []string{holderIdentity, since(o.CreationTimestamp)}, true
	}
	return nil, nil, false
}

// createdAtTable is the server's default table: the creation time, RFC 3339 in UTC.
func createdAtTable(created metav1.Time) ([]string, []string, bool) {
	return []string{"CREATED AT"}, []string{created.UTC().Format(time.RFC3339)}, true
}

// bindingTable is printRoleBinding and printClusterRoleBinding: ROLE, AGE; wide: the
// subjects by kind (rbac.SubjectsStrings), each list joined by ", ".
func bindingTable(ref rbacv1.RoleRef, subjects []rbacv1.Subject, age string, wide bool) ([]string, []string, bool) {
	cells := []string{fmt.Sprintf("%s/%s", ref.Kind, ref.Name), age}
	if wide {
		users, groups, sas := []string{}, []string{}, []string{}
		for _, subject := range subjects {
			switch subject.Kind {
			case rbacv1.ServiceAccountKind:
				sas = append(sas, fmt.Sprintf("%s/%s", subject.Namespace, subject.Name))
			case rbacv1.UserKind:
				users = append(users, subject.Name)
			case rbacv1.GroupKind:
				groups = append(groups, subject.Name)
			}
		}
		cells = append(cells, strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "))
	}
	return withWide([]string{"ROLE", "AGE"}, wide, "USERS", "GROUPS", "SERVICEACCOUNTS"), cells, true
}

// endpointsCell is formatEndpoints with no port filter: the first three addresses (with
// each port), then "+ N more...".
//
//lint:ignore SA1019 v1 Endpoints are deprecated but still served, watched and printed by kubectl
func endpointsCell(endpoints *corev1.Endpoints) string {
	if len(endpoints.Subsets) == 0 {
		return "<none>"
	}
	list := []string{}
	const most = 3
	more := false
	count := 0
	for i := range endpoints.Subsets {
		ss := &endpoints.Subsets[i]
		if len(ss.Ports) == 0 {
			// It's possible to have headless services with no ports.
			count += len(ss.Addresses)
			for i := range ss.Addresses {
				if len(list) == most {
					more = true
					break
				}
				list = append(list, ss.Addresses[i].IP)
			}
			continue
		}
		for i := range ss.Ports {
			port := &ss.Ports[i]
			count += len(ss.Addresses)
			for i := range ss.Addresses {
				if len(list) == most {
					more = true
					break
				}
				list = append(list, net.JoinHostPort(ss.Addresses[i].IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-most)
	}
	return ret
}

// discoveryPorts is formatDiscoveryPorts: a port's number, else its name, else "*".
func discoveryPorts(ports []discoveryv1.EndpointPort) string {
	list := []string{}
	const most = 3
	more := false
	count := 0
	for _, port := range ports {
		if len(list) < most {
			portNum := "*"
			if port.Port != nil {
				portNum = strconv.Itoa(int(*port.Port))
			} else if port.Name != nil {
				portNum = *port.Name
			}
			list = append(list, portNum)
		} else if len(list) == most {
			more = true
		}
		count++
	}
	return listWithMore(list, more, count, most)
}

// discoveryEndpoints is formatDiscoveryEndpoints: the first three addresses.
func discoveryEndpoints(endpoints []discoveryv1.Endpoint) string {
	list := []string{}
	const most = 3
	more := false
	count := 0
	for _, endpoint := range endpoints {
		for _, address := range endpoint.Addresses {
			if len(list) < most {
				list = append(list, address)
			} else if len(list) == most {
				more = true
			}
			count++
		}
	}
	return listWithMore(list, more, count, most)
}

// listWithMore is listWithMoreString: "<unset>" for none.
func listWithMore(list []string, more bool, count, most int) string {
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-most)
	}
	if ret == "" {
		ret = "<unset>"
	}
	return ret
}

// hpaMetrics is formatHPAMetrics: each metric as current/target, the first two, then
// "+ N more...".
func hpaMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	list := []string{}
	const most = 2
	more := false
	count := 0
	for i, spec := range specs {
		switch spec.Type {
		case autoscalingv2.ExternalMetricSourceType:
			if spec.External.Target.AverageValue != nil {
				current := "<unknown>"
				if len(statuses) > i && statuses[i].External != nil && statuses[i].External.Current.AverageValue != nil {
					current = statuses[i].External.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue.String()))
			} else {
				current := "<unknown>"
				if len(statuses) > i && statuses[i].External != nil {
					current = statuses[i].External.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.External.Target.Value.String()))
			}
		case autoscalingv2.PodsMetricSourceType:
			current := "<unknown>"
			if len(statuses) > i && statuses[i].Pods != nil {
				current = statuses[i].Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String()))
		case autoscalingv2.ObjectMetricSourceType:
			if spec.Object.Target.AverageValue != nil {
				current := "<unknown>"
				if len(statuses) > i && statuses[i].Object != nil && statuses[i].Object.Current.AverageValue != nil {
					current = statuses[i].Object.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue.String()))
			} else {
				current := "<unknown>"
				if len(statuses) > i && statuses[i].Object != nil {
					current = statuses[i].Object.Current.Value.String()
				}
				list = append(list, fmt.Sprintf("%s/%s", current, spec.Object.Target.Value.String()))
			}
		case autoscalingv2.ResourceMetricSourceType:
			if spec.Resource.Target.AverageValue != nil {
				current := "<unknown>"
				if len(statuses) > i && statuses[i].Resource != nil {
					current = statuses[i].Resource.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.Resource.Name.String(), current, spec.Resource.Target.AverageValue.String()))
			} else {
				current := "<unknown>"
				if len(statuses) > i && statuses[i].Resource != nil && statuses[i].Resource.Current.AverageUtilization != nil {
					current = fmt.Sprintf("%d%%", *statuses[i].Resource.Current.AverageUtilization)
				}
				target := "<auto>"
				if spec.Resource.Target.AverageUtilization != nil {
					target = fmt.Sprintf("%d%%", *spec.Resource.Target.AverageUtilization)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.Resource.Name.String(), current, target))
			}
		case autoscalingv2.ContainerResourceMetricSourceType:
			if spec.ContainerResource.Target.AverageValue != nil {
				current := "<unknown>"
				if len(statuses) > i && statuses[i].ContainerResource != nil {
					current = statuses[i].ContainerResource.Current.AverageValue.String()
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.ContainerResource.Name.String(), current, spec.ContainerResource.Target.AverageValue.String()))
			} else {
				current := "<unknown>"
				if len(statuses) > i && statuses[i].ContainerResource != nil && statuses[i].ContainerResource.Current.AverageUtilization != nil {
					current = fmt.Sprintf("%d%%", *statuses[i].ContainerResource.Current.AverageUtilization)
				}
				target := "<auto>"
				if spec.ContainerResource.Target.AverageUtilization != nil {
					target = fmt.Sprintf("%d%%", *spec.ContainerResource.Target.AverageUtilization)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", spec.ContainerResource.Name.String(), current, target))
			}
		default:
			list = append(list, "<unknown type>")
		}
		count++
	}
	if count > most {
		list = list[:most]
		more = true
	}
	ret := strings.Join(list, ", ")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-most)
	}
	return ret
}
